package io.devhealth.simulators.kube;

import io.fabric8.kubernetes.client.Watcher.Action;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.fabric8.zjsonpatch.JsonPatch;
import io.fabric8.zjsonpatch.JsonPatchException;
import java.time.Clock;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;
import tools.jackson.databind.node.JsonNodeFactory;
import tools.jackson.databind.node.ObjectNode;

/**
 * The pods of a {@link FleetKubernetesApi}: indexed by namespace and name, versioned by one
 * resourceVersion counter, with a bounded history of changes so that a watch can resume from the
 * resourceVersion of a LIST (an informer's LIST+WATCH). Reads are lock-free (stored versions are
 * immutable); writes, watch registration and LIST take one lock, so every watcher and listener sees the
 * changes in resourceVersion order. Only LIST and a watch's start look at every pod.
 */
final class PodStore {

    private static final Logger LOGGER = LoggerFactory.getLogger(PodStore.class);
    private static final String CONFLICT_MESSAGE = "the object has been modified; please apply your changes to the latest version and try again";

    /** A change as watchers replay it: the pod after it, and the pod before it (null for a create). */
    private record Change(long resourceVersion, Action action, StoredPod pod, StoredPod previous) {
    }

    private final Map<String, Map<String, StoredPod>> byNamespace = new ConcurrentHashMap<>();
    private final Object lock = new Object();
    private final ArrayDeque<Change> history = new ArrayDeque<>();
    private final List<PodWatch> watches = new ArrayList<>();
    private final List<PodChangeListener> listeners = new CopyOnWriteArrayList<>();
    private final AtomicLong resourceVersion;
    private final int historyLimit;
    private final ObjectMapper mapper;
    private final KubernetesSerialization serialization;
    private final Clock clock;
    /** Highest resourceVersion dropped from the history: a watch from before it gets 410 Gone. */
    private long compactedThrough;

    PodStore(AtomicLong resourceVersion, int historyLimit, ObjectMapper mapper, KubernetesSerialization serialization, Clock clock) {
        this.resourceVersion = resourceVersion;
        this.historyLimit = historyLimit;
        this.mapper = mapper;
        this.serialization = serialization;
        this.clock = clock;
    }

    void addListener(PodChangeListener listener) {
        listeners.add(listener);
    }

    void removeListener(PodChangeListener listener) {
        listeners.remove(listener);
    }

    int size() {
        return byNamespace.values().stream().mapToInt(Map::size).sum();
    }

    StoredPod get(String namespace, String name) {
        StoredPod pod = byNamespace.getOrDefault(namespace, Map.of()).get(name);
        if (pod == null) {
            throw ApiException.notFound("pods \"" + name + "\"");
        }
        return pod;
    }

    /** The matching pods (sorted by namespace and name, as etcd returns them) and the resourceVersion they are current at. */
    record Listing(long resourceVersion, List<StoredPod> pods) {
    }

    Listing list(PodSelector selector) {
        synchronized (lock) {
            List<StoredPod> pods = new ArrayList<>();
            Iterable<Map<String, StoredPod>> scope = selector.namespace() == null ? byNamespace.values()
                    : List.of(byNamespace.getOrDefault(selector.namespace(), Map.of()));
            for (Map<String, StoredPod> namespace : scope) {
                for (StoredPod pod : namespace.values()) {
                    if (selector.matches(pod)) {
                        pods.add(pod);
                    }
                }
            }
            pods.sort(Comparator.comparing(StoredPod::namespace).thenComparing(StoredPod::name));
            return new Listing(resourceVersion.get(), pods);
        }
    }

    StoredPod create(String namespace, ObjectNode pod) {
        if (pod.has("kind") && !"Pod".equals(StoredPod.string(pod.get("kind")))) {
            throw ApiException.badRequest("expected kind Pod, got " + pod.get("kind"));
        }
        ObjectNode metadata = pod.has("metadata") && pod.get("metadata").isObject() ? (ObjectNode) pod.get("metadata") : pod.putObject("metadata");
        String bodyNamespace = StoredPod.string(metadata.get("namespace"));
        if (bodyNamespace != null && !bodyNamespace.equals(namespace)) {
            throw ApiException.badRequest("the namespace of the provided object does not match the namespace sent on the request");
        }
        String name = StoredPod.string(metadata.get("name"));
        String generateName = StoredPod.string(metadata.get("generateName"));
        if ((name == null || name.isEmpty()) && generateName != null && !generateName.isEmpty()) {
            name = generateName + randomSuffix();
        }
        if (name == null || name.isEmpty()) {
            throw ApiException.invalid("Pod is invalid: metadata.name: Required value: name or generateName is required");
        }
        pod.put("apiVersion", "v1").put("kind", "Pod");
        metadata.put("name", name).put("namespace", namespace).put("uid", UUID.randomUUID().toString())
                .put("creationTimestamp", DateTimeFormatter.ISO_INSTANT.format(clock.instant().truncatedTo(ChronoUnit.SECONDS)));
        // A real API server drops status given on create: the kubelet writes it through pods/status.
        pod.putObject("status").put("phase", "Pending");
        synchronized (lock) {
            Map<String, StoredPod> pods = byNamespace.computeIfAbsent(namespace, ns -> new ConcurrentHashMap<>());
            if (pods.containsKey(name)) {
                throw new ApiException(409, "AlreadyExists", "pods \"" + name + "\" already exists");
            }
            return commit(Action.ADDED, null, pod);
        }
    }

    /** PUT: {@code status} true for the status subresource (only status is taken), else everything but status. */
    StoredPod update(String namespace, String name, ObjectNode body, boolean status) {
        synchronized (lock) {
            StoredPod current = get(namespace, name);
            String bodyVersion = StoredPod.string(body.path("metadata").path("resourceVersion"));
            if (bodyVersion != null && !bodyVersion.isEmpty() && !bodyVersion.equals(Long.toString(current.resourceVersion()))) {
                throw ApiException.conflict("Operation cannot be fulfilled on pods \"" + name + "\": " + CONFLICT_MESSAGE);
            }
            return replace(current, body, status);
        }
    }

    /** PATCH with a JSON Patch (RFC 6902) or a JSON merge patch (RFC 7386). */
    StoredPod patch(String namespace, String name, JsonNode patch, boolean jsonPatch, boolean status) {
        synchronized (lock) {
            StoredPod current = get(namespace, name);
            JsonNode patched;
            if (jsonPatch) {
                if (!patch.isArray()) {
                    throw ApiException.badRequest("a JSON Patch must be an array of operations");
                }
                try {
                    patched = JsonPatch.apply(patch, current.json());
                } catch (JsonPatchException e) {
                    // What the API server answers when a test op fails or a path is missing.
                    throw ApiException.invalid(e.getMessage());
                }
            } else {
                patched = mergePatch(current.json().deepCopy(), patch);
            }
            if (!(patched instanceof ObjectNode result)) {
                throw ApiException.invalid("the patch does not leave an object");
            }
            String version = StoredPod.string(result.path("metadata").path("resourceVersion"));
            if (version != null && !version.equals(Long.toString(current.resourceVersion()))) {
                // A resourceVersion in a patch is a precondition on a real API server too.
                throw ApiException.conflict("Operation cannot be fulfilled on pods \"" + name + "\": " + CONFLICT_MESSAGE);
            }
            return replace(current, result, status);
        }
    }

    StoredPod delete(String namespace, String name, JsonNode options) {
        synchronized (lock) {
            StoredPod current = get(namespace, name);
            JsonNode preconditions = options == null ? null : options.get("preconditions");
            if (preconditions != null) {
                String uid = StoredPod.string(preconditions.get("uid"));
                String version = StoredPod.string(preconditions.get("resourceVersion"));
                if ((uid != null && !uid.equals(current.uid()))
                        || (version != null && !version.equals(Long.toString(current.resourceVersion())))) {
                    throw ApiException.conflict("Precondition failed for pods \"" + name + "\"");
                }
            }
            byNamespace.get(namespace).remove(name);
            return commit(Action.DELETED, current, current.json().deepCopy());
        }
    }

    /** Registers an open watch: first the current pods (from == null) or the changes after {@code from}, then live changes. */
    void watch(PodWatch watch, Long from) {
        synchronized (lock) {
            if (from == null) {
                for (Map<String, StoredPod> namespace : byNamespace.values()) {
                    for (StoredPod pod : namespace.values()) {
                        if (watch.selector().matches(pod)) {
                            watch.send(event(Action.ADDED.name(), pod));
                        }
                    }
                }
            } else if (from < compactedThrough) {
                watch.send(expired(from));
                watch.close(1000, "too old resource version");
                return;
            } else {
                for (Change change : history) {
                    if (change.resourceVersion() > from) {
                        deliver(watch, change);
                    }
                }
            }
            watches.add(watch);
        }
    }

    void unwatch(PodWatch watch) {
        synchronized (lock) {
            watches.remove(watch);
        }
    }

    int watchCount() {
        synchronized (lock) {
            return watches.size();
        }
    }

    private StoredPod replace(StoredPod current, ObjectNode candidate, boolean status) {
        ObjectNode next;
        if (status) {
            next = current.json().deepCopy();
            JsonNode newStatus = candidate.get("status");
            if (newStatus == null || newStatus.isNull()) {
                next.remove("status");
            } else {
                next.set("status", newStatus.deepCopy());
            }
        } else {
            next = candidate.deepCopy();
            ObjectNode metadata = next.has("metadata") && next.get("metadata").isObject() ? (ObjectNode) next.get("metadata") : next.putObject("metadata");
            JsonNode currentMetadata = current.json().get("metadata");
            for (String immutable : List.of("name", "namespace", "uid", "creationTimestamp")) {
                String was = StoredPod.string(currentMetadata.get(immutable));
                String now = StoredPod.string(metadata.get(immutable));
                if (now != null && !now.equals(was)) {
                    throw ApiException.invalid("Pod \"" + current.name() + "\" is invalid: metadata." + immutable + ": field is immutable");
                }
                metadata.put(immutable, was);
            }
            // The main resource does not change status (a real server ignores it there too).
            JsonNode currentStatus = current.json().get("status");
            if (currentStatus == null) {
                next.remove("status");
            } else {
                next.set("status", currentStatus.deepCopy());
            }
        }
        ((ObjectNode) next.get("metadata")).put("resourceVersion", Long.toString(current.resourceVersion()));
        if (next.equals(current.json())) {
            // A no-op write: like the API server, no new resourceVersion and no watch event.
            return current;
        }
        return commit(Action.MODIFIED, current, next);
    }

    /** Under the lock: stamps the next resourceVersion, stores, records history, tells watchers and listeners. */
    private StoredPod commit(Action action, StoredPod previous, ObjectNode json) {
        long version = resourceVersion.incrementAndGet();
        ((ObjectNode) json.get("metadata")).put("resourceVersion", Long.toString(version));
        StoredPod pod = StoredPod.of(json, mapper);
        long appliedAt = System.nanoTime();
        if (action != Action.DELETED) {
            byNamespace.computeIfAbsent(pod.namespace(), ns -> new ConcurrentHashMap<>()).put(pod.name(), pod);
        }
        Change change = new Change(version, action, pod, previous);
        history.addLast(change);
        if (history.size() > historyLimit) {
            compactedThrough = history.removeFirst().resourceVersion();
        }
        for (PodWatch watch : watches) {
            deliver(watch, change);
        }
        if (!listeners.isEmpty()) {
            PodChange event = new PodChange(action, pod, appliedAt, serialization);
            for (PodChangeListener listener : listeners) {
                try {
                    listener.podChanged(event);
                } catch (RuntimeException e) {
                    LOGGER.warn("pod change listener failed pod={}/{} error=\"{}\"", pod.namespace(), pod.name(), e.toString());
                }
            }
        }
        return pod;
    }

    /** As the API server's watch cache does: a pod that starts or stops matching is ADDED or DELETED for that watch. */
    private void deliver(PodWatch watch, Change change) {
        boolean matchedBefore = change.previous() != null && watch.selector().matches(change.previous());
        boolean matchesNow = change.action() != Action.DELETED && watch.selector().matches(change.pod());
        if (change.action() == Action.DELETED) {
            if (matchedBefore) {
                watch.send(event(Action.DELETED.name(), change.pod()));
            }
        } else if (matchedBefore && matchesNow) {
            watch.send(event(Action.MODIFIED.name(), change.pod()));
        } else if (matchesNow) {
            watch.send(event(Action.ADDED.name(), change.pod()));
        } else if (matchedBefore) {
            watch.send(event(Action.DELETED.name(), change.previous().withResourceVersion(change.resourceVersion(), mapper)));
        }
    }

    private static String event(String type, StoredPod pod) {
        // The pod is already serialized; only the envelope is added (type is one of the Action names).
        return "{\"type\":\"" + type + "\",\"object\":" + pod.text() + "}";
    }

    private String expired(long from) {
        ObjectNode event = mapper.createObjectNode().put("type", "ERROR");
        event.set("object", FleetDispatcher.status(mapper, 410, "Expired",
                "too old resource version: " + from + " (" + compactedThrough + ")"));
        return mapper.writeValueAsString(event);
    }

    /** RFC 7386: objects merge recursively, null removes, anything else (lists included) replaces. */
    static JsonNode mergePatch(JsonNode target, JsonNode patch) {
        if (!patch.isObject()) {
            return patch.deepCopy();
        }
        ObjectNode result = target != null && target.isObject() ? (ObjectNode) target : JsonNodeFactory.instance.objectNode();
        for (Map.Entry<String, JsonNode> entry : patch.properties()) {
            if (entry.getValue().isNull()) {
                result.remove(entry.getKey());
            } else {
                result.set(entry.getKey(), mergePatch(result.get(entry.getKey()), entry.getValue()));
            }
        }
        return result;
    }

    static String randomSuffix() {
        String alphabet = "bcdfghjklmnpqrstvwxz2456789";
        StringBuilder suffix = new StringBuilder(5);
        for (int i = 0; i < 5; i++) {
            suffix.append(alphabet.charAt(ThreadLocalRandom.current().nextInt(alphabet.length())));
        }
        return suffix.toString();
    }
}
