package io.devhealth.simulators.dra;

import io.devhealth.schema.proto.pluginregistration.v1.InfoRequest;
import io.devhealth.schema.proto.pluginregistration.v1.PluginInfo;
import io.devhealth.schema.proto.pluginregistration.v1.RegistrationGrpc;
import io.devhealth.schema.proto.pluginregistration.v1.RegistrationStatus;
import io.devhealth.schema.proto.pluginregistration.v1.RegistrationStatusResponse;
import io.devhealth.simulators.internal.UnixSocketGrpcServer;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A kubelet plugin registration socket on its own, at any path, for the cases {@link FakeDraDriver}'s
 * built-in {@code <driver>-reg.sock} cannot play: two registrations of one driver during a rolling
 * update ({@code <driver>-<uid>-reg.sock}, each pointing at another service endpoint), and
 * registration sockets that misbehave.
 *
 * <ul>
 *   <li>{@link #serving(Path, PluginInfo)}: {@code GetInfo} answers the given {@code PluginInfo};
 *       {@code NotifyRegistrationStatus} is answered and counted ({@link #notifications()}): a
 *       read-only client must leave it at 0.</li>
 *   <li>{@link #hanging(Path)}: a socket that accepts connections and never answers (a stuck plugin).</li>
 *   <li>{@link #garbage(Path)}: a socket that answers every connection with bytes that are not HTTP/2.</li>
 * </ul>
 *
 * <p>{@link #close()} removes the socket file, as a plugin that stops does.
 */
public final class FakePluginRegistration implements AutoCloseable {

    private static final Logger LOGGER = LoggerFactory.getLogger(FakePluginRegistration.class);

    private final Path socket;
    private final UnixSocketGrpcServer grpc;
    private final RawSocket raw;
    private final AtomicInteger notifications = new AtomicInteger();
    private final AtomicInteger getInfoCalls = new AtomicInteger();

    private FakePluginRegistration(Path socket, PluginInfo info) {
        this.socket = UnixSocketGrpcServer.checkSocketPath(socket);
        this.grpc = UnixSocketGrpcServer.start(this.socket, "fake-reg-" + info.getName(), List.of(new Service(info)));
        this.raw = null;
    }

    private FakePluginRegistration(Path socket, byte[] greeting) {
        this.socket = UnixSocketGrpcServer.checkSocketPath(socket);
        this.grpc = null;
        this.raw = new RawSocket(this.socket, greeting);
    }

    /** A registration socket at {@code socket} whose {@code GetInfo} returns {@code info}. */
    public static FakePluginRegistration serving(Path socket, PluginInfo info) {
        return new FakePluginRegistration(socket, Objects.requireNonNull(info, "info"));
    }

    /** The {@code PluginInfo} of a DRA driver, as the kubeletplugin library registers it. */
    public static PluginInfo draPlugin(String driver, Path endpoint, List<String> supportedVersions) {
        return PluginInfo.newBuilder().setType(FakeDraDriver.PLUGIN_TYPE).setName(driver)
                .setEndpoint(endpoint.toAbsolutePath().toString()).addAllSupportedVersions(supportedVersions).build();
    }

    /** A socket that accepts connections and never says a word. */
    public static FakePluginRegistration hanging(Path socket) {
        return new FakePluginRegistration(socket, (byte[]) null);
    }

    /** A socket that answers every connection with garbage and closes it. */
    public static FakePluginRegistration garbage(Path socket) {
        return new FakePluginRegistration(socket, "this is not HTTP/2\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
    }

    public Path socket() {
        return socket;
    }

    /** How often {@code NotifyRegistrationStatus} was called (only the kubelet should). */
    public int notifications() {
        return notifications.get();
    }

    /** How often {@code GetInfo} was called. */
    public int getInfoCalls() {
        return getInfoCalls.get();
    }

    @Override
    public void close() {
        if (grpc != null) {
            grpc.close();
        }
        if (raw != null) {
            raw.close();
        }
    }

    private final class Service extends RegistrationGrpc.RegistrationImplBase {
        private final PluginInfo info;

        Service(PluginInfo info) {
            this.info = info;
        }

        @Override
        public void getInfo(InfoRequest request, StreamObserver<PluginInfo> observer) {
            getInfoCalls.incrementAndGet();
            observer.onNext(info);
            observer.onCompleted();
        }

        @Override
        public void notifyRegistrationStatus(RegistrationStatus request, StreamObserver<RegistrationStatusResponse> observer) {
            notifications.incrementAndGet();
            observer.onNext(RegistrationStatusResponse.getDefaultInstance());
            observer.onCompleted();
        }
    }

    /** A plain unix socket: accepts, optionally writes {@code greeting} and closes, else holds the connection open. */
    private static final class RawSocket {
        private final Path path;
        private final ServerSocketChannel server;
        private final Thread acceptor;
        private final List<SocketChannel> held = new java.util.concurrent.CopyOnWriteArrayList<>();

        RawSocket(Path path, byte[] greeting) {
            this.path = path;
            try {
                Files.createDirectories(path.getParent());
                Files.deleteIfExists(path);
                server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
                server.bind(UnixDomainSocketAddress.of(path));
            } catch (IOException e) {
                throw new UncheckedIOException("cannot bind " + path, e);
            }
            acceptor = new Thread(() -> accept(greeting), "fake-reg-raw");
            acceptor.setDaemon(true);
            acceptor.start();
        }

        private void accept(byte[] greeting) {
            while (server.isOpen()) {
                try {
                    SocketChannel client = server.accept();
                    if (greeting == null) {
                        held.add(client);
                    } else {
                        client.write(ByteBuffer.wrap(greeting));
                        client.close();
                    }
                } catch (IOException e) {
                    if (server.isOpen()) {
                        LOGGER.debug("raw socket accept failed path={} error={}", path, e.toString());
                    }
                }
            }
        }

        void close() {
            try {
                server.close();
                for (SocketChannel client : held) {
                    client.close();
                }
                Files.deleteIfExists(path);
            } catch (IOException e) {
                LOGGER.debug("raw socket close failed path={} error={}", path, e.toString());
            }
        }
    }
}
