package io.devhealth.testkit.realkube;

import static org.assertj.core.api.Assertions.assertThat;

import io.devhealth.simulators.realkube.ControlPlane;
import io.devhealth.simulators.realkube.Mounts;
import io.devhealth.simulators.realkube.RealNode;
import io.devhealth.simulators.realkube.Waits;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A node that stops leaves nothing mounted: the kubelet's bind mount of its root directory and the
 * tmpfs of its pods' secret and projected volumes, which the kubelet leaves behind when it stops,
 * go with {@link RealNode#close()}, those below the root before the root.
 */
@RealKubernetes
class RealNodeMountsIT {

    private static final String NAMESPACE = "node-mounts";
    private static final String POD = "with-volumes";
    private static final String NODE = ControlPlane.NODE_NAMES.get(1);
    private static final Duration WAIT = Duration.ofSeconds(60);

    @Test
    void shouldUnmountTheKubeletsRootAndItsPodsVolumesWhenTheNodeStops(ControlPlane plane) throws Exception {
        KubernetesClient client = plane.adminClient();
        // Not the shared node: this test stops its node. A short path under /tmp, as unix sockets need.
        Path root = Files.createTempDirectory(Path.of("/tmp"), "dh-mounts-");
        RealNode node = RealNode.start(plane, NODE, 1, root, Path.of("target", "real-kube").toAbsolutePath());
        try {
            client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(NAMESPACE).endMetadata().build())
                    .serverSideApply();
            client.secrets().inNamespace(NAMESPACE).resource(new SecretBuilder().withNewMetadata().withName("ca").endMetadata()
                    .withStringData(Map.of("ca.crt", "not a certificate")).build()).serverSideApply();
            Waits.until("the default ServiceAccount of " + NAMESPACE, WAIT, null,
                    () -> client.serviceAccounts().inNamespace(NAMESPACE).withName("default").get() != null);
            // A secret volume and, by default, the projected service-account token: a tmpfs each.
            client.pods().inNamespace(NAMESPACE).resource(new PodBuilder()
                    .withNewMetadata().withName(POD).endMetadata()
                    .withNewSpec().withNodeName(NODE).withRestartPolicy("Never").withTerminationGracePeriodSeconds(1L)
                            .addNewVolume().withName("ca").withNewSecret().withSecretName("ca").endSecret().endVolume()
                            .addNewContainer().withName("main").withImage("registry.devhealth.test/train:1")
                                    .addNewVolumeMount().withName("ca").withMountPath("/etc/ca").endVolumeMount()
                            .endContainer()
                    .endSpec().build()).create();
            Waits.until("the pod's secret and token volumes mounted under " + root, WAIT, null,
                    () -> Mounts.under(root).stream().anyMatch(p -> p.toString().contains("kubernetes.io~secret"))
                            && Mounts.under(root).stream().anyMatch(p -> p.toString().contains("kubernetes.io~projected")));
            List<Path> before = Mounts.under(root);
            assertThat(before).as("the kubelet's root is itself a mount").contains(root.resolve("kubelet"));

            node.close();

            assertThat(Mounts.under(root)).as("mounts left under the stopped node's directory (were %s)", before).isEmpty();
        } finally {
            node.close();
            client.pods().inNamespace(NAMESPACE).withName(POD).withGracePeriod(0).delete();
            client.nodes().withName(NODE).delete();
            client.namespaces().withName(NAMESPACE).delete();
            Mounts.unmountAll(root);
        }
    }
}
