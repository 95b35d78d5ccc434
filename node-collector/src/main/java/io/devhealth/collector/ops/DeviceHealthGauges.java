package io.devhealth.collector.ops;

import io.devhealth.schema.avro.ClaimAllocation;
import io.devhealth.schema.avro.ClaimDevice;
import io.devhealth.schema.avro.ContainerAllocation;
import io.devhealth.schema.avro.DeviceHealthReport;
import io.devhealth.schema.avro.DevicePluginAllocation;
import io.devhealth.schema.avro.DeviceRef;
import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.NodeAllocations;
import io.devhealth.schema.avro.PodAllocation;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * Every device's health as this collector last heard it from each of its sources, attributed to the
 * pods the kubelet says use the device, in the shape node agents such as dcgm-exporter give their GPU
 * series (the {@code UUID}, {@code namespace}, {@code pod} and {@code container} labels), so that
 * devhealth's word sits next to theirs in one query:
 *
 * <pre>devhealth_collector_device_health{source, driver, pool, device, UUID, GPU_I_ID, namespace, pod, container, health} 0|1</pre>
 *
 * <p>One series per device, pod container using it (empty pod labels when none does) and health
 * state: 1 for the state the device is in now, 0 for the two others (kube-state-metrics' shape for a
 * state, so a series does not vanish when the state changes). A device whose source has not spoken
 * within the device's timeout reads Unknown here too: the processor decides the same from the same
 * reports, but this view works for a node whose processor is far away or lagging.
 *
 * <p>Bounded by the node: its devices times the pods on each (a shared GPU has several). Series of a
 * pod that no longer uses the device are removed when the next allocation snapshot says so.
 *
 * <p>Thread-safe: reports come from gRPC and NVML threads, allocations from the poller.
 */
public final class DeviceHealthGauges {

    static final String NAME = "devhealth.collector.device.health";
    private static final List<HealthStatus> STATES = List.of(HealthStatus.HEALTHY, HealthStatus.UNHEALTHY, HealthStatus.UNKNOWN);

    private final MeterRegistry registry;
    private final Clock clock;
    private final Duration defaultTimeout;
    private final Map<Identity, Heard> devices = new HashMap<>();
    private NodeAllocations allocations;

    /**
     * @param defaultTimeout how long a report stays fresh when its source gave no timeout of its own
     */
    public DeviceHealthGauges(MeterRegistry registry, Clock clock, Duration defaultTimeout) {
        this.registry = registry;
        this.clock = clock;
        this.defaultTimeout = defaultTimeout;
    }

    /** A report the collector publishes: the device's health now, as its source says. */
    public synchronized void reported(DeviceHealthReport report) {
        DeviceRef ref = report.getDevice();
        if (ref == null) {
            return;
        }
        Identity identity = Identity.of(report.getSourceName(), ref);
        Heard heard = devices.get(identity);
        if (heard == null) {
            heard = new Heard();
            devices.put(identity, heard);
        }
        long timeoutMs = report.getTimeoutSeconds() != null && report.getTimeoutSeconds() > 0
                ? report.getTimeoutSeconds() * 1000 : defaultTimeout.toMillis();
        heard.update(report.getHealth(), report.getObservedAt() == null ? clock.millis() : report.getObservedAt().toEpochMilli(),
                timeoutMs);
        attribute(identity, heard);
    }

    /** The kubelet's allocations now: which pods use which devices. */
    public synchronized void allocated(NodeAllocations snapshot) {
        this.allocations = snapshot;
        devices.forEach(this::attribute);
    }

    /** Makes the device's series those of the pods using it now. */
    private void attribute(Identity identity, Heard heard) {
        List<User> users = usersOf(identity);
        if (users.equals(heard.users)) {
            return;
        }
        heard.meters.forEach(registry::remove);
        heard.meters.clear();
        for (User user : users) {
            for (HealthStatus state : STATES) {
                heard.meters.add(Gauge.builder(NAME, heard, h -> h.healthAt(clock.millis()) == state ? 1 : 0)
                        .description("1 for the health a device is in as its source last told this collector, 0 for the others")
                        .tag("source", identity.source)
                        .tag("driver", identity.driver)
                        .tag("pool", identity.pool)
                        .tag("device", identity.device)
                        .tag("UUID", identity.uuid)
                        .tag("GPU_I_ID", identity.gpuInstance)
                        .tag("namespace", user.namespace)
                        .tag("pod", user.pod)
                        .tag("container", user.container)
                        .tag("health", label(state))
                        .register(registry));
            }
        }
        heard.users = users;
    }

    /** The pod containers using the device: as a DRA claim device, or as a device-plugin id equal to its UUID. */
    private List<User> usersOf(Identity identity) {
        Set<User> users = new LinkedHashSet<>();
        if (allocations != null) {
            for (PodAllocation pod : allocations.getPods()) {
                for (ContainerAllocation container : pod.getContainers()) {
                    if (uses(container, identity)) {
                        users.add(new User(pod.getNamespace(), pod.getName(), container.getName()));
                    }
                }
            }
        }
        return users.isEmpty() ? List.of(User.NONE) : List.copyOf(users);
    }

    private static boolean uses(ContainerAllocation container, Identity identity) {
        if (!identity.driver.isEmpty()) {
            for (ClaimAllocation claim : container.getClaims()) {
                for (ClaimDevice device : claim.getDevices()) {
                    if (device.getDriver().equals(identity.driver) && device.getPool().equals(identity.pool)
                            && device.getDevice().equals(identity.device)) {
                        return true;
                    }
                }
            }
        }
        if (!identity.uuid.isEmpty()) {
            for (DevicePluginAllocation resource : container.getDevicePluginResources()) {
                if (resource.getDeviceIds().contains(identity.uuid)) {
                    return true;
                }
            }
        }
        return false;
    }

    /** The label value of a health state, as every devhealth metric writes it. */
    public static String label(HealthStatus health) {
        return health.name().toLowerCase(Locale.ROOT);
    }

    /** Which device, as one source names it. */
    private record Identity(String source, String driver, String pool, String device, String uuid, String gpuInstance) {
        static Identity of(String source, DeviceRef ref) {
            return new Identity(Objects.toString(source, ""), ref.getDriver(), ref.getPool(), ref.getDevice(),
                    Objects.toString(ref.getUuid(), ""),
                    ref.getMigGpuInstanceId() == null ? "" : ref.getMigGpuInstanceId().toString());
        }
    }

    /** A container of a pod; {@link #NONE} when no pod uses the device. */
    private record User(String namespace, String pod, String container) {
        static final User NONE = new User("", "", "");
    }

    /** What a source last said of a device, and the series showing it. */
    private static final class Heard {
        private volatile HealthStatus health = HealthStatus.UNKNOWN;
        private volatile long freshUntil;
        private List<User> users = List.of();
        private final List<Meter> meters = new ArrayList<>();

        void update(HealthStatus reported, long observedAt, long timeoutMs) {
            health = reported;
            freshUntil = observedAt + timeoutMs;
        }

        HealthStatus healthAt(long now) {
            return now > freshUntil ? HealthStatus.UNKNOWN : health;
        }
    }
}
