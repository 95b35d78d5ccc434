package io.devhealth.simulators.kube;

import io.fabric8.kubernetes.client.Watcher.Action;
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
 * The objects of one kind in a {@link FleetKubernetesApi}: indexed by namespace and name, versioned by
 * the API's one resourceVersion counter, with a bounded history of changes so that a watch can resume
 * from the resourceVersion of a LIST (an informer's LIST+WATCH). Reads are lock-free (stored versions
 * are immutable); writes, watch registration and LIST take one lock, so every watcher and listener sees
 * the changes in resourceVersion order. Only LIST and a watch's start look at every object.
 */
final class ObjectStore {

    private static final Logger LOGGER = LoggerFactory.getLogger(ObjectStore.class);
    private static final String CONFLICT_MESSAGE = "the object has been modified; please apply your changes to the latest version and try again";
    /** The namespace key of cluster-scoped objects. */
    private static final String CLUSTER = "";

    /** Told every stored change, under the store's lock, with the {@link System#nanoTime()} it was applied at. */
    @FunctionalInterface
    interface Listener {
        void changed(Action action, StoredObject object, long appliedAtNanos);
    }

    /** A change as watchers replay it: the object after it, and the object before it (null for a create). */
    private record Change(long resourceVersion, Action action, StoredObject object, StoredObject previous) {
    }

    private final ResourceType type;
    private final Map<String, Map<String, StoredObject>> byNamespace = new ConcurrentHashMap<>();
    private final Object lock = new Object();
    private final ArrayDeque<Change> history = new ArrayDeque<>();
    private final List<ObjectWatch> watches = new ArrayList<>();
    private final List<Listener> listeners = new CopyOnWriteArrayList<>();
    private final AtomicLong resourceVersion;
    private final int historyLimit;
    private final ObjectMapper mapper;
    private final Clock clock;
    /** Highest resourceVersion dropped from the history: a watch from before it gets 410 Gone. */
    private long compactedThrough;

    /** @param resourceVersion the API's counter, shared by every kind */
    ObjectStore(ResourceType type, AtomicLong resourceVersion, int historyLimit, ObjectMapper mapper, Clock clock) {
        this.type = type;
        this.resourceVersion = resourceVersion;
        this.historyLimit = historyLimit;
        this.mapper = mapper;
        this.clock = clock;
    }

    ResourceType type() {
        return type;
    }

    void addListener(Listener listener) {
        listeners.add(listener);
    }

    void removeListener(Listener listener) {
        listeners.remove(listener);
    }

    int size() {
        return byNamespace.values().stream().mapToInt(Map::size).sum();
    }

    /** @param namespace ignored for a cluster-scoped kind */
    StoredObject get(String namespace, String name) {
        StoredObject object = byNamespace.getOrDefault(key(namespace), Map.of()).get(name);
        if (object == null) {
            throw ApiException.notFound(type.plural() + " \"" + name + "\"");
        }
        return object;
    }

    /** The matching objects (sorted by namespace and name, as etcd returns them) and the resourceVersion they are current at. */
    record Listing(long resourceVersion, List<StoredObject> objects) {
    }

    Listing list(Selector selector) {
        synchronized (lock) {
            List<StoredObject> objects = new ArrayList<>();
            Iterable<Map<String, StoredObject>> scope = selector.namespace() == null ? byNamespace.values()
                    : List.of(byNamespace.getOrDefault(selector.namespace(), Map.of()));
            for (Map<String, StoredObject> namespace : scope) {
                for (StoredObject object : namespace.values()) {
                    if (selector.matches(object)) {
                        objects.add(object);
                    }
                }
            }
            objects.sort(Comparator.comparing(StoredObject::namespace, Comparator.nullsFirst(Comparator.naturalOrder()))
                    .thenComparing(StoredObject::name));
            return new Listing(resourceVersion.get(), objects);
        }
    }

    /** @param namespace the request's namespace; null for a cluster-scoped kind */
    StoredObject create(String namespace, ObjectNode object) {
        if (object.has("kind") && !type.kind().equals(StoredObject.string(object.get("kind")))) {
            throw ApiException.badRequest("expected kind " + type.kind() + ", got " + object.get("kind"));
        }
        ObjectNode metadata = object.has("metadata") && object.get("metadata").isObject() ? (ObjectNode) object.get("metadata")
                : object.putObject("metadata");
        String bodyNamespace = StoredObject.string(metadata.get("namespace"));
        if (namespace != null && bodyNamespace != null && !bodyNamespace.equals(namespace)) {
            throw ApiException.badRequest("the namespace of the provided object does not match the namespace sent on the request");
        }
        String name = StoredObject.string(metadata.get("name"));
        String generateName = StoredObject.string(metadata.get("generateName"));
        if ((name == null || name.isEmpty()) && generateName != null && !generateName.isEmpty()) {
            name = generateName + randomSuffix();
        }
        if (name == null || name.isEmpty()) {
            throw ApiException.invalid(type.kind() + " is invalid: metadata.name: Required value: name or generateName is required");
        }
        object.put("apiVersion", type.apiVersion()).put("kind", type.kind());
        metadata.put("name", name).put("uid", UUID.randomUUID().toString())
                .put("creationTimestamp", DateTimeFormatter.ISO_INSTANT.format(clock.instant().truncatedTo(ChronoUnit.SECONDS)));
        if (namespace == null) {
            metadata.remove("namespace");
        } else {
            metadata.put("namespace", namespace);
        }
        if (type.statusSubresource()) {
            // A real API server drops status given on create: the kubelet (or a controller) writes it through .../status.
            object.remove("status");
            if (type.initialStatus() != null) {
                type.initialStatus().forEach(object.putObject("status")::put);
            }
        }
        synchronized (lock) {
            Map<String, StoredObject> objects = byNamespace.computeIfAbsent(key(namespace), ns -> new ConcurrentHashMap<>());
            if (objects.containsKey(name)) {
                throw new ApiException(409, "AlreadyExists", type.plural() + " \"" + name + "\" already exists");
            }
            return commit(Action.ADDED, null, object);
        }
    }

    /** PUT: {@code status} true for the status subresource (only status is taken), else everything but status. */
    StoredObject update(String namespace, String name, ObjectNode body, boolean status) {
        synchronized (lock) {
            StoredObject current = get(namespace, name);
            String bodyVersion = StoredObject.string(body.path("metadata").path("resourceVersion"));
            if (bodyVersion != null && !bodyVersion.isEmpty() && !bodyVersion.equals(Long.toString(current.resourceVersion()))) {
                throw conflict(name);
            }
            return replace(current, body, status);
        }
    }

    /** PATCH with a JSON Patch (RFC 6902) or a JSON merge patch (RFC 7386). */
    StoredObject patch(String namespace, String name, JsonNode patch, boolean jsonPatch, boolean status) {
        synchronized (lock) {
            StoredObject current = get(namespace, name);
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
            String version = StoredObject.string(result.path("metadata").path("resourceVersion"));
            if (version != null && !version.equals(Long.toString(current.resourceVersion()))) {
                // A resourceVersion in a patch is a precondition on a real API server too.
                throw conflict(name);
            }
            return replace(current, result, status);
        }
    }

    StoredObject delete(String namespace, String name, JsonNode options) {
        synchronized (lock) {
            StoredObject current = get(namespace, name);
            JsonNode preconditions = options == null ? null : options.get("preconditions");
            if (preconditions != null) {
                String uid = StoredObject.string(preconditions.get("uid"));
                String version = StoredObject.string(preconditions.get("resourceVersion"));
                if ((uid != null && !uid.equals(current.uid()))
                        || (version != null && !version.equals(Long.toString(current.resourceVersion())))) {
                    throw ApiException.conflict("Precondition failed for " + type.plural() + " \"" + name + "\"");
                }
            }
            byNamespace.get(key(current.namespace())).remove(name);
            return commit(Action.DELETED, current, current.json().deepCopy());
        }
    }

    /** Registers an open watch: first the current objects (from == null) or the changes after {@code from}, then live changes. */
    void watch(ObjectWatch watch, Long from) {
        synchronized (lock) {
            if (from == null) {
                for (Map<String, StoredObject> namespace : byNamespace.values()) {
                    for (StoredObject object : namespace.values()) {
                        if (watch.selector().matches(object)) {
                            watch.send(event(Action.ADDED.name(), object));
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

    void unwatch(ObjectWatch watch) {
        synchronized (lock) {
            watches.remove(watch);
        }
    }

    int watchCount() {
        synchronized (lock) {
            return watches.size();
        }
    }

    private ApiException conflict(String name) {
        return ApiException.conflict("Operation cannot be fulfilled on " + type.plural() + " \"" + name + "\": " + CONFLICT_MESSAGE);
    }

    private StoredObject replace(StoredObject current, ObjectNode candidate, boolean status) {
        ObjectNode next;
        if (status) {
            if (!type.statusSubresource()) {
                throw ApiException.notFound(type.plural() + "/status");
            }
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
                String was = StoredObject.string(currentMetadata.get(immutable));
                String now = StoredObject.string(metadata.get(immutable));
                if (now != null && !now.equals(was)) {
                    throw ApiException.invalid(type.kind() + " \"" + current.name() + "\" is invalid: metadata." + immutable
                            + ": field is immutable");
                }
                if (was == null) {
                    metadata.remove(immutable);
                } else {
                    metadata.put(immutable, was);
                }
            }
            next.put("apiVersion", type.apiVersion()).put("kind", type.kind());
            if (type.statusSubresource()) {
                // The main resource does not change status (a real server ignores it there too).
                JsonNode currentStatus = current.json().get("status");
                if (currentStatus == null) {
                    next.remove("status");
                } else {
                    next.set("status", currentStatus.deepCopy());
                }
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
    private StoredObject commit(Action action, StoredObject previous, ObjectNode json) {
        long version = resourceVersion.incrementAndGet();
        ((ObjectNode) json.get("metadata")).put("resourceVersion", Long.toString(version));
        StoredObject object = StoredObject.of(type, json, mapper);
        long appliedAt = System.nanoTime();
        if (action != Action.DELETED) {
            byNamespace.computeIfAbsent(key(object.namespace()), ns -> new ConcurrentHashMap<>()).put(object.name(), object);
        }
        Change change = new Change(version, action, object, previous);
        history.addLast(change);
        if (history.size() > historyLimit) {
            compactedThrough = history.removeFirst().resourceVersion();
        }
        for (ObjectWatch watch : watches) {
            deliver(watch, change);
        }
        for (Listener listener : listeners) {
            try {
                listener.changed(action, object, appliedAt);
            } catch (RuntimeException e) {
                LOGGER.warn("change listener failed kind={} object={}/{} error=\"{}\"", type.kind(), object.namespace(), object.name(),
                        e.toString());
            }
        }
        return object;
    }

    /** As the API server's watch cache does: an object that starts or stops matching is ADDED or DELETED for that watch. */
    private void deliver(ObjectWatch watch, Change change) {
        boolean matchedBefore = change.previous() != null && watch.selector().matches(change.previous());
        boolean matchesNow = change.action() != Action.DELETED && watch.selector().matches(change.object());
        if (change.action() == Action.DELETED) {
            if (matchedBefore) {
                watch.send(event(Action.DELETED.name(), change.object()));
            }
        } else if (matchedBefore && matchesNow) {
            watch.send(event(Action.MODIFIED.name(), change.object()));
        } else if (matchesNow) {
            watch.send(event(Action.ADDED.name(), change.object()));
        } else if (matchedBefore) {
            watch.send(event(Action.DELETED.name(), change.previous().withResourceVersion(type, change.resourceVersion(), mapper)));
        }
    }

    private static String event(String type, StoredObject object) {
        // The object is already serialized; only the envelope is added (type is one of the Action names).
        return "{\"type\":\"" + type + "\",\"object\":" + object.text() + "}";
    }

    private String key(String namespace) {
        return type.namespaced() && namespace != null ? namespace : CLUSTER;
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
