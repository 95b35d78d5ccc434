package io.devhealth.sink;

import io.devhealth.sink.condition.PodCache;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import java.util.function.Consumer;

/**
 * Tells the sink when a pod terminates, because a pod can end without any new device status arriving
 * (upstream #132978 is exactly that case): a pod whose {@code status.phase} becomes Succeeded or Failed
 * (the phases in which the kubelet has unprepared the pod's claims), and when a pod is deleted. A
 * handler of the sink's one watch of pods ({@link PodCache}), which the writer reads too, rather than
 * a second watch of its own.
 */
public final class TerminatedPodWatcher implements ResourceEventHandler<Pod> {

    private final Consumer<Pod> onTerminated;
    private final Consumer<Pod> onDeleted;

    public TerminatedPodWatcher(Consumer<Pod> onTerminated, Consumer<Pod> onDeleted) {
        this.onTerminated = onTerminated;
        this.onDeleted = onDeleted;
    }

    @Override
    public void onAdd(Pod pod) {
        if (terminated(pod)) {
            onTerminated.accept(pod);
        }
    }

    @Override
    public void onUpdate(Pod oldPod, Pod newPod) {
        if (terminated(newPod) && (oldPod == null || !terminated(oldPod))) {
            onTerminated.accept(newPod);
        }
    }

    @Override
    public void onDelete(Pod pod, boolean deletedFinalStateUnknown) {
        onDeleted.accept(pod);
    }

    public static boolean terminated(Pod pod) {
        String phase = pod.getStatus() == null ? null : pod.getStatus().getPhase();
        return "Succeeded".equals(phase) || "Failed".equals(phase);
    }
}
