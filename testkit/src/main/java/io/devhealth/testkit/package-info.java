/**
 * devhealth test support, used by every module's tests and by the runnable {@code devhealth demo}.
 *
 * <ul>
 *   <li>{@link io.devhealth.testkit.kafka}: a real in-process Kafka broker (KRaft) and a JUnit 5 extension
 *       that shares one per test JVM;
 *   <li>{@link io.devhealth.testkit.dra}: a fake DRA kubelet plugin serving {@code DRAResourceHealth} and
 *       plugin registration on unix sockets;
 *   <li>{@link io.devhealth.testkit.kubelet}: a fake kubelet PodResources v1 server;
 *   <li>{@link io.devhealth.testkit.kube}: an in-memory Kubernetes API that the fabric8 client and kubectl
 *       can use, and pod fixtures that use DRA claims;
 *   <li>{@link io.devhealth.testkit.assertions}: AssertJ assertions on pod status;
 *   <li>{@link io.devhealth.testkit.UniqueNames}: names that tests sharing a server cannot collide on.
 * </ul>
 * Packages named {@code internal} are not API.
 */
package io.devhealth.testkit;
