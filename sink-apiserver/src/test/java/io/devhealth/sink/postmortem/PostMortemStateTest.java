package io.devhealth.sink.postmortem;

import static io.devhealth.sink.postmortem.PostMortemState.ABSENT;
import static io.devhealth.sink.postmortem.PostMortemState.DELETED;
import static io.devhealth.sink.postmortem.PostMortemState.FROZEN;
import static io.devhealth.sink.postmortem.PostMortemState.RECORDED;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.devhealth.sink.ApiCallPolicy;
import io.devhealth.sink.SinkMetrics;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

@EnableKubernetesMockClient(crud = true)
class PostMortemStateTest {

    /** The life of a record: every other transition is refused. */
    private static final Map<PostMortemState, Set<PostMortemState>> ALLOWED = Map.of(
            ABSENT, EnumSet.of(RECORDED, FROZEN),
            RECORDED, EnumSet.of(RECORDED, FROZEN, DELETED),
            FROZEN, EnumSet.of(DELETED),
            DELETED, EnumSet.noneOf(PostMortemState.class));
    private static final String UID = "00000000-0000-0000-0000-000000000001";

    KubernetesMockServer server;
    KubernetesClient client;

    @Test
    void shouldAllowARecordToBeCreatedUpdatedFrozenAndDeleted() {
        assertThat(ABSENT.transitionTo(RECORDED, "ml/train-0")).isEqualTo(RECORDED);
        assertThat(ABSENT.transitionTo(FROZEN, "ml/train-0")).as("the freeze of a pod that was never recorded").isEqualTo(FROZEN);
        assertThat(RECORDED.transitionTo(RECORDED, "ml/train-0")).as("a report within the window").isEqualTo(RECORDED);
        assertThat(RECORDED.transitionTo(FROZEN, "ml/train-0")).isEqualTo(FROZEN);
        assertThat(RECORDED.transitionTo(DELETED, "ml/train-0")).as("never frozen, its retention passed").isEqualTo(DELETED);
        assertThat(FROZEN.transitionTo(DELETED, "ml/train-0")).isEqualTo(DELETED);
        ALLOWED.forEach((from, allowed) -> allowed.forEach(to -> assertThat(from.isValidTransition(to)).as(from + " -> " + to).isTrue()));
    }

    @Test
    void shouldRefuseToWriteAFinalRecordAgainOrToBringADeletedOneBack() {
        assertThatThrownBy(() -> FROZEN.transitionTo(RECORDED, "ml/train-0")).isInstanceOf(IllegalStateException.class)
                .hasMessage("post-mortem record of ml/train-0 cannot go from FROZEN to RECORDED");
        int refused = 0;
        for (PostMortemState from : PostMortemState.values()) {
            for (PostMortemState to : PostMortemState.values()) {
                if (ALLOWED.get(from).contains(to)) {
                    continue;
                }
                refused++;
                assertThat(from.isValidTransition(to)).as(from + " -> " + to).isFalse();
                assertThatThrownBy(() -> from.transitionTo(to, "ml/train-0")).as(from + " -> " + to)
                        .isInstanceOf(IllegalStateException.class).hasMessageContaining(from + " to " + to);
            }
        }
        assertThat(refused).as("FROZEN and DELETED lead nowhere else, nothing leads back to ABSENT").isEqualTo(10);
    }

    @Test
    void shouldTakeTheStateFromTheRecordOfThisPodAlone() {
        DevicePostMortem.Spec open = spec(UID);

        assertThat(PostMortemState.of((DevicePostMortem.Spec) null)).isEqualTo(ABSENT);
        assertThat(PostMortemState.of(open)).isEqualTo(RECORDED);
        assertThat(PostMortemState.of(open.withFrozen("2026-11-29T10:03:00Z"))).isEqualTo(FROZEN);
        assertThat(PostMortemState.of(record(open), UID)).isEqualTo(RECORDED);
        assertThat(PostMortemState.of(record(open.withFrozen("2026-11-29T10:03:00Z")), "another-uid"))
                .as("an earlier pod's record, to be replaced").isEqualTo(ABSENT);
        assertThat(PostMortemState.of(null, UID)).isEqualTo(ABSENT);
    }

    @Test
    void shouldMakeTheStoreRefuseToWriteAFinalRecordAgain() {
        SinkMetrics metrics = new SinkMetrics(new SimpleMeterRegistry());
        PostMortemStore store = new PostMortemStore(client, new ApiCallPolicy(ApiCallPolicy.Settings.singleAttempt(1_000), metrics), metrics);
        Pod pod = new PodBuilder().withMetadata(new ObjectMetaBuilder().withNamespace("ml").withName("train-0").withUid(UID).build()).build();
        assertThat(store.put(pod, null, spec(UID).withFrozen("2026-11-29T10:03:00Z"))).isTrue();
        DevicePostMortem frozen = store.get("ml", "train-0");

        assertThatThrownBy(() -> store.put(pod, frozen, spec(UID))).isInstanceOf(IllegalStateException.class)
                .hasMessage("post-mortem record of ml/train-0 cannot go from FROZEN to RECORDED");
        assertThat(store.get("ml", "train-0").getSpec().isFrozen()).isTrue();
    }

    private static DevicePostMortem.Spec spec(String uid) {
        return new DevicePostMortem.Spec(new DevicePostMortem.PodIdentity("train-0", uid), "node-a", "Failed", "2026-11-29T10:01:00Z",
                "Unhealthy", "DeviceFailure", "gpu-0 Unhealthy", List.of(), null, null);
    }

    private static DevicePostMortem record(DevicePostMortem.Spec spec) {
        DevicePostMortem record = new DevicePostMortem();
        record.setMetadata(new ObjectMetaBuilder().withNamespace("ml").withName("train-0").build());
        record.setSpec(spec);
        return record;
    }
}
