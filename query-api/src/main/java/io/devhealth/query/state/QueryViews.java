package io.devhealth.query.state;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import io.devhealth.processor.state.DeviceNow;
import io.devhealth.processor.state.FleetCounts;
import io.devhealth.schema.HealthWords;
import io.devhealth.schema.VerdictWords;
import io.devhealth.schema.avro.ClaimDeviceStatus;
import io.devhealth.schema.avro.ContainerDeviceStatus;
import io.devhealth.schema.avro.DeviceStatus;
import io.devhealth.schema.avro.HealthTransition;
import io.devhealth.schema.avro.PodDeviceStatus;
import io.devhealth.schema.avro.StatsDimension;
import io.devhealth.schema.avro.TerminatedPod;
import io.devhealth.schema.avro.Verdict;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The JSON documents of the query API (stable field names, RFC 3339 times), built from store values. Every
 * health is spelled by {@link HealthWords}, so the answer reads as the pod's condition message and its
 * post-mortem record do.
 */
public final class QueryViews {

    private QueryViews() {}

    /**
     * @param verdict for a terminated pod whose record is final, whether it ended on failed hardware
     *     (as of {@code at}); null while not known
     */
    public record PodDevices(String namespace, String name, String node, String cluster, String at, long version, String updatedAt,
                      String summary, List<Container> containers, PodVerdict verdict) {

        public PodDevices withVerdict(PodVerdict known) {
            return new PodDevices(namespace, name, node, cluster, at, version, updatedAt, summary, containers, known);
        }
    }

    /**
     * A terminated pod's verdict, as the sink published it when its post-mortem record became final:
     * {@code DeviceFailure}, {@code NoDeviceFailure} or {@code Unknown} ({@link VerdictWords}).
     */
    public record PodVerdict(String verdict, String uid, String phase, String finishedAt, String recordedAt, String message) {}

    /** Terminated pods of one dimension value (a node, a product) by verdict, over the summary's range. */
    public record VerdictEntry(String key, long deviceFailure, long noDeviceFailure, long unknown, long total) {}

    record Container(String name, List<Claim> claims) {}

    record Claim(String claimName, String claimNamespace, List<Device> devices) {}

    record Device(String driver, String pool, String device, String resourceId, String health, String message, String reason,
                  String since) {}

    record Transition(String id, String at, String from, String to, String source, String reason, String message, String severity,
                      List<String> affectedPods) {}

    public record DeviceHistory(String node, String driver, String pool, String device, String from, String to, List<Transition> items,
                         @JsonProperty("continue") String continueToken) {}

    /**
     * A device source as the device is shown it. {@code damping}: while flap damping holds the source,
     * the word it is held at and how often it changed since; null otherwise.
     */
    record Source(String kind, String name, String health, String message, String reason, String observedAt, String refreshedAt,
                  long timeoutSeconds, Damping damping) {}

    record Damping(String since, String health, int flips, String until) {}

    record NodeDevice(String driver, String pool, String device, String uuid, String health, String message, String reason,
                      String since, List<Source> sources) {}

    public record NodeDevices(String node, List<NodeDevice> items, @JsonProperty("continue") String continueToken) {}

    /** @param missing what a 403 lacked, for a caller authorized by Kubernetes RBAC; omitted otherwise */
    @JsonInclude(JsonInclude.Include.NON_NULL)

    /** Transition counts of one dimension value (a node, a driver, a product, a reason) over the summary's range. */
    public record FleetEntry(String key, long toUnhealthy, long toUnknown, long toHealthy, long total) {}

    public record FleetTotals(long toUnhealthy, long toUnknown, long toHealthy, long total) {}

    /**
     * {@code GET /v1/fleet/summary}: per dimension (NODE, DRIVER, PRODUCT, REASON), its values with their
     * counts, most transitions to Unhealthy first. Every transition counts once in each dimension.
     */
    public record FleetSummary(String from, String to, String window, FleetTotals totals, Map<String, List<FleetEntry>> dimensions,
                        Map<String, List<VerdictEntry>> verdicts) {}

    /**
     * The summary of {@code counts} (by {@code DIMENSION:value}) and of the terminated pods' {@code verdicts}
     * (by {@code DIMENSION:value}, then verdict; NODE and PRODUCT); dimensions without counts are present and empty.
     */
    public static FleetSummary fleetSummary(Instant from, Instant to, java.time.Duration window, Map<String, FleetCounts> counts,
                                     Map<String, Map<Verdict, Long>> verdicts) {
        Map<String, List<FleetEntry>> dimensions = new LinkedHashMap<>();
        for (StatsDimension dimension : List.of(StatsDimension.NODE, StatsDimension.DRIVER, StatsDimension.PRODUCT, StatsDimension.REASON)) {
            dimensions.put(dimension.name(), new ArrayList<>());
        }
        long unhealthy = 0;
        long unknown = 0;
        long healthy = 0;
        for (Map.Entry<String, FleetCounts> entry : counts.entrySet()) {
            int colon = entry.getKey().indexOf(':');
            String dimension = colon < 0 ? StatsDimension.OTHER.name() : entry.getKey().substring(0, colon);
            FleetCounts c = entry.getValue();
            dimensions.computeIfAbsent(dimension, d -> new ArrayList<>()).add(new FleetEntry(entry.getKey().substring(colon + 1),
                    c.toUnhealthy(), c.toUnknown(), c.toHealthy(), c.total()));
            if (dimension.equals(StatsDimension.NODE.name())) {
                unhealthy += c.toUnhealthy();
                unknown += c.toUnknown();
                healthy += c.toHealthy();
            }
        }
        Comparator<FleetEntry> order = Comparator.comparingLong(FleetEntry::toUnhealthy).reversed()
                .thenComparing(Comparator.comparingLong(FleetEntry::total).reversed())
                .thenComparing(FleetEntry::key);
        dimensions.values().forEach(entries -> entries.sort(order));
        Map<String, List<VerdictEntry>> byVerdict = new LinkedHashMap<>();
        for (StatsDimension dimension : List.of(StatsDimension.NODE, StatsDimension.PRODUCT)) {
            byVerdict.put(dimension.name(), new ArrayList<>());
        }
        for (Map.Entry<String, Map<Verdict, Long>> entry : verdicts.entrySet()) {
            int colon = entry.getKey().indexOf(':');
            String dimension = colon < 0 ? StatsDimension.OTHER.name() : entry.getKey().substring(0, colon);
            Map<Verdict, Long> c = entry.getValue();
            long failures = c.getOrDefault(Verdict.DEVICE_FAILURE, 0L);
            long clean = c.getOrDefault(Verdict.NO_DEVICE_FAILURE, 0L);
            long notKnown = c.getOrDefault(Verdict.UNKNOWN, 0L);
            byVerdict.computeIfAbsent(dimension, d -> new ArrayList<>()).add(new VerdictEntry(entry.getKey().substring(colon + 1),
                    failures, clean, notKnown, failures + clean + notKnown));
        }
        byVerdict.values().forEach(entries -> entries.sort(Comparator.comparingLong(VerdictEntry::deviceFailure).reversed()
                .thenComparing(Comparator.comparingLong(VerdictEntry::total).reversed()).thenComparing(VerdictEntry::key)));
        return new FleetSummary(from.toString(), to.toString(), window.toString(),
                new FleetTotals(unhealthy, unknown, healthy, unhealthy + unknown + healthy), dimensions, byVerdict);
    }

    static PodDevices pod(PodDeviceStatus status, Instant at) {
        return new PodDevices(status.getPod().getNamespace(), status.getPod().getName(), status.getNode(), status.getCluster(),
                at == null ? null : at.toString(), status.getVersion(), status.getUpdatedAt().toString(),
                HealthWords.of(status.getSummary()),
                status.getContainers().stream().map(QueryViews::container).toList(), null);
    }

    static PodVerdict verdict(TerminatedPod verdict) {
        return new PodVerdict(VerdictWords.of(verdict.getVerdict()), verdict.getId(), verdict.getPhase(),
                verdict.getFinishedAt() == null ? null : verdict.getFinishedAt().toString(), verdict.getRecordedAt().toString(),
                verdict.getMessage());
    }

    private static Container container(ContainerDeviceStatus container) {
        return new Container(container.getName(), container.getClaims().stream().map(QueryViews::claim).toList());
    }

    private static Claim claim(ClaimDeviceStatus claim) {
        return new Claim(claim.getClaimName(), claim.getClaimNamespace(), claim.getDevices().stream().map(QueryViews::device).toList());
    }

    private static Device device(DeviceStatus device) {
        return new Device(device.getDevice().getDriver(), device.getDevice().getPool(), device.getDevice().getDevice(),
                device.getResourceId(), HealthWords.of(device.getHealth()), device.getMessage(), device.getReason(),
                device.getSince().toString());
    }

    static Transition transition(HealthTransition t) {
        return new Transition(t.getId(), t.getAt().toString(), HealthWords.of(t.getFrom()), HealthWords.of(t.getTo()),
                t.getSource().name(), t.getReason(), t.getMessage(), t.getSeverity().name(),
                t.getAffectedPods().stream().map(p -> p.getNamespace() + "/" + p.getName()).toList());
    }

    static NodeDevice nodeDevice(DeviceNow device) {
        return new NodeDevice(device.driver(), device.pool(), device.device(), device.uuid(), HealthWords.of(device.health()),
                device.message(), device.reason(), device.since() == null ? null : device.since().toString(),
                device.sources().stream().map(QueryViews::source).toList());
    }

    private static Source source(DeviceNow.SourceNow s) {
        Damping damping = s.hold() == null ? null
                : new Damping(s.hold().since().toString(), HealthWords.of(s.hold().health()), s.hold().flips(), s.hold().releaseAt().toString());
        return new Source(s.kind(), s.name(), HealthWords.of(s.health()), s.message(), s.reason(), s.observedAt().toString(),
                s.refreshedAt().toString(), s.timeoutMs() / 1000, damping);
    }
}
