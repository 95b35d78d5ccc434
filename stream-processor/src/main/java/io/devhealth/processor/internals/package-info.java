/**
 * The stream-processor's internals; callers use {@link io.devhealth.processor.DeviceHealthTopology} and the read
 * model, {@code io.devhealth.processor.state}. This package wires the rooms below it: the node processor, the
 * stores' serdes, the CloudEvents mirror, the stream threads' producer.
 *
 * <p>Imports between the rooms point one way, so that each can be read and tested without the ones above it:
 * <pre>
 * internals (here) → node, pods, fleet, rules, input, stores
 * node             → rules, fleet, stores   (fleet: the gauges name an unknown driver or product as the fleet counts do)
 * pods             → rules, input, stores   (input: a refused status is invalid input; a release names its node in
 *                                            the node identity header)
 * fleet            → stores
 * rules, input, stores → none of them
 * </pre>
 * No room imports this package (tests of the node store and the fleet combiner use its serdes).
 */
package io.devhealth.processor.internals;
