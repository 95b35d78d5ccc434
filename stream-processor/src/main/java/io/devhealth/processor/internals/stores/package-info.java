/**
 * What the processors share of their state stores: the stores' names ({@link TopologyNames}), the keys of the
 * stores and output topics ({@link StateKeys}), and the store that tells its owner a commit is coming
 * ({@link CommitHookKeyValueStore}). The lowest room: every other one may import it and it imports none, so that the
 * processors find their stores without importing the topology or one another.
 */
package io.devhealth.processor.internals.stores;
