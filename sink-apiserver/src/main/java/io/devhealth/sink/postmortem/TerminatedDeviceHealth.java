package io.devhealth.sink.postmortem;

import io.devhealth.schema.HealthWords;
import io.devhealth.schema.PodHealth;
import io.devhealth.schema.avro.ClaimDeviceStatus;
import io.devhealth.schema.avro.ContainerDeviceStatus;
import io.devhealth.schema.avro.DevicePluginResourceStatus;
import io.devhealth.schema.avro.DeviceRef;
import io.devhealth.schema.avro.DeviceStatus;
import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.PodDeviceStatus;
import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.Pod;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

/**
 * Device health of terminated containers "as of termination" (the post-mortem view, upstream #132978):
 * a device's report (a ResourceClaim's device or a device plugin's, by the same rule) applies when its
 * health began at or before the container's {@code finishedAt}, or
 * when it is Unhealthy and began within the post-termination window (failures are often reported after
 * the crash they caused). Anything later (a recovery after the job died, a report after the window, a
 * device going silent because the node drained) does not change what the pod shows.
 *
 * <p>Statuses are folded in the order they were produced, starting from what the pod's post-mortem
 * record already shows (written before, possibly by an earlier run of the sink), else from the last
 * status the sink remembers, so that coalescing several statuses into one write never hides an
 * in-window Unhealthy report.
 */
public final class TerminatedDeviceHealth {

    static final String NO_REPORT_MESSAGE = "no device health report at or before the container finished";

    private TerminatedDeviceHealth() {}

    /** When the container finished, if it is terminated (a restarted container is live again). */
    static Optional<Instant> finishedAt(ContainerStatus container) {
        if (container.getState() == null || container.getState().getTerminated() == null) {
            return Optional.empty();
        }
        String finished = container.getState().getTerminated().getFinishedAt();
        return Optional.of(finished == null || finished.isEmpty() ? Instant.EPOCH : Instant.parse(finished));
    }

    /** Every container of the pod that has a status is terminated; then returns the latest finishedAt. */
    public static Optional<Instant> podFinishedAt(Pod pod) {
        if (pod.getStatus() == null || pod.getStatus().getContainerStatuses() == null
                || pod.getStatus().getContainerStatuses().isEmpty()) {
            return Optional.empty();
        }
        Instant latest = Instant.EPOCH;
        for (ContainerStatus container : pod.getStatus().getContainerStatuses()) {
            Optional<Instant> finished = finishedAt(container);
            if (finished.isEmpty()) {
                return Optional.empty();
            }
            latest = finished.get().isAfter(latest) ? finished.get() : latest;
        }
        return Optional.of(latest);
    }

    /**
     * The status the pod should show: live containers get the latest status; terminated containers get
     * health as of their finishedAt, folded over {@code statuses} (oldest first, not empty).
     */
    public static PodDeviceStatus effective(Pod pod, List<PodDeviceStatus> statuses, PodDeviceStatus remembered, Duration window,
                                            DevicePostMortem.Spec recorded) {
        PodDeviceStatus latest = statuses.get(statuses.size() - 1);
        Map<String, ContainerStatus> containerStatuses = new HashMap<>();
        if (pod.getStatus() != null && pod.getStatus().getContainerStatuses() != null) {
            pod.getStatus().getContainerStatuses().forEach(c -> containerStatuses.put(c.getName(), c));
        }
        List<ContainerDeviceStatus> containers = new ArrayList<>();
        boolean changed = false;
        for (ContainerDeviceStatus container : latest.getContainers()) {
            ContainerStatus containerStatus = containerStatuses.get(container.getName());
            Optional<Instant> finished = containerStatus == null ? Optional.empty() : finishedAt(containerStatus);
            if (finished.isEmpty()) {
                containers.add(container);
                continue;
            }
            changed = true;
            containers.add(asOf(container, finished.get(), window, statuses, remembered, recorded));
        }
        if (!changed) {
            return latest;
        }
        PodDeviceStatus result = PodDeviceStatus.newBuilder(latest).setContainers(containers).build();
        result.setSummary(PodHealth.summary(result.getContainers()));
        return result;
    }

    /**
     * The container's devices as of {@code finished}, claim devices and device-plugin devices alike:
     * both are the pod's hardware when it died, and a repair after the crash hides the failure in
     * either.
     */
    private static ContainerDeviceStatus asOf(ContainerDeviceStatus container, Instant finished, Duration window,
                                              List<PodDeviceStatus> statuses, PodDeviceStatus remembered,
                                              DevicePostMortem.Spec recorded) {
        Instant windowEnd = finished.plus(window);
        String name = container.getName();
        List<ClaimDeviceStatus> claims = new ArrayList<>();
        for (ClaimDeviceStatus claim : container.getClaims()) {
            List<DeviceStatus> devices = new ArrayList<>();
            for (DeviceStatus device : claim.getDevices()) {
                devices.add(deviceAsOf(name, device, s -> find(s, name, claim.getClaimName(), device.getDevice()),
                        finished, windowEnd, statuses, remembered, recorded));
            }
            claims.add(ClaimDeviceStatus.newBuilder(claim).setDevices(devices).build());
        }
        List<DevicePluginResourceStatus> resources = new ArrayList<>();
        for (DevicePluginResourceStatus resource : container.getDevicePluginResources()) {
            List<DeviceStatus> devices = new ArrayList<>();
            for (DeviceStatus device : resource.getDevices()) {
                devices.add(deviceAsOf(name, device, s -> findPlugin(s, name, resource.getResourceName(), device.getResourceId()),
                        finished, windowEnd, statuses, remembered, recorded));
            }
            resources.add(DevicePluginResourceStatus.newBuilder(resource).setDevices(devices).build());
        }
        return ContainerDeviceStatus.newBuilder(container).setClaims(claims).setDevicePluginResources(resources).build();
    }

    /**
     * One device as of {@code finished}: starting from what the record shows, else what the sink
     * remembers (if it began by then), every report that {@link #applies} and does not repair a
     * failure the pod may have died with ({@link #keepsFailure}); Unknown when none does.
     * {@code reportIn}: this device's report in a status, if the status has it.
     */
    private static DeviceStatus deviceAsOf(String container, DeviceStatus device, Function<PodDeviceStatus, Optional<DeviceStatus>> reportIn,
                                           Instant finished, Instant windowEnd, List<PodDeviceStatus> statuses,
                                           PodDeviceStatus remembered, DevicePostMortem.Spec recorded) {
        DeviceStatus state = recorded(recorded, container, device)
                .or(() -> reportIn.apply(remembered).filter(d -> beganBy(d, finished)))
                .orElse(null);
        for (PodDeviceStatus status : statuses) {
            DeviceStatus report = reportIn.apply(status).orElse(null);
            if (report != null && applies(report, finished, windowEnd) && !keepsFailure(state, report, finished)) {
                state = report;
            }
        }
        return state != null ? state : DeviceStatus.newBuilder(device)
                .setHealth(HealthStatus.UNKNOWN).setMessage(NO_REPORT_MESSAGE).setReason(null).build();
    }

    static boolean applies(DeviceStatus report, Instant finished, Instant windowEnd) {
        if (beganBy(report, finished)) {
            return true;
        }
        return report.getHealth() == HealthStatus.UNHEALTHY && !report.getSince().isAfter(windowEnd);
    }

    /**
     * Whether {@code report}'s health began at or before the container finished. A client reads
     * {@code finishedAt} to the second ({@code metav1.Time.MarshalJSON} formats RFC 3339 without
     * fractions, apimachinery {@code pkg/apis/meta/v1/time.go}), so the container really finished
     * somewhere in the second that {@code finished} starts: a report from within that second counts.
     */
    static boolean beganBy(DeviceStatus report, Instant finished) {
        Instant endOfSecond = finished.getNano() == 0 ? finished.plusSeconds(1) : finished.plusNanos(1);
        return report.getSince().isBefore(endOfSecond);
    }

    /**
     * Whether an Unhealthy {@code state} stands against a later report that is not Unhealthy: when that
     * report's health may have begun after the container finished. With {@code finishedAt} to the
     * second, a repair from within that second may have come after the crash as well as before it;
     * the device was Unhealthy in the second the pod died, and that is what the record keeps (the
     * verdict then says DeviceFailure; a pod whose devices were Healthy throughout is never affected).
     */
    static boolean keepsFailure(DeviceStatus state, DeviceStatus report, Instant finished) {
        if (state == null || state.getHealth() != HealthStatus.UNHEALTHY || report.getHealth() == HealthStatus.UNHEALTHY) {
            return false;
        }
        boolean surelyBefore = finished.getNano() == 0 ? report.getSince().isBefore(finished) : !report.getSince().isAfter(finished);
        return !surelyBefore;
    }

    /** What the post-mortem record shows for this device of this container, if it has it. */
    private static Optional<DeviceStatus> recorded(DevicePostMortem.Spec recorded, String container, DeviceStatus device) {
        if (recorded == null || recorded.containers() == null) {
            return Optional.empty();
        }
        for (DevicePostMortem.ContainerRecord c : recorded.containers()) {
            if (!container.equals(c.name()) || c.resources() == null) {
                continue;
            }
            for (DevicePostMortem.ResourceRecord entry : c.resources()) {
                for (DevicePostMortem.DeviceRecord d : entry.devices() == null ? List.<DevicePostMortem.DeviceRecord>of() : entry.devices()) {
                    if (device.getResourceId().equals(d.resourceID())) {
                        return Optional.of(DeviceStatus.newBuilder(device)
                                // A word the sink cannot read says nothing about the device.
                                .setHealth(HealthWords.parse(d.health()).orElse(HealthStatus.UNKNOWN))
                                .setMessage(d.message())
                                .setReason(d.reason())
                                .setSince(d.since() == null ? device.getSince() : Instant.parse(d.since()))
                                .setProduct(d.product() == null ? device.getProduct() : d.product())
                                .build());
                    }
                }
            }
        }
        return Optional.empty();
    }

    private static Optional<DeviceStatus> find(PodDeviceStatus status, String container, String claimName, DeviceRef device) {
        if (status == null) {
            return Optional.empty();
        }
        for (ContainerDeviceStatus c : status.getContainers()) {
            if (!c.getName().equals(container)) {
                continue;
            }
            for (ClaimDeviceStatus claim : c.getClaims()) {
                if (!claim.getClaimName().equals(claimName)) {
                    continue;
                }
                for (DeviceStatus d : claim.getDevices()) {
                    if (d.getDevice().equals(device)) {
                        return Optional.of(d);
                    }
                }
            }
        }
        return Optional.empty();
    }

    /**
     * A device-plugin device is known by its device id (PodResources reports no driver or pool), which
     * the processor puts in {@code resourceId}; the DRA identity it may add from the inventory can
     * come later than the id, so it is not compared.
     */
    private static Optional<DeviceStatus> findPlugin(PodDeviceStatus status, String container, String resourceName, String deviceId) {
        if (status == null) {
            return Optional.empty();
        }
        for (ContainerDeviceStatus c : status.getContainers()) {
            if (!c.getName().equals(container)) {
                continue;
            }
            for (DevicePluginResourceStatus resource : c.getDevicePluginResources()) {
                if (!resource.getResourceName().equals(resourceName)) {
                    continue;
                }
                for (DeviceStatus d : resource.getDevices()) {
                    if (d.getResourceId().equals(deviceId)) {
                        return Optional.of(d);
                    }
                }
            }
        }
        return Optional.empty();
    }
}
