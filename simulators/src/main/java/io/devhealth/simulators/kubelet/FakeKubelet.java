package io.devhealth.simulators.kubelet;

import io.devhealth.schema.proto.podresources.v1.AllocatableResourcesRequest;
import io.devhealth.schema.proto.podresources.v1.AllocatableResourcesResponse;
import io.devhealth.schema.proto.podresources.v1.GetPodResourcesRequest;
import io.devhealth.schema.proto.podresources.v1.GetPodResourcesResponse;
import io.devhealth.schema.proto.podresources.v1.ListPodResourcesRequest;
import io.devhealth.schema.proto.podresources.v1.ListPodResourcesResponse;
import io.devhealth.schema.proto.podresources.v1.PodResources;
import io.devhealth.schema.proto.podresources.v1.PodResourcesListerGrpc;
import io.devhealth.simulators.internal.UnixSocketGrpcServer;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import java.nio.file.Path;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The kubelet's PodResources v1 API ({@code v1.PodResourcesLister}: {@code List}, {@code Get},
 * {@code GetAllocatableResources}) served on a unix socket, with scripted content.
 *
 * <p>On a node the socket is {@code /var/lib/kubelet/pod-resources/kubelet.sock}; in tests use a short
 * path (at most {@value io.devhealth.simulators.internal.UnixSocketGrpcServer#MAX_SOCKET_PATH_BYTES} bytes,
 * see {@link UnixSocketGrpcServer}). There is no Watch RPC in the real API, so clients poll {@code List};
 * {@link #listCalls()} lets a test see that they do.
 *
 * <p>Like the real kubelet, {@code Get} for an unknown pod fails with gRPC code {@code UNKNOWN} and the
 * message {@code pod <name> in namespace <ns> not found} (the kubelet returns a plain Go error).
 *
 * <p>Thread-safe.
 */
public final class FakeKubelet implements AutoCloseable {

    private static final Logger LOGGER = LoggerFactory.getLogger(FakeKubelet.class);

    private final UnixSocketGrpcServer server;
    private final AtomicReference<List<PodResources>> pods = new AtomicReference<>(List.of());
    private final AtomicReference<AllocatableResourcesResponse> allocatable =
            new AtomicReference<>(AllocatableResourcesResponse.getDefaultInstance());
    private final AtomicReference<Status> failure = new AtomicReference<>();
    private final AtomicInteger listCalls = new AtomicInteger();
    private final AtomicInteger getCalls = new AtomicInteger();
    private final AtomicInteger allocatableCalls = new AtomicInteger();

    private FakeKubelet(Path socket) {
        this.server = UnixSocketGrpcServer.start(socket, "fake-kubelet", List.of(new Lister()));
        LOGGER.info("fake kubelet started socket={}", server.socket());
    }

    /**
     * Starts serving PodResources on {@code socket} (stale socket files are replaced).
     *
     * @param socket the socket path
     * @return the running fake kubelet, with no pods
     */
    public static FakeKubelet start(Path socket) {
        return new FakeKubelet(socket);
    }

    /**
     * Starts a {@link PodResources} builder.
     *
     * @param namespace the pod namespace
     * @param name the pod name
     * @return the builder
     * @see PodResourcesBuilder
     */
    public static PodResourcesBuilder pod(String namespace, String name) {
        return PodResourcesBuilder.pod(namespace, name);
    }

    /** @return the absolute socket path */
    public Path socket() {
        return server.socket();
    }

    /**
     * Replaces what {@code List} returns and what {@code Get} finds.
     *
     * @param newPods the pods on this node
     */
    public void setPods(List<PodResources> newPods) {
        pods.set(List.copyOf(newPods));
        LOGGER.info("fake kubelet pods set count={}", newPods.size());
    }

    /**
     * Replaces the pods.
     *
     * @param newPods the pods on this node
     */
    public void setPods(PodResources... newPods) {
        setPods(List.of(newPods));
    }

    /** @return the pods currently served */
    public List<PodResources> pods() {
        return pods.get();
    }

    /**
     * @param response what {@code GetAllocatableResources} returns; default empty
     */
    public void setAllocatable(AllocatableResourcesResponse response) {
        allocatable.set(Objects.requireNonNull(response, "response"));
    }

    /**
     * Makes every following call fail with {@code status} until {@link #clearFailure()}, e.g.
     * {@code Status.UNAVAILABLE} for a kubelet restart.
     *
     * @param status a non-OK status
     */
    public void failWith(Status status) {
        failure.set(Objects.requireNonNull(status, "status"));
        LOGGER.info("fake kubelet failing calls code={}", status.getCode());
    }

    /** Lets calls succeed again. */
    public void clearFailure() {
        failure.set(null);
    }

    /** @return how many {@code List} calls were received (failed ones included) */
    public int listCalls() {
        return listCalls.get();
    }

    /** @return how many {@code Get} calls were received */
    public int getCalls() {
        return getCalls.get();
    }

    /** @return how many {@code GetAllocatableResources} calls were received */
    public int allocatableCalls() {
        return allocatableCalls.get();
    }

    /** Stops serving and deletes the socket. Idempotent. */
    @Override
    public void close() {
        server.close();
        LOGGER.info("fake kubelet stopped socket={}", server.socket());
    }

    private boolean failed(StreamObserver<?> observer) {
        Status status = failure.get();
        if (status == null) {
            return false;
        }
        observer.onError(status.asRuntimeException());
        return true;
    }

    private final class Lister extends PodResourcesListerGrpc.PodResourcesListerImplBase {
        @Override
        public void list(ListPodResourcesRequest request, StreamObserver<ListPodResourcesResponse> observer) {
            int call = listCalls.incrementAndGet();
            if (failed(observer)) {
                return;
            }
            List<PodResources> current = pods.get();
            LOGGER.debug("podresources List call={} pods={}", call, current.size());
            observer.onNext(ListPodResourcesResponse.newBuilder().addAllPodResources(current).build());
            observer.onCompleted();
        }

        @Override
        public void get(GetPodResourcesRequest request, StreamObserver<GetPodResourcesResponse> observer) {
            getCalls.incrementAndGet();
            if (failed(observer)) {
                return;
            }
            for (PodResources pod : pods.get()) {
                if (pod.getName().equals(request.getPodName()) && pod.getNamespace().equals(request.getPodNamespace())) {
                    observer.onNext(GetPodResourcesResponse.newBuilder().setPodResources(pod).build());
                    observer.onCompleted();
                    return;
                }
            }
            observer.onError(Status.UNKNOWN
                    .withDescription("pod " + request.getPodName() + " in namespace " + request.getPodNamespace()
                            + " not found")
                    .asRuntimeException());
        }

        @Override
        public void getAllocatableResources(AllocatableResourcesRequest request,
                StreamObserver<AllocatableResourcesResponse> observer) {
            allocatableCalls.incrementAndGet();
            if (failed(observer)) {
                return;
            }
            observer.onNext(allocatable.get());
            observer.onCompleted();
        }
    }
}
