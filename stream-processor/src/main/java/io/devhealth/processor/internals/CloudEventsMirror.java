package io.devhealth.processor.internals;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import io.cloudevents.CloudEvent;
import io.cloudevents.core.builder.CloudEventBuilder;
import io.cloudevents.jackson.JsonCloudEventData;
import io.cloudevents.jackson.JsonFormat;
import io.devhealth.processor.internals.pods.VerdictRecorder;
import io.devhealth.schema.VerdictWords;
import io.devhealth.schema.avro.HealthTransition;
import io.devhealth.schema.avro.TerminatedContainer;
import io.devhealth.schema.avro.TerminatedDevice;
import io.devhealth.schema.avro.TerminatedPod;
import java.net.URI;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.ZoneOffset;
import java.util.List;
import java.util.function.BiFunction;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.streams.processor.api.FixedKeyProcessor;
import org.apache.kafka.streams.processor.api.FixedKeyProcessorContext;
import org.apache.kafka.streams.processor.api.FixedKeyRecord;

/**
 * Mirrors the SIEM feed as CloudEvents 1.0 events in JSON structured mode, for SIEMs that speak
 * CloudEvents rather than Avro, all on one topic and told apart by {@code type}:
 * <ul>
 * <li>a health transition ({@link #transitions()}): {@code id} = the transition id, {@code source} =
 * {@code /devhealth/<cluster>/<node>}, {@code type} = {@value #TYPE}, {@code subject} = the device key,
 * {@code time} = when the health changed, {@code data} = the transition as JSON, and a
 * {@code severity} extension (INFO, WARNING, CRITICAL) for filtering without reading the data;</li>
 * <li>a terminated pod's verdict ({@link #verdicts()}), one per pod with devices: {@code id} = the pod's
 * UID (the same on a repeated delivery, so that consumers de-duplicate), {@code source} =
 * {@code /devhealth/default/<node>} (a verdict names no cluster), {@code type} = {@value #VERDICT_TYPE},
 * {@code subject} = {@code namespace/name}, {@code time} = when the verdict became final, {@code data}
 * = the verdict, and {@code severity} CRITICAL for DeviceFailure, WARNING for Unknown, INFO else.</li>
 * </ul>
 * The Kafka record carries {@code content-type: application/cloudevents+json; charset=UTF-8}, as
 * the CloudEvents Kafka binding prescribes for structured mode.
 */
public final class CloudEventsMirror<V> implements FixedKeyProcessor<String, V, byte[]> {

    public static final String TYPE = "io.devhealth.health.transition.v1";
    public static final String VERDICT_TYPE = "io.devhealth.pod.verdict.v1";
    public static final String CONTENT_TYPE_HEADER = "content-type";
    public static final String STRUCTURED_CONTENT_TYPE = JsonFormat.CONTENT_TYPE + "; charset=UTF-8";
    /** Cluster name in {@code source} when the collector was not given one. */
    static final String DEFAULT_CLUSTER = "default";

    private static final ObjectMapper JSON = JsonMapper.builder().build();
    private final JsonFormat format = new JsonFormat();
    private final BiFunction<String, V, CloudEvent> toEvent;
    private FixedKeyProcessorContext<String, byte[]> context;

    /** The transition as the event's data: stable field names, RFC 3339 time. */
    public record TransitionData(String id, String cluster, String node, Device device, String from, String to, String source,
                                 String reason, String message, String severity, List<String> affectedPods, String at) {}

    public record Device(String driver, String pool, String device, String uuid) {}

    /** The verdict as the event's data: the words people read ({@link VerdictWords}), RFC 3339 times. */
    public record VerdictData(String uid, String namespace, String name, String node, String verdict, String phase,
                              String finishedAt, String health, String message, List<VerdictContainer> containers,
                              String recordedAt) {}

    public record VerdictContainer(String name, Integer exitCode, List<VerdictDevice> devices) {}

    public record VerdictDevice(Device device, String health, String product) {}

    private CloudEventsMirror(BiFunction<String, V, CloudEvent> toEvent) {
        this.toEvent = toEvent;
    }

    /** The mirror of health-transitions. */
    public static CloudEventsMirror<HealthTransition> transitions() {
        return new CloudEventsMirror<>(CloudEventsMirror::toEvent);
    }

    /** The mirror of pod-verdicts, fed each verdict once ({@link VerdictRecorder} drops repeated deliveries). */
    public static CloudEventsMirror<TerminatedPod> verdicts() {
        return new CloudEventsMirror<>(CloudEventsMirror::toEvent);
    }

    @Override
    public void init(FixedKeyProcessorContext<String, byte[]> context) {
        this.context = context;
    }

    @Override
    public void process(FixedKeyRecord<String, V> record) {
        if (record.value() == null) {
            return;
        }
        RecordHeaders headers = new RecordHeaders();
        headers.add(CONTENT_TYPE_HEADER, STRUCTURED_CONTENT_TYPE.getBytes(StandardCharsets.UTF_8));
        context.forward(record.withValue(format.serialize(toEvent.apply(record.key(), record.value()))).withHeaders(headers));
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

    /** The CloudEvent of {@code verdict}; {@code podKey} is its pod-verdicts key ({@code namespace/name}). */
    public static CloudEvent toEvent(String podKey, TerminatedPod verdict) {
        List<VerdictContainer> containers = verdict.getContainers().stream().map(CloudEventsMirror::container).toList();
        String word = VerdictWords.of(verdict.getVerdict());
        VerdictData data = new VerdictData(verdict.getId(), verdict.getPod().getNamespace(), verdict.getPod().getName(), verdict.getNode(),
                word, verdict.getPhase(), verdict.getFinishedAt() == null ? null : verdict.getFinishedAt().toString(),
                verdict.getHealth().name(), verdict.getMessage(), containers, verdict.getRecordedAt().toString());
        String severity = switch (verdict.getVerdict()) {
            case DEVICE_FAILURE -> "CRITICAL";
            case UNKNOWN -> "WARNING";
            case NO_DEVICE_FAILURE -> "INFO";
        };
        return CloudEventBuilder.v1()
                .withId(verdict.getId())
                .withSource(source(null, verdict.getNode()))
                .withType(VERDICT_TYPE)
                .withSubject(podKey)
                .withTime(verdict.getRecordedAt().atOffset(ZoneOffset.UTC))
                .withDataContentType("application/json")
                .withData(JsonCloudEventData.wrap(JSON.valueToTree(data)))
                .withExtension("severity", severity)
                .build();
    }

    private static VerdictContainer container(TerminatedContainer container) {
        return new VerdictContainer(container.getName(), container.getExitCode(), container.getDevices().stream()
                .map(CloudEventsMirror::device).toList());
    }

    private static VerdictDevice device(TerminatedDevice device) {
        return new VerdictDevice(new Device(device.getDevice().getDriver(), device.getDevice().getPool(), device.getDevice().getDevice(),
                device.getDevice().getUuid()), device.getHealth().name(), device.getProduct());
    }

    static URI source(String cluster, String node) {
        String name = cluster == null || cluster.isEmpty() ? DEFAULT_CLUSTER : cluster;
        return URI.create("/devhealth/" + segment(name) + "/" + segment(node));
    }

    private static String segment(String value) {
        return URLEncoder.encode(value, StandardCharsets.UTF_8).replace("+", "%20");
    }
}
