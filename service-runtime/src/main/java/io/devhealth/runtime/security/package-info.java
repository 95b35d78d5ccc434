/**
 * Per-node authentication of collector records (docs/SECURITY.md).
 *
 * <p>Kafka does not tell a consumer which principal produced a record, so the record carries the
 * proof: an HMAC-SHA256 over (node, topic, value bytes) with a key that only that node holds. Node
 * keys are derived from one cluster secret ({@link io.devhealth.runtime.security.NodeKeys}) that only
 * the processor and the operator's key-issuing step hold; a compromised node's key cannot sign for
 * another node.
 */
package io.devhealth.runtime.security;
