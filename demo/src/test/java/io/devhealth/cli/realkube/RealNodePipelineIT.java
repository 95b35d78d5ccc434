package io.devhealth.cli.realkube;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.devhealth.cli.demo.RealNodePipeline;
import io.devhealth.processor.ProcessorConfig;
import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.TerminatedPod;
import io.devhealth.schema.avro.Verdict;
import io.devhealth.simulators.kafka.EmbeddedKafkaCluster;
import io.devhealth.simulators.realkube.ControlPlane;
import io.devhealth.simulators.realkube.GpuWorkloads;
import io.devhealth.simulators.realkube.RealNode;
import io.devhealth.sink.SinkConfig;
import io.devhealth.sink.condition.PodStatusWriter;
import io.devhealth.sink.postmortem.DevicePostMortem;
import io.devhealth.testkit.kafka.KafkaClusterExtension;
import io.devhealth.testkit.kafka.TopicReader;
import io.devhealth.testkit.realkube.RealKubernetes;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The pipeline as it runs in a cluster, end to end on the real node: the driver's health goes
 * through the collector, Kafka and the processor to the sink, which writes the real API server; the
 * kubelet, the scheduler and the controllers are upstream's. What the sink alone does against the
 * real kubelet is {@code SinkOnRealKubeletIT}'s; here the question is whether the whole chain tells
 * the truth about a job that died on its GPU.
 */
@RealKubernetes
@ExtendWith(KafkaClusterExtension.class)
class RealNodePipelineIT {

    private static final String NAMESPACE = "pipeline-real";
    private static final Duration WAIT = Duration.ofSeconds(90);
    private static final String XID = "XID 79: GPU has fallen off the bus";

    private static KubernetesClient admin;
    private static RealNodePipeline pipeline;
    private static RealNode node;
    private static TopicReader<String, TerminatedPod> verdicts;

    @BeforeAll
    static void startPipeline(ControlPlane plane, RealNode realNode, EmbeddedKafkaCluster kafka, @TempDir Path work) {
        admin = plane.adminClient();
        node = realNode;
        GpuWorkloads.prepare(admin, NAMESPACE);
        GpuWorkloads.claimTemplate(admin, NAMESPACE, "one-gpu", 1);
        pipeline = RealNodePipeline.start(plane, realNode, kafka, work,
                // Every change of the driver is a change of the pod here: these tests flip health on purpose.
                Map.of(ProcessorConfig.FLAP_THRESHOLD, "0"),
                Map.of(SinkConfig.TERMINATION_WINDOW_MS, "60000"));
        verdicts = TopicReader.of(kafka, pipeline.topics().podVerdicts())
                .deserializers(new StringDeserializer(), pipeline.verdictDeserializer()).open();
    }

    @AfterAll
    static void stopPipeline() {
        if (verdicts != null) {
            verdicts.close();
        }
        if (pipeline != null) {
            pipeline.close();
        }
    }

    /** Every GPU healthy again and no pod of this class left, so that the next test finds the node as it was. */
    @AfterEach
    void cleanUp() {
        for (int i = 0; i < node.gpus(); i++) {
            node.driver().setHealth("gpu-" + i, "Healthy", "");
        }
        admin.pods().inNamespace(NAMESPACE).withGracePeriod(0).delete();
        await("the pods and their claims are gone").atMost(WAIT).until(() ->
                admin.pods().inNamespace(NAMESPACE).list().getItems().isEmpty()
                        && admin.resources(ResourceClaim.class).inNamespace(NAMESPACE).list().getItems().isEmpty());
    }

    @Test
    void shouldRecordThroughTheWholePipelineThatTheJobDiedOnItsGpu() {
        String device = startJob("train-xid");

        node.driver().setHealth(device, "Unhealthy", XID);
        await("the condition turns False with the driver's message").atMost(WAIT).untilAsserted(() ->
                assertThat(condition("train-xid")).hasValueSatisfying(c -> {
                    assertThat(c.getStatus()).isEqualTo("False");
                    assertThat(c.getMessage()).contains(device, "Unhealthy", XID);
                }));
        node.runtime().exit(NAMESPACE, "train-xid", "main", 1, "CUDA error: an illegal memory access");
        await().atMost(WAIT).until(() -> "Failed".equals(phase("train-xid")));

        DevicePostMortem.Spec died = await("the post-mortem record").atMost(WAIT)
                .until(() -> record("train-xid").map(DevicePostMortem::getSpec).orElse(null), spec -> spec != null);
        assertThat(died.pod().uid()).isEqualTo(pod("train-xid").getMetadata().getUid());
        assertThat(died.health()).isEqualTo("Unhealthy");
        assertThat(died.verdict()).isEqualTo("DeviceFailure");
        assertThat(died.containers()).singleElement().satisfies(c -> {
            assertThat(c.exitCode()).isEqualTo(1);
            assertThat(c.resources()).singleElement().satisfies(r -> assertThat(r.devices()).singleElement().satisfies(d -> {
                assertThat(d.device()).isEqualTo(device);
                assertThat(d.health()).isEqualTo("Unhealthy");
                assertThat(d.message()).isEqualTo(XID);
            }));
        });

        // A repair after the death changes neither the record nor the condition. Until the collector's
        // next PodResources poll (500 ms here) the processor still takes the pod for running, and a
        // repair in that gap would reach its latest status (not its record): docs/ARCHITECTURE.md.
        sleep(Duration.ofSeconds(3));
        node.driver().setHealth(device, "Healthy", "");
        sleepThroughKubeletSyncs();
        assertThat(record("train-xid").orElseThrow().getSpec()).isEqualTo(died);
        assertThat(condition("train-xid")).hasValueSatisfying(c -> assertThat(c.getStatus()).isEqualTo("False"));
        assertQueryAgrees("train-xid", device, "Unhealthy", XID);

        TerminatedPod verdict = verdictOf(died.pod().uid());
        assertThat(verdict.getVerdict()).isEqualTo(Verdict.DEVICE_FAILURE);
        assertThat(verdict.getPod().getName()).isEqualTo("train-xid");
        assertThat(verdict.getNode()).isEqualTo(node.name());
        assertThat(verdict.getContainers()).singleElement().satisfies(c -> {
            assertThat(c.getExitCode()).isEqualTo(1);
            assertThat(c.getDevices()).singleElement().satisfies(d -> {
                assertThat(d.getDevice().getDevice()).isEqualTo(device);
                assertThat(d.getHealth()).isEqualTo(HealthStatus.UNHEALTHY);
                assertThat(d.getMessage()).isEqualTo(XID);
            });
        });
        // Published just before the record is marked final.
        await("the record final").atMost(WAIT).until(() -> record("train-xid").orElseThrow().getSpec().isFrozen());
        // The sink's Events (condition changes, the record) pass the shipped events policy.
        assertThat(pipeline.sinkCount("events", "result", "created")).as("Events created").isPositive();
        assertThat(pipeline.sinkCount("events", "result", "failed")).as("Events refused").isZero();
        await("devhealth query pod gives the verdict").atMost(WAIT).untilAsserted(() -> {
            JsonNode answer = pipeline.query("pod", NAMESPACE + "/train-xid").path("verdict");
            assertThat(answer.path("verdict").asText()).isEqualTo("DeviceFailure");
            assertThat(answer.path("uid").asText()).isEqualTo(died.pod().uid());
        });
    }

    /**
     * The driver often reports the failure only after the job has crashed on it. A report within the
     * termination window still reaches the record of the pod, which has left the kubelet's PodResources
     * by then (its claim is unprepared).
     */
    @Test
    void shouldApplyAnUnhealthyReportArrivingAfterTheCrashWithinTheWindow() {
        String device = startJob("train-late");
        node.runtime().exit(NAMESPACE, "train-late", "main", 1, "CUDA error: unspecified launch failure");
        await().atMost(WAIT).until(() -> "Failed".equals(phase("train-late")));
        await("the record of a death on healthy GPUs").atMost(WAIT)
                .until(() -> record("train-late").map(r -> r.getSpec().health()).orElse(null), "Healthy"::equals);

        node.driver().setHealth(device, "Unhealthy", XID);
        assertThat(record("train-late").orElseThrow().getSpec().verdict()).as("before the report").isEqualTo("NoDeviceFailure");
        await("the late report in the record").atMost(WAIT).untilAsserted(() ->
                assertThat(record("train-late").orElseThrow().getSpec().health()).isEqualTo("Unhealthy"));
        assertThat(record("train-late").orElseThrow().getSpec().verdict()).isEqualTo("DeviceFailure");
        // The record is written before the pod's condition, in the same write.
        await("the late report in the condition").atMost(WAIT).untilAsserted(() ->
                assertThat(condition("train-late")).hasValueSatisfying(c -> assertThat(c.getMessage()).contains(device, XID)));
        assertQueryAgrees("train-late", device, "Unhealthy", XID);
    }

    /** As above, but the pod is deleted at once, as Job controllers and {@code ttlSecondsAfterFinished: 0} do. */
    @Test
    void shouldApplyAnUnhealthyReportArrivingAfterThePodWasDeletedWithinTheWindow() {
        String device = startJob("train-gone");
        String uid = pod("train-gone").getMetadata().getUid();
        node.runtime().exit(NAMESPACE, "train-gone", "main", 1, "CUDA error: unspecified launch failure");
        await().atMost(WAIT).until(() -> "Failed".equals(phase("train-gone")));
        await("the record of a death on healthy GPUs").atMost(WAIT)
                .until(() -> record("train-gone").map(r -> r.getSpec().health()).orElse(null), "Healthy"::equals);
        admin.pods().inNamespace(NAMESPACE).withName("train-gone").withGracePeriod(0).delete();
        await().atMost(WAIT).until(() -> pod("train-gone") == null);

        node.driver().setHealth(device, "Unhealthy", XID);
        await("the late report in the deleted pod's record").atMost(WAIT).untilAsserted(() ->
                assertThat(record("train-gone").orElseThrow().getSpec().health()).isEqualTo("Unhealthy"));
        DevicePostMortem.Spec spec = record("train-gone").orElseThrow().getSpec();
        assertThat(spec.pod().uid()).isEqualTo(uid);
        assertThat(spec.message()).contains(device, XID);

        // The pod is gone, its record is not: at the window's end it is final and its verdict published.
        TerminatedPod verdict = verdictOf(uid);
        assertThat(verdict.getVerdict()).isEqualTo(Verdict.DEVICE_FAILURE);
        await("the record final").atMost(WAIT).until(() -> record("train-gone").orElseThrow().getSpec().isFrozen());
    }

    /** The verdict pod-verdicts carries for the pod with {@code uid}, once the termination window (60 s here) has passed. */
    private static TerminatedPod verdictOf(String uid) {
        List<ConsumerRecord<String, TerminatedPod>> read = verdicts.readUntil(
                records -> records.stream().anyMatch(r -> uid.equals(r.value().getId())), Duration.ofSeconds(120));
        List<TerminatedPod> ofPod = read.stream().map(ConsumerRecord::value).filter(v -> uid.equals(v.getId())).toList();
        assertThat(ofPod).as("one verdict per pod").hasSize(1);
        return ofPod.get(0);
    }

    /** Starts a batch pod holding one GPU and waits until devhealth's condition is True on it; returns its GPU. */
    private static String startJob(String name) {
        GpuWorkloads.batchPod(admin, NAMESPACE, name, "one-gpu");
        await(name + " running").atMost(WAIT).until(() -> "Running".equals(phase(name)));
        String device = deviceOf(name);
        await("devhealth's condition on the running pod").atMost(WAIT)
                .until(() -> condition(name).map(PodCondition::getStatus).orElse(null), "True"::equals);
        return device;
    }

    /** {@code devhealth query pod} says what the pod's record says. */
    private static void assertQueryAgrees(String pod, String device, String health, String message) {
        JsonNode answer = pipeline.query("pod", NAMESPACE + "/" + pod);
        JsonNode queried = answer.path("containers").get(0).path("claims").get(0).path("devices").get(0);
        assertThat(queried.path("device").asText()).isEqualTo(device);
        assertThat(queried.path("health").asText()).as("devhealth query pod agrees with the record").isEqualTo(health);
        assertThat(queried.path("message").asText()).isEqualTo(message);
    }

    private static void sleepThroughKubeletSyncs() {
        sleep(Duration.ofSeconds(25));
    }

    private static void sleep(Duration duration) {
        try {
            Thread.sleep(duration.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private static String deviceOf(String pod) {
        String uid = pod(pod).getMetadata().getUid();
        return admin.resources(ResourceClaim.class).inNamespace(NAMESPACE).list().getItems().stream()
                .filter(c -> c.getMetadata().getOwnerReferences().stream().anyMatch(o -> o.getUid().equals(uid)))
                .findFirst().orElseThrow().getStatus().getAllocation().getDevices().getResults().get(0).getDevice();
    }

    private static Optional<PodCondition> condition(String pod) {
        Pod current = pod(pod);
        return current == null ? Optional.empty() : current.getStatus().getConditions().stream()
                .filter(c -> PodStatusWriter.CONDITION_TYPE.equals(c.getType())).findFirst();
    }

    private static Optional<DevicePostMortem> record(String pod) {
        return Optional.ofNullable(admin.resources(DevicePostMortem.class).inNamespace(NAMESPACE).withName(pod).get());
    }

    private static String phase(String pod) {
        Pod current = pod(pod);
        return current == null ? null : current.getStatus().getPhase();
    }

    private static Pod pod(String name) {
        return admin.pods().inNamespace(NAMESPACE).withName(name).get();
    }
}
