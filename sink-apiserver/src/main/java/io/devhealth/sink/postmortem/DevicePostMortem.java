package io.devhealth.sink.postmortem;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonInclude;
import io.fabric8.kubernetes.api.model.Namespaced;
import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.model.annotation.Group;
import io.fabric8.kubernetes.model.annotation.Kind;
import io.fabric8.kubernetes.model.annotation.Plural;
import io.fabric8.kubernetes.model.annotation.ShortNames;
import io.fabric8.kubernetes.model.annotation.Singular;
import io.fabric8.kubernetes.model.annotation.Version;
import java.util.List;

/**
 * devhealth's post-mortem record of one terminated pod: the health of every device each container used,
 * as of the moment it finished. Named after the pod, in the pod's namespace, and deliberately <b>not</b>
 * owned by it: Job controllers delete their pods, and the record has to outlive them. The sink deletes
 * it after {@code postmortem.retention.ms}, once its pod is gone.
 *
 * <p>It is a record of facts rather than a desired state, and the sink is its only writer, so it has no
 * spec/status split and no status subresource: everything lives in {@code spec}, which keeps the RBAC to
 * one resource. The CRD is {@code k8s/base/sink-apiserver/devicepostmortem-crd.yaml};
 * {@code DevicePostMortemCrdTest} keeps its schema and this class in step (an unknown field would be
 * pruned by the API server without an error).
 */
@Group(DevicePostMortem.GROUP)
@Version(DevicePostMortem.VERSION)
@Kind("DevicePostMortem")
@Plural(DevicePostMortem.PLURAL)
@Singular("devicepostmortem")
@ShortNames("dpm")
public final class DevicePostMortem extends CustomResource<DevicePostMortem.Spec, Void> implements Namespaced {

    public static final String GROUP = "devhealth.io";
    public static final String VERSION = "v1alpha1";
    public static final String PLURAL = "devicepostmortems";
    /** Label on every record the sink writes; the retention sweep lists by it. */
    public static final String MANAGED_BY_LABEL = "app.kubernetes.io/managed-by";
    public static final String MANAGED_BY = "devhealth-sink";
    /** Label with the pod's UID, so that {@code kubectl get dpm -l devhealth.io/pod-uid=…} finds one incarnation. */
    public static final String POD_UID_LABEL = "devhealth.io/pod-uid";

    @Override
    protected Spec initSpec() {
        return null;
    }

    /**
     * @param pod which pod (name and UID: a pod re-created under the same name is another pod)
     * @param node where it ran
     * @param phase the pod's phase when recorded (Failed, Succeeded)
     * @param finishedAt when its last container finished (RFC 3339)
     * @param health Healthy, Unhealthy or Unknown: the worst device
     * @param verdict whether the pod ended on failed hardware ({@link io.devhealth.schema.VerdictWords})
     * @param message one line a human reads: which device, which health, since when, why
     * @param containers per container the devices it used
     * @param frozen true once the post-termination window has passed: the record no longer changes
     * @param frozenAt when it was frozen
     */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record Spec(PodIdentity pod, String node, String phase, String finishedAt, String health, String verdict, String message,
                       List<ContainerRecord> containers, Boolean frozen, String frozenAt) {

        public Spec withFrozen(String at) {
            return new Spec(pod, node, phase, finishedAt, health, verdict, message, containers, true, at);
        }

        /** Whether the record is final. */
        @JsonIgnore
        public boolean isFrozen() {
            return Boolean.TRUE.equals(frozen);
        }
    }

    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record PodIdentity(String name, String uid) {
    }

    /**
     * @param resources one entry per resource the container names, as the kubelet names its
     *     {@code allocatedResourcesStatus} entries: {@code claim:<ref>}, {@code claim:<ref>/<request>}, or a
     *     device-plugin resource name
     */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record ContainerRecord(String name, String finishedAt, Integer exitCode, String exitReason, List<ResourceRecord> resources) {
    }

    /**
     * @param claim the pod-level claim reference ({@code spec.resourceClaims[].name}); null for device plugins
     * @param resourceClaimName the ResourceClaim object
     * @param request the request the container names, if it names one
     */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record ResourceRecord(String name, String claim, String resourceClaimName, String request, List<DeviceRecord> devices) {
    }

    /**
     * @param request the claim request this device was allocated for (from the ResourceClaim's allocation
     *     results); null for device plugins or when the claim could no longer be read
     * @param gpuUUID the GPU's UUID when known (for a shared device-plugin id {@code GPU-…::N}, its GPU)
     * @param resourceID what the kubelet would call it: first CDI id, else driver/pool/device, or the
     *     device-plugin id
     * @param since when this health began (RFC 3339)
     * @param product the device's product name from the node's inventory, when known
     */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record DeviceRecord(String request, String driver, String pool, String device, String gpuUUID, String resourceID,
                               String health, String message, String reason, String since, String product) {
    }
}
