package io.devhealth.collector.nvml;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.devhealth.collector.nvml.jna.NvmlEventType;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.stream.Collectors;

/**
 * What each NVML signal means for a device's health, as data.
 *
 * <p>XIDs are judged in three steps ({@link #xidRule}): a rule in {@code xids} for that very XID
 * wins (an operator's override, or a shipped decision where NVIDIA's catalogue gives no action);
 * otherwise the XID's immediate action in the {@link XidCatalog} picks a rule from
 * {@code xidActions}; an XID the catalogue does not list gets {@code xids.default}.
 *
 * <p>The defaults ({@value #DEFAULT_RESOURCE}) are merged with a user file object by object (its
 * entries win, everything it leaves out keeps the default), so an operator writes only what differs,
 * e.g. {@code {"xids": {"109": {"action": "HEALTHY_WITH_MESSAGE"}}}} for one XID or
 * {@code {"xidActions": {"RESTART_APP": {"action": "IGNORE"}}}} for a whole bucket. Unknown fields,
 * bad values and a catalogue action without a rule fail loudly at start-up.
 */
public record HealthPolicy(
        Object about,
        long defaultHoldSeconds,
        Map<String, Rule> xids,
        Map<String, Rule> xidActions,
        Map<NvmlEventType, Rule> events,
        Conditions conditions,
        Readings readings) {

    public static final String DEFAULT_RESOURCE = "/io/devhealth/collector/nvml/default-health-policy.json";
    private static final ObjectMapper MAPPER = JsonMapper.builder()
            .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .build();

    /** What a matching signal does to the device. */
    public enum Action {
        /** The device is Unhealthy while the finding lasts. */
        UNHEALTHY,
        /** Health is Unknown while the finding lasts (e.g. NVML cannot answer). */
        UNKNOWN,
        /** The device stays Healthy; the finding shows in its message. */
        HEALTHY_WITH_MESSAGE,
        /** Nothing is reported. */
        IGNORE
    }

    /**
     * One signal's treatment.
     *
     * @param untilReset the finding stays until a GPU reset is detected (event rules only)
     * @param holdSeconds how long an event finding lasts after its last occurrence when not untilReset;
     *     null = the policy's defaultHoldSeconds
     * @param description the human-readable text of the message; for an {@code xidActions} rule the
     *     advice added to the XID's catalogue description; for an {@code xids} rule without one, the
     *     catalogue description is used
     * @param catalogAction NVIDIA's catalogue action the rule stands for or the reason it departs from
     *     it (documentation; on a rule {@link #xidRule} derives from the catalogue, that action)
     */
    @JsonIgnoreProperties(ignoreUnknown = false)
    public record Rule(Action action, boolean untilReset, Long holdSeconds, String description, String catalogAction) {
        public Rule {
            Objects.requireNonNull(action, "action");
            if (holdSeconds != null && holdSeconds < 0) {
                throw new IllegalArgumentException("holdSeconds must not be negative");
            }
        }
    }

    /** Rules for states of the GPU or of NVML itself rather than for one event or reading. */
    public record Conditions(Rule gpuLost, Rule eventsUnsupported, Rule nvmlUnavailable, Rule nvmlError, Rule eventWaitStuck) {}

    /**
     * A rule on a periodic reading; the optional parameters apply to the reading named in brackets.
     *
     * @param threshold count at or above which the finding holds [volatileUncorrectedEcc]
     * @param actionWhenXidsWatched the action instead of {@code action} on a GPU whose XID events are
     *     watched: there each uncorrectable error's own XID (48, 94, 95, …) judges it, so the counter
     *     must not turn an error the driver contained into an Unhealthy GPU [volatileUncorrectedEcc]
     * @param marginCelsius the finding holds from (slowdown − margin) °C [temperature]
     * @param onlyLinksSeenActive only links seen active since start count as down, so GPUs with unused
     *     links raise nothing [nvlinkDown]
     * @param reasons clock event reasons that count [clocksEvent]
     * @param ratioOfLimit power at or above this fraction of the enforced limit [power]
     */
    public record ReadingRule(Action action, String description, Long threshold, Action actionWhenXidsWatched,
            Integer marginCelsius, Boolean onlyLinksSeenActive, List<ClockReason> reasons, Double ratioOfLimit) {
        public ReadingRule {
            Objects.requireNonNull(action, "action");
            reasons = reasons == null ? List.of() : List.copyOf(reasons);
        }
    }

    /** Rules on the periodic readings. */
    public record Readings(ReadingRule remappedRowsPending, ReadingRule remappedRowsFailure, ReadingRule retiredPagesPending,
            ReadingRule volatileUncorrectedEcc, ReadingRule temperature, ReadingRule nvlinkDown, ReadingRule clocksEvent,
            ReadingRule power, Map<RecoveryAction, Rule> recoveryAction) {}

    /** Clock event reason bits (nvml.h's {@code nvmlClocksEventReason*} mask) that may count as a finding. */
    public enum ClockReason {
        SW_POWER_CAP(0x4L, "software power cap"),
        HW_SLOWDOWN(0x8L, "HW slowdown"),
        SYNC_BOOST(0x10L, "sync boost"),
        SW_THERMAL_SLOWDOWN(0x20L, "SW thermal slowdown"),
        HW_THERMAL_SLOWDOWN(0x40L, "HW thermal slowdown"),
        HW_POWER_BRAKE_SLOWDOWN(0x80L, "HW power brake slowdown");

        private final long bit;
        private final String text;

        ClockReason(long bit, String text) {
            this.bit = bit;
            this.text = text;
        }

        public long bit() {
            return bit;
        }

        public String text() {
            return text;
        }
    }

    /**
     * Values of the GPU recovery-action field, in nvml.h's order (NVML_FI_DEV_GET_GPU_RECOVERY_ACTION,
     * {@link io.devhealth.collector.nvml.jna.NvmlFieldValue#FI_DEV_GET_GPU_RECOVERY_ACTION}).
     */
    public enum RecoveryAction {
        NONE, GPU_RESET, NODE_REBOOT, DRAIN_P2P, DRAIN_AND_RESET, RECOVER_IMEX_DOMAIN;

        /** The action with this field value, or null for a value newer than this list. */
        public static RecoveryAction of(long value) {
            return value >= 0 && value < values().length ? values()[(int) value] : null;
        }
    }

    public HealthPolicy {
        if (defaultHoldSeconds < 0) {
            throw new IllegalArgumentException("defaultHoldSeconds must not be negative");
        }
        xids = Map.copyOf(Objects.requireNonNull(xids, "xids"));
        for (String key : xids.keySet()) {
            if (!key.equals("default")) {
                try {
                    Integer.parseUnsignedInt(key);
                } catch (NumberFormatException e) {
                    throw new IllegalArgumentException("xids key \"" + key + "\" is neither an XID number nor \"default\"");
                }
            }
        }
        if (!xids.containsKey("default")) {
            throw new IllegalArgumentException("xids needs a \"default\" entry for XIDs not listed");
        }
        xidActions = Map.copyOf(Objects.requireNonNull(xidActions, "xidActions"));
        checkXidActions(xidActions, XidCatalog.shipped());
        events = events == null || events.isEmpty() ? Map.of() : new EnumMap<>(events);
        Objects.requireNonNull(conditions, "conditions");
        Objects.requireNonNull(conditions.gpuLost(), "conditions.gpuLost");
        Objects.requireNonNull(conditions.eventsUnsupported(), "conditions.eventsUnsupported");
        Objects.requireNonNull(conditions.nvmlUnavailable(), "conditions.nvmlUnavailable");
        Objects.requireNonNull(conditions.nvmlError(), "conditions.nvmlError");
        Objects.requireNonNull(conditions.eventWaitStuck(), "conditions.eventWaitStuck");
        Objects.requireNonNull(readings, "readings");
        Objects.requireNonNull(readings.remappedRowsPending(), "readings.remappedRowsPending");
        Objects.requireNonNull(readings.remappedRowsFailure(), "readings.remappedRowsFailure");
        Objects.requireNonNull(readings.retiredPagesPending(), "readings.retiredPagesPending");
        Objects.requireNonNull(readings.volatileUncorrectedEcc(), "readings.volatileUncorrectedEcc");
        Objects.requireNonNull(readings.temperature(), "readings.temperature");
        Objects.requireNonNull(readings.nvlinkDown(), "readings.nvlinkDown");
        Objects.requireNonNull(readings.clocksEvent(), "readings.clocksEvent");
        Objects.requireNonNull(readings.power(), "readings.power");
        Objects.requireNonNull(readings.recoveryAction(), "readings.recoveryAction");
    }

    /** The shipped defaults. */
    public static HealthPolicy defaults() {
        return fromTree(defaultTree());
    }

    /** The defaults with {@code file} merged over them; a clear {@link IllegalArgumentException} when the file is bad. */
    public static HealthPolicy load(Path file) {
        if (file == null) {
            return defaults();
        }
        JsonNode overrides;
        try {
            overrides = MAPPER.readTree(Files.readAllBytes(file));
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot read NVML health policy " + file + ": " + e.getMessage(), e);
        }
        if (!(overrides instanceof ObjectNode)) {
            throw new IllegalArgumentException("NVML health policy " + file + " must be a JSON object");
        }
        try {
            return fromTree(merge((ObjectNode) defaultTree(), (ObjectNode) overrides));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("invalid NVML health policy " + file + ": " + e.getMessage(), e);
        }
    }

    /**
     * Every action the catalogue uses has a rule, and every rule is for an action the catalogue uses:
     * a newer catalogue with a new bucket, or a misspelt bucket in a policy file, stops the start
     * instead of silently sending those XIDs to the default.
     */
    static void checkXidActions(Map<String, Rule> xidActions, XidCatalog catalog) {
        for (String action : catalog.actions()) {
            if (!xidActions.containsKey(action)) {
                throw new IllegalArgumentException("xidActions has no rule for the catalogue action \"" + action + "\" (XIDs "
                        + catalog.entries().values().stream().filter(e -> action.equals(e.action()))
                                .map(e -> Long.toString(e.xid())).collect(Collectors.joining(", ")) + ")");
            }
        }
        for (String action : xidActions.keySet()) {
            if (!catalog.actions().contains(action)) {
                throw new IllegalArgumentException("xidActions key \"" + action + "\" is no action of the XID catalogue "
                        + catalog.actions());
            }
        }
    }

    /**
     * The rule for {@code xid}, with the complete text its message starts with (after "XID n: "):
     * <ol>
     *   <li>a rule under {@code xids} for this XID, its description defaulting to the catalogue's;
     *   <li>else the catalogue's immediate action, through {@code xidActions}: the catalogue's
     *       description and, in brackets, the action and the rule's advice;
     *   <li>else (an XID the catalogue does not list, or lists without an action) {@code xids.default}.
     * </ol>
     */
    public Rule xidRule(long xid) {
        XidCatalog.Entry entry = XidCatalog.shipped().get(xid);
        Rule own = xids.get(Long.toString(xid));
        if (own != null) {
            String text = own.description() != null ? own.description() : entry != null ? entry.name() : xids.get("default").description();
            return new Rule(own.action(), own.untilReset(), own.holdSeconds(), text, own.catalogAction());
        }
        Rule fallback = xids.get("default");
        if (entry == null) {
            return fallback;
        }
        if (entry.action() == null) {
            return new Rule(fallback.action(), fallback.untilReset(), fallback.holdSeconds(),
                    entry.name() + " [no action in NVIDIA's XID catalogue]", null);
        }
        Rule bucket = xidActions.get(entry.action());
        String advice = bucket.description() == null ? entry.action() : entry.action() + ": " + bucket.description();
        return new Rule(bucket.action(), bucket.untilReset(), bucket.holdSeconds(), entry.name() + " [" + advice + "]",
                entry.action());
    }

    /** Whether NVIDIA's catalogue, as shipped, lists {@code xid}. */
    public static boolean inCatalogue(long xid) {
        return XidCatalog.shipped().get(xid) != null;
    }

    /** The rule for a non-XID event type; IGNORE when the policy has none. */
    public Rule eventRule(NvmlEventType type) {
        Rule rule = events.get(type);
        return rule != null ? rule : new Rule(Action.IGNORE, false, null, type.name(), null);
    }

    /** Event types whose rule does something (XID events are always wanted: their rules differ per XID). */
    public long wantedEventMask() {
        long mask = NvmlEventType.XID_CRITICAL_ERROR.bit();
        for (NvmlEventType type : NvmlEventType.values()) {
            if (type != NvmlEventType.XID_CRITICAL_ERROR && eventRule(type).action() != Action.IGNORE) {
                mask |= type.bit();
            }
        }
        return mask;
    }

    /** How long a non-sticky finding of {@code rule} lasts after its last occurrence. */
    public Duration hold(Rule rule) {
        return Duration.ofSeconds(rule.holdSeconds() != null ? rule.holdSeconds() : defaultHoldSeconds);
    }

    private static JsonNode defaultTree() {
        try (InputStream in = HealthPolicy.class.getResourceAsStream(DEFAULT_RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException(DEFAULT_RESOURCE + " missing from the classpath");
            }
            return MAPPER.readTree(in);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static HealthPolicy fromTree(JsonNode tree) {
        try {
            return MAPPER.treeToValue(tree, HealthPolicy.class);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException(e.getOriginalMessage() == null ? e.getMessage() : e.getOriginalMessage(), e);
        } catch (RuntimeException e) {
            throw new IllegalArgumentException(e.getMessage(), e);
        }
    }

    /** Deep merge: objects merge key by key, anything else in {@code overrides} replaces the default. */
    private static ObjectNode merge(ObjectNode defaults, ObjectNode overrides) {
        for (Map.Entry<String, JsonNode> entry : overrides.properties()) {
            JsonNode existing = defaults.get(entry.getKey());
            if (existing instanceof ObjectNode existingObject && entry.getValue() instanceof ObjectNode overrideObject
                    && !isRule(overrideObject)) {
                merge(existingObject, overrideObject);
            } else {
                defaults.set(entry.getKey(), entry.getValue());
            }
        }
        return defaults;
    }

    /** A rule is replaced whole: a user who writes {"action": "IGNORE"} should not inherit untilReset. */
    private static boolean isRule(ObjectNode node) {
        return node.has("action");
    }
}
