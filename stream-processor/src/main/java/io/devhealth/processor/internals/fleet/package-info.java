/**
 * The fleet counts: health transitions counted per fleet dimension (node, driver, product, reason) in tumbling
 * windows of their own time ({@link FleetCombiner} folds them before the repartition, {@link FleetCounter} adds them
 * up), and terminated pods' verdicts per dimension ({@link FleetVerdicts}). The topology feeds them from the
 * transitions and verdicts; of the node processor they take only the product header it sets
 * ({@link FleetDimensions#PRODUCT_HEADER}).
 */
package io.devhealth.processor.internals.fleet;
