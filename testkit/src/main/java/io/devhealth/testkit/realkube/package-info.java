/**
 * A real Kubernetes control plane and node for tests: etcd, kube-apiserver, kube-scheduler,
 * kube-controller-manager and a kubelet, built from upstream's Go modules by
 * {@code scripts/kube/build.sh} and started on 127.0.0.1 by {@link io.devhealth.testkit.realkube.RealKubernetes}.
 *
 * <p>Only two things are simulated: the container runtime (upstream's in-memory fake CRI, served by
 * {@code devhealth-fake-cri}, which can make a container exit with a code) and the GPUs themselves
 * (a DRA driver on upstream's kubeletplugin library, {@code devhealth-dra-driver}, whose device health
 * and taints a test scripts through {@link io.devhealth.testkit.realkube.DraDriverControl}).
 */
package io.devhealth.testkit.realkube;
