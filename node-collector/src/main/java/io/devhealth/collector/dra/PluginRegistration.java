package io.devhealth.collector.dra;

import java.nio.file.Path;
import java.time.Instant;
import java.util.List;

/**
 * One registration of a DRA driver: what {@code Registration.GetInfo} said on one registration
 * socket, or one statically configured driver.
 *
 * @param registrationSocket the {@code *-reg.sock} it came from; for a static driver a name of the form {@code static:<driver>}
 * @param registeredAt when the registration socket appeared (its mtime); static drivers count as the oldest
 * @param order a tie-breaker: increases with every registration the collector learns of
 * @param endpoint the service socket serving {@code DRAResourceHealth}: {@code PluginInfo.endpoint}, or the
 *                 registration socket itself where that is empty (as the kubelet reads it)
 * @param supportedVersions {@code PluginInfo.supported_versions}, e.g. {@code v1.DRAPlugin}, {@code v1alpha1.DRAResourceHealth}
 */
public record PluginRegistration(Path registrationSocket, Instant registeredAt, long order, String driver, Path endpoint,
                                 List<String> supportedVersions) {

    public PluginRegistration {
        supportedVersions = List.copyOf(supportedVersions);
    }

    /** Whether this registration is newer than {@code other}: the later socket, then the later learned. */
    public boolean newerThan(PluginRegistration other) {
        int byTime = registeredAt.compareTo(other.registeredAt);
        return byTime != 0 ? byTime > 0 : order > other.order;
    }
}
