package io.devhealth.sink.postmortem;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinitionVersion;
import io.fabric8.kubernetes.api.model.apiextensions.v1.JSONSchemaProps;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The shipped CRD and {@link DevicePostMortem} agree: the API server prunes every field its structural
 * schema does not declare, silently, so a field added to the class but not to the schema would be lost.
 */
class DevicePostMortemCrdTest {

    private static final Path CRD = Path.of("..", "k8s", "base", "sink-apiserver", "devicepostmortem-crd.yaml");
    private static final KubernetesSerialization SERIALIZATION = new KubernetesSerialization();

    private static CustomResourceDefinition crd() throws Exception {
        try (InputStream in = Files.newInputStream(CRD)) {
            return SERIALIZATION.unmarshal(in, CustomResourceDefinition.class);
        }
    }

    /** A record with every field set. */
    private static DevicePostMortem full() {
        DevicePostMortem record = new DevicePostMortem();
        record.setSpec(new DevicePostMortem.Spec(new DevicePostMortem.PodIdentity("train-0", "uid-1"), "node-a", "Failed",
                "2026-11-29T10:00:00Z", "Unhealthy", "DeviceFailure", "gpu-0 Unhealthy",
                List.of(new DevicePostMortem.ContainerRecord("main", "2026-11-29T10:00:00Z", 1, "Error",
                        List.of(new DevicePostMortem.ResourceRecord("claim:gpu/big", "gpu", "train-0-gpu", "big",
                                List.of(new DevicePostMortem.DeviceRecord("big", "gpu.example.com", "node-a", "gpu-0", "GPU-1",
                                        "cdi=gpu-0", "Unhealthy", "XID 79", "XID-79", "2026-11-29T09:59:00Z", "NVIDIA H200")))))),
                true, "2026-11-29T10:02:00Z"));
        return record;
    }

    @Test
    void shouldMatchTheCustomResourceClassNamesAndScope() throws Exception {
        CustomResourceDefinition crd = crd();

        assertThat(crd.getMetadata().getName()).isEqualTo(io.fabric8.kubernetes.client.CustomResource.getCRDName(DevicePostMortem.class));
        assertThat(crd.getSpec().getGroup()).isEqualTo(DevicePostMortem.GROUP);
        assertThat(crd.getSpec().getNames().getPlural()).isEqualTo(DevicePostMortem.PLURAL);
        assertThat(crd.getSpec().getNames().getKind()).isEqualTo(new DevicePostMortem().getKind());
        assertThat(crd.getSpec().getScope()).isEqualTo("Namespaced");
        assertThat(crd.getSpec().getVersions()).singleElement().satisfies(v -> {
            assertThat(v.getName()).isEqualTo(DevicePostMortem.VERSION);
            assertThat(v.getStorage()).isTrue();
            assertThat(v.getSubresources()).as("the record has no status subresource: one writer, one resource").isNull();
        });
    }

    @Test
    void shouldDeclareEveryFieldTheSinkWritesSoNothingIsPruned() throws Exception {
        JSONSchemaProps spec = crd().getSpec().getVersions().get(0).getSchema().getOpenAPIV3Schema().getProperties().get("spec");
        @SuppressWarnings("unchecked")
        Map<String, Object> written = (Map<String, Object>) SERIALIZATION.convertValue(full(), Map.class).get("spec");

        List<String> undeclared = new ArrayList<>();
        undeclared("spec", written, spec, undeclared);
        assertThat(undeclared).isEmpty();
    }

    @Test
    void shouldShowPodNodeHealthVerdictFinishedAndAgeInKubectlGet() throws Exception {
        CustomResourceDefinitionVersion version = crd().getSpec().getVersions().get(0);

        assertThat(version.getAdditionalPrinterColumns()).filteredOn(c -> c.getPriority() == null || c.getPriority() == 0)
                .extracting(c -> c.getName() + "=" + c.getJsonPath())
                .containsExactly("Pod=.spec.pod.name", "Node=.spec.node", "Health=.spec.health", "Verdict=.spec.verdict",
                        "Finished=.spec.finishedAt",
                        "Age=.metadata.creationTimestamp");
    }

    @SuppressWarnings("unchecked")
    private static void undeclared(String path, Object value, JSONSchemaProps schema, List<String> out) {
        if (value instanceof Map<?, ?> map) {
            map.forEach((key, child) -> {
                JSONSchemaProps declared = schema.getProperties() == null ? null : schema.getProperties().get(String.valueOf(key));
                if (declared == null) {
                    out.add(path + "." + key);
                } else {
                    undeclared(path + "." + key, child, declared, out);
                }
            });
        } else if (value instanceof List<?> list) {
            list.forEach(item -> undeclared(path + "[]", item, schema.getItems().getSchema(), out));
        }
    }
}
