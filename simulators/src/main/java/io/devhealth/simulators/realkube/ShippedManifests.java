package io.devhealth.simulators.realkube;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Namespaced;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.time.Duration;

/**
 * What {@code k8s/} ships, applied to a real API server file by file as {@code kubectl apply
 * --server-side} would, so that a run meets the RBAC, admission policies and priority levels an
 * operator deploys and not a copy of them.
 */
public final class ShippedManifests {

    /** The namespace the shipped services run in. */
    public static final String NAMESPACE = "devhealth";
    /** The sink's ServiceAccount, bound by {@code k8s/base/sink-apiserver/rbac.yaml}. */
    public static final String SINK_SERVICE_ACCOUNT = "devhealth-sink";
    private static final Duration WAIT = Duration.ofSeconds(60);

    private ShippedManifests() {
    }

    /**
     * The sink's part of {@code k8s/base}: its identity ({@link #applySinkIdentity}), its admission
     * policies and its API priority level and flow schema.
     */
    public static void applySink(KubernetesClient admin) {
        applySinkIdentity(admin);
        apply(admin, "k8s/base/sink-apiserver/admissionpolicy.yaml");
        apply(admin, "k8s/base/sink-apiserver/flowcontrol.yaml");
    }

    /**
     * What the sink may do before its admission policies narrow it: its namespace, the DevicePostMortem
     * CRD (waited for until established) and its RBAC.
     */
    public static void applySinkIdentity(KubernetesClient admin) {
        admin.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(NAMESPACE).endMetadata().build())
                .serverSideApply();
        apply(admin, "k8s/base/sink-apiserver/devicepostmortem-crd.yaml");
        Waits.until("DevicePostMortem CRD established", WAIT, null, () -> {
            CustomResourceDefinition crd = admin.apiextensions().v1().customResourceDefinitions()
                    .withName("devicepostmortems.devhealth.io").get();
            return crd != null && crd.getStatus() != null && crd.getStatus().getConditions().stream()
                    .anyMatch(c -> "Established".equals(c.getType()) && "True".equals(c.getStatus()));
        });
        apply(admin, "k8s/base/sink-apiserver/rbac.yaml");
    }

    /**
     * Every object of one file under the repository root, server-side applied in {@link #NAMESPACE} as
     * {@code k8s/base}'s kustomization puts it there.
     */
    public static void apply(KubernetesClient admin, String file) {
        apply(admin, file, NAMESPACE);
    }

    /** Every object of one file under the repository root, the namespaced ones in {@code namespace}. */
    public static void apply(KubernetesClient admin, String file, String namespace) {
        try (InputStream in = Files.newInputStream(KubeBinaries.repositoryRoot().resolve(file))) {
            for (HasMetadata object : admin.load(in).items()) {
                if (object instanceof Namespaced) {
                    object.getMetadata().setNamespace(namespace);
                }
                admin.resource(object).forceConflicts().serverSideApply();
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file, e);
        }
    }
}
