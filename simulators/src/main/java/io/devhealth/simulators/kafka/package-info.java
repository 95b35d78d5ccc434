/** In-process Kafka (KRaft, single node) and the TLS/SCRAM material for its secured listeners. */
package io.devhealth.simulators.kafka;
