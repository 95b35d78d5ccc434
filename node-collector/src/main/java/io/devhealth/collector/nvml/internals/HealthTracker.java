package io.devhealth.collector.nvml.internals;

import io.devhealth.collector.nvml.HealthPolicy;
import io.devhealth.collector.nvml.HealthPolicy.Rule;
import io.devhealth.collector.nvml.XidCatalog;
import io.devhealth.collector.nvml.internals.StickyRecord.Baseline;
import io.devhealth.collector.nvml.internals.StickyRecord.StickyFinding;
import io.devhealth.collector.nvml.jna.NvmlEventType;
import io.devhealth.schema.avro.HealthStatus;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The health state machine of every GPU (and MIG instance) NVML has shown: which findings hold, and
 * from them each device's health, reason and message.
 *
 * <p>Findings come in three lifetimes:
 * <ul>
 *   <li><b>events</b> (XIDs and other NVML events): coalesced per reason; they last {@code holdSeconds}
 *       after their last occurrence, or, for rules with {@code untilReset}, until a GPU reset is detected;
 *   <li><b>readings</b>: level-based, replaced by every poll, so they clear as soon as the reading does;
 *   <li><b>conditions</b> of the GPU or NVML (lost, events unsupported, NVML unavailable, event wait stuck):
 *       set and cleared by the source as it observes them.
 * </ul>
 * Recovery is explicit: {@link #polled} turns reset evidence ({@link ResetDetector}, or a lost GPU
 * answering again) into the removal of every untilReset finding and a transient Healthy
 * {@code RESET-DETECTED} finding that says why.
 *
 * <p>Sticky findings outlive the process: {@link #stickyRecords} is what a {@link StickyFindingStore}
 * keeps, {@link #restore} hands the next run what it kept. A restored GPU's findings come back with
 * the reset evidence of its last poll as the "previous readings", so the first poll after a restart
 * judges a reset that happened while no collector ran exactly like one seen live; a changed node boot
 * id counts as a reset (a reboot is the remedy NVIDIA's catalogue names for every sticky XID).
 * Not thread-safe: the scheduler thread owns it.
 */
public final class HealthTracker {

    private static final Logger LOGGER = LoggerFactory.getLogger(HealthTracker.class);

    static final String GPU_LOST = "GPU-LOST";
    static final String EVENTS_UNSUPPORTED = "EVENTS-UNSUPPORTED";
    static final String NVML_UNAVAILABLE = "NVML-UNAVAILABLE";
    static final String EVENT_WAIT_STUCK = "EVENT-WAIT-STUCK";
    static final String RESET_DETECTED = "RESET-DETECTED";

    private final HealthPolicy policy;
    private final ReadingsEvaluator evaluator;
    private final Map<String, GpuState> gpus = new LinkedHashMap<>();
    /** Records of an earlier run not yet matched to an enumeration (kept as they are until then). */
    private final Map<String, StickyRecord> pendingRestore = new LinkedHashMap<>();
    private String bootId;
    private final Set<Long> xidsNotInCatalogue = new HashSet<>();

    /** A device's effective health, as the report will carry it. {@code stateKey} changes only when health or the set of reasons does. */
    public record DeviceView(DeviceKey key, HealthStatus health, String reason, String message, String stateKey) {}

    private static final class GpuState {
        GpuDevice device;
        final Map<String, Finding> events = new LinkedHashMap<>();
        final Map<DeviceKey, Map<String, Finding>> migEvents = new HashMap<>();
        final Map<String, Finding> readings = new LinkedHashMap<>();
        final Map<String, Finding> conditions = new LinkedHashMap<>();
        final Set<Integer> linksSeenActive = new HashSet<>();
        /** Whether the GPU's XID events are registered (false until enumerated, and for a GPU only restored). */
        boolean xidsWatched;
        Readings lastReadings;
        /** The last successful poll; unlike lastReadings it survives a lost GPU, as the baseline worth persisting. */
        Readings lastPolled;

        GpuState(GpuDevice device) {
            this.device = device;
        }

        List<DeviceKey> migKeys() {
            List<DeviceKey> keys = new ArrayList<>();
            for (GpuDevice.MigDevice mig : device.migDevices()) {
                keys.add(new DeviceKey(device.uuid(), mig.gpuInstanceId(), mig.computeInstanceId()));
            }
            return keys;
        }
    }

    public HealthTracker(HealthPolicy policy) {
        this.policy = policy;
        this.evaluator = new ReadingsEvaluator(policy);
    }

    /** A new enumeration in which every GPU NVML counts was identified. */
    public void enumerated(List<GpuDevice> devices, Map<String, String> unmonitored, Instant now) {
        enumerated(devices, unmonitored, 0, now);
    }

    /**
     * A new enumeration: GPUs found are (re)registered; GPUs known before and missing now are lost.
     * The first one also resolves restored records: a GPU found gets its findings back; a GPU missing
     * is dropped when every GPU NVML counts was identified (it is gone from the node: removed or
     * replaced), and kept as a lost GPU when {@code unidentified} GPUs could be it.
     */
    public void enumerated(List<GpuDevice> devices, Map<String, String> unmonitored, int unidentified, Instant now) {
        Set<String> seen = new HashSet<>();
        for (GpuDevice device : devices) {
            seen.add(device.uuid());
            GpuState state = gpus.computeIfAbsent(device.uuid(), u -> new GpuState(device));
            state.device = device;
            Set<DeviceKey> migs = new HashSet<>(state.migKeys());
            state.migEvents.keySet().retainAll(migs);
            StickyRecord restored = pendingRestore.remove(device.uuid());
            if (restored != null) {
                applyRestored(state, restored, now);
            }
            String problem = unmonitored.get(device.uuid());
            state.xidsWatched = problem == null;
            if (problem == null) {
                state.conditions.remove(EVENTS_UNSUPPORTED);
            } else {
                Rule rule = policy.conditions().eventsUnsupported();
                setCondition(state, EVENTS_UNSUPPORTED, rule, rule.description() + " (" + problem + ")", now);
            }
        }
        for (StickyRecord record : pendingRestore.values()) {
            if (unidentified > 0) {
                LOGGER.warn("nvml sticky findings kept gpu={} reason=gpu-not-identifiable unidentifiedGpus={} findings={}", record.uuid(),
                        unidentified, reasons(record));
                GpuState state = new GpuState(new GpuDevice(null, record.index(), record.uuid(), Objects.toString(record.name(), ""),
                        Objects.toString(record.pciBusId(), ""), false, List.of()));
                gpus.put(record.uuid(), state);
                applyRestored(state, record, now);
            } else {
                LOGGER.warn("nvml sticky findings dropped gpu={} reason=gpu-absent findings={} savedAt={}", record.uuid(),
                        reasons(record), record.savedAt());
            }
        }
        pendingRestore.clear();
        for (GpuState state : gpus.values()) {
            if (!seen.contains(state.device.uuid())) {
                lost(state.device.uuid(), "GPU no longer enumerated by NVML", now);
            }
        }
    }

    /** Applies coalesced events. */
    public void applyEvents(Map<EventCoalescer.EventKey, EventCoalescer.Tally> tallies) {
        for (Map.Entry<EventCoalescer.EventKey, EventCoalescer.Tally> entry : tallies.entrySet()) {
            EventCoalescer.EventKey key = entry.getKey();
            GpuState state = gpus.get(key.device().uuid());
            if (state == null) {
                continue;
            }
            String reason;
            String text;
            Rule rule;
            if (key.type() == NvmlEventType.XID_CRITICAL_ERROR) {
                rule = policy.xidRule(key.data());
                warnIfNotInCatalogue(key.data(), rule);
                reason = "XID-" + key.data();
                text = "XID " + key.data() + ": " + rule.description();
            } else {
                rule = policy.eventRule(key.type());
                reason = key.type().name().replace('_', '-');
                text = rule.description();
            }
            HealthStatus health = FindingSpec.health(rule.action());
            if (health == null) {
                continue;
            }
            Map<String, Finding> findings = key.device().isMig()
                    ? state.migEvents.computeIfAbsent(key.device(), k -> new LinkedHashMap<>())
                    : state.events;
            EventCoalescer.Tally tally = entry.getValue();
            Instant expiry = rule.untilReset() ? null : tally.last().plus(policy.hold(rule));
            Finding existing = findings.get(reason);
            if (existing == null) {
                findings.put(reason, new Finding(reason, health, text, rule.untilReset(), tally.first(), tally.last(), tally.count(),
                        expiry));
                LOGGER.info("nvml finding device={} reason={} health={} count={} message=\"{}\"", key.device(), reason, health,
                        tally.count(), text);
            } else {
                existing.occurred(tally.count(), tally.last(), existing.untilReset() ? null : expiry, text);
            }
        }
    }

    /** Once per XID number: an XID newer than the shipped catalogue means the catalogue wants an update. */
    private void warnIfNotInCatalogue(long xid, Rule rule) {
        if (!HealthPolicy.inCatalogue(xid) && xidsNotInCatalogue.add(xid)) {
            LOGGER.warn("nvml xid not in catalogue xid={} catalogueHighest={} action={} untilReset={} holdSeconds={}", xid,
                    XidCatalog.shipped().highest(), rule.action(), rule.untilReset(), policy.hold(rule).toSeconds());
        }
    }

    /** A successful poll of a GPU: reset evidence first, then the readings' findings replace the previous ones. */
    public void polled(String uuid, Readings readings, Instant now) {
        GpuState state = gpus.get(uuid);
        if (state == null) {
            return;
        }
        String evidence = null;
        if (state.conditions.remove(GPU_LOST) != null) {
            evidence = "GPU reachable again after being lost";
        }
        if (evidence == null) {
            evidence = ResetDetector.evidence(state.lastReadings, readings);
        }
        if (evidence != null) {
            resetDetected(state, evidence, now);
        }
        state.lastReadings = readings;
        state.lastPolled = readings;
        Map<String, Finding> next = new LinkedHashMap<>();
        for (FindingSpec spec : evaluator.evaluate(readings, state.linksSeenActive, state.xidsWatched)) {
            Finding previous = state.readings.get(spec.reason());
            if (previous != null && previous.health() == spec.health()) {
                previous.refresh(spec.text(), now);
                next.put(spec.reason(), previous);
            } else {
                next.put(spec.reason(), new Finding(spec.reason(), spec.health(), spec.text(), false, now, now, 1, null));
            }
        }
        state.readings.clear();
        state.readings.putAll(next);
    }

    /** The GPU answered GPU_IS_LOST (or vanished): its readings are void, the lost condition holds until it answers again. */
    public void lost(String uuid, String text, Instant now) {
        GpuState state = gpus.get(uuid);
        if (state == null) {
            return;
        }
        Rule rule = policy.conditions().gpuLost();
        if (!state.conditions.containsKey(GPU_LOST)) {
            LOGGER.warn("nvml gpu lost gpu={} detail=\"{}\"", uuid, text);
        }
        String message = rule.description().equals(text) || text == null ? rule.description() : rule.description() + ": " + text;
        setCondition(state, GPU_LOST, rule, message, now);
        state.readings.clear();
        state.lastReadings = null;
    }

    public boolean isLost(String uuid) {
        GpuState state = gpus.get(uuid);
        return state != null && state.conditions.containsKey(GPU_LOST);
    }

    public boolean anyLost() {
        return gpus.values().stream().anyMatch(s -> s.conditions.containsKey(GPU_LOST));
    }

    /** NVML itself cannot be used (not loaded, init failed): every known GPU is Unknown with {@code text}; null clears it. */
    public void nvmlUnavailable(String text, Instant now) {
        Rule rule = policy.conditions().nvmlUnavailable();
        for (GpuState state : gpus.values()) {
            if (text == null) {
                state.conditions.remove(NVML_UNAVAILABLE);
            } else {
                setCondition(state, NVML_UNAVAILABLE, rule, rule.description() + ": " + text, now);
            }
        }
    }

    /** The event thread has not returned from its wait for too long ({@code text}); null clears it. */
    public void eventWaitStuck(String text, Instant now) {
        Rule rule = policy.conditions().eventWaitStuck();
        for (GpuState state : gpus.values()) {
            if (text == null) {
                state.conditions.remove(EVENT_WAIT_STUCK);
            } else {
                setCondition(state, EVENT_WAIT_STUCK, rule, rule.description() + " " + text, now);
            }
        }
    }

    /** Drops event findings whose hold has passed. */
    public void expire(Instant now) {
        for (GpuState state : gpus.values()) {
            expire(state.events.values(), now);
            for (Map<String, Finding> findings : state.migEvents.values()) {
                expire(findings.values(), now);
            }
        }
    }

    private static void expire(Collection<Finding> findings, Instant now) {
        findings.removeIf(f -> f.expiresAt() != null && !now.isBefore(f.expiresAt()));
    }

    /** Every device's effective state: each GPU, then its MIG instances. */
    public List<DeviceView> views() {
        List<DeviceView> views = new ArrayList<>();
        for (GpuState state : gpus.values()) {
            List<Finding> gpuFindings = new ArrayList<>();
            gpuFindings.addAll(state.conditions.values());
            gpuFindings.addAll(state.events.values());
            gpuFindings.addAll(state.readings.values());
            views.add(view(state.device.key(), gpuFindings));
            for (DeviceKey mig : state.migKeys()) {
                List<Finding> findings = new ArrayList<>(gpuFindings);
                findings.addAll(state.migEvents.getOrDefault(mig, Map.of()).values());
                views.add(view(mig, findings));
            }
        }
        return views;
    }

    /**
     * Sticky findings an earlier run kept ({@link StickyFindingStore#load}), and the node's boot id
     * now (null if unknown). Applied at the next enumeration, before anything is reported.
     */
    public void restore(List<StickyRecord> records, String currentBootId) {
        this.bootId = currentBootId;
        for (StickyRecord record : records) {
            pendingRestore.put(record.uuid(), record);
        }
    }

    /**
     * What must survive a restart, per GPU UUID: every GPU with untilReset findings (events, MIG
     * events, a lost GPU), with its last poll's reset evidence; records not yet matched to an
     * enumeration as they were restored.
     */
    public Map<String, StickyRecord> stickyRecords(Instant now) {
        Map<String, StickyRecord> records = new LinkedHashMap<>(pendingRestore);
        for (GpuState state : gpus.values()) {
            List<StickyFinding> findings = new ArrayList<>();
            Finding lostFinding = state.conditions.get(GPU_LOST);
            if (lostFinding != null && lostFinding.untilReset()) {
                findings.add(sticky(null, lostFinding));
            }
            state.events.values().stream().filter(Finding::untilReset).forEach(f -> findings.add(sticky(null, f)));
            for (Map.Entry<DeviceKey, Map<String, Finding>> mig : state.migEvents.entrySet()) {
                mig.getValue().values().stream().filter(Finding::untilReset).forEach(f -> findings.add(sticky(mig.getKey(), f)));
            }
            if (findings.isEmpty()) {
                continue;
            }
            GpuDevice device = state.device;
            records.put(device.uuid(), new StickyRecord(StickyRecord.VERSION, device.uuid(), device.name(), device.pciBusId(),
                    device.index(), now.toString(), bootId, state.lastPolled == null ? null : Baseline.of(state.lastPolled), findings));
        }
        return records;
    }

    private static StickyFinding sticky(DeviceKey mig, Finding finding) {
        return new StickyFinding(mig == null ? null : mig.gpuInstanceId(), mig == null ? null : mig.computeInstanceId(),
                finding.reason(), finding.health().name(), finding.text(), finding.first().toString(), finding.last().toString(),
                finding.count());
    }

    /** Puts a restored record's findings back on a GPU, unless the node rebooted since or the policy no longer holds them. */
    private void applyRestored(GpuState state, StickyRecord record, Instant now) {
        String uuid = state.device.uuid();
        if (bootId != null && record.bootId() != null && !bootId.equals(record.bootId())) {
            LOGGER.info("nvml sticky findings dropped gpu={} reason=node-rebooted bootIdThen={} bootIdNow={} findings={} savedAt={}", uuid,
                    record.bootId(), bootId, reasons(record), record.savedAt());
            resetDetected(state, "node rebooted since " + record.savedAt() + " (boot id changed)", now);
            return;
        }
        List<String> applied = new ArrayList<>();
        for (StickyFinding sticky : record.findings()) {
            DeviceKey key = sticky.device(uuid);
            String dropped = notStickyNow(sticky.reason());
            if (dropped == null && key.isMig() && !state.migKeys().contains(key)) {
                dropped = "mig-instance-absent";
            }
            if (dropped != null) {
                LOGGER.info("nvml sticky finding dropped device={} finding={} reason={}", key, sticky.reason(), dropped);
                continue;
            }
            Finding finding = new Finding(sticky.reason(), HealthStatus.valueOf(sticky.health()), sticky.text(), true,
                    Instant.parse(sticky.first()), Instant.parse(sticky.last()), sticky.count(), null);
            Map<String, Finding> target;
            if (GPU_LOST.equals(sticky.reason()) && !key.isMig()) {
                target = state.conditions;
            } else if (key.isMig()) {
                target = state.migEvents.computeIfAbsent(key, k -> new LinkedHashMap<>());
            } else {
                target = state.events;
            }
            target.putIfAbsent(sticky.reason(), finding);
            applied.add(key + ":" + sticky.reason());
        }
        if (record.baseline() != null) {
            // The first poll compares against this: counters that went down, a pending remap that completed… while no collector ran.
            state.lastReadings = record.baseline().toReadings();
            state.lastPolled = state.lastReadings;
        }
        LOGGER.info("nvml sticky findings restored gpu={} findings={} savedAt={}", uuid, applied, record.savedAt());
    }

    /** Why a restored finding no longer holds under the current policy (edited since), or null when it does. */
    private String notStickyNow(String reason) {
        if (GPU_LOST.equals(reason)) {
            return policy.conditions().gpuLost().untilReset() ? null : "policy-not-until-reset";
        }
        Rule rule = null;
        if (reason.startsWith("XID-")) {
            try {
                rule = policy.xidRule(Long.parseLong(reason.substring(4)));
            } catch (NumberFormatException e) {
                return null;
            }
        } else {
            try {
                rule = policy.eventRule(NvmlEventType.valueOf(reason.replace('-', '_')));
            } catch (IllegalArgumentException e) {
                return null;
            }
        }
        if (FindingSpec.health(rule.action()) == null) {
            return "policy-ignores";
        }
        return rule.untilReset() ? null : "policy-not-until-reset";
    }

    private static List<String> reasons(StickyRecord record) {
        return record.findings().stream().map(f -> f.device(record.uuid()) + ":" + f.reason()).collect(Collectors.toList());
    }

    /** The GPUs as last enumerated. */
    public List<GpuDevice> devices() {
        return gpus.values().stream().map(s -> s.device).collect(Collectors.toList());
    }

    private void resetDetected(GpuState state, String evidence, Instant now) {
        int cleared = removeUntilReset(state.events) + removeUntilReset(state.conditions);
        for (Map<String, Finding> findings : state.migEvents.values()) {
            cleared += removeUntilReset(findings);
        }
        LOGGER.info("nvml gpu reset detected gpu={} evidence=\"{}\" clearedFindings={}", state.device.uuid(), evidence, cleared);
        Instant expiry = now.plus(Duration.ofSeconds(policy.defaultHoldSeconds()));
        state.events.put(RESET_DETECTED, new Finding(RESET_DETECTED, HealthStatus.HEALTHY, "GPU reset detected: " + evidence, false,
                now, now, 1, expiry));
    }

    private static int removeUntilReset(Map<String, Finding> findings) {
        int before = findings.size();
        for (Iterator<Finding> it = findings.values().iterator(); it.hasNext(); ) {
            if (it.next().untilReset()) {
                it.remove();
            }
        }
        return before - findings.size();
    }

    private static void setCondition(GpuState state, String reason, Rule rule, String text, Instant now) {
        HealthStatus health = FindingSpec.health(rule.action());
        if (health == null) {
            state.conditions.remove(reason);
            return;
        }
        Finding existing = state.conditions.get(reason);
        if (existing != null && existing.health() == health) {
            existing.refresh(text, existing.last());
        } else {
            state.conditions.put(reason, new Finding(reason, health, text, rule.untilReset(), now, now, 1, null));
        }
    }

    private static DeviceView view(DeviceKey key, List<Finding> findings) {
        if (findings.isEmpty()) {
            return new DeviceView(key, HealthStatus.HEALTHY, null, null, "HEALTHY");
        }
        List<Finding> ordered = new ArrayList<>(findings);
        ordered.sort(Comparator.comparingInt((Finding f) -> -Finding.severity(f.health())).thenComparing(Finding::first));
        HealthStatus health = ordered.get(0).health();
        String message = ordered.stream().map(Finding::message).collect(Collectors.joining("; "));
        String stateKey = health + "|" + ordered.stream().map(f -> f.reason() + "=" + f.health()).sorted().collect(Collectors.joining(","));
        return new DeviceView(key, health, ordered.get(0).reason(), message, stateKey);
    }
}
