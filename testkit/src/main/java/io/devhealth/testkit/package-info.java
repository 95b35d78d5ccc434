/**
 * devhealth test support: JUnit 5 extensions and AssertJ assertions, for every module's tests only
 * (test scope; never a main-scope dependency, so never in an image). What the tests run against, the
 * simulated hardware and servers, is in {@code io.devhealth.simulators} (module {@code simulators}).
 *
 * <ul>
 *   <li>{@link io.devhealth.testkit.kafka}: a JUnit 5 extension that injects in-process brokers (one shared per
 *       test JVM, or one of the test's own as its parameter declares), the one topic reader tests consume with, and a
 *       consumer group's committed offsets;
 *   <li>{@link io.devhealth.testkit.realkube}: {@code @RealKubernetes}, a real control plane and kubelet;
 *   <li>{@link io.devhealth.testkit.kube}: what a watch saw of pods over time (the versions a condition showed);
 *   <li>{@link io.devhealth.testkit.assertions}: AssertJ assertions on pod status;
 *   <li>{@link io.devhealth.testkit.tls}: self-signed certificates, their stores, and HTTPS clients of them;
 *   <li>{@link io.devhealth.testkit.time}: a clock tests move by hand.
 * </ul>
 */
package io.devhealth.testkit;
