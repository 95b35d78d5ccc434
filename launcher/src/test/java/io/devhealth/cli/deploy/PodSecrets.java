package io.devhealth.cli.deploy;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvFromSource;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.LocalObjectReference;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeProjection;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.ReplicaSet;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.batch.v1.CronJob;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;

/**
 * What the pods of rendered manifests get from Secrets. A pod that names a Secret anywhere — a volume,
 * a projected source, an environment variable, {@code envFrom}, an image pull secret — lets the kubelet
 * of its node read that whole Secret (the API server's Node authorizer grants a kubelet every Secret its
 * pods reference), whatever keys the pod projects: so the names, not the mounted items, are what reach a node.
 */
final class PodSecrets {

    private PodSecrets() {}

    /** Every pod template of {@code objects} in {@code namespace}, by {@code Kind/name}. */
    static Map<String, PodSpec> podSpecs(List<HasMetadata> objects, String namespace) {
        Map<String, PodSpec> specs = new LinkedHashMap<>();
        for (HasMetadata object : objects) {
            if (!namespace.equals(object.getMetadata().getNamespace())) {
                continue;
            }
            PodSpec spec = null;
            if (object instanceof DaemonSet d) {
                spec = d.getSpec().getTemplate().getSpec();
            } else if (object instanceof Deployment d) {
                spec = d.getSpec().getTemplate().getSpec();
            } else if (object instanceof StatefulSet s) {
                spec = s.getSpec().getTemplate().getSpec();
            } else if (object instanceof ReplicaSet r) {
                spec = r.getSpec().getTemplate().getSpec();
            } else if (object instanceof Job j) {
                spec = j.getSpec().getTemplate().getSpec();
            } else if (object instanceof CronJob c) {
                spec = c.getSpec().getJobTemplate().getSpec().getTemplate().getSpec();
            } else if (object instanceof Pod p) {
                spec = p.getSpec();
            }
            if (spec != null) {
                specs.put(object.getKind() + "/" + object.getMetadata().getName(), spec);
            }
        }
        return specs;
    }

    /** The names of every Secret {@code pod} references, wherever it does. */
    static Set<String> referenced(PodSpec pod) {
        Set<String> names = new TreeSet<>();
        for (Volume volume : list(pod.getVolumes())) {
            if (volume.getSecret() != null) {
                names.add(volume.getSecret().getSecretName());
            }
            if (volume.getProjected() != null) {
                for (VolumeProjection source : list(volume.getProjected().getSources())) {
                    if (source.getSecret() != null) {
                        names.add(source.getSecret().getName());
                    }
                }
            }
        }
        for (Container container : containers(pod)) {
            for (EnvVar env : list(container.getEnv())) {
                if (env.getValueFrom() != null && env.getValueFrom().getSecretKeyRef() != null) {
                    names.add(env.getValueFrom().getSecretKeyRef().getName());
                }
            }
            for (EnvFromSource from : list(container.getEnvFrom())) {
                if (from.getSecretRef() != null) {
                    names.add(from.getSecretRef().getName());
                }
            }
        }
        list(pod.getImagePullSecrets()).stream().map(LocalObjectReference::getName).forEach(names::add);
        return names;
    }

    /**
     * The volumes of {@code pod} whose source is none of: a Secret (named, so {@link #referenced} sees it), a
     * ConfigMap, an emptyDir, a hostPath, or a projection of only ServiceAccount tokens, ConfigMaps and the
     * downward API. Any other source — a CSI driver such as the Secrets Store, a storage plugin with a
     * {@code secretRef}, a cluster trust bundle — could bring a Secret or a key in unseen.
     */
    static List<String> volumesThatCouldHideASecret(PodSpec pod) {
        List<String> unknown = new ArrayList<>();
        for (Volume volume : list(pod.getVolumes())) {
            boolean known = volume.getSecret() != null || volume.getConfigMap() != null || volume.getEmptyDir() != null
                    || volume.getHostPath() != null
                    || volume.getProjected() != null && list(volume.getProjected().getSources()).stream().allMatch(PodSecrets::withoutSecret);
            if (!known) {
                unknown.add(volume.getName());
            }
        }
        return unknown;
    }

    private static boolean withoutSecret(VolumeProjection source) {
        int set = (source.getServiceAccountToken() != null ? 1 : 0) + (source.getConfigMap() != null ? 1 : 0)
                + (source.getDownwardAPI() != null ? 1 : 0);
        // A source sets exactly one field: anything else (a Secret, a cluster trust bundle, a pod certificate) is not one of these.
        return set == 1 && source.getSecret() == null && source.getAdditionalProperties().isEmpty();
    }

    private static List<Container> containers(PodSpec pod) {
        return Stream.of(list(pod.getInitContainers()), list(pod.getContainers())).flatMap(List::stream).toList();
    }

    private static <T> List<T> list(List<T> values) {
        return values == null ? List.of() : values;
    }
}
