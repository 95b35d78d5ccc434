/** In-process Kafka (KRaft, single node) and its JUnit 5 extension. */
package io.devhealth.testkit.kafka;
