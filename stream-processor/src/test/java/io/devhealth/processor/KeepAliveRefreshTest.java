package io.devhealth.processor;

import static io.devhealth.processor.TopologyFixture.DRIVER;
import static io.devhealth.processor.TopologyFixture.NODE;
import static io.devhealth.processor.TopologyFixture.T0;
import static io.devhealth.processor.TopologyFixture.report;
import static org.assertj.core.api.Assertions.assertThat;

import io.devhealth.processor.internals.node.StoredNode;
import io.devhealth.processor.internals.rules.DeviceState;
import io.devhealth.processor.internals.rules.PendingRefresh;
import io.devhealth.processor.internals.rules.SourceReport;
import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.HealthTransition;
import io.devhealth.schema.avro.ReportKind;
import io.devhealth.schema.avro.SourceKind;
import io.devhealth.schema.avro.SourceStatus;
import java.time.Instant;
import java.util.Map;
import org.apache.kafka.streams.state.KeyValueStore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Keep-alives that change nothing but how recently a source spoke are kept in the node's state
 * ({@link PendingRefresh}) instead of rewriting the device's; everything that reads a device —
 * silence, the query API, a restart — sees the two combined.
 */
class KeepAliveRefreshTest {

    private static final String SOURCE = "DRA:" + DRIVER;
    private static final long TIMEOUT_MS = 30_000L;

    private final TopologyFixture fixture = new TopologyFixture();

    @AfterEach
    void tearDown() {
        fixture.close();
    }

    private static String key(String device) {
        return NODE + "/" + DRIVER + "/" + NODE + "/" + device;
    }

    private KeyValueStore<String, DeviceState> devices() {
        return fixture.driver.getKeyValueStore(DeviceHealthTopology.DEVICE_STATE_STORE);
    }

    private StoredNode node() {
        KeyValueStore<String, StoredNode> nodes = fixture.driver.getKeyValueStore(DeviceHealthTopology.NODE_STATE_STORE);
        return nodes.get(NODE);
    }

    private void keepAlive(String device, Instant at) {
        fixture.send(report(device, HealthStatus.HEALTHY, at).setKind(ReportKind.KEEPALIVE));
    }

    @Test
    void shouldKeepAKeepAliveInTheNodeStateInsteadOfRewritingTheDevice() {
        fixture.allocate("train-0", "gpu-0");
        fixture.send(report("gpu-0", HealthStatus.HEALTHY, T0));
        keepAlive("gpu-0", T0.plusSeconds(15));

        DeviceState stored = devices().get(key("gpu-0"));
        assertThat(stored.sources().get(SOURCE).refreshedAt()).as("device-state as written by the change").isEqualTo(T0.toEpochMilli());
        assertThat(stored.deadline()).isEqualTo(T0.toEpochMilli() + TIMEOUT_MS);
        PendingRefresh pending = node().refreshes().get(key("gpu-0"));
        assertThat(pending.deadline()).isEqualTo(T0.plusSeconds(15).toEpochMilli() + TIMEOUT_MS);
        assertThat(pending.refreshedAt()).containsExactly(Map.entry(SOURCE, T0.plusSeconds(15).toEpochMilli()));

        DeviceState current = node().device(key("gpu-0"), stored);
        assertThat(current.sources().get(SOURCE).refreshedAt()).isEqualTo(T0.plusSeconds(15).toEpochMilli());
        assertThat(current.deadline()).isEqualTo(pending.deadline());
        assertThat(current.health()).isEqualTo(HealthStatus.HEALTHY);
        assertThat(fixture.podStatus.readValuesToList()).as("a keep-alive changes no pod").hasSize(2); // Unknown at allocation, then Healthy
    }

    @Test
    void shouldExpireAtTheDeadlineOfTheLatestKeepAliveNotTheStoredOne() {
        fixture.allocate("train-0", "gpu-0");
        fixture.send(report("gpu-0", HealthStatus.HEALTHY, T0));
        keepAlive("gpu-0", T0.plusSeconds(15));
        keepAlive("gpu-0", T0.plusSeconds(30));
        fixture.transitions.readValuesToList();

        // The node's own clock passes the stored deadline (T0 + 30 s) and the first keep-alive's (T0 + 45 s).
        fixture.heartbeat(T0.plusSeconds(59), SourceStatus.UP);
        assertThat(fixture.transitions.isEmpty()).as("fresh until T0 + 60 s").isTrue();
        fixture.heartbeat(T0.plusSeconds(61), SourceStatus.UP);

        assertThat(fixture.transitions.readValuesToList()).singleElement().satisfies(t -> {
            assertThat(t.getTo()).isEqualTo(HealthStatus.UNKNOWN);
            assertThat(t.getAt()).isEqualTo(T0.plusSeconds(60));
        });
        assertThat(node().refreshes()).as("the expiry wrote the device whole").doesNotContainKey(key("gpu-0"));
        assertThat(devices().get(key("gpu-0")).health()).isEqualTo(HealthStatus.UNKNOWN);
    }

    @Test
    void shouldWriteTheDeviceWholeAndDropItsRefreshWhenItsHealthChanges() {
        fixture.allocate("train-0", "gpu-0");
        fixture.send(report("gpu-0", HealthStatus.HEALTHY, T0));
        keepAlive("gpu-0", T0.plusSeconds(15));
        fixture.send(report("gpu-0", HealthStatus.UNHEALTHY, T0.plusSeconds(20)).setMessage("XID 79"));

        assertThat(node().refreshes()).doesNotContainKey(key("gpu-0"));
        DeviceState stored = devices().get(key("gpu-0"));
        assertThat(stored.health()).isEqualTo(HealthStatus.UNHEALTHY);
        assertThat(stored.sources().get(SOURCE).refreshedAt()).isEqualTo(T0.plusSeconds(20).toEpochMilli());

        // Recovery: keep-alives of the Unhealthy state are kept, the change back to Healthy is written.
        fixture.send(report("gpu-0", HealthStatus.UNHEALTHY, T0.plusSeconds(35)).setMessage("XID 79").setKind(ReportKind.KEEPALIVE));
        assertThat(node().refreshes()).containsKey(key("gpu-0"));
        fixture.send(report("gpu-0", HealthStatus.HEALTHY, T0.plusSeconds(40)));
        assertThat(node().refreshes()).doesNotContainKey(key("gpu-0"));
        assertThat(devices().get(key("gpu-0")).health()).isEqualTo(HealthStatus.HEALTHY);
        assertThat(fixture.transitions.readValuesToList()).extracting(HealthTransition::getTo)
                .containsExactly(HealthStatus.HEALTHY, HealthStatus.UNHEALTHY, HealthStatus.HEALTHY);
    }

    @Test
    void shouldWriteDevicesThroughOnceTheNodeKeepsTheMostRefreshesItMay() {
        int devices = 65;
        for (int i = 0; i < devices; i++) {
            fixture.send(report("gpu-" + i, HealthStatus.HEALTHY, T0));
        }
        for (int i = 0; i < devices; i++) {
            keepAlive("gpu-" + i, T0.plusSeconds(15));
        }

        assertThat(node().refreshes()).hasSize(64);
        assertThat(node().refreshes()).doesNotContainKey(key("gpu-64"));
        assertThat(devices().get(key("gpu-64")).sources().get(SOURCE).refreshedAt())
                .as("written through").isEqualTo(T0.plusSeconds(15).toEpochMilli());
        // Either way every device is fresh until its own latest keep-alive times out.
        fixture.transitions.readValuesToList();
        fixture.heartbeat(T0.plusSeconds(44), SourceStatus.UP);
        assertThat(fixture.transitions.isEmpty()).isTrue();
        fixture.heartbeat(T0.plusSeconds(45), SourceStatus.UP);
        assertThat(fixture.transitions.readValuesToList()).hasSize(devices)
                .allSatisfy(t -> assertThat(t.getAt()).isEqualTo(T0.plusSeconds(45)));
    }

    @Test
    void shouldIgnoreARefreshThatIsNotNewerThanTheStoredState() {
        SourceReport source = new SourceReport(SourceKind.DRA, DRIVER, HealthStatus.HEALTHY, null, null, 1_000L, 20_000L, TIMEOUT_MS);
        DeviceState stored = new DeviceState("c", NODE, DRIVER, NODE, "gpu-0", null, Map.of(SOURCE, source), HealthStatus.HEALTHY,
                null, null, SourceKind.DRA, 1_000L, 50_000L);

        // Left over from before the device was written (possible only without exactly-once): changes nothing.
        assertThat(stored.withRefresh(new PendingRefresh(key("gpu-0"), 40_000L, Map.of(SOURCE, 10_000L)))).isEqualTo(stored);
        DeviceState refreshed = stored.withRefresh(new PendingRefresh(key("gpu-0"), 60_000L, Map.of(SOURCE, 30_000L)));
        assertThat(refreshed.sources().get(SOURCE).refreshedAt()).isEqualTo(30_000L);
        assertThat(refreshed.deadline()).isEqualTo(60_000L);
        assertThat(stored.onlyRefreshedIn(refreshed)).isTrue();
        assertThat(stored.onlyRefreshedIn(stored)).as("nothing changed is not a refresh").isFalse();
    }

    @Test
    void shouldTellARefreshOnlyFromAnyOtherChange() {
        SourceReport source = new SourceReport(SourceKind.DRA, DRIVER, HealthStatus.HEALTHY, null, null, 1_000L, 20_000L, TIMEOUT_MS);
        DeviceState stored = new DeviceState("c", NODE, DRIVER, NODE, "gpu-0", null, Map.of(SOURCE, source), HealthStatus.HEALTHY,
                null, null, SourceKind.DRA, 1_000L, 50_000L);
        SourceReport later = source.withRefreshedAt(30_000L);

        assertThat(stored.onlyRefreshedIn(state(stored, Map.of(SOURCE, later), HealthStatus.HEALTHY, "ok", 60_000L)))
                .as("a message changed too").isFalse();
        assertThat(stored.onlyRefreshedIn(state(stored, Map.of(SOURCE, later), HealthStatus.UNHEALTHY, null, 60_000L)))
                .as("the health changed too").isFalse();
        assertThat(stored.onlyRefreshedIn(state(stored, Map.of(SOURCE, source.withRefreshedAt(10_000L)), HealthStatus.HEALTHY, null,
                50_000L))).as("a refresh time moved back").isFalse();
        assertThat(stored.onlyRefreshedIn(state(stored, Map.of(SOURCE, source), HealthStatus.HEALTHY, null, 70_000L)))
                .as("the deadline moved without a refresh").isFalse();
        SourceReport changed = new SourceReport(SourceKind.DRA, DRIVER, HealthStatus.HEALTHY, null, "Recovered", 1_000L, 30_000L, TIMEOUT_MS);
        assertThat(stored.onlyRefreshedIn(state(stored, Map.of(SOURCE, changed), HealthStatus.HEALTHY, null, 60_000L)))
                .as("the source's own word changed").isFalse();
        SourceReport other = new SourceReport(SourceKind.NVML, "nvml", HealthStatus.HEALTHY, null, null, 1_000L, 30_000L, TIMEOUT_MS);
        assertThat(stored.onlyRefreshedIn(state(stored, Map.of(SOURCE, later, "NVML:nvml", other), HealthStatus.HEALTHY, null,
                60_000L))).as("a source was added").isFalse();
        assertThat(stored.onlyRefreshedIn(state(stored, Map.of(SOURCE, later), HealthStatus.HEALTHY, null, 60_000L))).isTrue();
    }

    private static DeviceState state(DeviceState base, Map<String, SourceReport> sources, HealthStatus health, String message,
                                     long deadline) {
        return new DeviceState(base.cluster(), base.node(), base.driver(), base.pool(), base.device(), base.uuid(), sources, health,
                message, base.reason(), base.source(), base.since(), deadline);
    }
}
