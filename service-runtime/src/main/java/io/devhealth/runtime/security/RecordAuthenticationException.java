package io.devhealth.runtime.security;

import org.apache.kafka.common.errors.SerializationException;

/**
 * A record whose node signature is missing or does not verify. A {@link SerializationException} so
 * that a Kafka consumer's deserialization error path (Kafka Streams: the deserialization exception
 * handler, hence the dead-letter topic) takes it before any state changes.
 */
public class RecordAuthenticationException extends SerializationException {

    private static final long serialVersionUID = 1L;

    public RecordAuthenticationException(String message) {
        super(message);
    }
}
