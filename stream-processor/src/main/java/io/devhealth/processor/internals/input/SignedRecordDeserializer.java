package io.devhealth.processor.internals.input;

import io.devhealth.processor.DeadLetterHandler;
import io.devhealth.runtime.security.RecordAuthenticationException;
import io.devhealth.runtime.security.RecordVerifier;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Map;
import java.util.Objects;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.serialization.Deserializer;

/**
 * Decodes a collector record only once its node signature verifies ({@link RecordVerifier}): the
 * deserializer is where Kafka Streams hands over the exact value bytes, the topic and the headers
 * together. A record that fails throws {@link RecordAuthenticationException} before it reaches any
 * processor: the deserialization exception handler dead-letters it ({@code DeadLetterHandler}), and
 * it is counted in {@code devhealth.processor.node.identity.rejected{check="signature"}}. That the
 * authenticated node is the record's key is {@link NodeIdentityCheck}'s part, downstream.
 *
 * <p>Only reads of {@code inputTopic} with headers are verified: the same serde also reads state
 * stores (changelog topics, or no headers), whose bytes the processor wrote itself.
 */
public final class SignedRecordDeserializer<T> implements Deserializer<T> {

    private final Deserializer<T> delegate;
    private final String inputTopic;
    private final RecordVerifier verifier;
    private final Counter rejected;

    /** @param input the input's name in metrics ({@code node-events}), as {@link NodeIdentityCheck} tags it */
    public SignedRecordDeserializer(Deserializer<T> delegate, String inputTopic, String input, RecordVerifier verifier,
                                    MeterRegistry meters) {
        this.delegate = Objects.requireNonNull(delegate, "delegate");
        this.inputTopic = Objects.requireNonNull(inputTopic, "inputTopic");
        this.verifier = Objects.requireNonNull(verifier, "verifier");
        this.rejected = NodeIdentityCheck.counter(meters, input, NodeIdentityCheck.CHECK_SIGNATURE);
        // The records refused here become dead letters of their own kind; only this topic has them.
        DeadLetterHandler.counter(meters, DeadLetterHandler.AUTHENTICATION, inputTopic);
    }

    @Override
    public void configure(Map<String, ?> configs, boolean isKey) {
        delegate.configure(configs, isKey);
    }

    @Override
    public T deserialize(String topic, byte[] data) {
        return delegate.deserialize(topic, data);
    }

    @Override
    public T deserialize(String topic, Headers headers, byte[] data) {
        if (inputTopic.equals(topic)) {
            RecordVerifier.Verification verification = verifier.verify(topic, headers, data);
            if (!verification.valid()) {
                rejected.increment();
                throw new RecordAuthenticationException(verification.failure());
            }
        }
        return delegate.deserialize(topic, headers, data);
    }

    @Override
    public void close() {
        delegate.close();
    }
}
