/**
 * What happens to a device, as functions of immutable values: what a report does to its source's word
 * ({@link SourceReport}, flap damping in {@link Flaps}), how the sources merge into the device's effective health
 * ({@link DeviceHealthMerger}), and a report applied, silence expired, UUID-only sources moved onto DRA devices
 * ({@link DeviceRules}).
 *
 * <p>{@link NodeState} lives here rather than with the node store: the rules read a node's clock and which sources
 * its heartbeat says are down, and like {@link DeviceState} it is a value the rules take and return. This package
 * imports no other room of the processor, so that every rule is tested, and mutation-tested, on values alone.
 */
package io.devhealth.processor.internals.rules;
