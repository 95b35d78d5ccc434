package io.devhealth.cli.realkube;

import static io.devhealth.cli.demo.DocumentedJobs.failed;
import static io.devhealth.cli.demo.DocumentedJobs.hasCondition;
import static io.devhealth.cli.demo.DocumentedJobs.name;
import static org.assertj.core.api.Assertions.assertThat;

import io.devhealth.cli.demo.JobRetryStory;
import io.devhealth.cli.demo.Narrator;
import io.devhealth.simulators.kafka.EmbeddedKafkaCluster;
import io.devhealth.simulators.realkube.ControlPlane;
import io.devhealth.simulators.realkube.RealNode;
import io.devhealth.testkit.kafka.KafkaClusterExtension;
import io.devhealth.testkit.realkube.RealKubernetes;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The demo's fourth story ({@code devhealth demo --real-kubernetes}) played on the shared real cluster:
 * retry elsewhere with the real Job controller and scheduler. XID on the GPU of the documented Job's pod,
 * devhealth taints exactly that GPU with a DeviceTaintRule, the pod dies, the Job controller does not count
 * it, the scheduler gives the replacement's new claim another GPU, and the failed attempt's record and
 * {@code devhealth query pod} say {@code DeviceFailure}. When the GPU is Healthy again the rule goes, not
 * before its hold.
 */
@RealKubernetes
@ExtendWith(KafkaClusterExtension.class)
class JobRetryStoryIT {

    @Test
    void shouldRetryTheJobOnAnotherGpuWithoutCountingItAndRecordDeviceFailure(ControlPlane plane, RealNode node,
                                                                             EmbeddedKafkaCluster kafka, @TempDir Path work) {
        ByteArrayOutputStream told = new ByteArrayOutputStream();
        JobRetryStory.Timing timing = JobRetryStory.Timing.DEFAULT;
        try (JobRetryStory story = JobRetryStory.start(plane, node, kafka, work,
                new Narrator(new PrintStream(told, true, StandardCharsets.UTF_8)), timing)) {
            try {
                JobRetryStory.Outcome outcome = story.play();

                var selector = outcome.rule().getSpec().getDeviceSelector();
                assertThat(selector.getDriver()).isEqualTo(outcome.failedDevice().getDriver());
                assertThat(selector.getPool()).isEqualTo(outcome.failedDevice().getPool());
                assertThat(selector.getDevice()).as("the rule selects exactly the failed GPU").isEqualTo(outcome.failedDevice().getDevice());
                assertThat(outcome.rule().getSpec().getTaint().getEffect()).isEqualTo("NoSchedule");

                assertThat(failed(outcome.afterFailure())).as("status.failed: the failure is not counted").isZero();
                assertThat(hasCondition(outcome.afterFailure(), "Failed")).isFalse();
                assertThat(outcome.replacementDevice().getDevice()).as("the scheduler allocated the replacement's claim another GPU")
                        .isNotEqualTo(outcome.failedDevice().getDevice());
                assertThat(outcome.replacementDevice().getPool()).isEqualTo(outcome.failedDevice().getPool());

                assertThat(outcome.record().verdict()).as("the failed attempt's DevicePostMortem").isEqualTo("DeviceFailure");
                assertThat(outcome.record().pod().name()).isEqualTo(name(outcome.failedPod()));
                assertThat(outcome.queriedVerdict().path("verdict").asText()).as("devhealth query pod").isEqualTo("DeviceFailure");

                assertThat(outcome.ruleDeletedAt()).as("the rule is not deleted before its hold")
                        .isAfterOrEqualTo(JobRetryStory.createdAt(outcome.rule()).plus(timing.taintHold()));
                assertThat(story.ownRules()).isEmpty();
                assertThat(story.pipeline().sinkCount("taint.rules", "action", "created")).isGreaterThanOrEqualTo(1);
                assertThat(story.pipeline().sinkCount("taint.rules", "action", "deleted")).isGreaterThanOrEqualTo(1);

                assertThat(told.toString(StandardCharsets.UTF_8))
                        .as("what the demo prints")
                        .contains("STORY 4", outcome.failedDevice().getDevice() + " Unhealthy", "status.failed=0",
                                "runs on " + outcome.replacementDevice().getDevice(), "verdict DeviceFailure",
                                "devhealth query pod " + JobRetryStory.NAMESPACE + "/" + name(outcome.failedPod()));
            } finally {
                System.out.print(told.toString(StandardCharsets.UTF_8));
                for (int i = 0; i < node.gpus(); i++) {
                    node.driver().setHealth("gpu-" + i, "Healthy", "");
                }
                story.jobs().deleteAllAndWait();
            }
        }
    }
}
