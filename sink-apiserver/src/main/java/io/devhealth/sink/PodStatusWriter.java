package io.devhealth.sink;

import io.devhealth.schema.HealthMessages;
import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.PodDeviceStatus;
import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.api.model.ResourceStatus;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import java.time.Clock;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes a pod's device health into its status with a JSON Patch (RFC 6902).
 *
 * <p>{@code containerStatuses} is an atomic list: a strategic-merge or merge patch would replace it
 * whole and wipe the kubelet's fields. A JSON Patch touches only the paths it names, and its
 * {@code test} operations make it a compare-and-swap on the resourceVersion and on the container at
 * each index; when they fail the pod is re-read and the patch recomputed.
 */
public final class PodStatusWriter {

    private static final Logger LOGGER = LoggerFactory.getLogger(PodStatusWriter.class);

    public static final String CONDITION_TYPE = "devhealth.io/DevicesHealthy";
    private static final int MAX_ATTEMPTS = 5;

    /** What a write did. */
    public enum Outcome { WRITTEN, UNCHANGED, POD_GONE }

    private final KubernetesClient client;
    private final SinkConfig.Mode mode;
    private final Clock clock;

    public PodStatusWriter(KubernetesClient client, SinkConfig.Mode mode, Clock clock) {
        this.client = client;
        this.mode = mode;
        this.clock = clock;
    }

    public Outcome write(PodDeviceStatus status) {
        String namespace = status.getPod().getNamespace();
        String name = status.getPod().getName();
        for (int attempt = 1; ; attempt++) {
            Pod pod = client.pods().inNamespace(namespace).withName(name).get();
            if (pod == null) {
                // History stays in Kafka and the query API; there is nothing left to write to.
                LOGGER.info("pod gone, status dropped pod={}/{} version={}", namespace, name, status.getVersion());
                return Outcome.POD_GONE;
            }
            List<Map<String, Object>> patch = patch(pod, status);
            if (patch.isEmpty()) {
                return Outcome.UNCHANGED;
            }
            try {
                client.pods().inNamespace(namespace).withName(name).subresource("status")
                        .patch(PatchContext.of(PatchType.JSON), client.getKubernetesSerialization().asJson(patch));
                LOGGER.info("pod status written pod={}/{} version={} summary={}", namespace, name, status.getVersion(), status.getSummary());
                return Outcome.WRITTEN;
            } catch (KubernetesClientException e) {
                // 409: resourceVersion moved; 422: a test op failed (the container list changed under us).
                boolean conflict = e.getCode() == 409 || e.getCode() == 422;
                if (!conflict || attempt >= MAX_ATTEMPTS) {
                    throw e;
                }
                LOGGER.debug("pod status conflict, re-reading pod={}/{} attempt={} code={}", namespace, name, attempt, e.getCode());
            }
        }
    }

    /** The JSON Patch that brings {@code pod} to {@code status}; empty when nothing would change. */
    List<Map<String, Object>> patch(Pod pod, PodDeviceStatus status) {
        List<Map<String, Object>> ops = new ArrayList<>();
        if (mode != SinkConfig.Mode.CONDITIONS_ONLY) {
            containerOps(pod, status, ops);
        }
        conditionOps(pod, status, ops);
        if (ops.isEmpty()) {
            return ops;
        }
        List<Map<String, Object>> guarded = new ArrayList<>();
        guarded.add(op("test", "/metadata/resourceVersion", pod.getMetadata().getResourceVersion()));
        guarded.addAll(ops);
        return guarded;
    }

    private void containerOps(Pod pod, PodDeviceStatus status, List<Map<String, Object>> ops) {
        Map<String, List<ResourceStatus>> desired = AllocatedResourcesStatusBuilder.build(pod, status);
        List<ContainerStatus> containerStatuses = pod.getStatus() == null ? null : pod.getStatus().getContainerStatuses();
        if (containerStatuses == null) {
            return;
        }
        for (int i = 0; i < containerStatuses.size(); i++) {
            ContainerStatus current = containerStatuses.get(i);
            List<ResourceStatus> ours = desired.get(current.getName());
            if (ours == null || !writable(current)) {
                continue;
            }
            List<ResourceStatus> merged = merge(current.getAllocatedResourcesStatus(), ours);
            if (Objects.equals(current.getAllocatedResourcesStatus(), merged)) {
                continue;
            }
            String base = "/status/containerStatuses/" + i;
            ops.add(op("test", base + "/name", current.getName()));
            ops.add(op("add", base + "/allocatedResourcesStatus", merged));
        }
    }

    private boolean writable(ContainerStatus container) {
        return switch (mode) {
            case ALL -> true;
            case TERMINATED -> container.getState() != null && container.getState().getTerminated() != null;
            case CONDITIONS_ONLY -> false;
        };
    }

    /** Our claim entries replace same-named ones; entries we do not own (device plugins) are kept. */
    private static List<ResourceStatus> merge(List<ResourceStatus> existing, List<ResourceStatus> ours) {
        Map<String, ResourceStatus> byName = new LinkedHashMap<>();
        if (existing != null) {
            existing.forEach(entry -> byName.put(entry.getName(), entry));
        }
        ours.forEach(entry -> byName.put(entry.getName(), entry));
        return new ArrayList<>(byName.values());
    }

    private void conditionOps(Pod pod, PodDeviceStatus status, List<Map<String, Object>> ops) {
        String conditionStatus = switch (status.getSummary()) {
            case HEALTHY -> "True";
            case UNHEALTHY -> "False";
            case UNKNOWN -> "Unknown";
        };
        String reason = switch (status.getSummary()) {
            case HEALTHY -> "AllDevicesHealthy";
            case UNHEALTHY -> "DeviceUnhealthy";
            case UNKNOWN -> "DeviceHealthUnknown";
        };
        String message = HealthMessages.truncateUtf8(summaryMessage(status), HealthMessages.MAX_BYTES);
        List<PodCondition> conditions = pod.getStatus() == null || pod.getStatus().getConditions() == null
                ? List.of() : pod.getStatus().getConditions();
        for (int i = 0; i < conditions.size(); i++) {
            PodCondition existing = conditions.get(i);
            if (CONDITION_TYPE.equals(existing.getType())) {
                if (conditionStatus.equals(existing.getStatus()) && reason.equals(existing.getReason())
                        && Objects.equals(message, existing.getMessage())) {
                    return;
                }
                String transition = conditionStatus.equals(existing.getStatus())
                        ? existing.getLastTransitionTime() : clock.instant().toString();
                ops.add(op("test", "/status/conditions/" + i + "/type", CONDITION_TYPE));
                ops.add(op("replace", "/status/conditions/" + i, condition(conditionStatus, reason, message, transition)));
                return;
            }
        }
        Map<String, Object> condition = condition(conditionStatus, reason, message, clock.instant().toString());
        if (conditions.isEmpty()) {
            ops.add(op("add", "/status/conditions", List.of(condition)));
        } else {
            ops.add(op("add", "/status/conditions/-", condition));
        }
    }

    private static Map<String, Object> condition(String status, String reason, String message, String lastTransitionTime) {
        Map<String, Object> condition = new LinkedHashMap<>();
        condition.put("type", CONDITION_TYPE);
        condition.put("status", status);
        condition.put("reason", reason);
        condition.put("message", message);
        condition.put("lastTransitionTime", lastTransitionTime);
        return condition;
    }

    /** One line a human can read: which devices are not healthy, and why. */
    static String summaryMessage(PodDeviceStatus status) {
        List<String> problems = new ArrayList<>();
        status.getContainers().forEach(container -> container.getClaims().forEach(claim -> claim.getDevices().forEach(device -> {
            if (device.getHealth() != HealthStatus.HEALTHY) {
                problems.add(device.getDevice().getDriver() + "/" + device.getDevice().getPool() + "/" + device.getDevice().getDevice()
                        + " " + AllocatedResourcesStatusBuilder.health(device.getHealth())
                        + (device.getMessage() == null ? "" : ": " + device.getMessage()));
            }
        })));
        return problems.isEmpty() ? "all allocated devices are healthy" : String.join("; ", problems);
    }

    private static Map<String, Object> op(String op, String path, Object value) {
        Map<String, Object> operation = new LinkedHashMap<>();
        operation.put("op", op);
        operation.put("path", path);
        operation.put("value", value);
        return operation;
    }
}
