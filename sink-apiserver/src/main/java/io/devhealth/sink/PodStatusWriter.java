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
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes a pod's device health into its status with a JSON Patch (RFC 6902).
 *
 * <p>{@code containerStatuses} is an atomic list: a strategic-merge or merge patch would replace it
 * whole and wipe the kubelet's fields. A JSON Patch touches only the paths it names, and its
 * {@code test} operations make it a compare-and-swap on the resourceVersion and on the container at
 * each index. Errors: 404 → the pod is gone (dropped); 409, or 422 while the pod's resourceVersion
 * moved (our {@code test} failed) → re-read and recompute; 422 with the pod unchanged →
 * {@link InvalidPodStatusException} (dead-letter, no retry); 429, 5xx, timeouts and refused connections
 * are retried by {@link ApiCallPolicy} and, when that gives up, thrown to the caller.
 *
 * <p>Terminated pods: containers that finished show health as of their {@code finishedAt}
 * ({@link TerminatedDeviceHealth}); once the post-termination window has passed, {@link #freeze} adds
 * the condition {@value #FINAL_CONDITION_TYPE}, and from then on nothing is written to the pod again.
 * The marker lives in the pod's status, so a restarted sink honours it.
 */
public final class PodStatusWriter {

    private static final Logger LOGGER = LoggerFactory.getLogger(PodStatusWriter.class);

    public static final String CONDITION_TYPE = "devhealth.io/DevicesHealthy";
    /** Present (True) once a terminated pod's device status is final. */
    public static final String FINAL_CONDITION_TYPE = "devhealth.io/DeviceHealthFinal";

    /** What a write did. */
    public enum Outcome {
        /** A patch was accepted. */
        WRITTEN,
        /** The pod already shows the status. */
        UNCHANGED,
        /** The pod does not exist (or is another pod of the same name). */
        POD_GONE,
        /** The pod's device status is final; nothing was written. */
        FROZEN
    }

    /**
     * @param outcome what happened
     * @param podFinishedAt when every container of the pod had finished, if it has
     * @param frozenNow this write froze the pod
     */
    public record Result(Outcome outcome, Optional<Instant> podFinishedAt, boolean frozenNow) {
        static Result of(Outcome outcome) {
            return new Result(outcome, Optional.empty(), false);
        }
    }

    /** Settings of the writer, from {@link SinkConfig}. */
    public record Settings(SinkConfig.Mode mode, Duration terminationWindow, int conflictMaxAttempts) {
        public static Settings of(SinkConfig config) {
            return new Settings(config.mode(), config.terminationWindow(), config.conflictMaxAttempts());
        }
    }

    private final KubernetesClient client;
    private final Settings settings;
    private final ApiCallPolicy api;
    private final FieldSupport fieldSupport;
    private final PodEventRecorder events;
    private final SinkMetrics metrics;
    private final Clock clock;

    /** A writer with the default settings, no rate limit and no retries (tests, tools). */
    public PodStatusWriter(KubernetesClient client, SinkConfig.Mode mode, Clock clock) {
        this(client, new Settings(mode, Duration.ofMinutes(2), 10), clock, new SinkMetrics(new SimpleMeterRegistry()));
    }

    private PodStatusWriter(KubernetesClient client, Settings settings, Clock clock, SinkMetrics metrics) {
        this(client, settings, new ApiCallPolicy(10_000, 10_000, 1, Duration.ofMillis(1), Duration.ofMillis(1), metrics),
                new FieldSupport(Duration.ofHours(1), metrics), null, metrics, clock);
    }

    PodStatusWriter(KubernetesClient client, Settings settings, ApiCallPolicy api, FieldSupport fieldSupport, PodEventRecorder events,
                    SinkMetrics metrics, Clock clock) {
        this.client = client;
        this.settings = settings;
        this.api = api;
        this.fieldSupport = fieldSupport;
        this.events = events;
        this.metrics = metrics;
        this.clock = clock;
    }

    /** Brings the pod to {@code status}. */
    public Outcome write(PodDeviceStatus status) {
        return write(List.of(status), null).outcome();
    }

    /**
     * Brings the pod to the latest of {@code statuses} (all for one pod, oldest first); terminated
     * containers fold them as of their finishedAt. {@code remembered}: the last status applied before
     * these, if the sink still has it.
     */
    Result write(List<PodDeviceStatus> statuses, PodDeviceStatus remembered) {
        PodDeviceStatus latest = statuses.get(statuses.size() - 1);
        return apply(latest.getPod().getNamespace(), latest.getPod().getName(), latest.getPod().getUid(), statuses, remembered, false);
    }

    /**
     * Freezes a terminated pod whose window has passed: writes {@code statuses} (may be empty) as of
     * termination and marks the status final. Does nothing to a pod that is live, not yet due, or that
     * devhealth never wrote.
     */
    Result freeze(String namespace, String name, List<PodDeviceStatus> statuses, PodDeviceStatus remembered) {
        return apply(namespace, name, null, statuses, remembered, true);
    }

    private Result apply(String namespace, String name, String uid, List<PodDeviceStatus> statuses, PodDeviceStatus remembered,
                         boolean freeze) {
        String key = namespace + "/" + name;
        Pod pod = read(namespace, name);
        for (int attempt = 1; ; attempt++) {
            if (pod == null || (uid != null && !uid.isEmpty() && !uid.equals(pod.getMetadata().getUid()))) {
                // History stays in Kafka and the query API; there is nothing left to write to.
                LOGGER.info("pod gone, status dropped pod={} version={}", key, statuses.isEmpty() ? -1 : last(statuses).getVersion());
                return Result.of(Outcome.POD_GONE);
            }
            Optional<Instant> finishedAt = TerminatedDeviceHealth.podFinishedAt(pod);
            if (isFinal(pod)) {
                return new Result(Outcome.FROZEN, finishedAt, false);
            }
            Plan plan = plan(pod, statuses, remembered, freeze);
            if (plan.ops().isEmpty()) {
                return new Result(Outcome.UNCHANGED, finishedAt, false);
            }
            String json = client.getKubernetesSerialization().asJson(plan.ops());
            try {
                // resource(pod): fabric8 would otherwise GET the pod again before every PATCH.
                Pod current = pod;
                Pod written = api.call(() -> client.pods().inNamespace(namespace).resource(current).subresource("status")
                        .patch(PatchContext.of(PatchType.JSON), json));
                metrics.written();
                fieldSupport.observe(written, plan.fieldContainers(), clock.instant());
                LOGGER.info("pod status written pod={} version={} condition={} fieldContainers={} final={}", key,
                        statuses.isEmpty() ? -1 : last(statuses).getVersion(), plan.conditionTo(), plan.fieldContainers(), plan.freezes());
                if (events != null && plan.conditionTo() != null) {
                    events.transition(pod, plan.conditionFrom(), plan.conditionTo(), plan.conditionMessage());
                }
                if (plan.freezes()) {
                    metrics.frozen();
                }
                return new Result(Outcome.WRITTEN, finishedAt, plan.freezes());
            } catch (KubernetesClientException e) {
                ApiErrorClass errorClass = ApiErrorClass.of(e);
                if (errorClass == ApiErrorClass.NOT_FOUND) {
                    LOGGER.info("pod gone while writing, status dropped pod={}", key);
                    return Result.of(Outcome.POD_GONE);
                }
                if (errorClass != ApiErrorClass.CONFLICT && errorClass != ApiErrorClass.INVALID) {
                    throw e;
                }
                Pod again = read(namespace, name);
                if (errorClass == ApiErrorClass.INVALID && again != null
                        && Objects.equals(again.getMetadata().getResourceVersion(), pod.getMetadata().getResourceVersion())) {
                    // The pod did not move, so no test op failed: the server rejects the content itself.
                    throw new InvalidPodStatusException(key, e, json);
                }
                if (attempt >= settings.conflictMaxAttempts()) {
                    throw new WriteConflictsExhaustedException(key, attempt);
                }
                LOGGER.debug("pod status conflict, re-reading pod={} attempt={} code={}", key, attempt, e.getCode());
                pod = again;
            }
        }
    }

    private Pod read(String namespace, String name) {
        try {
            return api.call(() -> client.pods().inNamespace(namespace).withName(name).get());
        } catch (KubernetesClientException e) {
            if (ApiErrorClass.of(e) == ApiErrorClass.NOT_FOUND) {
                return null;
            }
            throw e;
        }
    }

    /** The JSON Patch that brings {@code pod} to {@code status}; empty when nothing would change. */
    List<Map<String, Object>> patch(Pod pod, PodDeviceStatus status) {
        return plan(pod, List.of(status), null, false).ops();
    }

    record Plan(List<Map<String, Object>> ops, List<String> fieldContainers, String conditionFrom, String conditionTo,
                String conditionMessage, boolean freezes) {
    }

    private Plan plan(Pod pod, List<PodDeviceStatus> statuses, PodDeviceStatus remembered, boolean freeze) {
        List<Map<String, Object>> ops = new ArrayList<>();
        List<String> fieldContainers = new ArrayList<>();
        String[] condition = {null, null, null};
        if (!statuses.isEmpty()) {
            PodDeviceStatus effective = TerminatedDeviceHealth.effective(pod, statuses, remembered, settings.terminationWindow());
            if (settings.mode() != SinkConfig.Mode.CONDITIONS_ONLY && fieldSupport.shouldWrite(clock.instant())) {
                containerOps(pod, effective, ops, fieldContainers);
            }
            conditionOps(pod, effective, ops, condition);
        }
        boolean freezes = freeze && dueForFreeze(pod) && (!statuses.isEmpty() || hasCondition(pod, CONDITION_TYPE));
        if (freezes) {
            ops.add(op("add", "/status/conditions/-", conditionMap(FINAL_CONDITION_TYPE, "True", "PostTerminationWindowElapsed",
                    "device health as of the containers' termination, including Unhealthy reports up to "
                            + settings.terminationWindow() + " later; no longer updated (full history: devhealth query)",
                    clock.instant().toString())));
        }
        if (ops.isEmpty()) {
            return new Plan(ops, fieldContainers, null, null, null, false);
        }
        List<Map<String, Object>> guarded = new ArrayList<>();
        guarded.add(op("test", "/metadata/resourceVersion", pod.getMetadata().getResourceVersion()));
        guarded.addAll(ops);
        return new Plan(guarded, fieldContainers, condition[0], condition[1], condition[2], freezes);
    }

    private boolean dueForFreeze(Pod pod) {
        return TerminatedDeviceHealth.podFinishedAt(pod)
                .map(finished -> !clock.instant().isBefore(finished.plus(settings.terminationWindow())))
                .orElse(false);
    }

    static boolean isFinal(Pod pod) {
        return pod.getStatus() != null && pod.getStatus().getConditions() != null && pod.getStatus().getConditions().stream()
                .anyMatch(c -> FINAL_CONDITION_TYPE.equals(c.getType()) && "True".equals(c.getStatus()));
    }

    static boolean hasCondition(Pod pod, String type) {
        return pod.getStatus() != null && pod.getStatus().getConditions() != null
                && pod.getStatus().getConditions().stream().anyMatch(c -> type.equals(c.getType()));
    }

    private void containerOps(Pod pod, PodDeviceStatus status, List<Map<String, Object>> ops, List<String> fieldContainers) {
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
            fieldContainers.add(current.getName());
        }
    }

    private boolean writable(ContainerStatus container) {
        return switch (settings.mode()) {
            case ALL -> true;
            case TERMINATED -> TerminatedDeviceHealth.finishedAt(container).isPresent();
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

    private void conditionOps(Pod pod, PodDeviceStatus status, List<Map<String, Object>> ops, String[] transition) {
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
                String transitionTime = conditionStatus.equals(existing.getStatus())
                        ? existing.getLastTransitionTime() : clock.instant().toString();
                ops.add(op("test", "/status/conditions/" + i + "/type", CONDITION_TYPE));
                ops.add(op("replace", "/status/conditions/" + i, conditionMap(CONDITION_TYPE, conditionStatus, reason, message, transitionTime)));
                transition[0] = existing.getStatus();
                transition[1] = conditionStatus;
                transition[2] = message;
                return;
            }
        }
        Map<String, Object> condition = conditionMap(CONDITION_TYPE, conditionStatus, reason, message, clock.instant().toString());
        if (conditions.isEmpty()) {
            ops.add(op("add", "/status/conditions", List.of(condition)));
        } else {
            ops.add(op("add", "/status/conditions/-", condition));
        }
        transition[1] = conditionStatus;
        transition[2] = message;
    }

    private static Map<String, Object> conditionMap(String type, String status, String reason, String message, String lastTransitionTime) {
        Map<String, Object> condition = new LinkedHashMap<>();
        condition.put("type", type);
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

    private static PodDeviceStatus last(List<PodDeviceStatus> statuses) {
        return statuses.get(statuses.size() - 1);
    }

    private static Map<String, Object> op(String op, String path, Object value) {
        Map<String, Object> operation = new LinkedHashMap<>();
        operation.put("op", op);
        operation.put("path", path);
        operation.put("value", value);
        return operation;
    }
}
