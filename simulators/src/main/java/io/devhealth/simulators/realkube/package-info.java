/**
 * A real Kubernetes control plane and node: etcd, kube-apiserver, kube-scheduler,
 * kube-controller-manager and a kubelet, built from upstream's Go modules by
 * {@code scripts/kube/build.sh} ({@link io.devhealth.simulators.realkube.KubeBinaries}) and started on
 * 127.0.0.1 ({@link io.devhealth.simulators.realkube.ControlPlane}, {@link io.devhealth.simulators.realkube.RealNode}).
 * The integration tests run on it (through testkit's {@code @RealKubernetes}), and so does
 * {@code devhealth demo --real-kubernetes}, whose Job story needs the real Job controller.
 *
 * <p>Only two things are simulated: the container runtime (upstream's in-memory fake CRI, served by
 * {@code devhealth-fake-cri}, which can make a container exit with a code) and the GPUs themselves
 * (a DRA driver on upstream's kubeletplugin library, {@code devhealth-dra-driver}, whose device health
 * and taints a caller scripts through {@link io.devhealth.simulators.realkube.DraDriverControl}).
 */
package io.devhealth.simulators.realkube;
