package io.devhealth.collector.dra;

import io.devhealth.schema.avro.HealthStatus;

/**
 * One device as a DRA driver reported it in one {@code NodeWatchResources} response, independent of
 * the API version (v1alpha1 and v1 carry the same fields).
 *
 * @param timeoutSeconds the driver's {@code health_check_timeout_seconds}; 0 when unset or invalid
 */
public record ObservedDevice(String pool, String device, HealthStatus health, String message, long timeoutSeconds) {

    public DeviceKey key() {
        return new DeviceKey(pool, device);
    }

    /** A device inside one driver's stream. */
    public record DeviceKey(String pool, String device) {}
}
