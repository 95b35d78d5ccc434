package io.devhealth.cli.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import io.devhealth.simulators.realkube.KubeBinaries;
import io.devhealth.testkit.realkube.Kustomize;
import io.devhealth.testkit.realkube.RealKubernetesExtension;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.KeyToPath;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The optional cert-manager component ({@code k8s/components/cert-manager}) rendered on top of the base
 * with the real {@code kubectl kustomize}, as an overlay would use it: the Certificate fills exactly the
 * Secret, keys and password the processor's StatefulSet reads, for the names callers and instances use,
 * and no Secret it fills reaches the collectors' namespace.
 */
@ExtendWith(RealKubernetesExtension.class)
class CertManagerComponentTest {

    private static List<HasMetadata> objects;

    @BeforeAll
    static void render(KubeBinaries kube) throws IOException {
        // kustomize takes relative paths only: an overlay next to the build output, as an operator's would be.
        Path overlay = Files.createDirectories(Path.of("target", "cert-manager-overlay")).toAbsolutePath();
        Path k8s = Path.of("..", "k8s").toAbsolutePath().normalize();
        Files.writeString(overlay.resolve("kustomization.yaml"), "apiVersion: kustomize.config.k8s.io/v1beta1\n"
                + "kind: Kustomization\n"
                + "resources: [" + overlay.relativize(k8s) + "]\n"
                + "components: [" + overlay.relativize(k8s.resolve("components/cert-manager")) + "]\n");
        objects = Kustomize.render(kube, overlay);
    }

    @Test
    void shouldIssueTheSecretTheProcessorMountsWithTheKeysAndPasswordItReads() {
        StatefulSet processor = objects.stream().filter(StatefulSet.class::isInstance).map(StatefulSet.class::cast).findFirst().orElseThrow();
        Container container = processor.getSpec().getTemplate().getSpec().getContainers().get(0);
        Map<String, Object> certificate = spec(certManager("Certificate", "devhealth-query-tls"));
        Map<String, Object> pkcs12 = map(map(certificate.get("keystores")).get("pkcs12"));

        VolumeMount mount = container.getVolumeMounts().stream().filter(m -> m.getName().equals("query-tls")).findFirst().orElseThrow();
        Volume volume = processor.getSpec().getTemplate().getSpec().getVolumes().stream()
                .filter(v -> v.getName().equals("query-tls")).findFirst().orElseThrow();
        assertThat(certificate.get("secretName")).as("the Certificate's Secret is the StatefulSet's volume")
                .isEqualTo(volume.getSecret().getSecretName());
        assertThat(pkcs12).containsEntry("create", true);
        Set<String> projected = volume.getSecret().getItems().stream().map(KeyToPath::getKey).collect(Collectors.toSet());
        // cert-manager's PKCS12 output: keystore.p12 (key and chain) and truststore.p12 (the CA).
        assertThat(projected).containsExactlyInAnyOrder("keystore.p12", "truststore.p12");
        assertThat(env(container, "DEVHEALTH_QUERY_TLS_KEYSTORE_LOCATION").getValue()).isEqualTo(mount.getMountPath() + "/keystore.p12");
        assertThat(env(container, "DEVHEALTH_QUERY_TLS_TRUSTSTORE_LOCATION").getValue()).isEqualTo(mount.getMountPath() + "/truststore.p12");

        Map<String, Object> password = map(pkcs12.get("passwordSecretRef"));
        for (String variable : List.of("DEVHEALTH_QUERY_TLS_KEYSTORE_PASSWORD", "DEVHEALTH_QUERY_TLS_TRUSTSTORE_PASSWORD")) {
            var ref = env(container, variable).getValueFrom().getSecretKeyRef();
            assertThat(ref.getName()).as(variable + ": the Secret cert-manager encrypts the stores with").isEqualTo(password.get("name"));
            assertThat(ref.getKey()).as(variable).isEqualTo(password.get("key"));
        }
        Set<String> names = container.getEnv().stream().map(EnvVar::getName).collect(Collectors.toSet());
        assertThat(ServiceEnvironment.unknownVariables("processor", names)).as("settings the processor would ignore").isEmpty();
        assertThat(container.getEnv().stream().filter(e -> e.getName().equals("DEVHEALTH_QUERY_TLS_KEYSTORE_PASSWORD")))
                .as("the component replaces the base's password, not adds a second").hasSize(1);
    }

    @Test
    @SuppressWarnings("unchecked")
    void shouldNameEveryHostCallersAndInstancesUseAndServeAsClientToo() {
        Map<String, Object> certificate = spec(certManager("Certificate", "devhealth-query-tls"));
        List<String> dnsNames = (List<String>) certificate.get("dnsNames");
        // The advertised host is $(POD_NAME).stream-processor-headless: instances forward to it.
        assertThat(dnsNames).contains("*.stream-processor-headless", "stream-processor", "stream-processor.devhealth",
                "stream-processor.devhealth.svc");
        assertThat((List<String>) certificate.get("usages")).contains("server auth", "client auth");
        Map<String, Object> issuer = map(certificate.get("issuerRef"));
        GenericKubernetesResource ca = certManager(String.valueOf(issuer.get("kind")), String.valueOf(issuer.get("name")));
        String caSecret = String.valueOf(map(spec(ca).get("ca")).get("secretName"));
        assertThat(objects.stream().filter(GenericKubernetesResource.class::isInstance).map(GenericKubernetesResource.class::cast)
                .filter(o -> o.getKind().equals("Certificate")).map(CertManagerComponentTest::spec))
                .as("a CA certificate fills the CA Issuer's Secret")
                .anySatisfy(s -> assertThat(s).containsEntry("isCA", true).containsEntry("secretName", caSecret));
        objects.stream().filter(GenericKubernetesResource.class::isInstance).forEach(o ->
                assertThat(o.getMetadata().getNamespace()).as(o.getKind() + "/" + o.getMetadata().getName()).isEqualTo("devhealth"));
    }

    @Test
    void shouldKeepEveryKeyTheComponentIssuesOutOfTheCollectorsNamespace() {
        List<String> issued = objects.stream().filter(GenericKubernetesResource.class::isInstance).map(GenericKubernetesResource.class::cast)
                .filter(o -> o.getKind().equals("Certificate")).map(o -> String.valueOf(spec(o).get("secretName"))).toList();
        assertThat(issued).contains("devhealth-query-ca", "devhealth-query-tls");
        Map<String, io.fabric8.kubernetes.api.model.PodSpec> pods = PodSecrets.podSpecs(objects, "devhealth-node");
        assertThat(pods).containsKey("DaemonSet/node-collector");
        // Each of these Secrets holds tls.key: in a collector's pod, its node's kubelet could read it whole.
        pods.forEach((workload, pod) -> assertThat(PodSecrets.referenced(pod)).as(workload).doesNotContainAnyElementsOf(issued)
                .isSubsetOf(KubernetesManifestsTest.COLLECTOR_SECRETS));
    }

    @Test
    void shouldRenewTheQueryCaWithinAYearKeepingItsKey() {
        Map<String, Object> ca = spec(certManager("Certificate", "devhealth-query-ca"));
        assertThat(ca).containsEntry("isCA", true);
        java.time.Duration lifetime = hours(ca.get("duration"));
        java.time.Duration renewBefore = hours(ca.get("renewBefore"));
        assertThat(lifetime).as("duration").isLessThanOrEqualTo(java.time.Duration.ofDays(366));
        // The time query clients and the collectors' ConfigMap have to take the renewed ca.crt.
        assertThat(renewBefore).as("renewBefore").isGreaterThanOrEqualTo(java.time.Duration.ofDays(30)).isLessThan(lifetime);
        // Certificates the renewed CA signs verify against the previous ca.crt only if the key stays.
        assertThat(map(ca.get("privateKey"))).containsEntry("rotationPolicy", "Never");
    }

    /** A cert-manager duration as the component writes it, whole hours ({@code 8760h}). */
    private static java.time.Duration hours(Object value) {
        assertThat(String.valueOf(value)).matches("\\d+h");
        return java.time.Duration.ofHours(Long.parseLong(String.valueOf(value).replace("h", "")));
    }

    private static GenericKubernetesResource certManager(String kind, String name) {
        return objects.stream().filter(GenericKubernetesResource.class::isInstance).map(GenericKubernetesResource.class::cast)
                .filter(o -> o.getApiVersion().equals("cert-manager.io/v1") && o.getKind().equals(kind) && o.getMetadata().getName().equals(name))
                .findFirst().orElseThrow(() -> new AssertionError("no cert-manager " + kind + " " + name));
    }

    private static Map<String, Object> spec(GenericKubernetesResource resource) {
        return map(resource.getAdditionalProperties().get("spec"));
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> map(Object value) {
        assertThat(value).isInstanceOf(Map.class);
        return (Map<String, Object>) value;
    }

    private static EnvVar env(Container container, String name) {
        return container.getEnv().stream().filter(e -> e.getName().equals(name)).findFirst()
                .orElseThrow(() -> new AssertionError("no " + name + " in the processor's environment"));
    }
}
