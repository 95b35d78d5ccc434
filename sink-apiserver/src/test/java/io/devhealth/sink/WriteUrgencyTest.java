package io.devhealth.sink;

import static io.devhealth.sink.PodStatusFixtures.device;
import static io.devhealth.sink.PodStatusFixtures.status;
import static org.assertj.core.api.Assertions.assertThat;

import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.PodDeviceStatus;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;

/**
 * The order in which a batch's pods are handed to the writers during a backlog
 * ({@link PodStatusSink#inOrderOfUrgency}): Unhealthy first, because that is the write a Job's
 * podFailurePolicy decides on.
 */
class WriteUrgencyTest {

    private static final String TOPIC = "pod-device-status";
    /** Stands in for the Avro decoder: the record's value names the pod and its latest summary. */
    private final Map<String, PodDeviceStatus> values = new LinkedHashMap<>();
    private final Function<byte[], PodDeviceStatus> decoder = bytes -> {
        PodDeviceStatus status = values.get(new String(bytes, StandardCharsets.UTF_8));
        if (status == null) {
            throw new IllegalArgumentException("undecodable");
        }
        return status;
    };
    private long offset;

    @Test
    void shouldWriteEveryPodWithAnUnhealthyDeviceBeforeRecoveriesAndUnknownsKeepingKafkasOrderWithinEach() {
        Map<String, List<ConsumerRecord<String, byte[]>>> batch = new LinkedHashMap<>();
        add(batch, "ml/recovered", HealthStatus.HEALTHY);
        add(batch, "ml/failed-1", HealthStatus.UNHEALTHY);
        add(batch, "ml/silent", HealthStatus.UNKNOWN);
        add(batch, "ml/failed-2", HealthStatus.UNHEALTHY);
        add(batch, "ml/healthy", HealthStatus.HEALTHY);

        assertThat(order(batch)).containsExactly("ml/failed-1", "ml/failed-2", "ml/recovered", "ml/silent", "ml/healthy");
    }

    @Test
    void shouldJudgeAPodByItsLatestRecordInTheBatch() {
        Map<String, List<ConsumerRecord<String, byte[]>>> batch = new LinkedHashMap<>();
        add(batch, "ml/repaired", HealthStatus.UNHEALTHY);
        add(batch, "ml/repaired", HealthStatus.HEALTHY);
        add(batch, "ml/broke", HealthStatus.HEALTHY);
        add(batch, "ml/broke", HealthStatus.UNHEALTHY);

        assertThat(order(batch)).containsExactly("ml/broke", "ml/repaired");
        assertThat(PodStatusSink.inOrderOfUrgency(batch, decoder).get(0).getValue()).as("a pod's records stay together, in order")
                .extracting(ConsumerRecord::offset).containsExactly(2L, 3L);
    }

    @Test
    void shouldTakeATombstoneOrAnUndecodableValueForNotUrgentAndStillHandItOver() {
        Map<String, List<ConsumerRecord<String, byte[]>>> batch = new LinkedHashMap<>();
        batch.computeIfAbsent("ml/released", k -> new ArrayList<>()).add(new ConsumerRecord<>(TOPIC, 0, offset++, "ml/released", null));
        batch.computeIfAbsent("ml/poison", k -> new ArrayList<>())
                .add(new ConsumerRecord<>(TOPIC, 0, offset++, "ml/poison", "garbage".getBytes(StandardCharsets.UTF_8)));
        add(batch, "ml/failed", HealthStatus.UNHEALTHY);

        assertThat(order(batch)).containsExactly("ml/failed", "ml/released", "ml/poison");
    }

    private List<String> order(Map<String, List<ConsumerRecord<String, byte[]>>> batch) {
        return PodStatusSink.inOrderOfUrgency(batch, decoder).stream().map(Map.Entry::getKey).toList();
    }

    private void add(Map<String, List<ConsumerRecord<String, byte[]>>> batch, String key, HealthStatus summary) {
        String name = key.substring(key.indexOf('/') + 1);
        String value = key + "@" + offset;
        values.put(value, status(offset + 1, "ml", name, "main", name + "-gpu", summary, device("gpu-0", summary, "")));
        batch.computeIfAbsent(key, k -> new ArrayList<>())
                .add(new ConsumerRecord<>(TOPIC, 0, offset++, key, value.getBytes(StandardCharsets.UTF_8)));
    }
}
