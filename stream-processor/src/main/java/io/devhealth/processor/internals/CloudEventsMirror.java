package io.devhealth.processor.internals;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import io.cloudevents.CloudEvent;
import io.cloudevents.core.builder.CloudEventBuilder;
import io.cloudevents.jackson.JsonCloudEventData;
import io.cloudevents.jackson.JsonFormat;
import io.devhealth.schema.avro.HealthTransition;
import java.net.URI;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.ZoneOffset;
import java.util.List;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.streams.processor.api.FixedKeyProcessor;
import org.apache.kafka.streams.processor.api.FixedKeyProcessorContext;
import org.apache.kafka.streams.processor.api.FixedKeyRecord;

/**
 * Mirrors a health transition as a CloudEvents 1.0 event in JSON structured mode,
 * for SIEMs that speak CloudEvents rather than Avro: {@code id} = the transition id, {@code source}
 * = {@code /devhealth/<cluster>/<node>}, {@code type} = {@value #TYPE}, {@code subject} = the device
 * key, {@code time} = when the health changed, {@code data} = the transition as JSON, and a
 * {@code severity} extension (INFO, WARNING, CRITICAL) for filtering without reading the data.
 * The Kafka record carries {@code content-type: application/cloudevents+json; charset=UTF-8}, as
 * the CloudEvents Kafka binding prescribes for structured mode.
 */
public final class CloudEventsMirror implements FixedKeyProcessor<String, HealthTransition, byte[]> {

    public static final String TYPE = "io.devhealth.health.transition.v1";
    public static final String CONTENT_TYPE_HEADER = "content-type";
    public static final String STRUCTURED_CONTENT_TYPE = JsonFormat.CONTENT_TYPE + "; charset=UTF-8";
    /** Cluster name in {@code source} when the collector was not given one. */
    static final String DEFAULT_CLUSTER = "default";

    private static final ObjectMapper JSON = JsonMapper.builder().build();
    private final JsonFormat format = new JsonFormat();
    private FixedKeyProcessorContext<String, byte[]> context;

    /** The transition as the event's data: stable field names, RFC 3339 time. */
    public record TransitionData(String id, String cluster, String node, Device device, String from, String to, String source,
                                 String reason, String message, String severity, List<String> affectedPods, String at) {}

    public record Device(String driver, String pool, String device, String uuid) {}

    @Override
    public void init(FixedKeyProcessorContext<String, byte[]> context) {
        this.context = context;
    }

    @Override
    public void process(FixedKeyRecord<String, HealthTransition> record) {
        if (record.value() == null) {
            return;
        }
        RecordHeaders headers = new RecordHeaders();
        headers.add(CONTENT_TYPE_HEADER, STRUCTURED_CONTENT_TYPE.getBytes(StandardCharsets.UTF_8));
        context.forward(record.withValue(format.serialize(toEvent(record.key(), record.value()))).withHeaders(headers));
    }

    /** The CloudEvent of {@code transition}; {@code deviceKey} is its health-transitions key. */
    public static CloudEvent toEvent(String deviceKey, HealthTransition transition) {
        TransitionData data = new TransitionData(transition.getId(), transition.getCluster(), transition.getNode(),
                new Device(transition.getDevice().getDriver(), transition.getDevice().getPool(), transition.getDevice().getDevice(),
                        transition.getDevice().getUuid()),
                transition.getFrom().name(), transition.getTo().name(), transition.getSource().name(), transition.getReason(),
                transition.getMessage(), transition.getSeverity().name(),
                transition.getAffectedPods().stream().map(p -> p.getNamespace() + "/" + p.getName()).toList(),
                transition.getAt().toString());
        return CloudEventBuilder.v1()
                .withId(transition.getId())
                .withSource(source(transition.getCluster(), transition.getNode()))
                .withType(TYPE)
                .withSubject(deviceKey)
                .withTime(transition.getAt().atOffset(ZoneOffset.UTC))
                .withDataContentType("application/json")
                .withData(JsonCloudEventData.wrap(JSON.valueToTree(data)))
                .withExtension("severity", transition.getSeverity().name())
                .build();
    }

    static URI source(String cluster, String node) {
        String name = cluster == null || cluster.isEmpty() ? DEFAULT_CLUSTER : cluster;
        return URI.create("/devhealth/" + segment(name) + "/" + segment(node));
    }

    private static String segment(String value) {
        return URLEncoder.encode(value, StandardCharsets.UTF_8).replace("+", "%20");
    }
}
