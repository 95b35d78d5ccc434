package io.devhealth.query.http;

import io.devhealth.schema.DriverNames;
import java.util.regex.Pattern;

/**
 * Kubernetes naming rules for the query API's path segments, so that malformed names are a clear 400
 * instead of a store lookup: namespaces are DNS-1123 labels; pod and node names DNS-1123 subdomains;
 * a DRA driver is a DNS subdomain of at most 63 characters; a pool is one or more DNS subdomains
 * joined by '/' (at most 253 in all); a device is a DNS-1123 label.
 */
public final class KubernetesNames {

    static final int LABEL_MAX = 63;
    static final int SUBDOMAIN_MAX = 253;
    private static final Pattern LABEL = Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?");
    private static final Pattern SUBDOMAIN = Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");

    private KubernetesNames() {}

    public static String namespace(String value) {
        return label("namespace", value);
    }

    public static String podName(String value) {
        return subdomain("pod name", value, SUBDOMAIN_MAX);
    }

    public static String nodeName(String value) {
        return subdomain("node name", value, SUBDOMAIN_MAX);
    }

    /** The collector's rule for driver names ({@link DriverNames}): what it accepts is what can be queried. */
    public static String driver(String value) {
        DriverNames.violation(value).ifPresent(why -> {
            throw QueryException.badRequest("driver: " + why + ", got " + Excerpt.of(value));
        });
        return value;
    }

    public static String device(String value) {
        return label("device", value);
    }

    public static String pool(String value) {
        if (value.length() > SUBDOMAIN_MAX) {
            throw invalid("pool", value, "DNS subdomains joined by '/', at most " + SUBDOMAIN_MAX + " characters");
        }
        for (String part : value.split("/", -1)) {
            if (part.isEmpty() || !SUBDOMAIN.matcher(part).matches()) {
                throw invalid("pool", value, "DNS subdomains joined by '/', at most " + SUBDOMAIN_MAX + " characters");
            }
        }
        return value;
    }

    private static String label(String what, String value) {
        if (value.length() > LABEL_MAX || !LABEL.matcher(value).matches()) {
            throw invalid(what, value, "a DNS-1123 label (lowercase letters, digits and '-', at most " + LABEL_MAX + " characters)");
        }
        return value;
    }

    private static String subdomain(String what, String value, int max) {
        if (value.length() > max || !SUBDOMAIN.matcher(value).matches()) {
            throw invalid(what, value, "a DNS-1123 subdomain (lowercase letters, digits, '-' and '.', at most " + max + " characters)");
        }
        for (String label : value.split("\\.")) {
            if (label.length() > LABEL_MAX) {
                throw invalid(what, value, "a DNS-1123 subdomain whose labels have at most " + LABEL_MAX + " characters");
            }
        }
        return value;
    }

    private static QueryException invalid(String what, String value, String rule) {
        return QueryException.badRequest(what + " must be " + rule + ", got " + Excerpt.of(value));
    }
}
