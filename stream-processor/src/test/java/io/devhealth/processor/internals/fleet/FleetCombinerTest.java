package io.devhealth.processor.internals.fleet;

import io.devhealth.processor.internals.StateSerdes;
import io.devhealth.processor.internals.stores.CommitHookKeyValueStore;
import io.devhealth.processor.internals.stores.TopologyNames;
import io.devhealth.processor.state.FleetCounts;
import static org.assertj.core.api.Assertions.assertThat;

import io.devhealth.schema.avro.DeviceRef;
import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.HealthTransition;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.processor.api.MockProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The fold before the fleet-by-dimension repartition: what it sends, when, and what survives a restart or an abort. */
class FleetCombinerTest {

    private static final long T0 = Instant.parse("2026-12-01T10:00:00Z").toEpochMilli();
    private static final FleetWindows WINDOWS = new FleetWindows(Duration.ofMinutes(1), Duration.ofDays(1));

    private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
    private MockProcessorContext<String, FleetCounts> context;
    private KeyValueStore<String, PendingFleetCounts> store;
    private FleetCombiner combiner;

    @BeforeEach
    void setUp() {
        context = new MockProcessorContext<>();
        context.setCurrentStreamTimeMs(0);
        store = CommitHookKeyValueStore.builder(Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore(TopologyNames.FLEET_PENDING_STORE),
                Serdes.String(), StateSerdes.pendingFleetCounts())).withLoggingDisabled().build();
        store.init(context.getStateStoreContext(), store);
        context.addStateStore(store);
        combiner = start();
    }

    /** A combiner on this test's store, as Kafka Streams initializes one after a (re)start. */
    private FleetCombiner start() {
        context.resetForwards();
        FleetCombiner started = new FleetCombiner(WINDOWS, Duration.ofSeconds(1), meters);
        started.init(context);
        return started;
    }

    private void read(String node, String device, HealthStatus to, long at) {
        HealthTransition transition = HealthTransition.newBuilder().setId(node + "/" + device + "@" + at).setNode(node)
                .setDevice(DeviceRef.newBuilder().setDriver("gpu.nvidia.com").setPool(node).setDevice(device).build())
                .setTo(to).setReason(to == HealthStatus.UNHEALTHY ? "XID-79" : null).setAt(Instant.ofEpochMilli(at)).build();
        RecordHeaders headers = new RecordHeaders();
        headers.add(FleetDimensions.PRODUCT_HEADER, "H100".getBytes(java.nio.charset.StandardCharsets.UTF_8));
        context.setCurrentStreamTimeMs(Math.max(context.currentStreamTimeMs(), at));
        combiner.process(new Record<>(node + "/" + device, transition, at, headers));
    }

    /** What Kafka Streams does before it commits the task. */
    private void commit() {
        ((CommitHookKeyValueStore<?, ?>) store).flushCache();
    }

    /** The wall-clock punctuator's tick; returns what it sent, in order. */
    private List<Record<String, FleetCounts>> flushList() {
        context.resetForwards();
        context.scheduledPunctuators().get(0).getPunctuator().punctuate(0);
        return context.forwarded().stream()
                .map(f -> new Record<String, FleetCounts>(f.record().key(), f.record().value(), f.record().timestamp())).toList();
    }

    /** The wall-clock punctuator's tick; returns what it sent, by key. */
    private Map<String, Record<String, FleetCounts>> flush() {
        Map<String, Record<String, FleetCounts>> sent = new LinkedHashMap<>();
        flushList().forEach(r -> assertThat(sent.put(r.key(), r)).as("one record per key").isNull());
        return sent;
    }

    @Test
    void shouldSendABurstAsOneRecordPerDimensionValueWithTheTimeOfItsLatestTransition() {
        for (int d = 0; d < 8; d++) {
            read("n1", "gpu-" + d, d < 6 ? HealthStatus.HEALTHY : HealthStatus.UNHEALTHY, T0 + d);
        }
        read("n2", "gpu-0", HealthStatus.HEALTHY, T0 + 100);
        assertThat(context.forwarded()).as("nothing before the flush").isEmpty();

        Map<String, Record<String, FleetCounts>> sent = flush();

        assertThat(sent.keySet()).containsExactly("NODE:n1", "DRIVER:gpu.nvidia.com", "PRODUCT:H100", "REASON:unknown",
                "REASON:XID-79", "NODE:n2");
        assertThat(sent.get("NODE:n1").value()).isEqualTo(new FleetCounts("", 2, 0, 6));
        assertThat(sent.get("DRIVER:gpu.nvidia.com").value().total()).isEqualTo(9);
        assertThat(sent.get("DRIVER:gpu.nvidia.com").timestamp()).as("the latest transition's time").isEqualTo(T0 + 100);
        assertThat(sent.get("NODE:n1").timestamp()).isEqualTo(T0 + 7);
        assertThat(flush()).as("sent once").isEmpty();
    }

    @Test
    void shouldKeepTransitionsOfDifferentWindowsApart() {
        read("n1", "gpu-0", HealthStatus.HEALTHY, T0 + 59_999);
        read("n1", "gpu-1", HealthStatus.HEALTHY, T0 + 60_000);

        assertThat(flushList()).filteredOn(r -> r.key().equals("NODE:n1")).extracting(Record::timestamp).containsExactly(T0 + 59_999, T0 + 60_000);
    }

    @Test
    void shouldCountATransitionLateForItsClosedWindowAndNotFoldIt() {
        read("n1", "gpu-0", HealthStatus.HEALTHY, T0);
        read("n1", "gpu-1", HealthStatus.HEALTHY, T0 + Duration.ofDays(2).toMillis());
        read("n1", "gpu-2", HealthStatus.HEALTHY, T0 + 10);

        assertThat(meters.counter("devhealth.processor.fleet.late").count()).as("one per dimension").isEqualTo(4.0);
        assertThat(flushList()).filteredOn(r -> r.key().equals("NODE:n1")).extracting(r -> r.value().total()).containsExactly(1L, 1L);
    }

    @Test
    void shouldSendAfterARestartWhatWasCommittedAndNotYetSent() {
        read("n1", "gpu-0", HealthStatus.HEALTHY, T0);
        read("n1", "gpu-1", HealthStatus.UNHEALTHY, T0 + 1);
        commit();
        assertThat(store.approximateNumEntries()).as("node, driver, product, two reasons").isEqualTo(5);

        combiner = start(); // a crash after the commit: the store is all that is left

        Map<String, Record<String, FleetCounts>> sent = flush();
        assertThat(sent.get("NODE:n1").value()).isEqualTo(new FleetCounts("", 1, 0, 1));
        assertThat(sent.get("NODE:n1").timestamp()).isEqualTo(T0 + 1);
        assertThat(store.approximateNumEntries()).as("deleted with the send, in its transaction").isZero();
    }

    @Test
    void shouldWriteEachChangedValueOnceAtTheCommitAndDropWhatAnAbortedTransactionHeld() {
        read("n1", "gpu-0", HealthStatus.HEALTHY, T0);
        assertThat(store.get(FleetWindowKeys.key(T0, "NODE:n1"))).as("nothing written before the commit").isNull();
        commit();
        read("n1", "gpu-1", HealthStatus.HEALTHY, T0 + 1);

        ((CommitHookKeyValueStore<?, ?>) store).clearCache(); // the transaction of gpu-1's transition is aborted

        assertThat(flush().get("NODE:n1").value()).as("what was committed, not the aborted transaction's").isEqualTo(new FleetCounts("", 0, 0, 1));
    }
}
