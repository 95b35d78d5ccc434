package io.devhealth.sink.postmortem;

import static io.devhealth.sink.PodStatusFixtures.T0;
import static io.devhealth.sink.PodStatusFixtures.device;
import static io.devhealth.sink.PodStatusFixtures.pluginDevice;
import static io.devhealth.sink.PodStatusFixtures.pluginStatus;
import static io.devhealth.sink.PodStatusFixtures.status;
import static io.devhealth.testkit.assertions.PodStatusAssert.assertThatPod;
import static org.assertj.core.api.Assertions.assertThat;

import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.PodDeviceStatus;
import io.devhealth.simulators.kube.PodFixtures;
import io.devhealth.sink.ApiCallPolicy;
import io.devhealth.sink.SinkMetrics;
import io.devhealth.sink.condition.PodStatusWriter;
import io.devhealth.testkit.time.MutableClock;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Post-mortem device health for terminated pods, the scenario of upstream #132978: a batch job's GPU
 * fails, the job crashes, the driver reports the failure only after the crash, and the kubelet (whose
 * claim info is already gone) never shows it. devhealth does, as of the container's finishedAt.
 */
@EnableKubernetesMockClient(crud = true)
class TerminatedPodStatusTest {

    private static final String ENTRY = "claim:gpu/gpu";
    private static final String GPU = "gpu.example.com/gpu=gpu-0";
    private static final String PLUGIN_RESOURCE = "nvidia.com/gpu";
    private static final String PLUGIN_GPU = "GPU-5f0c2d1e-8a7b-4c3d-9e2f-1a0b3c4d5e6f";
    /** When the job's container finished. */
    private static final Instant FINISHED = T0.plusSeconds(60);

    KubernetesMockServer server;
    KubernetesClient client;

    private final MutableClock clock = MutableClock.at("2026-11-29T10:00:00Z");
    private PodStatusWriter writer;

    @BeforeEach
    void createJob() {
        PodFixtures.createRunning(client, PodFixtures.podWithClaim("ml", "train-0", "node-a", "main", "gpu", "train-0-gpu-x1", "gpu"));
        SinkMetrics metrics = new SinkMetrics(new SimpleMeterRegistry());
        writer = PodStatusWriter.builder(client, clock).settings(new PodStatusWriter.Settings(Duration.ofMinutes(2), 5))
                .api(new ApiCallPolicy(ApiCallPolicy.Settings.singleAttempt(1_000), metrics)).metrics(metrics).build();
    }

    private Pod pod() {
        return client.pods().inNamespace("ml").withName("train-0").get();
    }

    private DevicePostMortem record() {
        return record("train-0");
    }

    private DevicePostMortem record(String pod) {
        return client.resources(DevicePostMortem.class).inNamespace("ml").withName(pod).get();
    }

    /** The record names the pod and shows the GPU with this health and message (null: any). */
    private void assertRecorded(String health, String message) {
        assertRecorded("train-0", ENTRY, GPU, health, message);
    }

    /** The record of {@code pod} names it and shows one device, {@code resourceId} under {@code entry}, with this health and message (null: any). */
    private void assertRecorded(String pod, String entry, String resourceId, String health, String message) {
        DevicePostMortem record = record(pod);
        assertThat(record).as("post-mortem record").isNotNull();
        assertThat(record.getSpec().pod().uid()).isEqualTo(client.pods().inNamespace("ml").withName(pod).get().getMetadata().getUid());
        assertThat(record.getSpec().containers()).singleElement().satisfies(c -> assertThat(c.resources()).singleElement().satisfies(r -> {
            assertThat(r.name()).isEqualTo(entry);
            assertThat(r.devices()).singleElement().satisfies(d -> {
                assertThat(d.resourceID()).isEqualTo(resourceId);
                assertThat(d.health()).isEqualTo(health);
                if (message != null) {
                    assertThat(d.message()).isEqualTo(message);
                }
            });
        }));
    }

    private static PodDeviceStatus gpu(long version, HealthStatus health, String message, Instant since) {
        return status(version, "ml", "train-0", "main", "train-0-gpu-x1", health, device("gpu-0", health, message, since));
    }

    /** An inference pod given one GPU by NVIDIA's device plugin ({@code nvidia.com/gpu}), no ResourceClaim. */
    private void createDevicePluginPod() {
        PodFixtures.createRunning(client, PodFixtures.podWithDevicePluginResource("ml", "infer-0", "node-a", "main", PLUGIN_RESOURCE, 1));
    }

    private static PodDeviceStatus pluginGpu(long version, HealthStatus health, String message, Instant since) {
        return pluginStatus(version, "ml", "infer-0", "main", PLUGIN_RESOURCE, health, pluginDevice(PLUGIN_GPU, health, message, since));
    }

    @Test
    void shouldShowAFailureReportedAfterTheCrashOnTheTerminatedPod() {
        // While the job runs: healthy; the field is the kubelet's, the condition ours, no record yet.
        PodDeviceStatus healthy = gpu(1, HealthStatus.HEALTHY, null, T0);
        writer.write(List.of(healthy), null);
        assertThatPod(pod()).hasCondition(PodStatusWriter.CONDITION_TYPE, "True").container("main").hasNoResourceHealth(ENTRY);
        assertThat(record()).isNull();

        // The job crashes at FINISHED; the driver reports XID 79 ten seconds later.
        PodFixtures.markTerminated(client, "ml", "train-0", 1, FINISHED);
        clock.set(FINISHED.plusSeconds(15));
        PodDeviceStatus failed = gpu(2, HealthStatus.UNHEALTHY, "XID 79: GPU has fallen off the bus", FINISHED.plusSeconds(10));
        assertThat(writer.write(List.of(failed), healthy).outcome()).isEqualTo(PodStatusWriter.Outcome.WRITTEN);

        assertThatPod(pod())
                .hasCondition(PodStatusWriter.CONDITION_TYPE, "False", "DeviceUnhealthy");
        assertRecorded("Unhealthy", "XID 79: GPU has fallen off the bus");
        assertThat(record().getSpec().verdict()).isEqualTo("DeviceFailure");
    }

    @Test
    void shouldApplyAFailureReportedAfterThePodWasDeletedWithinItsWindowToItsRecord() {
        PodFixtures.markTerminated(client, "ml", "train-0", 1, FINISHED);
        clock.set(FINISHED.plusSeconds(2));
        PodDeviceStatus healthy = gpu(1, HealthStatus.HEALTHY, null, T0);
        writer.write(List.of(healthy), null);
        assertRecorded("Healthy", null);
        String uid = pod().getMetadata().getUid();
        // The Job controller deletes the failed pod at once; the driver reports XID 79 after that.
        client.pods().inNamespace("ml").withName("train-0").delete();
        clock.set(FINISHED.plusSeconds(20));

        PodDeviceStatus failed = gpu(2, HealthStatus.UNHEALTHY, "XID 79: GPU has fallen off the bus", FINISHED.plusSeconds(10));
        assertThat(writer.write(List.of(failed), null).outcome()).isEqualTo(PodStatusWriter.Outcome.WRITTEN);

        DevicePostMortem record = record();
        assertThat(record.getSpec().pod().uid()).isEqualTo(uid);
        assertThat(record.getSpec().health()).isEqualTo("Unhealthy");
        assertThat(record.getSpec().containers().get(0).resources().get(0).devices().get(0).message())
                .isEqualTo("XID 79: GPU has fallen off the bus");
    }

    @Test
    void shouldNotApplyAReportForADeletedPodAfterItsWindowOrFromAnotherNode() {
        PodFixtures.markTerminated(client, "ml", "train-0", 1, FINISHED);
        clock.set(FINISHED.plusSeconds(2));
        writer.write(List.of(gpu(1, HealthStatus.HEALTHY, null, T0)), null);
        client.pods().inNamespace("ml").withName("train-0").delete();

        clock.set(FINISHED.plusSeconds(20));
        PodDeviceStatus elsewhere = PodDeviceStatus.newBuilder(gpu(2, HealthStatus.UNHEALTHY, "XID 79", FINISHED.plusSeconds(10)))
                .setNode("node-b").build();
        assertThat(writer.write(List.of(elsewhere), null).outcome()).as("a pod of that name on another node")
                .isEqualTo(PodStatusWriter.Outcome.OTHER_POD);
        clock.set(FINISHED.plus(Duration.ofMinutes(2)));
        assertThat(writer.write(List.of(gpu(3, HealthStatus.UNHEALTHY, "XID 79", FINISHED.plusSeconds(10))), null).outcome())
                .as("after the window").isEqualTo(PodStatusWriter.Outcome.POD_GONE);
        assertThat(record().getSpec().health()).isEqualTo("Healthy");
    }

    @Test
    void shouldKeepHealthAsOfTerminationWhenTheDeviceRecoversAfterwards() {
        PodFixtures.markTerminated(client, "ml", "train-0", 1, FINISHED);
        PodDeviceStatus failed = gpu(1, HealthStatus.UNHEALTHY, "XID 79", FINISHED.minusSeconds(5));
        PodDeviceStatus reset = gpu(2, HealthStatus.HEALTHY, null, FINISHED.plusSeconds(30));

        // Both in one batch: the recovery after the crash must not hide the failure that explains it.
        writer.write(List.of(failed, reset), null);

        assertThatPod(pod()).hasCondition(PodStatusWriter.CONDITION_TYPE, "False");
        assertRecorded("Unhealthy", null);

        // And in a later batch: the pod already shows it, so the recovery is again ignored.
        writer.write(List.of(gpu(3, HealthStatus.HEALTHY, null, FINISHED.plusSeconds(40))), reset);
        assertRecorded("Unhealthy", "XID 79");
    }

    @Test
    void shouldIgnoreUnhealthyReportsThatBeganAfterThePostTerminationWindow() {
        PodFixtures.markTerminated(client, "ml", "train-0", 0, FINISHED);
        writer.write(List.of(gpu(1, HealthStatus.HEALTHY, null, T0)), null);
        clock.set(FINISHED.plus(Duration.ofMinutes(3)));

        writer.write(List.of(gpu(2, HealthStatus.UNHEALTHY, "XID 48", FINISHED.plus(Duration.ofMinutes(2)).plusSeconds(1))), null);

        assertThatPod(pod()).hasCondition(PodStatusWriter.CONDITION_TYPE, "True");
        assertRecorded("Healthy", null);
    }

    @Test
    void shouldSayUnknownWhenNoReportCoversTheTimeOfTermination() {
        PodFixtures.markTerminated(client, "ml", "train-0", 0, FINISHED);

        writer.write(List.of(gpu(1, HealthStatus.HEALTHY, null, FINISHED.plusSeconds(20))), null);

        assertThatPod(pod()).hasCondition(PodStatusWriter.CONDITION_TYPE, "Unknown");
        assertRecorded("Unknown", TerminatedDeviceHealth.NO_REPORT_MESSAGE);
        assertThat(record().getSpec().verdict()).isEqualTo("Unknown");
    }

    /** finishedAt reaches clients to the second: the container finished somewhere in that second. */
    @Test
    void shouldCountAReportFromTheSecondTheContainerFinishedInAsBeforeIt() {
        PodFixtures.markTerminated(client, "ml", "train-0", 0, FINISHED);

        writer.write(List.of(gpu(1, HealthStatus.HEALTHY, null, FINISHED.plusMillis(400))), null);
        assertRecorded("Healthy", null);
        assertThat(record().getSpec().verdict()).as("an application failure on healthy GPUs").isEqualTo("NoDeviceFailure");
    }

    /**
     * The GPU failed, the container died, and a repair came some hundred milliseconds later, all in
     * the second finishedAt names: the repair may have come after the crash, so the record keeps the
     * failure (found by {@code VerdictAccuracyTest}).
     */
    @Test
    void shouldKeepAFailureWhoseRepairCameInTheSecondTheContainerFinishedIn() {
        PodDeviceStatus failed = gpu(1, HealthStatus.UNHEALTHY, "XID 79", FINISHED.plusMillis(100));
        writer.write(List.of(failed), null);
        PodFixtures.markTerminated(client, "ml", "train-0", 1, FINISHED.plusMillis(600));
        clock.set(FINISHED.plusMillis(900));

        writer.write(List.of(gpu(2, HealthStatus.HEALTHY, null, FINISHED.plusMillis(800))), failed);

        assertRecorded("Unhealthy", "XID 79");
        assertThat(record().getSpec().verdict()).isEqualTo("DeviceFailure");
    }

    /** A repair surely before the crash (an earlier second) is what the pod died with. */
    @Test
    void shouldTakeARepairFromBeforeTheSecondTheContainerFinishedIn() {
        PodDeviceStatus failed = gpu(1, HealthStatus.UNHEALTHY, "XID 79", FINISHED.minusSeconds(5));
        writer.write(List.of(failed), null);
        PodDeviceStatus repaired = gpu(2, HealthStatus.HEALTHY, null, FINISHED.minusMillis(1));
        writer.write(List.of(repaired), failed);
        PodFixtures.markTerminated(client, "ml", "train-0", 1, FINISHED.plusMillis(600));
        clock.set(FINISHED.plusSeconds(1));

        writer.write(List.of(repaired), repaired);

        assertRecorded("Healthy", null);
        assertThat(record().getSpec().verdict()).isEqualTo("NoDeviceFailure");
    }

    @Test
    void shouldNotCountAReportFromTheNextSecond() {
        PodFixtures.markTerminated(client, "ml", "train-0", 0, FINISHED);

        writer.write(List.of(gpu(1, HealthStatus.HEALTHY, null, FINISHED.plusSeconds(1))), null);
        assertRecorded("Unknown", TerminatedDeviceHealth.NO_REPORT_MESSAGE);
    }

    /**
     * Devices of a device plugin are folded as of finishedAt as claim devices are: a GPU that failed
     * two seconds before the crash and was repaired (a reset, a driver reload) two seconds after is
     * what killed the pod, and the repair must not clear it (issue #45).
     */
    @Test
    void shouldKeepADevicePluginGpuUnhealthyAsOfTerminationWhenItIsRepairedAfterwards() {
        createDevicePluginPod();
        PodDeviceStatus failed = pluginGpu(1, HealthStatus.UNHEALTHY, "XID 79", FINISHED.minusSeconds(2));
        writer.write(List.of(failed), null);
        PodFixtures.markTerminated(client, "ml", "infer-0", 1, FINISHED);
        clock.set(FINISHED.plusSeconds(5));

        writer.write(List.of(pluginGpu(2, HealthStatus.HEALTHY, null, FINISHED.plusSeconds(2))), failed);

        assertRecorded("infer-0", PLUGIN_RESOURCE, PLUGIN_GPU, "Unhealthy", "XID 79");
        assertThat(record("infer-0").getSpec().verdict()).isEqualTo("DeviceFailure");
        assertThatPod(client.pods().inNamespace("ml").withName("infer-0").get())
                .hasCondition(PodStatusWriter.CONDITION_TYPE, "False", "DeviceUnhealthy");
    }

    @Test
    void shouldSayUnknownForADevicePluginGpuWhenNoReportCoversTheTimeOfTermination() {
        createDevicePluginPod();
        PodFixtures.markTerminated(client, "ml", "infer-0", 0, FINISHED);

        writer.write(List.of(pluginGpu(1, HealthStatus.HEALTHY, null, FINISHED.plusSeconds(20))), null);

        assertRecorded("infer-0", PLUGIN_RESOURCE, PLUGIN_GPU, "Unknown", TerminatedDeviceHealth.NO_REPORT_MESSAGE);
        assertThat(record("infer-0").getSpec().verdict()).isEqualTo("Unknown");
    }

    @Test
    void shouldFreezeAfterTheWindowAndNeverWriteAgainEvenAfterARestart() {
        PodFixtures.markTerminated(client, "ml", "train-0", 1, FINISHED);
        PodDeviceStatus failed = gpu(1, HealthStatus.UNHEALTHY, "XID 79", FINISHED.plusSeconds(10));
        clock.set(FINISHED.plusSeconds(20));
        writer.write(List.of(failed), null);

        // Not due yet: nothing happens.
        assertThat(writer.freeze("ml", "train-0", List.of(failed), null).outcome()).isEqualTo(PodStatusWriter.Outcome.UNCHANGED);

        clock.set(FINISHED.plus(Duration.ofMinutes(2)));
        PodStatusWriter.Result frozen = writer.freeze("ml", "train-0", List.of(failed), null);
        assertThat(frozen.frozenNow()).isTrue();
        assertThatPod(pod()).hasCondition(PodStatusWriter.FINAL_CONDITION_TYPE, "True", "PostTerminationWindowElapsed")
                .hasCondition(PodStatusWriter.CONDITION_TYPE, "False");
        String resourceVersion = pod().getMetadata().getResourceVersion();

        // A new writer (a restarted sink, nothing in memory) reads the marker from the pod itself.
        SinkMetrics metrics = new SinkMetrics(new SimpleMeterRegistry());
        PodStatusWriter restarted = PodStatusWriter.builder(client, clock).settings(new PodStatusWriter.Settings(Duration.ofMinutes(2), 5))
                .api(new ApiCallPolicy(ApiCallPolicy.Settings.singleAttempt(1_000), metrics)).metrics(metrics).build();
        PodDeviceStatus late = gpu(2, HealthStatus.UNHEALTHY, "XID 79 again", FINISHED.plusSeconds(30));
        assertThat(restarted.write(List.of(late), null).outcome()).isEqualTo(PodStatusWriter.Outcome.FROZEN);
        assertThat(pod().getMetadata().getResourceVersion()).isEqualTo(resourceVersion);
        assertRecorded("Unhealthy", "XID 79");
        assertThat(record().getSpec().isFrozen()).isTrue();
    }

    @Test
    void shouldNotFreezeAPodDevhealthNeverWrote() {
        PodFixtures.markTerminated(client, "ml", "train-0", 0, FINISHED);
        clock.set(FINISHED.plus(Duration.ofHours(1)));

        assertThat(writer.freeze("ml", "train-0", List.of(), null).outcome()).isEqualTo(PodStatusWriter.Outcome.UNCHANGED);
        assertThatPod(pod()).doesNotHaveCondition(PodStatusWriter.FINAL_CONDITION_TYPE);
        assertThat(record()).isNull();
    }

    @Test
    void shouldKeepTheRecordAfterThePodIsDeletedAndDeleteItOnlyAfterTheRetentionOnceThePodIsGone() {
        PodFixtures.markTerminated(client, "ml", "train-0", 1, FINISHED);
        writer.write(List.of(gpu(1, HealthStatus.UNHEALTHY, "XID 79", FINISHED.minusSeconds(5))), null);
        Duration retention = Duration.ofDays(30);

        clock.set(FINISHED.plus(retention).plusSeconds(1));
        assertThat(writer.sweep(retention)).as("the pod is still there").isZero();
        assertRecorded("Unhealthy", "XID 79");

        client.pods().inNamespace("ml").withName("train-0").withGracePeriod(0).delete();
        clock.set(FINISHED.plus(retention).minusSeconds(1));
        assertThat(writer.sweep(retention)).as("within the retention").isZero();
        assertThat(record()).isNotNull();

        clock.set(FINISHED.plus(retention));
        assertThat(writer.sweep(retention)).isEqualTo(1);
        assertThat(record()).isNull();
    }
}
