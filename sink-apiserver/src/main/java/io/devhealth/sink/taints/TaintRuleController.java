package io.devhealth.sink.taints;

import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.HealthTransition;
import io.devhealth.schema.avro.SourceKind;
import io.devhealth.sink.ApiCallPolicy;
import io.devhealth.sink.SinkMetrics;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Retry elsewhere: decides, for each health transition of a device, whether the device gets a
 * DeviceTaintRule ({@code NoSchedule}) or loses it. The scheduler's DRA plugin allocates devices from the
 * slices with every rule applied ({@code ListWithDeviceTaintRules}, kubernetes {@code pkg/scheduler/framework/plugins/dynamicresources/dra_manager.go},
 * through {@code Tracker.applyPatches} in dynamic-resource-allocation {@code resourceslice/tracker/tracker.go}),
 * and the allocator skips a device with an untolerated {@code NoSchedule} taint ({@code taintPreventsAllocation});
 * so a Job's replacement pod gets another device. {@code NoSchedule} evicts nobody: only {@code NoExecute}
 * makes the device taint eviction controller delete pods ({@code getTaintedDevices},
 * {@code pkg/controller/devicetainteviction/device_taint_eviction.go}).
 *
 * <p>Per device, the state machine (no entry = no rule of the sink's):
 * <pre>
 *   (none) --Unhealthy, DRA, not source TAINT, slice not tainted, under the node cap, breaker closed--> TAINTED
 *   TAINTED --Healthy--> RELEASING            RELEASING --Unhealthy--> TAINTED
 *   RELEASING --min hold since creation passed (tick)--> rule deleted, (none)
 * </pre>
 * Unknown changes nothing (not knowing is no recovery). A refused device is not remembered: it is
 * considered again at its next transition, not when the breaker closes, so that a mass event does not
 * end in a wave of delayed rules.
 *
 * <p>Recovery: the rules are the state. {@link #recover()} rebuilds TAINTED entries from the sink's own
 * rules (on start and on every partition assignment), and a Healthy transition is <em>held</em> until its
 * rule is deleted: the consumer commits no offset past a held record ({@link #heldFrom}), so a sink that
 * stops before the hold ends reads the transition again and removes the rule then. Caps and the breaker
 * count the rules in the API server, which every sink instance shares.
 */
public final class TaintRuleController {

    private static final Logger LOGGER = LoggerFactory.getLogger(TaintRuleController.class);
    /** How often an open breaker looks whether it can close (each look lists the rules). */
    private static final Duration BREAKER_REFRESH = Duration.ofSeconds(5);

    enum Phase { TAINTED, RELEASING }

    /** What became of a transition: done, or held until its rule is deleted. */
    enum Outcome { SETTLED, HELD }

    private static final class Entry {
        final TaintedDevice device;
        final Instant createdAt;
        Phase phase = Phase.TAINTED;
        /** Where the Healthy transition that set RELEASING is, while it is held. */
        TopicPartition partition;
        long offset;
        Instant nextAttempt = Instant.MIN;

        Entry(TaintedDevice device, Instant createdAt) {
            this.device = device;
            this.createdAt = createdAt;
        }
    }

    private final TaintRuleStore store;
    private final TaintRuleSettings settings;
    private final FleetBreaker breaker;
    private final SinkMetrics metrics;
    private final Duration retryInterval;
    private final Map<TaintedDevice, Entry> entries = new HashMap<>();
    private Instant nextBreakerRefresh = Instant.MIN;

    /**
     * The controller of the sink's rules in the API server or, in dry-run, of the rules this instance would
     * have (its decisions still read the cluster: the device's slice, the node count).
     *
     * @param retryInterval how long a failed deletion waits before the next try
     */
    public static TaintRuleController of(KubernetesClient client, ApiCallPolicy api, Clock clock, TaintRuleSettings settings,
                                         SinkMetrics metrics, Duration retryInterval) {
        TaintRuleStore kubernetes = new KubernetesTaintRules(client, api, clock);
        TaintRuleStore store = settings.dryRun() ? new DryRunTaintRules(kubernetes) : kubernetes;
        return new TaintRuleController(store, settings, metrics, retryInterval);
    }

    /** @param retryInterval how long a failed deletion waits before the next try */
    TaintRuleController(TaintRuleStore store, TaintRuleSettings settings, SinkMetrics metrics, Duration retryInterval) {
        this.store = store;
        this.settings = settings;
        this.metrics = metrics;
        this.retryInterval = retryInterval;
        metrics.registerTaintRules();
        this.breaker = new FleetBreaker(settings.breakerNodeFraction(), settings.breakerWindow(), metrics::taintBreakerOpen);
    }

    /** Takes the sink's rules as they are in the store: a rule with no entry becomes TAINTED, a TAINTED entry without rule goes. */
    void recover() {
        List<TaintRuleStore.Rule> rules = store.list();
        Set<TaintedDevice> present = new HashSet<>();
        int added = 0;
        for (TaintRuleStore.Rule rule : rules) {
            present.add(rule.device());
            if (entries.putIfAbsent(rule.device(), new Entry(rule.device(), rule.createdAt())) == null) {
                added++;
            }
        }
        // Another instance released it (its partition was that one's): nothing left to hold.
        entries.values().removeIf(e -> e.phase == Phase.TAINTED && !present.contains(e.device));
        LOGGER.info("devicetaintrules recovered rules={} new={} dryRun={}", rules.size(), added, !store.writes());
    }

    /**
     * Applies one transition read at {@code offset} of {@code partition}.
     *
     * @throws RuntimeException what the store threw; nothing changed then, and the transition may be applied again
     */
    Outcome apply(HealthTransition transition, TopicPartition partition, long offset, Instant now) {
        HealthStatus to = transition.getTo();
        TaintedDevice device = TaintedDevice.of(transition.getNode(), transition.getDevice());
        if (to == HealthStatus.UNHEALTHY) {
            unhealthy(transition, device, now);
            return Outcome.SETTLED;
        }
        if (to != HealthStatus.HEALTHY || device == null) {
            return Outcome.SETTLED;
        }
        Entry entry = entries.get(device);
        if (entry == null) {
            return Outcome.SETTLED;
        }
        if (entry.phase == Phase.TAINTED) {
            entry.phase = Phase.RELEASING;
            entry.partition = partition;
            entry.offset = offset;
            LOGGER.info("device healthy again, devicetaintrule released after its hold rule={} device={} removableAt={}",
                    device.ruleName(), device, entry.createdAt.plus(settings.minHold()));
        }
        release(entry, now);
        return entries.containsKey(device) ? Outcome.HELD : Outcome.SETTLED;
    }

    private void unhealthy(HealthTransition transition, TaintedDevice device, Instant now) {
        if (device == null) {
            metrics.taintRuleSkipped("not_dra");
            return;
        }
        Entry entry = entries.get(device);
        if (entry != null) {
            if (entry.phase == Phase.RELEASING) {
                // Flapping: the rule stays, and the Healthy transition no longer needs holding.
                entry.phase = Phase.TAINTED;
                entry.partition = null;
                LOGGER.info("device unhealthy again before its rule was released rule={} device={}", device.ruleName(), device);
            }
            return;
        }
        if (transition.getSource() == SourceKind.TAINT) {
            // The judgement came from a taint: the driver (or an administrator) keeps the scheduler off it already.
            metrics.taintRuleSkipped("taint_source");
            return;
        }
        if (store.taintedBySlice(device)) {
            metrics.taintRuleSkipped("slice_tainted");
            LOGGER.debug("device tainted in its resourceslice, no devicetaintrule needed device={}", device);
            return;
        }
        List<TaintRuleStore.Rule> rules = store.list();
        long onNode = rules.stream().filter(r -> r.device().node().equals(device.node())).count();
        if (onNode >= settings.maxPerNode()) {
            metrics.taintRuleRefused("node_cap");
            LOGGER.warn("devicetaintrule refused: node at its cap device={} tainted={} max={}", device, onNode, settings.maxPerNode());
            return;
        }
        if (!breaker.admit(device.node(), now, recentRuleNodes(rules, now), store.nodeCount())) {
            metrics.taintRuleRefused("breaker");
            LOGGER.debug("devicetaintrule refused: fleet breaker open device={}", device);
            return;
        }
        String reason = transition.getMessage() != null ? transition.getMessage()
                : transition.getReason() != null ? transition.getReason() : "unhealthy";
        TaintRuleStore.Rule rule = store.create(device, now, reason);
        entries.put(device, new Entry(device, rule.createdAt()));
        metrics.taintRule(store.writes() ? "created" : "would_create");
        LOGGER.info("devicetaintrule created rule={} device={} effect={} dryRun={} reason=\"{}\"", device.ruleName(), device,
                KubernetesTaintRules.EFFECT, !store.writes(), reason);
    }

    private Set<String> recentRuleNodes(List<TaintRuleStore.Rule> rules, Instant now) {
        Instant since = now.minus(breaker.window());
        Set<String> nodes = new HashSet<>();
        rules.stream().filter(r -> r.createdAt().isAfter(since)).forEach(r -> nodes.add(r.device().node()));
        return nodes;
    }

    /** Deletes the rules whose hold has passed; looks whether an open breaker can close. Failures wait for a later tick. */
    void tick(Instant now) {
        for (Entry entry : new ArrayList<>(entries.values())) {
            if (entry.phase == Phase.RELEASING) {
                try {
                    release(entry, now);
                } catch (RuntimeException e) {
                    entry.nextAttempt = now.plus(retryInterval);
                    LOGGER.warn("devicetaintrule deletion failed, tried again in {} rule={} error=\"{}\"", retryInterval,
                            entry.device.ruleName(), e.toString());
                }
            }
        }
        if (breaker.isOpen() && !now.isBefore(nextBreakerRefresh)) {
            nextBreakerRefresh = now.plus(BREAKER_REFRESH);
            breaker.refresh(now, recentRuleNodes(store.list(), now), store.nodeCount());
        }
    }

    private void release(Entry entry, Instant now) {
        if (now.isBefore(entry.createdAt.plus(settings.minHold())) || now.isBefore(entry.nextAttempt)) {
            return;
        }
        store.delete(entry.device);
        entries.remove(entry.device);
        metrics.taintRule(store.writes() ? "deleted" : "would_delete");
        LOGGER.info("devicetaintrule deleted rule={} device={} heldMs={} dryRun={}", entry.device.ruleName(), entry.device,
                now.toEpochMilli() - entry.createdAt.toEpochMilli(), !store.writes());
    }

    /** The earliest offset of {@code partition} whose transition is still held: no commit may pass it. */
    OptionalLong heldFrom(TopicPartition partition) {
        return entries.values().stream().filter(e -> e.phase == Phase.RELEASING && partition.equals(e.partition))
                .mapToLong(e -> e.offset).min();
    }

    /**
     * Partitions this instance no longer reads: their held transitions are its new owner's, which reads
     * them again from the committed offset. The rules stay TAINTED here until the next {@link #recover()}.
     */
    void revoked(Collection<TopicPartition> partitions) {
        for (Entry entry : entries.values()) {
            if (entry.phase == Phase.RELEASING && partitions.contains(entry.partition)) {
                entry.phase = Phase.TAINTED;
                entry.partition = null;
            }
        }
    }

    /** The phase of {@code device}'s rule, or null when it has none (tests, logs). */
    Phase phase(TaintedDevice device) {
        Entry entry = entries.get(device);
        return entry == null ? null : entry.phase;
    }

    boolean breakerOpen() {
        return breaker.isOpen();
    }
}
