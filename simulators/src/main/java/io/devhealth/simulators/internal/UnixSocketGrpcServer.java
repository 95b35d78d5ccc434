package io.devhealth.simulators.internal;

import io.grpc.BindableService;
import io.grpc.Server;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.MultiThreadIoEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.Epoll;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollIoHandler;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollServerDomainSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.unix.DomainSocketAddress;
import io.grpc.netty.shaded.io.netty.util.concurrent.DefaultThreadFactory;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A gRPC server bound to a unix domain socket, the way the kubelet and DRA drivers talk.
 *
 * <p>Uses {@code grpc-netty-shaded} with its bundled epoll natives (Linux only). Each server owns one
 * boss and one worker event-loop thread, both daemon threads, so a forgotten server never keeps a
 * JVM alive. Not part of the simulators API.
 *
 * <p><b>Socket path length.</b> {@code sun_path} holds 108 bytes including the terminating NUL, so
 * an absolute socket path must be at most {@value #MAX_SOCKET_PATH_BYTES} bytes (UTF-8). Keep test
 * sockets in short directories such as a JUnit {@code @TempDir} (under {@code /tmp}) or
 * {@code target/}.
 */
public final class UnixSocketGrpcServer implements AutoCloseable {

    /** Longest absolute socket path, in UTF-8 bytes, that fits {@code sun_path[108]} with its NUL. */
    public static final int MAX_SOCKET_PATH_BYTES = 107;

    private static final Logger LOGGER = LoggerFactory.getLogger(UnixSocketGrpcServer.class);

    private final Path socket;
    private final Server server;
    private final EventLoopGroup boss;
    private final EventLoopGroup worker;
    private boolean closed;

    private UnixSocketGrpcServer(Path socket, Server server, EventLoopGroup boss, EventLoopGroup worker) {
        this.socket = socket;
        this.server = server;
        this.boss = boss;
        this.worker = worker;
    }

    /**
     * Binds a new server to {@code socket} and starts it. A stale socket file left at that path is
     * removed first (as real plugins do); missing parent directories are created.
     *
     * @param socket the socket path; see the class comment for the length limit
     * @param name a short name for thread names and logs
     * @param services the services to serve; may be empty (every call is then UNIMPLEMENTED)
     * @return the started server
     * @throws IllegalArgumentException if the path is too long
     * @throws UncheckedIOException if the socket cannot be bound
     */
    public static UnixSocketGrpcServer start(Path socket, String name, List<BindableService> services) {
        Path path = checkSocketPath(socket);
        Objects.requireNonNull(name, "name");
        Epoll.ensureAvailability();
        try {
            Files.createDirectories(path.getParent());
            Files.deleteIfExists(path);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot prepare socket path " + path, e);
        }
        EventLoopGroup boss = new MultiThreadIoEventLoopGroup(1, new DefaultThreadFactory(name + "-boss", true),
                EpollIoHandler.newFactory());
        EventLoopGroup worker = new MultiThreadIoEventLoopGroup(1, new DefaultThreadFactory(name + "-worker", true),
                EpollIoHandler.newFactory());
        NettyServerBuilder builder = NettyServerBuilder.forAddress(new DomainSocketAddress(path.toString()))
                .channelType(EpollServerDomainSocketChannel.class)
                .bossEventLoopGroup(boss)
                .workerEventLoopGroup(worker);
        services.forEach(builder::addService);
        Server server = builder.build();
        try {
            server.start();
        } catch (IOException | RuntimeException e) {
            server.shutdownNow();
            boss.shutdownGracefully(0, 0, TimeUnit.MILLISECONDS);
            worker.shutdownGracefully(0, 0, TimeUnit.MILLISECONDS);
            if (e instanceof IOException io) {
                throw new UncheckedIOException("cannot bind gRPC server to " + path, io);
            }
            throw (RuntimeException) e;
        }
        LOGGER.debug("grpc unix server started name={} socket={} services={}", name, path, services.size());
        return new UnixSocketGrpcServer(path, server, boss, worker);
    }

    /**
     * Validates a socket path against the {@code sun_path} limit.
     *
     * @param socket the socket path
     * @return the absolute, normalized path
     * @throws IllegalArgumentException if it is longer than {@value #MAX_SOCKET_PATH_BYTES} bytes
     */
    public static Path checkSocketPath(Path socket) {
        Path path = Objects.requireNonNull(socket, "socket").toAbsolutePath().normalize();
        int bytes = path.toString().getBytes(StandardCharsets.UTF_8).length;
        if (bytes > MAX_SOCKET_PATH_BYTES) {
            throw new IllegalArgumentException("unix socket path is " + bytes + " bytes, the limit is "
                    + MAX_SOCKET_PATH_BYTES + " (sun_path[108]); use a shorter directory: " + path);
        }
        return path;
    }

    /** @return the absolute socket path */
    public Path socket() {
        return socket;
    }

    /** Stops the server at once (open calls are cancelled), releases its threads and deletes the socket. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        server.shutdownNow();
        try {
            if (!server.awaitTermination(5, TimeUnit.SECONDS)) {
                LOGGER.warn("grpc unix server did not terminate socket={}", socket);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        boss.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        worker.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        try {
            Files.deleteIfExists(socket);
        } catch (IOException e) {
            LOGGER.warn("cannot delete socket socket={} error={}", socket, e.toString());
        }
        LOGGER.debug("grpc unix server stopped socket={}", socket);
    }
}
