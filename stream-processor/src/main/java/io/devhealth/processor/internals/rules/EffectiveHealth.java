package io.devhealth.processor.internals.rules;

import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.SourceKind;

/**
 * A device's health merged over its sources at one node time.
 *
 * @param message names the deciding source(s) where it is not the source's own words
 * @param deadline node time at which this result may change without new input
 */
public record EffectiveHealth(HealthStatus health, String message, String reason, SourceKind source, long deadline) {}
