/**
 * One stream task's node state: {@link NodeStore}, through which alone the node processor reads and writes the
 * node, device, allocation, inventory and pod-status stores, and which keeps them decoded in memory (each node's pod
 * index too, {@link PodIndex}); the node-state store's value ({@link StoredNode}); each node's clock, on which
 * silence is judged ({@link SilenceClock}); and the gauges counted from that state ({@link StateGauges}). What
 * happens to the devices it stores is decided in {@code rules}.
 */
package io.devhealth.processor.internals.node;
