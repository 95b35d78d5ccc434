package io.devhealth.sink.postmortem;

import io.devhealth.sink.ApiCallPolicy;
import io.devhealth.sink.ApiErrorClass;
import io.devhealth.sink.JsonPatchOps;
import io.devhealth.sink.SinkMetrics;
import io.fabric8.kubernetes.api.model.KubernetesResourceList;
import io.fabric8.kubernetes.api.model.ListOptionsBuilder;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads and writes {@link DevicePostMortem} records: one per terminated pod, named after it. Writes are
 * a create, or a JSON Patch of {@code spec} and the labels guarded by the record's resourceVersion (the
 * sink never sends {@code update}); a record left by an earlier pod of the same name (another UID) is
 * replaced, since {@code kubectl get dpm <pod>} should describe the pod that has that name now. Records
 * are deleted by {@link #sweep} once their retention has passed and their pod is gone.
 */
public final class PostMortemStore {

    private static final Logger LOGGER = LoggerFactory.getLogger(PostMortemStore.class);
    private static final long PAGE = 500;

    private final KubernetesClient client;
    private final ApiCallPolicy api;
    private final SinkMetrics metrics;

    public PostMortemStore(KubernetesClient client, ApiCallPolicy api, SinkMetrics metrics) {
        this.client = client;
        this.api = api;
        this.metrics = metrics;
    }

    /** The record named after the pod, or null. */
    public DevicePostMortem get(String namespace, String name) {
        try {
            return api.call(() -> client.resources(DevicePostMortem.class).inNamespace(namespace).withName(name).get());
        } catch (KubernetesClientException e) {
            if (ApiErrorClass.of(e) == ApiErrorClass.NOT_FOUND) {
                return null;
            }
            throw e;
        }
    }

    /**
     * Brings the record of {@code pod} to {@code spec}. {@code existing}: what {@link #get} returned.
     *
     * @return whether anything was written
     * @throws KubernetesClientException 409 when the record moved since it was read (the caller re-reads)
     * @throws IllegalStateException when the record's life does not allow the write ({@link PostMortemState}):
     *     a final record is never written again
     */
    public boolean put(Pod pod, DevicePostMortem existing, DevicePostMortem.Spec spec) {
        String namespace = pod.getMetadata().getNamespace();
        String name = pod.getMetadata().getName();
        Map<String, String> labels = labels(pod);
        PostMortemState from = PostMortemState.of(existing, pod.getMetadata().getUid());
        if (existing != null && spec.equals(existing.getSpec()) && labels.equals(existing.getMetadata().getLabels())) {
            return false;
        }
        from.transitionTo(PostMortemState.afterWriting(spec), namespace + "/" + name);
        if (existing == null) {
            DevicePostMortem record = new DevicePostMortem();
            record.setMetadata(new ObjectMetaBuilder().withNamespace(namespace).withName(name).withLabels(labels).build());
            record.setSpec(spec);
            api.call(() -> client.resources(DevicePostMortem.class).inNamespace(namespace).resource(record).create());
            metrics.postMortem("created");
            LOGGER.info("post-mortem recorded pod={}/{} uid={} health={}", namespace, name, pod.getMetadata().getUid(), spec.health());
            return true;
        }
        List<Map<String, Object>> ops = new ArrayList<>();
        ops.add(JsonPatchOps.op("test", "/metadata/resourceVersion", existing.getMetadata().getResourceVersion()));
        ops.add(JsonPatchOps.op(existing.getMetadata().getLabels() == null ? "add" : "replace", "/metadata/labels", labels));
        ops.add(JsonPatchOps.op(existing.getSpec() == null ? "add" : "replace", "/spec", spec));
        String json = client.getKubernetesSerialization().asJson(ops);
        api.call(() -> client.resources(DevicePostMortem.class).inNamespace(namespace).withName(name)
                .patch(PatchContext.of(PatchType.JSON), json));
        boolean replaced = existing.getSpec() != null && existing.getSpec().pod() != null
                && !pod.getMetadata().getUid().equals(existing.getSpec().pod().uid());
        metrics.postMortem("updated");
        LOGGER.info("post-mortem updated pod={}/{} uid={} health={} frozen={} replacedEarlierPod={}", namespace, name,
                pod.getMetadata().getUid(), spec.health(), spec.isFrozen(), replaced);
        return true;
    }

    private static Map<String, String> labels(Pod pod) {
        Map<String, String> labels = new LinkedHashMap<>();
        labels.put(DevicePostMortem.MANAGED_BY_LABEL, DevicePostMortem.MANAGED_BY);
        labels.put(DevicePostMortem.POD_UID_LABEL, pod.getMetadata().getUid());
        return labels;
    }

    /**
     * Deletes every record whose pod finished more than {@code retention} before {@code now} and is gone
     * (no pod of that name, or one with another UID): a record never disappears while its pod is still
     * there to be looked at.
     *
     * @return how many were deleted
     */
    public int sweep(Instant now, Duration retention) {
        int deleted = 0;
        String continueToken = null;
        do {
            String token = continueToken;
            KubernetesResourceList<DevicePostMortem> page = api.call(() -> client.resources(DevicePostMortem.class).inAnyNamespace()
                    .withLabel(DevicePostMortem.MANAGED_BY_LABEL, DevicePostMortem.MANAGED_BY)
                    .list(new ListOptionsBuilder().withLimit(PAGE).withContinue(token).build()));
            for (DevicePostMortem record : page.getItems()) {
                if (expired(record, now, retention) && podGone(record)) {
                    String namespace = record.getMetadata().getNamespace();
                    String name = record.getMetadata().getName();
                    PostMortemState.of(record).transitionTo(PostMortemState.DELETED, namespace + "/" + name);
                    api.call(() -> client.resources(DevicePostMortem.class).inNamespace(namespace).withName(name).delete());
                    LOGGER.info("post-mortem deleted after retention pod={}/{} finishedAt={} retention={}", namespace, name,
                            record.getSpec().finishedAt(), retention);
                    metrics.postMortem("deleted");
                    deleted++;
                }
            }
            continueToken = page.getMetadata() == null ? null : page.getMetadata().getContinue();
        } while (continueToken != null && !continueToken.isEmpty());
        return deleted;
    }

    static boolean expired(DevicePostMortem record, Instant now, Duration retention) {
        String finished = record.getSpec() == null ? null : record.getSpec().finishedAt();
        Instant since;
        try {
            since = finished != null ? Instant.parse(finished) : Instant.parse(record.getMetadata().getCreationTimestamp());
        } catch (DateTimeParseException | NullPointerException e) {
            return false;
        }
        return !now.isBefore(since.plus(retention));
    }

    private boolean podGone(DevicePostMortem record) {
        String namespace = record.getMetadata().getNamespace();
        String name = record.getMetadata().getName();
        Pod pod;
        try {
            pod = api.call(() -> client.pods().inNamespace(namespace).withName(name).get());
        } catch (KubernetesClientException e) {
            if (ApiErrorClass.of(e) != ApiErrorClass.NOT_FOUND) {
                throw e;
            }
            pod = null;
        }
        String uid = record.getSpec() == null || record.getSpec().pod() == null ? null : record.getSpec().pod().uid();
        return pod == null || uid == null || !uid.equals(pod.getMetadata().getUid());
    }

}
