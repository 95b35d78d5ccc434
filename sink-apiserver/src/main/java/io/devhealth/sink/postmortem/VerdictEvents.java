package io.devhealth.sink.postmortem;

import io.devhealth.schema.HealthWords;
import io.devhealth.schema.avro.DeviceRef;
import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.PodRef;
import io.devhealth.schema.avro.TerminatedContainer;
import io.devhealth.schema.avro.TerminatedDevice;
import io.devhealth.schema.avro.TerminatedPod;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The pod-verdicts event of a final post-mortem record. Built from the record and nothing else, so
 * that the feed and {@code kubectl get devicepostmortem} never disagree: the verdict's rule lives in
 * {@link PodVerdict} and {@link TerminatedDeviceHealth}, not here.
 */
public final class VerdictEvents {

    private VerdictEvents() {}

    /** The event of {@code spec}, the frozen record of a pod in {@code namespace}. */
    public static TerminatedPod of(String namespace, DevicePostMortem.Spec spec) {
        if (!spec.isFrozen() || spec.frozenAt() == null) {
            throw new IllegalArgumentException("a verdict is published for final records only: " + namespace + "/" + spec.pod().name());
        }
        List<TerminatedContainer> containers = new ArrayList<>();
        if (spec.containers() != null) {
            for (DevicePostMortem.ContainerRecord container : spec.containers()) {
                containers.add(TerminatedContainer.newBuilder()
                        .setName(container.name())
                        .setExitCode(container.exitCode())
                        .setExitReason(container.exitReason())
                        .setDevices(devices(container))
                        .build());
            }
        }
        return TerminatedPod.newBuilder()
                .setId(spec.pod().uid())
                .setPod(new PodRef(namespace, spec.pod().name(), spec.pod().uid()))
                .setNode(spec.node() == null ? "" : spec.node())
                .setPhase(spec.phase() == null ? "" : spec.phase())
                .setFinishedAt(instant(spec.finishedAt()))
                .setVerdict(PodVerdict.ofWord(spec.verdict()))
                .setHealth(health(spec.health()))
                .setMessage(spec.message())
                .setContainers(containers)
                .setRecordedAt(Instant.parse(spec.frozenAt()))
                .build();
    }

    /** A container's devices, each once (one device can appear under a claim and under its request). */
    private static List<TerminatedDevice> devices(DevicePostMortem.ContainerRecord container) {
        Map<String, TerminatedDevice> devices = new LinkedHashMap<>();
        if (container.resources() == null) {
            return List.of();
        }
        for (DevicePostMortem.ResourceRecord resource : container.resources()) {
            if (resource.devices() == null) {
                continue;
            }
            for (DevicePostMortem.DeviceRecord device : resource.devices()) {
                String key = device.driver() + "/" + device.pool() + "/" + device.device() + "/" + device.resourceID();
                devices.putIfAbsent(key, TerminatedDevice.newBuilder()
                        .setDevice(DeviceRef.newBuilder()
                                .setDriver(device.driver() == null ? "" : device.driver())
                                .setPool(device.pool() == null ? "" : device.pool())
                                .setDevice(device.device() == null ? "" : device.device())
                                .setUuid(device.gpuUUID())
                                .build())
                        .setResourceId(device.resourceID())
                        .setHealth(health(device.health()))
                        .setMessage(device.message())
                        .setReason(device.reason())
                        // The sink writes every device with the time its health began (PostMortemBuilder).
                        .setSince(Instant.parse(device.since()))
                        .setProduct(device.product())
                        .build());
            }
        }
        return new ArrayList<>(devices.values());
    }

    private static HealthStatus health(String word) {
        return word == null ? HealthStatus.UNKNOWN : HealthWords.parse(word).orElse(HealthStatus.UNKNOWN);
    }

    private static Instant instant(String rfc3339) {
        return rfc3339 == null ? null : Instant.parse(rfc3339);
    }
}
