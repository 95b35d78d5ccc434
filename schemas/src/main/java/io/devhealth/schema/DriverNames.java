package io.devhealth.schema;

import java.util.Optional;
import java.util.regex.Pattern;

/**
 * What a DRA driver name may be: a DNS-1123 subdomain of at most {@value #MAX_LENGTH} characters, as
 * the API server holds {@code ResourceSlice.spec.driver} to ({@code DriverNameMaxLength} in
 * k8s.io/api/resource/v1). Such a name is one path segment: no '/', never "." or "..", so it can name
 * the driver's directory under the kubelet's plugins directory.
 */
public final class DriverNames {

    public static final int MAX_LENGTH = 63;
    private static final Pattern SUBDOMAIN = Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");

    private DriverNames() {}

    /** Why {@code name} is no valid driver name, or empty when it is one. */
    public static Optional<String> violation(String name) {
        if (name == null || name.isEmpty()) {
            return Optional.of("a driver name must not be empty");
        }
        if (name.length() > MAX_LENGTH) {
            return Optional.of("a driver name has at most " + MAX_LENGTH + " characters, this one " + name.length());
        }
        if (!SUBDOMAIN.matcher(name).matches()) {
            return Optional.of("a driver name must be a DNS-1123 subdomain (lowercase letters, digits, '-' and '.', "
                    + "each label starting and ending with a letter or digit)");
        }
        return Optional.empty();
    }
}
