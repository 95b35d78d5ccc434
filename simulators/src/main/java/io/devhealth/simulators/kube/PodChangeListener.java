package io.devhealth.simulators.kube;

/**
 * Called by {@link FleetKubernetesApi} for every stored pod change, in resourceVersion order, on the
 * server's request thread while the change is being applied: keep it cheap (no blocking, no requests to
 * the same server). An exception is logged and does not fail the request.
 */
@FunctionalInterface
public interface PodChangeListener {

    /** @param change the pod after the change, and when it was applied */
    void podChanged(PodChange change);
}
