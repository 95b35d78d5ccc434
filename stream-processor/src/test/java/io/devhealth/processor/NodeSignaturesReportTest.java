package io.devhealth.processor;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/** A processor says at start whether collector records must be signed: a gauge always, a warning when they need not be. */
class NodeSignaturesReportTest {

    private final Logger logger = (Logger) LoggerFactory.getLogger(StreamProcessorApp.class);
    private final ListAppender<ILoggingEvent> logs = new ListAppender<>();

    @BeforeEach
    void capture() {
        logs.start();
        logger.addAppender(logs);
    }

    @AfterEach
    void release() {
        logger.detachAppender(logs);
    }

    @Test
    void shouldWarnAndExportZeroWhenNodeSignaturesAreNotEnforced() {
        SimpleMeterRegistry meters = new SimpleMeterRegistry();

        StreamProcessorApp.reportNodeSignatures(false, meters);

        assertThat(meters.get(StreamProcessorApp.PRINCIPALS_ENFORCED_GAUGE).gauge().value()).isZero();
        assertThat(logs.list).singleElement().satisfies(event -> {
            assertThat(event.getLevel()).isEqualTo(Level.WARN);
            assertThat(event.getFormattedMessage()).contains("not enforced").contains("principals.enforce=true");
        });
    }

    @Test
    void shouldExportOneAndStayQuietWhenEnforced() {
        SimpleMeterRegistry meters = new SimpleMeterRegistry();

        StreamProcessorApp.reportNodeSignatures(true, meters);

        assertThat(meters.get(StreamProcessorApp.PRINCIPALS_ENFORCED_GAUGE).gauge().value()).isEqualTo(1.0);
        assertThat(logs.list).isEmpty();
    }
}
