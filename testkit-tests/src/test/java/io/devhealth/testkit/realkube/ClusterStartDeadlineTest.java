package io.devhealth.testkit.realkube;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

class ClusterStartDeadlineTest {

    private static final Path LOGS = Path.of("target", "real-kube");

    @Test
    void shouldFailWithWhatDidNotStartAndStopWhatItHadStartedWhenTheDeadlinePasses() {
        AtomicBoolean stopped = new AtomicBoolean();
        long start = System.nanoTime();

        assertThatThrownBy(() -> RealKubernetesExtension.startWithin("the test component", Duration.ofMillis(300), LOGS, () -> {
            // As ControlPlane.start: a wait that ends on interrupt, then the start stops what it had started.
            try {
                new CountDownLatch(1).await();
            } catch (InterruptedException e) {
                stopped.set(true);
                throw new IllegalStateException("interrupted", e);
            }
            return () -> { };
        })).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("the test component did not start within 0 s")
                .hasMessageContaining("devhealth.kube.start.timeout")
                .hasMessageContaining(LOGS.toString());

        assertThat(stopped).as("the start was interrupted and cleaned up before the caller got the error").isTrue();
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(30));
    }

    @Test
    void shouldCloseAStartThatEndsAfterTheDeadline() {
        AtomicBoolean closed = new AtomicBoolean();

        assertThatThrownBy(() -> RealKubernetesExtension.startWithin("the test component", Duration.ofMillis(100), LOGS, () -> {
            // A start that does not look at its interrupt and succeeds late: nobody will use it, so it must not keep running.
            long until = System.nanoTime() + Duration.ofMillis(500).toNanos();
            while (System.nanoTime() < until) {
                Thread.onSpinWait();
            }
            return () -> closed.set(true);
        })).isInstanceOf(IllegalStateException.class).hasMessageContaining("did not start within");

        assertThat(closed).isTrue();
    }

    @Test
    void shouldReturnWhatStartedInTime() {
        AutoCloseable started = () -> { };

        assertThat(RealKubernetesExtension.startWithin("the test component", Duration.ofSeconds(10), LOGS, () -> started))
                .isSameAs(started);
    }
}
