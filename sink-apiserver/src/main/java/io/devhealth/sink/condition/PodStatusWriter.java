package io.devhealth.sink.condition;

import io.devhealth.schema.HealthWords;
import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.PodDeviceStatus;
import io.devhealth.sink.ApiCallPolicy;
import io.devhealth.sink.ApiErrorClass;
import io.devhealth.sink.ConflictRetry;
import io.devhealth.sink.JsonPatchOps;
import io.devhealth.sink.SinkConfig;
import io.devhealth.sink.SinkMetrics;
import io.devhealth.sink.TerminatedPodWatcher;
import io.devhealth.sink.postmortem.ClaimAllocations;
import io.devhealth.sink.postmortem.DevicePostMortem;
import io.devhealth.sink.postmortem.PostMortemBuilder;
import io.devhealth.sink.postmortem.PostMortemState;
import io.devhealth.sink.postmortem.PostMortemStore;
import io.devhealth.sink.postmortem.RecentlyTerminated;
import io.devhealth.sink.postmortem.TerminatedDeviceHealth;
import io.devhealth.sink.postmortem.VerdictEvents;
import io.devhealth.sink.postmortem.VerdictPublisher;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodCondition;
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
 * Writes devhealth's view of a pod's devices where it lasts, and nowhere the kubelet owns:
 * <ul>
 *   <li>the pod condition {@value #CONDITION_TYPE} on every pod (a JSON Patch of {@code pods/status}
 *       that touches only devhealth's own conditions: the kubelet's status manager keeps conditions of
 *       types it does not own, and reverts everything else it owns, {@code containerStatuses} included);</li>
 *   <li>for a terminated pod, its {@link DevicePostMortem} record (health as of the containers'
 *       {@code finishedAt}, {@link TerminatedDeviceHealth}), which outlives the pod;</li>
 *   <li>an Event when the condition changes or a record is made ({@link PodEventRecorder}).</li>
 * </ul>
 * {@code allocatedResourcesStatus} is never written: the kubelet writes it for live pods and would put
 * any other writer's value back within one sync.
 *
 * <p>Before every write the status is checked against the pod ({@link PodIdentity}): a status of an
 * earlier pod of the same name is never written to a new one. The pod comes from the sink's pod cache
 * ({@link CachedPods}) where it has a copy, else it is read. The JSON Patch is guarded by the
 * resourceVersion of the copy it was computed from, so a stale copy can make a write fail, never
 * land on the wrong pod or undo a newer status; the writer then takes the cache's newer copy if it
 * has one, else reads the pod. Not writing is never decided from a copy: where the cached copy says
 * the status is for another pod, or is already shown, the pod is read and the decision made again;
 * a terminated pod is always read (its record needs the whole pod). Errors: 404 → the pod is gone
 * (dropped); 409, or 422 while the resourceVersion moved (our {@code test} failed) → re-read (or the
 * newer cached copy) and recompute; 422 with the pod unchanged →
 * {@link InvalidPodStatusException} (dead-letter, no retry); 429, 5xx, timeouts and refused connections
 * are retried by {@link ApiCallPolicy} and, when that gives up, thrown to the caller.
 *
 * <p>A terminated pod is often deleted (by its Job controller, or {@code ttlSecondsAfterFinished})
 * before the termination window ends, and its driver may report the failure only then. So the writer
 * keeps the pods whose record it wrote until their window ends ({@link RecentlyTerminated}); for a
 * pod that is gone it checks the status against that copy and updates the record alone.
 *
 * <p>Once the post-termination window has passed, {@link #freeze} marks the record {@code frozen} and
 * adds the condition {@value #FINAL_CONDITION_TYPE} to the pod; from then on neither is written again.
 * Both markers are stored in the API server, so a restarted sink honours them.
 */
public final class PodStatusWriter {

    private static final Logger LOGGER = LoggerFactory.getLogger(PodStatusWriter.class);

    public static final String CONDITION_TYPE = "devhealth.io/DevicesHealthy";
    /** Present (True) once a terminated pod's device status is final. */
    public static final String FINAL_CONDITION_TYPE = "devhealth.io/DeviceHealthFinal";

    /** What a write did. */
    public enum Outcome {
        /** A patch or a record was written. */
        WRITTEN,
        /** The pod (and its record) already show the status. */
        UNCHANGED,
        /** The pod does not exist. */
        POD_GONE,
        /** A pod of that name exists, but the status is about an earlier one (another UID, node or claims). */
        OTHER_POD,
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
    public record Settings(Duration terminationWindow, int conflictMaxAttempts) {
        public static Settings of(SinkConfig config) {
            return new Settings(config.terminationWindow(), config.conflictMaxAttempts());
        }

        /** The sink's defaults ({@link SinkConfig#DEFAULT_TERMINATION_WINDOW}, {@link SinkConfig#DEFAULT_CONFLICT_MAX_ATTEMPTS}). */
        public static Settings defaults() {
            return new Settings(SinkConfig.DEFAULT_TERMINATION_WINDOW, SinkConfig.DEFAULT_CONFLICT_MAX_ATTEMPTS);
        }
    }

    private final KubernetesClient client;
    private final Settings settings;
    private final ApiCallPolicy api;
    private final PodEventRecorder events;
    private final VerdictPublisher verdicts;
    private final SinkMetrics metrics;
    private final Clock clock;
    private final ClaimAllocations allocations;
    private final PostMortemStore records;
    private final RecentlyTerminated recentlyTerminated;
    private final CachedPods pods;
    private final ConflictRetry conflicts;

    /**
     * A writer of pods reached through {@code client}, with the sink's defaults for what is not set on
     * the returned builder: the sink passes every part, a test or a tool only those it cares about.
     */
    public static Builder builder(KubernetesClient client, Clock clock) {
        return new Builder(client, clock);
    }

    /** The parts of a writer; each one left unset is the default its setter names. */
    public static final class Builder {

        private final KubernetesClient client;
        private final Clock clock;
        private Settings settings = Settings.defaults();
        private SinkMetrics metrics;
        private ApiCallPolicy api;
        private PodEventRecorder events;
        private VerdictPublisher verdicts;
        private ClaimAllocations allocations;
        private CachedPods pods = CachedPods.NONE;

        private Builder(KubernetesClient client, Clock clock) {
            this.client = client;
            this.clock = clock;
        }

        /** Default {@link Settings#defaults()}. */
        public Builder settings(Settings settings) {
            this.settings = settings;
            return this;
        }

        /** Default: meters of its own, in a registry nobody scrapes. */
        public Builder metrics(SinkMetrics metrics) {
            this.metrics = metrics;
            return this;
        }

        /** Default: one attempt per request and no rate limit worth the name (10,000 a second), as tests and tools want. */
        public Builder api(ApiCallPolicy api) {
            this.api = api;
            return this;
        }

        /** Default none: no Events. */
        public Builder events(PodEventRecorder events) {
            this.events = events;
            return this;
        }

        /** Default none: no verdict is published when a record becomes final. */
        public Builder verdicts(VerdictPublisher verdicts) {
            this.verdicts = verdicts;
            return this;
        }

        /** Default: the claims' allocations read from the API server through the writer's {@link #api}. */
        public Builder allocations(ClaimAllocations allocations) {
            this.allocations = allocations;
            return this;
        }

        /** Where a pod is looked for before it is read; default {@link CachedPods#NONE}: every write reads its pod. */
        public Builder pods(CachedPods pods) {
            this.pods = pods;
            return this;
        }

        public PodStatusWriter build() {
            return new PodStatusWriter(this);
        }
    }

    private PodStatusWriter(Builder parts) {
        this.client = parts.client;
        this.settings = parts.settings;
        this.clock = parts.clock;
        this.metrics = parts.metrics != null ? parts.metrics : new SinkMetrics(new SimpleMeterRegistry());
        this.api = parts.api != null ? parts.api : new ApiCallPolicy(ApiCallPolicy.Settings.singleAttempt(10_000), metrics);
        this.events = parts.events;
        this.verdicts = parts.verdicts;
        this.allocations = parts.allocations != null ? parts.allocations : new ClaimAllocations(client, api);
        this.records = new PostMortemStore(client, api, metrics);
        this.recentlyTerminated = new RecentlyTerminated(settings.terminationWindow(), RecentlyTerminated.DEFAULT_CAPACITY);
        this.pods = parts.pods;
        this.conflicts = new ConflictRetry("pod-write-conflicts", settings.conflictMaxAttempts());
    }

    /** Brings the pod to {@code status}. */
    public Outcome write(PodDeviceStatus status) {
        return write(List.of(status), null).outcome();
    }

    /**
     * Brings the pod to the latest of {@code statuses} (all for one pod, oldest first); terminated
     * containers fold them as of their finishedAt. {@code remembered}: the last status applied before
     * these, if the sink still has it.
     *
     * @throws IllegalArgumentException if {@code statuses} is empty: there is no pod to write
     */
    public Result write(List<PodDeviceStatus> statuses, PodDeviceStatus remembered) {
        if (statuses.isEmpty()) {
            throw new IllegalArgumentException("no status to write: the pod is named by its statuses");
        }
        PodDeviceStatus latest = statuses.get(statuses.size() - 1);
        return apply(latest.getPod().getNamespace(), latest.getPod().getName(), statuses, remembered, false);
    }

    /**
     * Freezes a terminated pod whose window has passed: writes {@code statuses} (may be empty) as of
     * termination and marks the status final, and publishes the pod's verdict. Does nothing to a pod
     * that is live, not yet due, or that devhealth never wrote. Of a pod deleted since, the record is
     * frozen (and the verdict published) alone.
     */
    public Result freeze(String namespace, String name, List<PodDeviceStatus> statuses, PodDeviceStatus remembered) {
        return apply(namespace, name, statuses, remembered, true);
    }

    /** The post-mortem record of a pod, if there is one (tools, the demo). */
    public Optional<DevicePostMortem> record(String namespace, String name) {
        return Optional.ofNullable(records.get(namespace, name));
    }

    /** Deletes the records whose retention has passed and whose pod is gone; returns how many. */
    public int sweep(Duration retention) {
        return records.sweep(clock.instant(), retention);
    }

    private Result apply(String namespace, String name, List<PodDeviceStatus> given, PodDeviceStatus remembered, boolean freeze) {
        String key = namespace + "/" + name;
        boolean cached = false;
        Pod pod = pods.get(namespace, name);
        metrics.podCache(pod != null);
        if (pod != null && TerminatedPodWatcher.terminated(pod)) {
            // Its record needs the whole pod (container resources, exit codes), which the cache does not keep.
            pod = recheck(namespace, name, "terminated");
        } else if (pod == null) {
            pod = read(namespace, name);
        } else {
            cached = true;
        }
        boolean gone = false;
        if (pod == null && freeze) {
            return freezeRecordOfDeletedPod(namespace, name);
        }
        if (pod == null) {
            // Deleted within its termination window: what is left to write is its record.
            pod = recentlyTerminated.get(key, clock.instant());
            gone = pod != null;
        }
        Target target = new Target(pod, cached, gone);
        return conflicts.call(key, attempt -> attempt(namespace, name, given, remembered, freeze, target, attempt));
    }

    /**
     * The pod a write is computed from, handed from one attempt to the next: {@code cached} while it is the
     * cache's copy; {@code gone} when it is the copy kept of a deleted pod, whose record alone is written;
     * {@code recordConflict} when the record's write met a conflict, so that the next attempt reads the pod
     * again (the last one does not: no attempt follows it).
     */
    private static final class Target {
        Pod pod;
        boolean cached;
        final boolean gone;
        boolean recordConflict;

        Target(Pod pod, boolean cached, boolean gone) {
            this.pod = pod;
            this.cached = cached;
            this.gone = gone;
        }
    }

    /**
     * One attempt of {@link #apply}, numbered from 1. A conflict ends it with {@link ConflictRetry#conflict()};
     * a recheck of a cached copy does not: it is no conflict, and the attempt goes on from the pod read.
     */
    private Result attempt(String namespace, String name, List<PodDeviceStatus> given, PodDeviceStatus remembered, boolean freeze,
                           Target target, int attempt) {
        String key = namespace + "/" + name;
        if (target.recordConflict) {
            target.recordConflict = false;
            if (!target.gone) {
                target.pod = recheck(namespace, name, "conflict");
            }
        }
        while (true) {
            Pod pod = target.pod;
            if (pod == null) {
                // History stays in Kafka and the query API; there is nothing left to write to.
                LOGGER.info("pod gone, status dropped pod={} version={}", key, given.isEmpty() ? -1 : last(given).getVersion());
                return Result.of(Outcome.POD_GONE);
            }
            List<PodDeviceStatus> statuses = given.stream().filter(s -> PodIdentity.matches(pod, s)).toList();
            if (!given.isEmpty() && statuses.isEmpty()) {
                if (target.cached) {
                    // The copy may be of an earlier pod of the name, or from before its binding: ask the API server.
                    target.pod = recheck(namespace, name, "other_pod");
                    target.cached = false;
                    continue;
                }
                LOGGER.info("device status is not for this pod (an earlier pod of the same name, or another node), dropped pod={} uid={} version={} why=\"{}\"", key,
                        pod.getMetadata().getUid(), last(given).getVersion(), PodIdentity.mismatch(pod, last(given)));
                return Result.of(Outcome.OTHER_POD);
            }
            PodDeviceStatus previous = PodIdentity.matches(pod, remembered) ? remembered : null;
            Optional<Instant> finishedAt = TerminatedDeviceHealth.podFinishedAt(pod);
            if (isFinal(pod)) {
                return new Result(Outcome.FROZEN, finishedAt, false);
            }
            boolean terminated = finishedAt.isPresent() && TerminatedPodWatcher.terminated(pod);
            if (!terminated && !statuses.isEmpty()) {
                // Read while the claims still exist: a claim made from a template goes with its pod.
                rememberAllocations(pod, last(statuses));
            }
            DevicePostMortem existing = terminated ? records.get(namespace, name) : null;
            DevicePostMortem.Spec recorded = existing != null && existing.getSpec() != null && existing.getSpec().pod() != null
                    && pod.getMetadata().getUid().equals(existing.getSpec().pod().uid()) ? existing.getSpec() : null;
            PostMortemState recordState = PostMortemState.of(recorded);
            PodDeviceStatus effective = statuses.isEmpty() || recordState == PostMortemState.FROZEN ? null
                    : TerminatedDeviceHealth.effective(pod, statuses, previous, settings.terminationWindow(), recorded);
            boolean freezes = recordState == PostMortemState.FROZEN || (freeze && dueForFreeze(pod)
                    && (effective != null || recordState != PostMortemState.ABSENT || hasCondition(pod, CONDITION_TYPE)));
            boolean recordWritten;
            try {
                recordWritten = terminated && writeRecord(pod, existing, recorded, recordState, effective, freezes);
            } catch (KubernetesClientException e) {
                ApiErrorClass errorClass = ApiErrorClass.of(e);
                if (errorClass != ApiErrorClass.CONFLICT && errorClass != ApiErrorClass.INVALID) {
                    throw e;
                }
                DevicePostMortem again = records.get(namespace, name);
                if (mayBeRefusal(e, errorClass) && Objects.equals(resourceVersion(existing), resourceVersion(again))) {
                    // The record did not move, so no test op failed: the server rejects the content itself.
                    throw new InvalidPodStatusException(key, e, "DevicePostMortem " + key);
                }
                LOGGER.debug("post-mortem conflict, re-reading pod={} attempt={} code={}", key, attempt, e.getCode());
                target.recordConflict = true;
                throw ConflictRetry.conflict();
            }
            if (terminated && (recordWritten || recordState != PostMortemState.ABSENT)) {
                recentlyTerminated.put(key, pod, clock.instant());
            }
            if (target.gone) {
                LOGGER.info("record of a deleted pod updated pod={} uid={} written={}", key, pod.getMetadata().getUid(), recordWritten);
                return new Result(recordWritten ? Outcome.WRITTEN : Outcome.UNCHANGED, finishedAt, false);
            }
            // A record frozen before the pod was marked final (the pod's write met a 409, or the sink
            // stopped between the two) is the last word: the condition says what it says, not what the
            // pod showed before, which may be older than the statuses the freeze folded.
            Plan plan = plan(pod, recordState == PostMortemState.FROZEN ? Shown.of(recorded) : Shown.of(effective), freezes);
            if (plan.ops().isEmpty()) {
                if (target.cached) {
                    // The copy may lag the pod (a new pod of the name not yet seen): only the pod itself may say so.
                    target.pod = recheck(namespace, name, "unchanged");
                    target.cached = false;
                    continue;
                }
                return new Result(recordWritten ? Outcome.WRITTEN : Outcome.UNCHANGED, finishedAt, false);
            }
            String json = client.getKubernetesSerialization().asJson(plan.ops());
            try {
                // resource(pod): fabric8 would otherwise GET the pod again before every PATCH.
                api.call(() -> client.pods().inNamespace(namespace).resource(pod).subresource("status")
                        .patch(PatchContext.of(PatchType.JSON), json));
                metrics.written();
                LOGGER.info("pod status written pod={} uid={} version={} condition={} final={}", key, pod.getMetadata().getUid(),
                        statuses.isEmpty() ? -1 : last(statuses).getVersion(), plan.conditionTo(), plan.freezes());
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
                // A copy newer than the cached one we wrote from is as good as a read; the pod read
                // here decides below whether the server refused the content.
                Pod again = target.cached ? newerCopy(namespace, name, pod) : null;
                target.cached = again != null;
                if (again == null) {
                    again = recheck(namespace, name, "conflict");
                }
                if (mayBeRefusal(e, errorClass) && !target.cached && again != null
                        && Objects.equals(again.getMetadata().getResourceVersion(), pod.getMetadata().getResourceVersion())) {
                    // The pod did not move, so no test op failed: the server rejects the content itself.
                    throw new InvalidPodStatusException(key, e, json);
                }
                LOGGER.debug("pod status conflict, re-reading pod={} attempt={} code={} fromCache={}", key, attempt, e.getCode(),
                        target.cached);
                target.pod = again;
                throw ConflictRetry.conflict();
            }
        }
    }

    private void rememberAllocations(Pod pod, PodDeviceStatus status) {
        status.getContainers().forEach(container -> container.getClaims().forEach(claim ->
                allocations.requestsByDevice(claim.getClaimNamespace(), claim.getClaimName(), pod.getMetadata().getUid())));
    }

    /**
     * Creates or updates the terminated pod's record; returns whether anything was written. {@code recorded}:
     * the record's spec if it is this pod's, in {@code recordState}.
     */
    private boolean writeRecord(Pod pod, DevicePostMortem existing, DevicePostMortem.Spec recorded, PostMortemState recordState,
                                PodDeviceStatus effective, boolean freezes) {
        if (recordState == PostMortemState.FROZEN) {
            return false;
        }
        DevicePostMortem.Spec desired = effective != null ? PostMortemBuilder.build(pod, effective, allocations) : recorded;
        if (desired == null) {
            return false;
        }
        if (freezes) {
            desired = desired.withFrozen(clock.instant().toString());
            publish(pod.getMetadata().getNamespace(), desired);
        }
        if (!records.put(pod, existing, desired)) {
            return false;
        }
        if (events != null && recordState == PostMortemState.ABSENT) {
            events.recorded(pod, desired.health(), desired.message());
        }
        return true;
    }

    /** Before the record is marked final: the verdict may then be delivered twice, but never lost (see {@link VerdictPublisher}). */
    private void publish(String namespace, DevicePostMortem.Spec frozen) {
        if (verdicts != null) {
            verdicts.publish(VerdictEvents.of(namespace, frozen));
        }
    }

    /**
     * The freeze of a pod deleted within its termination window: its record is all that is left, and
     * it is final now as it would have been with the pod there.
     */
    private Result freezeRecordOfDeletedPod(String namespace, String name) {
        return conflicts.call(namespace + "/" + name, attempt -> {
            DevicePostMortem existing = records.get(namespace, name);
            if (existing == null || existing.getSpec() == null || existing.getSpec().pod() == null
                    || PostMortemState.of(existing.getSpec()) == PostMortemState.FROZEN) {
                return Result.of(Outcome.POD_GONE);
            }
            DevicePostMortem.Spec frozen = existing.getSpec().withFrozen(clock.instant().toString());
            publish(namespace, frozen);
            Pod gone = new PodBuilder().withNewMetadata().withNamespace(namespace).withName(name)
                    .withUid(existing.getSpec().pod().uid()).endMetadata().build();
            try {
                records.put(gone, existing, frozen);
            } catch (KubernetesClientException e) {
                if (ApiErrorClass.of(e) != ApiErrorClass.CONFLICT && e.getCode() != 422) {
                    throw e;
                }
                throw ConflictRetry.conflict();
            }
            metrics.frozen();
            LOGGER.info("record of a deleted pod frozen pod={}/{} uid={} verdict={}", namespace, name, frozen.pod().uid(), frozen.verdict());
            // Not "frozen now" for the sink's memory: the name is free for a new pod, which starts clean.
            return Result.of(Outcome.POD_GONE);
        });
    }

    /**
     * Whether a failed write may be the server refusing the content, to be decided by whether the
     * object moved: a 422 (a failed {@code test} and a refusal both answer it; {@link ApiErrorClass}
     * tells them apart for the metrics by the answer's details, here the object's resourceVersion
     * decides) or another answer classed invalid.
     */
    private static boolean mayBeRefusal(KubernetesClientException e, ApiErrorClass errorClass) {
        return errorClass == ApiErrorClass.INVALID || e.getCode() == 422;
    }

    /** Reads a pod the cache had, or one that a failed write read already; {@code reason}: why, for the metric. */
    private Pod recheck(String namespace, String name, String reason) {
        metrics.podRecheck(reason);
        return read(namespace, name);
    }

    /**
     * The cache's copy of the pod if it moved on since {@code written} (a cached copy whose write failed):
     * an informer only moves forward, so another resourceVersion is a newer one. Null for none, or a
     * terminated pod (read whole).
     */
    private Pod newerCopy(String namespace, String name, Pod written) {
        Pod copy = pods.get(namespace, name);
        return copy == null || TerminatedPodWatcher.terminated(copy)
                || Objects.equals(copy.getMetadata().getResourceVersion(), written.getMetadata().getResourceVersion()) ? null : copy;
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
        return plan(pod, Shown.of(TerminatedDeviceHealth.effective(pod, List.of(status), null, settings.terminationWindow(), null)), false).ops();
    }

    /** What devhealth's condition shows: the pod's worst device health and the one line that says why. */
    private record Shown(HealthStatus health, String message) {

        /** Null for null: nothing to show. */
        static Shown of(PodDeviceStatus status) {
            return status == null ? null : new Shown(status.getSummary(), PostMortemBuilder.message(status));
        }

        /** A record's health and message are those of the status it was built from ({@link PostMortemBuilder#build}). */
        static Shown of(DevicePostMortem.Spec record) {
            // A word this sink cannot read says nothing about the devices.
            return new Shown(HealthWords.parse(record.health()).orElse(HealthStatus.UNKNOWN), record.message());
        }
    }

    record Plan(List<Map<String, Object>> ops, String conditionFrom, String conditionTo, String conditionMessage, boolean freezes) {
    }

    private Plan plan(Pod pod, Shown shown, boolean freezes) {
        List<Map<String, Object>> ops = new ArrayList<>();
        String[] condition = {null, null, null};
        if (shown != null) {
            conditionOps(pod, shown, ops, condition);
        }
        if (freezes) {
            ops.add(JsonPatchOps.op("add", "/status/conditions/-", conditionMap(FINAL_CONDITION_TYPE, "True", "PostTerminationWindowElapsed",
                    "device health as of the containers' termination, including Unhealthy reports up to "
                            + settings.terminationWindow() + " later; no longer updated (the record: kubectl get devicepostmortem "
                            + pod.getMetadata().getName() + " -n " + pod.getMetadata().getNamespace() + ")",
                    clock.instant().toString())));
        }
        if (ops.isEmpty()) {
            return new Plan(ops, null, null, null, false);
        }
        List<Map<String, Object>> guarded = new ArrayList<>();
        guarded.add(JsonPatchOps.op("test", "/metadata/resourceVersion", pod.getMetadata().getResourceVersion()));
        guarded.addAll(ops);
        return new Plan(guarded, condition[0], condition[1], condition[2], freezes);
    }

    private boolean dueForFreeze(Pod pod) {
        return TerminatedDeviceHealth.podFinishedAt(pod)
                .map(finished -> !clock.instant().isBefore(finished.plus(settings.terminationWindow())))
                .orElse(false);
    }

    public static boolean isFinal(Pod pod) {
        return pod.getStatus() != null && pod.getStatus().getConditions() != null && pod.getStatus().getConditions().stream()
                .anyMatch(c -> FINAL_CONDITION_TYPE.equals(c.getType()) && "True".equals(c.getStatus()));
    }

    public static boolean hasCondition(Pod pod, String type) {
        return pod.getStatus() != null && pod.getStatus().getConditions() != null
                && pod.getStatus().getConditions().stream().anyMatch(c -> type.equals(c.getType()));
    }

    /** The status of devhealth's condition for a pod whose devices' summary is {@code health}. */
    public static String conditionStatus(HealthStatus health) {
        return switch (health) {
            case HEALTHY -> "True";
            case UNHEALTHY -> "False";
            case UNKNOWN -> "Unknown";
        };
    }

    private void conditionOps(Pod pod, Shown shown, List<Map<String, Object>> ops, String[] transition) {
        String conditionStatus = conditionStatus(shown.health());
        String reason = switch (shown.health()) {
            case HEALTHY -> "AllDevicesHealthy";
            case UNHEALTHY -> "DeviceUnhealthy";
            case UNKNOWN -> "DeviceHealthUnknown";
        };
        String message = shown.message();
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
                ops.add(JsonPatchOps.op("test", "/status/conditions/" + i + "/type", CONDITION_TYPE));
                ops.add(JsonPatchOps.op("replace", "/status/conditions/" + i, conditionMap(CONDITION_TYPE, conditionStatus, reason, message, transitionTime)));
                transition[0] = existing.getStatus();
                transition[1] = conditionStatus;
                transition[2] = message;
                return;
            }
        }
        Map<String, Object> condition = conditionMap(CONDITION_TYPE, conditionStatus, reason, message, clock.instant().toString());
        if (conditions.isEmpty()) {
            ops.add(JsonPatchOps.op("add", "/status/conditions", List.of(condition)));
        } else {
            ops.add(JsonPatchOps.op("add", "/status/conditions/-", condition));
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

    private static String resourceVersion(DevicePostMortem record) {
        return record == null ? null : record.getMetadata().getResourceVersion();
    }

    private static PodDeviceStatus last(List<PodDeviceStatus> statuses) {
        return statuses.get(statuses.size() - 1);
    }

}
