/**
 * Simulated hardware and servers that the tests, the {@code devhealth demo} and
 * {@code devhealth simulate-node} run against. Main code without JUnit or AssertJ; the demo
 * artifact ships it, the production image does not.
 *
 * <ul>
 *   <li>{@link io.devhealth.simulators.kafka}: a real in-process Kafka broker (KRaft), with TLS and SCRAM listeners;
 *   <li>{@link io.devhealth.simulators.dra}: a fake DRA kubelet plugin serving {@code DRAResourceHealth} and
 *       plugin registration on unix sockets;
 *   <li>{@link io.devhealth.simulators.kubelet}: a fake kubelet PodResources v1 server;
 *   <li>{@link io.devhealth.simulators.nvml}: a stub {@code libnvidia-ml.so.1};
 *   <li>{@link io.devhealth.simulators.kube}: in-memory Kubernetes APIs that the fabric8 client and kubectl
 *       can use, and pod fixtures that use DRA claims;
 *   <li>{@link io.devhealth.simulators.UniqueNames}: names that users sharing a server cannot collide on.
 * </ul>
 * Packages named {@code internal} are not API.
 */
package io.devhealth.simulators;
