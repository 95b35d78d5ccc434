package io.devhealth.sink.taints;

import io.devhealth.schema.OwnTaintRules;
import io.devhealth.sink.ApiCallPolicy;
import io.devhealth.sink.ConflictRetry;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.resource.v1.Device;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceTaint;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.api.model.resource.v1beta2.DeviceTaintRule;
import io.fabric8.kubernetes.api.model.resource.v1beta2.DeviceTaintRuleBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.net.HttpURLConnection;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The sink's DeviceTaintRules in the API server ({@code resource.k8s.io/v1beta2}: Kubernetes 1.36 serves
 * DeviceTaintRule only there, behind the {@code DRADeviceTaintRules} gate, {@code pkg/features/kube_features.go}),
 * every request through {@link ApiCallPolicy}.
 *
 * <p>A rule carries {@link OwnTaintRules#MANAGED_BY_LABEL} (how the sink lists its own rules and only
 * those) and annotations naming the device and when the sink created it, so that a restarted sink
 * knows what each rule is for and how long it has held.
 */
final class KubernetesTaintRules implements TaintRuleStore {

    private static final Logger LOGGER = LoggerFactory.getLogger(KubernetesTaintRules.class);
    static final String NODE = "devhealth.io/node";
    static final String DRIVER = "devhealth.io/driver";
    static final String POOL = "devhealth.io/pool";
    static final String DEVICE = "devhealth.io/device";
    static final String REASON = "devhealth.io/reason";
    /**
     * The effects under which the allocator does not hand out a device to a claim that does not tolerate
     * them ({@code taintPreventsAllocation}, dynamic-resource-allocation {@code structured/internal/stable/allocator_stable.go}).
     */
    static final Set<String> KEEPS_SCHEDULER_OFF = Set.of("NoSchedule", "NoExecute");
    /** Effect of the sink's rules: the scheduler leaves the device alone, running pods are not evicted (only NoExecute evicts). */
    static final String EFFECT = "NoSchedule";
    /** How long a node count is reused: the breaker's fraction need not follow every node that joins. */
    private static final Duration NODE_COUNT_TTL = Duration.ofMinutes(1);
    private static final int MAX_REASON = 1024;
    /** A create that met AlreadyExists and then found no rule is made once more; a rule that keeps vanishing is an error. */
    private static final ConflictRetry CREATE_RACES = new ConflictRetry("devicetaintrule-create", 2);

    private final KubernetesClient client;
    private final ApiCallPolicy api;
    private final Clock clock;
    private int nodes = -1;
    private Instant nodesCountedAt = Instant.MIN;

    KubernetesTaintRules(KubernetesClient client, ApiCallPolicy api, Clock clock) {
        this.client = client;
        this.api = api;
        this.clock = clock;
    }

    @Override
    public List<Rule> list() {
        List<DeviceTaintRule> rules = api.call(() -> client.resources(DeviceTaintRule.class)
                .withLabel(OwnTaintRules.MANAGED_BY_LABEL, OwnTaintRules.MANAGED_BY).list().getItems());
        List<Rule> own = new ArrayList<>();
        for (DeviceTaintRule rule : rules) {
            Rule parsed = parse(rule, clock.instant());
            if (parsed == null) {
                LOGGER.warn("devicetaintrule with devhealth's label but without its annotations left alone rule={}",
                        rule.getMetadata().getName());
            } else {
                own.add(parsed);
            }
        }
        return own;
    }

    /** The rule's device and creation, or null when its annotations do not name a device whose rule has this name. */
    static Rule parse(DeviceTaintRule rule, Instant unknown) {
        ObjectMeta meta = rule.getMetadata();
        Map<String, String> annotations = meta.getAnnotations() == null ? Map.of() : meta.getAnnotations();
        TaintedDevice device = new TaintedDevice(annotations.get(NODE), annotations.get(DRIVER), annotations.get(POOL),
                annotations.get(DEVICE));
        if (device.node() == null || device.driver() == null || device.pool() == null || device.device() == null
                || !device.ruleName().equals(meta.getName())) {
            return null;
        }
        return new Rule(device, createdAt(meta, unknown));
    }

    private static Instant createdAt(ObjectMeta meta, Instant unknown) {
        String value = meta.getAnnotations().get(OwnTaintRules.CREATED_AT);
        try {
            if (value != null) {
                return Instant.parse(value);
            }
            if (meta.getCreationTimestamp() != null) {
                return Instant.parse(meta.getCreationTimestamp());
            }
        } catch (DateTimeParseException e) {
            LOGGER.warn("devicetaintrule creation time unreadable, counted from now rule={} value={}", meta.getName(), value);
        }
        // Unknown: the hold starts over, which errs on keeping the device out of use.
        return unknown;
    }

    @Override
    public Rule create(TaintedDevice device, Instant now, String reason) {
        DeviceTaintRule rule = new DeviceTaintRuleBuilder()
                .withNewMetadata()
                        .withName(device.ruleName())
                        .addToLabels(OwnTaintRules.MANAGED_BY_LABEL, OwnTaintRules.MANAGED_BY)
                        .addToAnnotations(NODE, device.node())
                        .addToAnnotations(DRIVER, device.driver())
                        .addToAnnotations(POOL, device.pool())
                        .addToAnnotations(DEVICE, device.device())
                        .addToAnnotations(OwnTaintRules.CREATED_AT, now.toString())
                        .addToAnnotations(REASON, truncate(reason))
                .endMetadata()
                .withNewSpec()
                        // Driver, pool and device all set: exactly this device, not its namesakes of other drivers
                        // or pools (DeviceTaintSelector in k8s.io/api resource/v1beta2/types.go: unset fields match any).
                        .withNewDeviceSelector().withDriver(device.driver()).withPool(device.pool()).withDevice(device.device())
                        .endDeviceSelector()
                        .withNewTaint().withKey(OwnTaintRules.TAINT_KEY).withEffect(EFFECT).endTaint()
                .endSpec()
                .build();
        return CREATE_RACES.call(attempt -> {
            Rule existing = createOrGet(rule, device, now);
            if (existing == null) {
                // Deleted between our create and our read (another instance released it): one more create.
                throw ConflictRetry.conflict();
            }
            return existing;
        }, attempts -> new IllegalStateException("devicetaintrule " + device.ruleName() + " keeps being deleted while created"));
    }

    /** The rule created now, the one of the device that existed, or null when it existed and is gone already. */
    private Rule createOrGet(DeviceTaintRule rule, TaintedDevice device, Instant now) {
        try {
            api.call(() -> client.resource(rule).create());
            return new Rule(device, now);
        } catch (KubernetesClientException e) {
            if (e.getCode() != HttpURLConnection.HTTP_CONFLICT) {
                throw e;
            }
        }
        DeviceTaintRule existing = api.call(() -> client.resources(DeviceTaintRule.class).withName(device.ruleName()).get());
        if (existing == null) {
            return null;
        }
        Rule parsed = OwnTaintRules.isOwn(existing.getMetadata().getLabels()) ? parse(existing, now) : null;
        if (parsed == null || !parsed.device().equals(device)) {
            // Not ours under our name: leave it alone, and never delete it later as if it were.
            throw new IllegalStateException("devicetaintrule " + device.ruleName() + " exists and is not devhealth's rule of " + device);
        }
        return parsed;
    }

    private static String truncate(String reason) {
        String value = reason == null ? "" : reason;
        return value.length() <= MAX_REASON ? value : value.substring(0, MAX_REASON);
    }

    @Override
    public void delete(TaintedDevice device) {
        // A delete of a missing object answers an empty list in fabric8, not an error: already gone is fine.
        api.call(() -> client.resources(DeviceTaintRule.class).withName(device.ruleName()).delete());
    }

    @Override
    public boolean taintedBySlice(TaintedDevice device) {
        // The field selectors the API server offers for slices (spec.nodeName, spec.driver) keep the answer to
        // this node's slices of this driver; the loop checks again, as does a server that ignored them.
        List<ResourceSlice> slices = api.call(() -> client.resources(ResourceSlice.class)
                .withField("spec.nodeName", device.node()).withField("spec.driver", device.driver()).list().getItems());
        long generation = slices.stream().filter(s -> matchesPool(s, device)).mapToLong(s -> s.getSpec().getPool().getGeneration())
                .max().orElse(Long.MIN_VALUE);
        for (ResourceSlice slice : slices) {
            // Only the pool's newest generation counts, as for the scheduler: older slices are being replaced.
            if (!matchesPool(slice, device) || slice.getSpec().getPool().getGeneration() != generation
                    || slice.getSpec().getDevices() == null) {
                continue;
            }
            for (Device candidate : slice.getSpec().getDevices()) {
                if (device.device().equals(candidate.getName()) && candidate.getTaints() != null) {
                    for (DeviceTaint taint : candidate.getTaints()) {
                        if (KEEPS_SCHEDULER_OFF.contains(taint.getEffect())) {
                            return true;
                        }
                    }
                }
            }
        }
        return false;
    }

    private static boolean matchesPool(ResourceSlice slice, TaintedDevice device) {
        return slice.getSpec() != null && device.driver().equals(slice.getSpec().getDriver())
                && Objects.equals(device.node(), slice.getSpec().getNodeName())
                && slice.getSpec().getPool() != null && device.pool().equals(slice.getSpec().getPool().getName());
    }

    @Override
    public synchronized int nodeCount() {
        Instant now = clock.instant();
        if (nodes < 0 || !now.isBefore(nodesCountedAt.plus(NODE_COUNT_TTL))) {
            nodes = api.call(() -> client.nodes().list().getItems().size());
            nodesCountedAt = now;
        }
        return nodes;
    }

    @Override
    public boolean writes() {
        return true;
    }
}
