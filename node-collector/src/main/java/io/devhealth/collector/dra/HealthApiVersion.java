package io.devhealth.collector.dra;

import java.util.Collection;
import java.util.Optional;

/** The versions of the DRA health gRPC API, with the strings plugins advertise at registration. */
public enum HealthApiVersion {
    V1("v1.DRAResourceHealth"),
    V1ALPHA1("v1alpha1.DRAResourceHealth");

    private final String registrationName;

    HealthApiVersion(String registrationName) {
        this.registrationName = registrationName;
    }

    public String registrationName() {
        return registrationName;
    }

    /** v1 where advertised, else v1alpha1, else empty: the driver does not serve health. */
    public static Optional<HealthApiVersion> pick(Collection<String> supportedVersions) {
        for (HealthApiVersion version : values()) {
            if (supportedVersions.contains(version.registrationName)) {
                return Optional.of(version);
            }
        }
        return Optional.empty();
    }
}
