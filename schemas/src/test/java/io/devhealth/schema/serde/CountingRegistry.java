package io.devhealth.schema.serde;

import java.util.concurrent.atomic.AtomicInteger;
import org.apache.avro.Schema;

/** Wraps a registry and counts the calls the serde makes, to prove its own caching. */
final class CountingRegistry implements SchemaRegistryClient {

    final SchemaRegistryClient delegate;
    final AtomicInteger registers = new AtomicInteger();
    final AtomicInteger lookups = new AtomicInteger();
    final AtomicInteger fetches = new AtomicInteger();

    CountingRegistry(SchemaRegistryClient delegate) {
        this.delegate = delegate;
    }

    @Override
    public int register(String subject, Schema schema) {
        registers.incrementAndGet();
        return delegate.register(subject, schema);
    }

    @Override
    public int lookupId(String subject, Schema schema) {
        lookups.incrementAndGet();
        return delegate.lookupId(subject, schema);
    }

    @Override
    public Schema getById(int id) {
        fetches.incrementAndGet();
        return delegate.getById(id);
    }

    @Override
    public boolean isCompatible(String subject, Schema schema) {
        return delegate.isCompatible(subject, schema);
    }

    @Override
    public void setCompatibility(String subject, CompatibilityLevel level) {
        delegate.setCompatibility(subject, level);
    }
}
