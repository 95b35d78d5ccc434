/**
 * Kafka for tests: {@link io.devhealth.testkit.kafka.KafkaClusterExtension} injects in-process brokers, shared
 * or declared per parameter ({@link io.devhealth.testkit.kafka.OwnBroker}, {@link io.devhealth.testkit.kafka.BrokerConfig},
 * {@link io.devhealth.testkit.kafka.SecuredKafkaCluster}); {@link io.devhealth.testkit.kafka.TopicReader} consumes
 * topics until a condition holds; {@link io.devhealth.testkit.kafka.CommittedOffsets} says whether a group has committed a
 * topic to its end.
 */
package io.devhealth.testkit.kafka;
