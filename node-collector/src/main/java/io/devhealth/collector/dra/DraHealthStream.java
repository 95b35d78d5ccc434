package io.devhealth.collector.dra;

import io.devhealth.collector.grpc.UnixChannels;
import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.proto.drahealth.v1.DRAResourceHealthGrpc;
import io.devhealth.schema.proto.drahealth.v1.NodeWatchResourcesRequest;
import io.devhealth.schema.proto.drahealth.v1.NodeWatchResourcesResponse;
import io.grpc.CallOptions;
import io.grpc.Context;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.protobuf.ProtoUtils;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.StreamObserver;
import java.util.Locale;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one authoritative {@code NodeWatchResources} stream of one DRA driver endpoint.
 *
 * <p>Reconnects with backoff after the stream ends or fails; stops for good on {@code UNIMPLEMENTED}
 * (the kubelet's 5 s retry against such drivers floods their logs, upstream #141855).
 *
 * <p>A message over the channel's inbound limit, or a snapshot of more devices than
 * {@link StreamLimits#maxDevices()}, is refused as a whole ({@link Refusal}): grpc-java ends the call
 * when a message cannot be read, so the stream is lost and reconnects with backoff like any other
 * loss. That is also what keeps the state right: a refused snapshot says nothing we may use, so the
 * driver's source is down (its devices neither healthy nor unhealthy) until a new stream delivers a
 * full snapshot that passes, and every device of it is then reported afresh.
 */
public final class DraHealthStream implements AutoCloseable {

    private static final Logger LOGGER = LoggerFactory.getLogger(DraHealthStream.class);

    /** How grpc-java's deframer describes a message over the inbound limit ({@code MessageDeframer.processHeader}). */
    private static final String OVER_INBOUND_LIMIT = "gRPC message exceeds maximum size";

    /** Why a snapshot was refused; the label of the refusal counter. */
    public enum Refusal {
        MESSAGE_TOO_LARGE,
        TOO_MANY_DEVICES;

        public String label() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /**
     * What one stream may receive.
     *
     * @param maxInboundMessageBytes the channel's inbound message limit ({@code grpc.max.inbound.message.bytes})
     * @param maxDevices             devices per snapshot ({@code dra.snapshot.max.devices})
     */
    public record StreamLimits(int maxInboundMessageBytes, int maxDevices) {}

    private final String driver;
    private final Path socket;
    private final HealthApiVersion version;
    private final DriverStreamListener listener;
    private final ScheduledExecutorService scheduler;
    private final Backoff backoff;
    private final StreamLimits limits;
    private final Object lock = new Object();
    private ManagedChannel channel;
    private Context.CancellableContext call;
    private boolean closed;

    public DraHealthStream(String driver, Path socket, HealthApiVersion version, DriverStreamListener listener,
                           ScheduledExecutorService scheduler, Duration maxBackoff, StreamLimits limits) {
        this.driver = driver;
        this.socket = socket;
        this.version = version;
        this.listener = listener;
        this.scheduler = scheduler;
        this.backoff = new Backoff(Duration.ofMillis(200), maxBackoff);
        this.limits = limits;
    }

    public String driver() {
        return driver;
    }

    public Path socket() {
        return socket;
    }

    public void start() {
        synchronized (lock) {
            if (closed) {
                return;
            }
            if (channel == null) {
                channel = UnixChannels.open(socket, limits.maxInboundMessageBytes());
            }
            call = Context.current().withCancellation();
            LOGGER.info("dra stream connecting driver={} socket={} api={}", driver, socket, version.registrationName());
            call.run(this::watch);
        }
    }

    private void watch() {
        switch (version) {
            case V1 -> call(DRAResourceHealthGrpc.getNodeWatchResourcesMethod(), NodeWatchResourcesRequest.getDefaultInstance(),
                    NodeWatchResourcesResponse.getDefaultInstance(), DraHealthStream::fromV1);
            case V1ALPHA1 -> call(io.devhealth.schema.proto.drahealth.v1alpha1.DRAResourceHealthGrpc.getNodeWatchResourcesMethod(),
                    io.devhealth.schema.proto.drahealth.v1alpha1.NodeWatchResourcesRequest.getDefaultInstance(),
                    io.devhealth.schema.proto.drahealth.v1alpha1.NodeWatchResourcesResponse.getDefaultInstance(),
                    DraHealthStream::fromV1alpha1);
        }
    }

    /** The generated method with the response marshaller that counts devices before parsing ({@link SnapshotSizeLimit}). */
    private <Q extends com.google.protobuf.Message, R extends com.google.protobuf.Message> void call(
            MethodDescriptor<Q, R> generated, Q request, R responsePrototype, java.util.function.Function<R, List<ObservedDevice>> convert) {
        MethodDescriptor<Q, R> method = generated.toBuilder(ProtoUtils.marshaller(request),
                new SnapshotSizeLimit<>(responsePrototype, limits.maxDevices())).build();
        ClientCalls.asyncServerStreamingCall(channel.newCall(method, CallOptions.DEFAULT), request, new Observer<>(convert));
    }

    /** Why the call failed when it was a refusal of ours, else null. */
    static Refusal refusal(Status status) {
        if (status.getCode() == Status.Code.RESOURCE_EXHAUSTED && status.getDescription() != null
                && status.getDescription().startsWith(OVER_INBOUND_LIMIT)) {
            return Refusal.MESSAGE_TOO_LARGE;
        }
        for (Throwable cause = status.getCause(); cause != null; cause = cause.getCause()) {
            if (cause instanceof SnapshotSizeLimit.TooManyDevicesException) {
                return Refusal.TOO_MANY_DEVICES;
            }
        }
        return null;
    }

    private final class Observer<T> implements StreamObserver<T> {
        private final java.util.function.Function<T, List<ObservedDevice>> convert;
        private boolean first = true;

        Observer(java.util.function.Function<T, List<ObservedDevice>> convert) {
            this.convert = convert;
        }

        @Override
        public void onNext(T response) {
            if (first) {
                first = false;
                backoff.reset();
                listener.onStreamUp(driver, version);
            }
            listener.onSnapshot(driver, convert.apply(response));
        }

        @Override
        public void onError(Throwable error) {
            Status status = Status.fromThrowable(error);
            if (status.getCode() == Status.Code.CANCELLED && isClosed()) {
                return;
            }
            Refusal refusal = refusal(status);
            if (refusal != null) {
                String detail = refusal == Refusal.MESSAGE_TOO_LARGE
                        ? status.getDescription() + " (grpc.max.inbound.message.bytes)"
                        : rootMessage(status.getCause()) + " (dra.snapshot.max.devices)";
                LOGGER.warn("dra snapshot refused driver={} socket={} reason={} detail=\"{}\"", driver, socket, refusal.label(), detail);
                listener.onSnapshotRefused(driver, refusal, detail);
                lost("snapshot refused: " + detail);
                return;
            }
            if (status.getCode() == Status.Code.UNIMPLEMENTED) {
                LOGGER.warn("dra driver does not serve health driver={} api={} status={}", driver, version.registrationName(), status);
                listener.onUnsupported(driver, "UNIMPLEMENTED: " + status.getDescription());
                return;
            }
            lost(status.getCode() + (status.getDescription() == null ? "" : ": " + status.getDescription()));
        }

        @Override
        public void onCompleted() {
            lost("stream ended by driver");
        }
    }

    private void lost(String reason) {
        if (isClosed()) {
            return;
        }
        listener.onStreamDown(driver, reason);
        Duration delay = backoff.next();
        LOGGER.warn("dra stream lost driver={} reason=\"{}\" reconnectInMs={}", driver, reason, delay.toMillis());
        scheduler.schedule(this::start, delay.toMillis(), TimeUnit.MILLISECONDS);
    }

    private static String rootMessage(Throwable error) {
        Throwable root = error;
        while (root.getCause() != null) {
            root = root.getCause();
        }
        return root.getMessage();
    }

    private boolean isClosed() {
        synchronized (lock) {
            return closed;
        }
    }

    static List<ObservedDevice> fromV1(NodeWatchResourcesResponse response) {
        return response.getDevicesList().stream()
                .map(d -> new ObservedDevice(d.getDevice().getPoolName(), d.getDevice().getDeviceName(),
                        health(d.getHealthValue()), d.getMessage(), Math.max(0, d.getHealthCheckTimeoutSeconds())))
                .toList();
    }

    static List<ObservedDevice> fromV1alpha1(io.devhealth.schema.proto.drahealth.v1alpha1.NodeWatchResourcesResponse response) {
        return response.getDevicesList().stream()
                .map(d -> new ObservedDevice(d.getDevice().getPoolName(), d.getDevice().getDeviceName(),
                        health(d.getHealthValue()), d.getMessage(), Math.max(0, d.getHealthCheckTimeoutSeconds())))
                .toList();
    }

    /** As the kubelet maps it: HEALTHY and UNHEALTHY, anything else (including numbers we do not know) UNKNOWN. */
    static HealthStatus health(int wireValue) {
        return switch (wireValue) {
            case 1 -> HealthStatus.HEALTHY;
            case 2 -> HealthStatus.UNHEALTHY;
            default -> HealthStatus.UNKNOWN;
        };
    }

    @Override
    public void close() {
        synchronized (lock) {
            if (closed) {
                return;
            }
            closed = true;
            if (call != null) {
                call.cancel(null);
            }
            if (channel != null) {
                channel.shutdownNow();
            }
        }
    }
}
