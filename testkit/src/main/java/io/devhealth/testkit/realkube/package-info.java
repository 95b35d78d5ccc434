/**
 * {@link io.devhealth.testkit.realkube.RealKubernetes}: runs a test class against the real Kubernetes
 * control plane and node of {@code io.devhealth.simulators.realkube}, one per test JVM.
 */
package io.devhealth.testkit.realkube;
