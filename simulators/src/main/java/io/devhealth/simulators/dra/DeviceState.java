package io.devhealth.simulators.dra;

import java.util.Objects;

/**
 * One device's health as a DRA driver reports it in a {@code NodeWatchResourcesResponse}
 * ({@code DeviceHealth}: pool, device, health, message, {@code health_check_timeout_seconds}).
 *
 * <p>The driver name is not part of the message: it is implied by the stream, i.e. by the
 * {@link FakeDraDriver} that sends it.
 *
 * @param pool the pool inside the driver ({@code DeviceIdentifier.pool_name})
 * @param device the device inside the pool ({@code DeviceIdentifier.device_name})
 * @param health the reported health
 * @param message optional human-readable detail (proto field 5, since Kubernetes 1.36); {@code null}
 *     becomes {@code ""}, which is "not set" on the wire
 * @param timeoutSeconds {@code health_check_timeout_seconds} (proto field 4, since 1.35); 0 means "use
 *     the kubelet default" (30 s); negative values are passed through unchanged so that tests can
 *     check how a consumer treats them
 */
public record DeviceState(String pool, String device, Health health, String message, long timeoutSeconds) {

    /** The {@code HealthStatus} enum of the {@code DRAResourceHealth} API (same numbers in v1alpha1 and v1). */
    public enum Health {
        /** {@code UNKNOWN = 0}. */
        UNKNOWN,
        /** {@code HEALTHY = 1}. */
        HEALTHY,
        /** {@code UNHEALTHY = 2}. */
        UNHEALTHY
    }

    /** Validates the identifiers and normalizes a {@code null} message to {@code ""}. */
    public DeviceState {
        Objects.requireNonNull(pool, "pool");
        Objects.requireNonNull(device, "device");
        Objects.requireNonNull(health, "health");
        message = message == null ? "" : message;
    }

    /**
     * @param pool the pool name
     * @param device the device name
     * @return a healthy device without message, with the default timeout
     */
    public static DeviceState healthy(String pool, String device) {
        return new DeviceState(pool, device, Health.HEALTHY, "", 0);
    }

    /**
     * @param pool the pool name
     * @param device the device name
     * @param message why it is unhealthy (for example {@code "XID 79: GPU has fallen off the bus"})
     * @return an unhealthy device with the default timeout
     */
    public static DeviceState unhealthy(String pool, String device, String message) {
        return new DeviceState(pool, device, Health.UNHEALTHY, message, 0);
    }

    /**
     * @param pool the pool name
     * @param device the device name
     * @return a device whose health the driver does not know, with the default timeout
     */
    public static DeviceState unknown(String pool, String device) {
        return new DeviceState(pool, device, Health.UNKNOWN, "", 0);
    }

    /**
     * @param seconds the new {@code health_check_timeout_seconds}
     * @return a copy with that timeout
     */
    public DeviceState withTimeoutSeconds(long seconds) {
        return new DeviceState(pool, device, health, message, seconds);
    }

    /**
     * @param newMessage the new message
     * @return a copy with that message
     */
    public DeviceState withMessage(String newMessage) {
        return new DeviceState(pool, device, health, newMessage, timeoutSeconds);
    }

    /**
     * @param newHealth the new health
     * @return a copy with that health
     */
    public DeviceState withHealth(Health newHealth) {
        return new DeviceState(pool, device, newHealth, message, timeoutSeconds);
    }
}
