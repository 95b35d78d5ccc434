package io.devhealth.bench.pipeline;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import io.devhealth.sink.condition.PodStatusWriter;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The API server's own rate for exactly the write the sink makes, with none of the sink's logic: one
 * JSON Patch of {@code pods/status} per pod, guarded by the pod's resourceVersion, that replaces the
 * devhealth condition in place, sent by a plain client with the sink's identity (so the same admission
 * policies and the same priority level) at a given concurrency. What the sink reaches is read against
 * this: the physical limit of this server on this machine for this write.
 */
public final class ConditionWriteCeiling {

    /** The measurement: writes the server took, errors by HTTP code, and the wall time. */
    public record Result(long written, Map<Integer, Long> errors, double seconds) {
        public double writesPerSecond() {
            return written / seconds;
        }
    }

    private ConditionWriteCeiling() {
    }

    /**
     * Writes every pod of {@code namespace} that has the condition once, {@code concurrency} at a time.
     *
     * @param reader lists the pods (outside the measured time)
     * @param writer the client the writes go out on: the sink's ServiceAccount
     */
    public static Result measure(KubernetesClient reader, KubernetesClient writer, String namespace, int concurrency)
            throws Exception {
        List<Pod> pods = reader.pods().inNamespace(namespace).list().getItems().stream()
                .filter(pod -> conditionIndex(pod) >= 0).toList();
        if (pods.isEmpty()) {
            throw new IllegalStateException("no pod in " + namespace + " has the condition " + PodStatusWriter.CONDITION_TYPE);
        }
        String probeTime = Instant.now().toString();
        AtomicInteger next = new AtomicInteger();
        AtomicLong written = new AtomicLong();
        Map<Integer, Long> errors = new ConcurrentHashMap<>();
        ExecutorService pool = Executors.newFixedThreadPool(concurrency);
        long start = System.nanoTime();
        try {
            List<Future<?>> workers = new ArrayList<>();
            for (int w = 0; w < concurrency; w++) {
                workers.add(pool.submit(() -> {
                    for (int i = next.getAndIncrement(); i < pods.size(); i = next.getAndIncrement()) {
                        Pod pod = pods.get(i);
                        try {
                            writer.pods().inNamespace(namespace).resource(pod).subresource("status")
                                    .patch(PatchContext.of(PatchType.JSON), patch(pod, probeTime).toString());
                            written.incrementAndGet();
                        } catch (KubernetesClientException e) {
                            errors.merge(e.getCode(), 1L, Long::sum);
                        }
                    }
                }));
            }
            for (Future<?> worker : workers) {
                worker.get();
            }
        } finally {
            pool.shutdownNow();
        }
        return new Result(written.get(), Map.copyOf(errors), (System.nanoTime() - start) / 1e9);
    }

    /**
     * The sink's shape of write: test the version and the condition's place, replace it (same status,
     * another message). Sent as Jackson writes it ({@code toString}): fabric8's serialization would write
     * a JsonNode as a bean.
     */
    private static ArrayNode patch(Pod pod, String probeTime) {
        int index = conditionIndex(pod);
        PodCondition current = pod.getStatus().getConditions().get(index);
        ArrayNode ops = JsonNodeFactory.instance.arrayNode();
        ops.addObject().put("op", "test").put("path", "/metadata/resourceVersion").put("value", pod.getMetadata().getResourceVersion());
        ops.addObject().put("op", "test").put("path", "/status/conditions/" + index + "/type").put("value", PodStatusWriter.CONDITION_TYPE);
        ops.addObject().put("op", "replace").put("path", "/status/conditions/" + index).putObject("value")
                .put("type", PodStatusWriter.CONDITION_TYPE)
                .put("status", current.getStatus())
                .put("reason", current.getReason())
                .put("message", "ceiling probe " + probeTime)
                .put("lastTransitionTime", current.getLastTransitionTime());
        return ops;
    }

    private static int conditionIndex(Pod pod) {
        List<PodCondition> conditions = pod.getStatus() == null ? null : pod.getStatus().getConditions();
        if (conditions == null) {
            return -1;
        }
        for (int i = 0; i < conditions.size(); i++) {
            if (PodStatusWriter.CONDITION_TYPE.equals(conditions.get(i).getType())) {
                return i;
            }
        }
        return -1;
    }
}
