package io.devhealth.processor.internals.input;

import io.devhealth.runtime.security.RecordSignature;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.nio.charset.StandardCharsets;
import java.util.Objects;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;

/**
 * A collector may only speak for its own node. What a Kafka consumer can check is checked
 * here; what it cannot (which principal produced the record: Kafka does not tell consumers) is left
 * to the broker, see docs/SECURITY.md.
 *
 * <ul>
 *   <li>Always: the node named in the record's value equals the record key. The key decides the
 *       partition and the state a record changes, the value's node what its reports say; a record
 *       where they differ would let one node's facts land on another's devices.</li>
 *   <li>With {@code principals.enforce}: the record also carries the {@value #NODE_HEADER} header
 *       naming the same node. Before that, {@link SignedRecordDeserializer} verified that the header
 *       and the value were signed with that node's key, so together: only node X's key can produce a
 *       record that changes node X's state.</li>
 * </ul>
 * A record that fails is rejected before any state changes (dead-lettered by the processing
 * exception handler) and counted in {@code devhealth.processor.node.identity.rejected}, tagged with
 * the input and the check ({@value #CHECK_VALUE_NODE}, {@value #CHECK_HEADER},
 * {@value #CHECK_SIGNATURE}).
 */
public final class NodeIdentityCheck {

    /** The header naming the node a record speaks for. */
    public static final String NODE_HEADER = RecordSignature.NODE_HEADER;
    /** Check tag: the value's node is not the key. */
    public static final String CHECK_VALUE_NODE = "value-node";
    /** Check tag: the signed node header is missing or not the key. */
    public static final String CHECK_HEADER = "header";
    /** Check tag: the node signature is missing or invalid ({@link SignedRecordDeserializer}). */
    public static final String CHECK_SIGNATURE = "signature";

    private final boolean enforceHeader;
    private final Counter keyMismatch;
    private final Counter headerMismatch;

    public NodeIdentityCheck(boolean enforceHeader, MeterRegistry meters, String input) {
        this.enforceHeader = enforceHeader;
        this.keyMismatch = counter(meters, input, CHECK_VALUE_NODE);
        this.headerMismatch = counter(meters, input, CHECK_HEADER);
    }

    static Counter counter(MeterRegistry meters, String input, String check) {
        return Counter.builder("devhealth.processor.node.identity.rejected")
                .description("Records rejected because the node they speak for is not the node of their key")
                .tag("input", input).tag("check", check)
                .register(meters);
    }

    /** @throws InvalidInputException when the record speaks for another node than its key's */
    public void check(String key, String valueNode, Headers headers) {
        if (!Objects.equals(key, valueNode)) {
            keyMismatch.increment();
            throw new InvalidInputException("record for node '" + valueNode + "' under key '" + key
                    + "': a collector may only publish for its own node");
        }
        if (enforceHeader) {
            Header header = headers == null ? null : headers.lastHeader(NODE_HEADER);
            String claimed = header == null || header.value() == null ? null : new String(header.value(), StandardCharsets.UTF_8);
            if (!key.equals(claimed)) {
                headerMismatch.increment();
                throw new InvalidInputException(header == null
                        ? "record for node '" + key + "' without the " + NODE_HEADER + " header (principals.enforce is on)"
                        : "record for node '" + key + "' with " + NODE_HEADER + "='" + claimed + "'");
            }
        }
    }
}
