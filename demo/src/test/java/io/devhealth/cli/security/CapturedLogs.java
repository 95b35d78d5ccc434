package io.devhealth.cli.security;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.ThrowableProxyUtil;
import ch.qos.logback.core.read.ListAppender;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.slf4j.LoggerFactory;

/**
 * Every log event of this JVM while started, at the levels production logs (Kafka at INFO: client
 * configurations, connections) plus devhealth's own DEBUG, so that a test can check that no secret
 * reached any line, message or stack trace. As a {@code @RegisterExtension} static field it starts when
 * JUnit reads the field, before any {@code @BeforeAll} method or parameter (a broker started for one), and
 * stops after the class.
 */
final class CapturedLogs implements AutoCloseable, AfterAllCallback {

    private final ListAppender<ILoggingEvent> appender = new ListAppender<>();
    private final Map<String, Level> savedLevels = new HashMap<>();

    private CapturedLogs() {
    }

    static CapturedLogs start() {
        CapturedLogs logs = new CapturedLogs();
        LoggerContext context = (LoggerContext) LoggerFactory.getILoggerFactory();
        for (String name : List.of("org.apache.kafka", "io.devhealth")) {
            Logger logger = context.getLogger(name);
            logs.savedLevels.put(name, logger.getLevel());
            logger.setLevel(name.equals("io.devhealth") ? Level.DEBUG : Level.INFO);
        }
        logs.appender.setContext(context);
        logs.appender.start();
        context.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME).addAppender(logs.appender);
        return logs;
    }

    /** Fails naming the logger when any captured line, message or stack trace, holds one of {@code secrets}. */
    void assertNoneContains(List<String> secrets) {
        List<ILoggingEvent> events = List.copyOf(appender.list);
        assertThat(events).as("the run logged something to scan").hasSizeGreaterThan(20);
        for (ILoggingEvent event : events) {
            String text = event.getFormattedMessage()
                    + (event.getThrowableProxy() == null ? "" : ThrowableProxyUtil.asString(event.getThrowableProxy()));
            for (String secret : secrets) {
                assertThat(text).as("log line of " + event.getLoggerName()).doesNotContain(secret);
            }
        }
    }

    @Override
    public void afterAll(ExtensionContext context) {
        close();
    }

    @Override
    public void close() {
        LoggerContext context = (LoggerContext) LoggerFactory.getILoggerFactory();
        context.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME).detachAppender(appender);
        appender.stop();
        savedLevels.forEach((name, level) -> context.getLogger(name).setLevel(level));
    }
}
