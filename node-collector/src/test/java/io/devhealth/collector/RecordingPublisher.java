package io.devhealth.collector;

import io.devhealth.collector.publish.ReportPublisher;
import io.devhealth.schema.avro.ClaimAllocation;
import io.devhealth.schema.avro.ClaimDevice;
import io.devhealth.schema.avro.DeviceHealthReport;
import io.devhealth.schema.avro.NodeAllocations;
import io.devhealth.schema.avro.NodeDevices;
import io.devhealth.schema.avro.NodeHeartbeat;
import io.devhealth.schema.avro.PodAllocation;
import io.devhealth.schema.avro.SourceState;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.avro.specific.SpecificRecord;

/** Keeps what the collector publishes, in order, for assertions. */
public final class RecordingPublisher implements ReportPublisher {

    private final List<DeviceHealthReport> reports = new CopyOnWriteArrayList<>();
    private final List<NodeHeartbeat> heartbeats = new CopyOnWriteArrayList<>();
    private final List<NodeAllocations> allocations = new CopyOnWriteArrayList<>();
    private final List<NodeDevices> inventories = new CopyOnWriteArrayList<>();

    @Override
    public void publish(SpecificRecord record) {
        if (record instanceof DeviceHealthReport report) {
            reports.add(report);
        } else if (record instanceof NodeHeartbeat heartbeat) {
            heartbeats.add(heartbeat);
        } else if (record instanceof NodeAllocations snapshot) {
            allocations.add(snapshot);
        } else if (record instanceof NodeDevices devices) {
            inventories.add(devices);
        } else {
            throw new IllegalArgumentException("not a collector record: " + record.getClass().getName());
        }
    }

    public List<DeviceHealthReport> reports() {
        return List.copyOf(reports);
    }

    public List<DeviceHealthReport> reportsFor(String device) {
        return reports.stream().filter(r -> r.getDevice().getDevice().equals(device)).toList();
    }

    public List<NodeHeartbeat> heartbeats() {
        return List.copyOf(heartbeats);
    }

    public List<NodeAllocations> allocations() {
        return List.copyOf(allocations);
    }

    /**
     * The claimed devices of the latest allocations snapshot, one line each:
     * {@code namespace/pod/claim -> driver/pool/device}; empty before the first snapshot.
     */
    public List<String> claimedDevices() {
        List<String> devices = new java.util.ArrayList<>();
        if (allocations.isEmpty()) {
            return devices;
        }
        for (PodAllocation pod : allocations.get(allocations.size() - 1).getPods()) {
            pod.getContainers().forEach(container -> {
                for (ClaimAllocation claim : container.getClaims()) {
                    for (ClaimDevice device : claim.getDevices()) {
                        devices.add(pod.getNamespace() + "/" + pod.getName() + "/" + claim.getClaimName() + " -> "
                                + device.getDriver() + "/" + device.getPool() + "/" + device.getDevice());
                    }
                }
            });
        }
        return devices;
    }

    public List<NodeDevices> inventories() {
        return List.copyOf(inventories);
    }

    /** The state of {@code sourceName} in the latest heartbeat that mentions it. */
    public Optional<SourceState> lastSourceState(String sourceName) {
        for (int i = heartbeats.size() - 1; i >= 0; i--) {
            for (SourceState state : heartbeats.get(i).getSources()) {
                if (state.getSourceName().equals(sourceName)) {
                    return Optional.of(state);
                }
            }
        }
        return Optional.empty();
    }

    public void clear() {
        reports.clear();
        heartbeats.clear();
    }

    @Override
    public void close() {
    }
}
