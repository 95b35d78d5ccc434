package io.devhealth.bench.pipeline;

import io.devhealth.simulators.kube.FleetKubernetesApi;
import io.devhealth.simulators.kube.LocalKubernetesApi;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.Locale;

/**
 * The API server the benchmark's sink writes to: {@code fleet} ({@link FleetKubernetesApi}, cheap per
 * request, the default) or {@code fabric8-mock} ({@link LocalKubernetesApi}, fabric8's CRUD mock, whose
 * per-request cost grows with the number of stored objects).
 */
public final class BenchApiServer implements AutoCloseable {

    public static final String FLEET = "fleet";
    public static final String FABRIC8_MOCK = "fabric8-mock";

    private final FleetKubernetesApi fleet;
    private final LocalKubernetesApi mock;

    private BenchApiServer(FleetKubernetesApi fleet, LocalKubernetesApi mock) {
        this.fleet = fleet;
        this.mock = mock;
    }

    /** @param kind {@value #FLEET} or {@value #FABRIC8_MOCK} */
    public static BenchApiServer start(String kind) {
        return switch (kind.toLowerCase(Locale.ROOT)) {
            case FLEET -> new BenchApiServer(FleetKubernetesApi.start(), null);
            case FABRIC8_MOCK -> new BenchApiServer(null, LocalKubernetesApi.start());
            default -> throw new IllegalArgumentException("unknown API server: " + kind + " (expected " + FLEET + " or " + FABRIC8_MOCK + ")");
        };
    }

    public String url() {
        return fleet != null ? fleet.url() : mock.url();
    }

    /** A client for setting the cluster up (creating pods, as the kubelet would). */
    public KubernetesClient client() {
        return fleet != null ? fleet.client() : mock.client();
    }

    /** Starts observing the sink's effect on the pods of {@code namespace}. */
    public ApiServerObserver observe(String namespace, ApiServerObserver.TransitionListener onTransition) {
        return fleet != null ? ApiServerObserver.listening(fleet, namespace, onTransition)
                : ApiServerObserver.watching(mock, namespace, onTransition);
    }

    @Override
    public void close() {
        if (fleet != null) {
            fleet.close();
        } else {
            mock.close();
        }
    }
}
