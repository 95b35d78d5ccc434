package io.devhealth.cli.demo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.HealthTransition;
import io.devhealth.schema.avro.PodRef;
import io.devhealth.schema.serde.AvroSerde;
import io.devhealth.schema.serde.SchemaRegistries;
import io.devhealth.simulators.dra.DeviceState;
import io.devhealth.testkit.kafka.TopicReader;
import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The walking skeleton, end to end with real wiring: a fake DRA driver reports a device Unhealthy →
 * node-collector streams it → Kafka → stream-processor joins it to the allocation from the fake
 * kubelet's PodResources → pod-device-status → sink-apiserver → the pod in the API server shows
 * devhealth's condition {@code False} naming the device and why, its container statuses untouched; once
 * the job ends, its DevicePostMortem record shows the device {@code Unhealthy} under
 * {@code claim:<ref>/<request>}.
 */
class WalkingSkeletonIT {

    private static final Duration STEP = Duration.ofSeconds(60);
    private static EmbeddedPipeline pipeline;

    @BeforeAll
    static void startPipeline() throws Exception {
        Path workDir = Files.createTempDirectory("dh-it");
        pipeline = EmbeddedPipeline.start(EmbeddedPipeline.Options.builder(workDir).nodes(1).devicesPerNode(2).partitions(2).build());
    }

    @AfterAll
    static void stopPipeline() {
        if (pipeline != null) {
            pipeline.close();
        }
    }

    @Test
    void shouldShowDriverReportedFailureInPodStatusAndRecover() {
        KubernetesClient kube = pipeline.kubernetes();
        EmbeddedPipeline.SimulatedNode node = pipeline.nodes().get(0);
        BatchJob job = BatchJob.onDevice("ml", "train-0", node.name(), EmbeddedPipeline.SimulatedNode.device(1));
        Pod scheduled = job.schedule(kube, node.kubelet());
        ContainerStatus kubeletView = scheduled.getStatus().getContainerStatuses().get(0);

        await("Healthy in pod status").atMost(STEP).until(() -> health(kube, job).equals(Optional.of("Healthy")));

        node.driver().report(
                DeviceState.healthy(node.pool(), EmbeddedPipeline.SimulatedNode.device(0)),
                DeviceState.unhealthy(node.pool(), job.device(), "XID 79: GPU has fallen off the bus"));

        await("Unhealthy in pod status").atMost(STEP).until(() -> health(kube, job).equals(Optional.of("Unhealthy")));
        assertThat(job.condition(kube).orElseThrow().getReason()).isEqualTo("DeviceUnhealthy");
        assertThat(job.condition(kube).orElseThrow().getMessage()).contains(job.device()).endsWith(": XID 79: GPU has fallen off the bus");

        // The kubelet-owned container status is exactly as the kubelet left it.
        assertThat(job.current(kube).getStatus().getContainerStatuses()).containsExactly(kubeletView);
        assertThat(job.postMortem(kube)).as("no record while the job runs").isEmpty();

        // The SIEM feed saw the transition, naming the pod.
        List<HealthTransition> transitions = readTransitions(t -> t.getTo() == HealthStatus.UNHEALTHY && t.getDevice().getDevice().equals(job.device()));
        assertThat(transitions).singleElement().satisfies(t -> {
            assertThat(t.getDevice().getDevice()).isEqualTo(job.device());
            assertThat(t.getFrom()).isEqualTo(HealthStatus.HEALTHY);
            assertThat(t.getAffectedPods()).containsExactly(new PodRef(job.namespace(), job.name(), null));
        });

        // Recovery is first-class: the driver says healthy again, and so does the pod.
        node.driver().report(EmbeddedPipeline.allHealthy(node.pool(), 2));
        await("Healthy again").atMost(STEP).until(() -> health(kube, job).equals(Optional.of("Healthy")));
        await("condition True").atMost(STEP).until(() -> job.condition(kube).map(c -> c.getStatus()).orElse(""), "True"::equals);
    }

    @Test
    void shouldRecordTheDeviceHealthOfAJobThatDiedOnAFailingGpu() {
        KubernetesClient kube = pipeline.kubernetes();
        EmbeddedPipeline.SimulatedNode node = pipeline.nodes().get(0);
        BatchJob job = BatchJob.onDevice("ml", "train-died", node.name(), EmbeddedPipeline.SimulatedNode.device(0));
        job.schedule(kube, node.kubelet());
        await("Healthy in pod status").atMost(STEP).until(() -> health(kube, job).equals(Optional.of("Healthy")));

        node.driver().report(DeviceState.unhealthy(node.pool(), job.device(), "XID 79: GPU has fallen off the bus"),
                DeviceState.healthy(node.pool(), EmbeddedPipeline.SimulatedNode.device(1)));
        await("Unhealthy in pod status").atMost(STEP).until(() -> health(kube, job).equals(Optional.of("Unhealthy")));
        io.devhealth.simulators.kube.PodFixtures.markTerminated(kube, job.namespace(), job.name(), 1, java.time.Instant.now());

        await("post-mortem record").atMost(STEP).until(() -> job.recordedDevice(kube).isPresent());
        assertThat(job.recordedDevice(kube).orElseThrow()).satisfies(device -> {
            assertThat(device.health()).isEqualTo("Unhealthy");
            assertThat(device.message()).isEqualTo("XID 79: GPU has fallen off the bus");
            assertThat(device.device()).isEqualTo(job.device());
        });
        assertThat(job.postMortem(kube).orElseThrow().getSpec().pod().uid()).isEqualTo(job.current(kube).getMetadata().getUid());
        node.driver().report(EmbeddedPipeline.allHealthy(node.pool(), 2));
    }

    private static Optional<String> health(KubernetesClient kube, BatchJob job) {
        return job.conditionHealth(kube);
    }

    private static List<HealthTransition> readTransitions(java.util.function.Predicate<HealthTransition> filter) {
        try (TopicReader<String, HealthTransition> reader = TopicReader.of(pipeline.kafkaClientProperties(), pipeline.topics().healthTransitions())
                .deserializers(new StringDeserializer(),
                        AvroSerde.of(HealthTransition.class, SchemaRegistries.fromUrl(pipeline.schemaRegistryUrl())).deserializer())
                .open()) {
            reader.readUntil(read -> read.stream().anyMatch(r -> filter.test(r.value())), STEP);
            // Anything else already committed arrives within a second more.
            return reader.readFor(Duration.ofSeconds(1)).stream().map(ConsumerRecord::value).filter(filter).toList();
        }
    }
}
