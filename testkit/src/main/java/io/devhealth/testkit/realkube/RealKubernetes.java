package io.devhealth.testkit.realkube;

import io.devhealth.simulators.realkube.ControlPlane;
import io.devhealth.simulators.realkube.KubeBinaries;
import io.devhealth.simulators.realkube.RealNode;
import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Runs a test class against real Kubernetes: parameters of type {@link ControlPlane} get the API
 * server (with scheduler and controller manager) and parameters of type {@link RealNode} a kubelet with
 * the fake runtime and the test DRA driver. Both are started once per test JVM, on first use, only on
 * 127.0.0.1, and stopped when the JVM's tests end; the binaries are built on first use
 * ({@link KubeBinaries}). Tests share them: each test uses namespaces of its own.
 *
 * <p>Every component logs to {@code target/real-kube/<component>.log} of the module under test.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Tag("real-kubernetes")
@ExtendWith(RealKubernetesExtension.class)
public @interface RealKubernetes {}
