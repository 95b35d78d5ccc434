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
        return start(List.of());
    }

    /** Also captures these loggers at INFO (e.g. the broker's {@code kafka.authorizer.logger}, which logs every denial there). */
    static CapturedLogs start(List<String> infoLoggers) {
        CapturedLogs logs = new CapturedLogs();
        LoggerContext context = (LoggerContext) LoggerFactory.getILoggerFactory();
        List<String> names = new java.util.ArrayList<>(List.of("org.apache.kafka", "io.devhealth"));
        names.addAll(infoLoggers);
        for (String name : names) {
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
            String text = text(event);
            for (String secret : secrets) {
                assertThat(text).as("log line of " + event.getLoggerName()).doesNotContain(secret);
            }
        }
    }

    /** Every event captured so far, in order. */
    List<ILoggingEvent> events() {
        return List.copyOf(appender.list);
    }

    /** An event's message with its stack trace, as {@link #assertNoneContains} scans it. */
    static String text(ILoggingEvent event) {
        return event.getFormattedMessage()
                + (event.getThrowableProxy() == null ? "" : ThrowableProxyUtil.asString(event.getThrowableProxy()));
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
