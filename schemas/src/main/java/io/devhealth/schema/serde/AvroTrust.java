package io.devhealth.schema.serde;

import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArraySet;
import org.apache.avro.util.ClassSecurityValidator;
import org.apache.avro.util.ClassSecurityValidator.ClassSecurityPredicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Makes Avro 1.12.2 trust devhealth's generated classes without any JVM flag.
 *
 * <p>Why: Avro 1.12.2 refuses to instantiate a class named by a schema unless the class is trusted
 * ({@code SecurityException: Forbidden <class>! This class is not trusted to be included in Avro
 * schemas}), and decoding into a generated class is such an instantiation. The documented remedy,
 * {@code -Dorg.apache.avro.SERIALIZABLE_PACKAGES=...}, has to be on every service's command line
 * before Avro's validator class initialises (it reads the property only once); forgetting it
 * breaks decoding at run time, not at build time. This class instead adds a package predicate to
 * Avro's global validator, keeping whatever was trusted before (defaults and system properties).
 *
 * <p>Only exact package prefixes are trusted ({@code io.devhealth.schema.avro} and its
 * sub-packages), so the protection against schemas naming arbitrary classes stays in place for
 * everything else. The serde calls {@link #install()} itself; other code decoding generated
 * classes directly (e.g. {@code DeviceHealthReport.fromByteBuffer}) should call it once at start.
 *
 * <p>If code elsewhere later replaces Avro's global validator with {@code setGlobal}, this trust
 * is lost; nothing in devhealth does that.
 */
public final class AvroTrust {

    private static final Logger LOGGER = LoggerFactory.getLogger(AvroTrust.class);

    /** The package of the classes generated from {@code schemas/src/main/avro}. */
    public static final String GENERATED_PACKAGE = "io.devhealth.schema.avro";

    private static final Set<String> PACKAGES = new CopyOnWriteArraySet<>();
    private static boolean installed;

    private AvroTrust() {
    }

    /** Trusts {@link #GENERATED_PACKAGE}. Idempotent and cheap; safe to call from any thread. */
    public static void install() {
        trustPackage(GENERATED_PACKAGE);
    }

    /** Trusts the classes in {@code packageName} and its sub-packages. Idempotent. */
    public static void trustPackage(String packageName) {
        Objects.requireNonNull(packageName, "packageName");
        if (packageName.isBlank() || packageName.endsWith(".")) {
            throw new IllegalArgumentException("Not a package name: '" + packageName + "'");
        }
        if (PACKAGES.add(packageName)) {
            installPredicate();
            LOGGER.debug("Trusted Avro package package={}", packageName);
        }
    }

    /** Whether Avro's global validator currently trusts {@code type}. */
    public static boolean isTrusted(Class<?> type) {
        return ClassSecurityValidator.getGlobal().isTrusted(type);
    }

    private static synchronized void installPredicate() {
        if (installed) {
            return;
        }
        ClassSecurityPredicate previous = ClassSecurityValidator.getGlobal();
        ClassSecurityPredicate devhealth = AvroTrust::inTrustedPackage;
        ClassSecurityValidator.setGlobal(ClassSecurityValidator.composite(previous, devhealth));
        installed = true;
    }

    private static boolean inTrustedPackage(Class<?> type) {
        String name = type.getName();
        for (String packageName : PACKAGES) {
            if (name.startsWith(packageName + ".")) {
                return true;
            }
        }
        return false;
    }
}
