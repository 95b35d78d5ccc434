package io.devhealth.sink;

import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.Pod;
import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Detects an API server that silently drops {@code allocatedResourcesStatus} (its
 * {@code ResourceHealthStatus} gate is off: {@code dropDisabledPodStatusFields} clears the field on
 * every write, and the PATCH still succeeds). After a write that set the field, the pod the server
 * returned must carry it; when it does not, the sink writes only the condition, raises
 * {@code devhealth.sink.field.dropped}, logs once, and tries the field again after the recheck interval
 * (the gate may be turned on later).
 */
final class FieldSupport {

    private static final Logger LOGGER = LoggerFactory.getLogger(FieldSupport.class);

    private final Duration recheckInterval;
    private final SinkMetrics metrics;
    private final AtomicBoolean warned = new AtomicBoolean();
    private volatile Instant droppedAt;

    FieldSupport(Duration recheckInterval, SinkMetrics metrics) {
        this.recheckInterval = recheckInterval;
        this.metrics = metrics;
    }

    /** Whether writes should include the field now. */
    boolean shouldWrite(Instant now) {
        Instant dropped = droppedAt;
        return dropped == null || !now.isBefore(dropped.plus(recheckInterval));
    }

    boolean dropped() {
        return droppedAt != null;
    }

    /** Checks the pod the API server returned for a patch that set the field on {@code containers}. */
    void observe(Pod returned, Collection<String> containers, Instant now) {
        if (containers.isEmpty() || returned == null || returned.getStatus() == null || returned.getStatus().getContainerStatuses() == null) {
            return;
        }
        boolean kept = true;
        for (ContainerStatus status : returned.getStatus().getContainerStatuses()) {
            if (containers.contains(status.getName())
                    && (status.getAllocatedResourcesStatus() == null || status.getAllocatedResourcesStatus().isEmpty())) {
                kept = false;
            }
        }
        String pod = returned.getMetadata().getNamespace() + "/" + returned.getMetadata().getName();
        if (!kept) {
            metrics.fieldDropped();
            droppedAt = now;
            if (warned.compareAndSet(false, true)) {
                LOGGER.warn("api server dropped allocatedResourcesStatus pod={} cause=\"ResourceHealthStatus feature gate off on "
                        + "kube-apiserver\" action=\"writing the condition {} only; retrying the field every {}\"",
                        pod, PodStatusWriter.CONDITION_TYPE, recheckInterval);
            } else {
                LOGGER.debug("api server still drops allocatedResourcesStatus pod={}", pod);
            }
        } else if (droppedAt != null) {
            droppedAt = null;
            metrics.fieldSupported();
            warned.set(false);
            LOGGER.info("api server keeps allocatedResourcesStatus again pod={}", pod);
        }
    }
}
