package io.devhealth.schema.serde;

import org.apache.avro.Schema;

/**
 * The few schema-registry operations the Avro serde and the deployment tooling need.
 *
 * <p>Ids follow Apicurio's content-id semantics, which Confluent's registry shares in practice: the
 * same schema gets the same id, whichever subject it is registered under. The serde relies on this
 * only through {@link #register} being idempotent.
 *
 * <p>Implementations are thread-safe and cache what they can: a Kafka serializer calls
 * {@link #register} for every record, so a repeated call must not reach the network.
 *
 * <p>Every method throws {@link SchemaRegistryException} on failure, with the HTTP status and the
 * registry's {@code error_code} when the registry answered.
 */
public interface SchemaRegistryClient {

    /**
     * Registers {@code schema} under {@code subject}, or returns its id when it is already there.
     *
     * @return the schema id to put in the wire format
     * @throws SchemaRegistryException 409 when the subject's compatibility rule rejects the schema
     */
    int register(String subject, Schema schema);

    /**
     * Looks up the id of a schema already registered under {@code subject}, without registering it.
     * For producers that run with auto-registration off, where a pipeline step owns registration.
     *
     * @throws SchemaRegistryException 404 when the subject or the schema under it does not exist
     */
    int lookupId(String subject, Schema schema);

    /**
     * Returns the schema with this id.
     *
     * @throws SchemaRegistryException 404 (error code 40403) when no schema has this id
     */
    Schema getById(int id);

    /**
     * Tells whether {@code schema} could be registered under {@code subject} given the subject's
     * compatibility rule and its latest version. A subject with no versions accepts anything.
     */
    boolean isCompatible(String subject, Schema schema);

    /** Sets the compatibility rule of one subject (Confluent {@code PUT /config/{subject}}). */
    void setCompatibility(String subject, CompatibilityLevel level);
}
