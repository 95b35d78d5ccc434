package io.devhealth.sink;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.client.KubernetesClientException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class ConflictRetryTest {

    @Test
    void shouldMakeTheAttemptAgainAfterEachConflictUntilOneReturns() {
        List<Integer> made = new ArrayList<>();

        String result = new ConflictRetry("test", 5).call("ml/train-0", attempt -> {
            made.add(attempt);
            if (attempt < 3) {
                throw ConflictRetry.conflict();
            }
            return "written";
        });

        assertThat(result).isEqualTo("written");
        assertThat(made).containsExactly(1, 2, 3);
    }

    @Test
    void shouldGiveUpSoThatTheWriteIsRepeatedLaterWhenEveryAttemptMetAConflict() {
        AtomicInteger made = new AtomicInteger();

        assertThatThrownBy(() -> new ConflictRetry("test", 4).call("ml/train-0", attempt -> {
            made.incrementAndGet();
            throw ConflictRetry.conflict();
        })).isInstanceOf(WriteConflictsExhaustedException.class).hasMessage("pod ml/train-0 changed under 4 consecutive write attempts");
        assertThat(made).hasValue(4);
    }

    @Test
    void shouldThrowTheCallersOwnExceptionWhenTheAttemptsAreSpent() {
        assertThatThrownBy(() -> new ConflictRetry("test", 2).call(attempt -> {
            throw ConflictRetry.conflict();
        }, attempts -> new IllegalStateException("gone again after " + attempts + " creates")))
                .isInstanceOf(IllegalStateException.class).hasMessage("gone again after 2 creates");
    }

    @Test
    void shouldNeverRepeatAFailureThatIsNoConflict() {
        AtomicInteger made = new AtomicInteger();
        KubernetesClientException refused = new KubernetesClientException("refused", 422, null);

        assertThatThrownBy(() -> new ConflictRetry("test", 5).call("ml/train-0", attempt -> {
            made.incrementAndGet();
            throw refused;
        })).isSameAs(refused);
        assertThat(made).hasValue(1);
    }
}
