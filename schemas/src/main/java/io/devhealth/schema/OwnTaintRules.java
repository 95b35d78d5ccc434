package io.devhealth.schema;

/**
 * How the DeviceTaintRules that devhealth's sink creates are marked. The sink finds its own rules by
 * {@link #MANAGED_BY_LABEL}={@link #MANAGED_BY} (to rebuild its state after a restart, never touching
 * anyone else's), and the node-collector's taint source leaves them out: such a rule is devhealth's own
 * conclusion about a device, and reading it back as a health fact would keep the device Unhealthy for
 * as long as the rule exists, so the rule would never be removed.
 */
public final class OwnTaintRules {

    public static final String MANAGED_BY_LABEL = "app.kubernetes.io/managed-by";
    public static final String MANAGED_BY = "devhealth-sink";
    /** The key of the taint every rule carries. */
    public static final String TAINT_KEY = "devhealth.io/unhealthy";
    /**
     * The annotation with the instant the sink created a rule: its minimum hold counts from then, also
     * after a restart of the sink.
     */
    public static final String CREATED_AT = "devhealth.io/created-at";

    private OwnTaintRules() {}

    /** Whether a rule with these labels is one of the sink's. */
    public static boolean isOwn(java.util.Map<String, String> labels) {
        return labels != null && MANAGED_BY.equals(labels.get(MANAGED_BY_LABEL));
    }
}
