package io.devhealth.processor;

import static org.assertj.core.api.Assertions.assertThat;

import io.devhealth.schema.avro.DeviceRef;
import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.PodRef;
import io.devhealth.schema.avro.TerminatedContainer;
import io.devhealth.schema.avro.TerminatedDevice;
import io.devhealth.schema.avro.TerminatedPod;
import io.devhealth.schema.avro.Verdict;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.kstream.Windowed;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.WindowStore;
import org.apache.kafka.streams.state.WindowStoreIterator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The sink's verdicts in the processor: kept per pod for queries, counted per node and product, each once. */
class PodVerdictsTest {

    private static final Instant T0 = TopologyFixture.T0;
    private static final String H100 = "NVIDIA H100 80GB HBM3";

    private final TopologyFixture fixture = new TopologyFixture(o -> o.fleetWindow(Duration.ofMinutes(1)));

    @AfterEach
    void close() {
        fixture.close();
    }

    /** A verdict as the sink publishes it; {@code products}: one device of the pod's container each (the first Unhealthy for DeviceFailure). */
    static TerminatedPod verdict(String name, String uid, String node, Verdict verdict, Instant recordedAt, String... products) {
        List<TerminatedDevice> devices = new ArrayList<>();
        for (int i = 0; i < products.length; i++) {
            devices.add(TerminatedDevice.newBuilder()
                    .setDevice(DeviceRef.newBuilder().setDriver("gpu.nvidia.com").setPool(node).setDevice("gpu-" + i).build())
                    .setHealth(verdict == Verdict.DEVICE_FAILURE && i == 0 ? HealthStatus.UNHEALTHY : HealthStatus.HEALTHY)
                    .setSince(T0).setProduct(products[i]).build());
        }
        return TerminatedPod.newBuilder().setId(uid).setPod(new PodRef("ml", name, uid)).setNode(node).setPhase("Failed")
                .setFinishedAt(recordedAt.minusSeconds(120)).setVerdict(verdict)
                .setContainers(List.of(TerminatedContainer.newBuilder().setName("main").setExitCode(1).setDevices(devices).build()))
                .setRecordedAt(recordedAt).build();
    }

    private void publish(TerminatedPod verdict) {
        fixture.verdicts.pipeInput("ml/" + verdict.getPod().getName(), verdict, verdict.getRecordedAt());
    }

    /** DIMENSION:value|VERDICT → count, over every window. */
    private Map<String, Long> counts() {
        WindowStore<String, Long> store = fixture.driver.getWindowStore(DeviceHealthTopology.FLEET_VERDICT_STORE);
        Map<String, Long> counts = new TreeMap<>();
        try (KeyValueIterator<Windowed<String>, Long> all = store.all()) {
            all.forEachRemaining(entry -> counts.merge(entry.key.key(), entry.value, Long::sum));
        }
        return counts;
    }

    private List<TerminatedPod> kept(String pod) {
        WindowStore<String, TerminatedPod> store = fixture.driver.getWindowStore(DeviceHealthTopology.POD_VERDICT_STORE);
        List<TerminatedPod> kept = new ArrayList<>();
        try (WindowStoreIterator<TerminatedPod> entries = store.fetch(pod, Instant.EPOCH, T0.plus(Duration.ofDays(1)))) {
            entries.forEachRemaining((KeyValue<Long, TerminatedPod> entry) -> kept.add(entry.value));
        }
        return kept;
    }

    @Test
    void shouldCountEachTerminatedPodOncePerNodeAndPerProductOfItsDevices() {
        publish(verdict("train-0", "uid-0", "node-a", Verdict.DEVICE_FAILURE, T0.plusSeconds(10), H100, H100));
        publish(verdict("train-1", "uid-1", "node-a", Verdict.NO_DEVICE_FAILURE, T0.plusSeconds(20), H100, null));
        publish(verdict("train-2", "uid-2", "node-b", Verdict.UNKNOWN, T0.plusSeconds(30), H100));

        assertThat(counts()).containsExactlyInAnyOrderEntriesOf(Map.of(
                "NODE:node-a|DEVICE_FAILURE", 1L,
                "NODE:node-a|NO_DEVICE_FAILURE", 1L,
                "NODE:node-b|UNKNOWN", 1L,
                "PRODUCT:" + H100 + "|DEVICE_FAILURE", 1L,
                "PRODUCT:" + H100 + "|NO_DEVICE_FAILURE", 1L,
                "PRODUCT:unknown|NO_DEVICE_FAILURE", 1L,
                "PRODUCT:" + H100 + "|UNKNOWN", 1L));
    }

    @Test
    void shouldKeepAndCountAVerdictDeliveredTwiceOnce() {
        TerminatedPod first = verdict("train-0", "uid-0", "node-a", Verdict.DEVICE_FAILURE, T0.plusSeconds(10), H100);
        publish(first);
        // The sink repeated the freeze after a failed record write: the same pod, a later recordedAt.
        publish(TerminatedPod.newBuilder(first).setRecordedAt(T0.plusSeconds(40)).build());

        assertThat(kept("ml/train-0")).singleElement().satisfies(v -> assertThat(v.getRecordedAt()).isEqualTo(T0.plusSeconds(10)));
        assertThat(counts()).containsEntry("NODE:node-a|DEVICE_FAILURE", 1L);
    }

    @Test
    void shouldKeepEveryIncarnationOfAPodName() {
        publish(verdict("train-0", "uid-0", "node-a", Verdict.DEVICE_FAILURE, T0.plusSeconds(10), H100));
        publish(verdict("train-0", "uid-1", "node-b", Verdict.NO_DEVICE_FAILURE, T0.plusSeconds(300), H100));

        assertThat(kept("ml/train-0")).extracting(TerminatedPod::getId).containsExactly("uid-0", "uid-1");
        assertThat(counts()).containsEntry("NODE:node-a|DEVICE_FAILURE", 1L).containsEntry("NODE:node-b|NO_DEVICE_FAILURE", 1L);
    }
}
