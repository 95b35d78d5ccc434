/** The JUnit 5 extension that injects one shared in-process Kafka broker into tests. */
package io.devhealth.testkit.kafka;
