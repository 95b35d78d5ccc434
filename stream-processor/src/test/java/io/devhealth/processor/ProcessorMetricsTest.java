package io.devhealth.processor;

import static io.devhealth.processor.TopologyFixture.DRIVER;
import static io.devhealth.processor.TopologyFixture.NODE;
import static io.devhealth.processor.TopologyFixture.PRODUCT;
import static io.devhealth.processor.TopologyFixture.T0;
import static io.devhealth.processor.TopologyFixture.report;
import static org.assertj.core.api.Assertions.assertThat;

import io.devhealth.schema.avro.HealthStatus;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The processor's meters as the production topology keeps them: devices by health, node times, transitions. */
class ProcessorMetricsTest {

    private final TopologyFixture fixture = new TopologyFixture();

    @AfterEach
    void tearDown() {
        fixture.close();
    }

    /** {@code devhealth_processor_devices} of the fixture's node as {@code health/driver/product} → count. */
    private Map<String, Double> devices() {
        Map<String, Double> shown = new TreeMap<>();
        for (Gauge gauge : fixture.meters.find("devhealth.processor.devices").tag("node", NODE).gauges()) {
            shown.put(gauge.getId().getTag("health") + "/" + gauge.getId().getTag("driver") + "/" + gauge.getId().getTag("product"),
                    gauge.value());
        }
        return shown;
    }

    private double transitions(String from, String to, String reason) {
        Counter counter = fixture.meters.find("devhealth.processor.transitions").tag("from", from).tag("to", to).tag("reason", reason)
                .counter();
        return counter == null ? 0 : counter.count();
    }

    @Test
    void shouldCountDevicesByHealthDriverAndProductAsTheyChange() {
        fixture.inventory("gpu-0", "gpu-1");
        fixture.send(report("gpu-0", HealthStatus.HEALTHY, T0));
        fixture.send(report("gpu-1", HealthStatus.HEALTHY, T0));
        assertThat(devices()).containsExactly(Map.entry("healthy/" + DRIVER + "/" + PRODUCT, 2.0));

        fixture.send(report("gpu-1", HealthStatus.UNHEALTHY, T0.plusSeconds(1)).setMessage("XID 79").setReason("XID-79"));

        assertThat(devices()).containsExactly(Map.entry("healthy/" + DRIVER + "/" + PRODUCT, 1.0),
                Map.entry("unhealthy/" + DRIVER + "/" + PRODUCT, 1.0));
        assertThat(transitions("healthy", "unhealthy", "XID-79")).isEqualTo(1.0);
        assertThat(transitions("unknown", "healthy", "unknown")).as("first contact: no reason").isEqualTo(2.0);
    }

    @Test
    void shouldCountSilentDevicesUnknownWithTheReasonSourceSilent() {
        fixture.send(report("gpu-0", HealthStatus.HEALTHY, T0));
        assertThat(devices()).containsExactly(Map.entry("healthy/" + DRIVER + "/unknown", 1.0));

        fixture.runFor(Duration.ofSeconds(45));

        assertThat(devices()).containsExactly(Map.entry("unknown/" + DRIVER + "/unknown", 1.0));
        assertThat(transitions("healthy", "unknown", "SourceSilent")).isEqualTo(1.0);
    }

    private double expiriesJudgedBy(String judgedBy) {
        return fixture.meters.get("devhealth.processor.silence.expiries").tag("judged.by", judgedBy).counter().count();
    }

    @Test
    void shouldCountASilenceTheWallClockTickJudgedApartFromOneARecordOfTheNodeJudged() {
        fixture.send(report("gpu-0", HealthStatus.HEALTHY, T0));
        fixture.send(report("gpu-1", HealthStatus.HEALTHY, T0));

        fixture.runFor(Duration.ofSeconds(45));

        assertThat(expiriesJudgedBy("tick")).as("both quiet: the tick's estimate of the node's time").isEqualTo(2.0);
        assertThat(expiriesJudgedBy("record")).isZero();

        // gpu-1 reports again; gpu-0 stays quiet, and a record of the node far past its deadline judges it.
        fixture.send(report("gpu-1", HealthStatus.HEALTHY, T0.plusSeconds(50)));
        fixture.send(report("gpu-1", HealthStatus.HEALTHY, T0.plusSeconds(200)));

        assertThat(expiriesJudgedBy("tick")).isEqualTo(2.0);
        assertThat(expiriesJudgedBy("record")).as("gpu-1's own silence, judged at its node's later record").isEqualTo(1.0);
    }

    @Test
    void shouldShowTheNodesOwnTimeOfItsLatestRecord() {
        fixture.send(report("gpu-0", HealthStatus.HEALTHY, T0.plusMillis(1_500)));

        assertThat(fixture.meters.get("devhealth.processor.node.last.record.timestamp.seconds").tag("node", NODE).gauge().value())
                .isEqualTo(T0.plusMillis(1_500).toEpochMilli() / 1000.0);
    }
}
