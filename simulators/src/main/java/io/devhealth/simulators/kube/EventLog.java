package io.devhealth.simulators.kube;

import java.time.Clock;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * Core v1 Events posted to a {@link FleetKubernetesApi}: every one is accepted and counted, and only the
 * most recent {@code capacity} are kept (a real cluster also expires Events, after an hour by default),
 * so a long benchmark does not keep every Event its sink wrote.
 */
final class EventLog {

    private final ArrayDeque<ObjectNode> recent = new ArrayDeque<>();
    private final int capacity;
    private final AtomicLong resourceVersion;
    private final Clock clock;
    private long accepted;

    EventLog(int capacity, AtomicLong resourceVersion, Clock clock) {
        this.capacity = capacity;
        this.resourceVersion = resourceVersion;
        this.clock = clock;
    }

    synchronized ObjectNode create(String namespace, ObjectNode event) {
        if (event.has("kind") && !"Event".equals(StoredObject.string(event.get("kind")))) {
            throw ApiException.badRequest("expected kind Event, got " + event.get("kind"));
        }
        ObjectNode metadata = event.has("metadata") && event.get("metadata").isObject() ? (ObjectNode) event.get("metadata") : event.putObject("metadata");
        String name = StoredObject.string(metadata.get("name"));
        String generateName = StoredObject.string(metadata.get("generateName"));
        if ((name == null || name.isEmpty()) && generateName != null && !generateName.isEmpty()) {
            name = generateName + ObjectStore.randomSuffix();
        }
        if (name == null || name.isEmpty()) {
            throw ApiException.invalid("Event is invalid: metadata.name: Required value: name or generateName is required");
        }
        event.put("apiVersion", "v1").put("kind", "Event");
        metadata.put("name", name).put("namespace", namespace).put("uid", UUID.randomUUID().toString())
                .put("resourceVersion", Long.toString(resourceVersion.incrementAndGet()))
                .put("creationTimestamp", DateTimeFormatter.ISO_INSTANT.format(clock.instant().truncatedTo(ChronoUnit.SECONDS)));
        accepted++;
        recent.addLast(event);
        if (recent.size() > capacity) {
            recent.removeFirst();
        }
        return event;
    }

    /** @param namespace a namespace, or null for all; oldest first */
    synchronized List<ObjectNode> recent(String namespace) {
        return recent(namespace, null);
    }

    /**
     * Event fields a field selector may name, each with how it is read from an Event: the API server's
     * {@code ToSelectableFields} in {@code pkg/registry/core/event/strategy.go}, where {@code source} is
     * {@code source.component}, or {@code reportingComponent} where the Event has no source component.
     */
    private static final Map<String, Function<JsonNode, String>> FIELDS = Map.ofEntries(
            field("metadata.name", "metadata", "name"),
            field("metadata.namespace", "metadata", "namespace"),
            field("involvedObject.kind", "involvedObject", "kind"),
            field("involvedObject.namespace", "involvedObject", "namespace"),
            field("involvedObject.name", "involvedObject", "name"),
            field("involvedObject.uid", "involvedObject", "uid"),
            field("involvedObject.apiVersion", "involvedObject", "apiVersion"),
            field("involvedObject.resourceVersion", "involvedObject", "resourceVersion"),
            field("involvedObject.fieldPath", "involvedObject", "fieldPath"),
            field("reason", "reason"),
            field("reportingComponent", "reportingComponent"),
            Map.entry("source", event -> {
                String component = text(event, "source", "component");
                return component.isEmpty() ? text(event, "reportingComponent") : component;
            }),
            field("type", "type"));

    private static Map.Entry<String, Function<JsonNode, String>> field(String name, String... path) {
        return Map.entry(name, event -> text(event, path));
    }

    /** The string at {@code path}; {@code ""} where it is unset, as a Go struct's zero value reads. */
    private static String text(JsonNode event, String... path) {
        JsonNode value = event;
        for (String step : path) {
            value = value.path(step);
        }
        String text = StoredObject.string(value);
        return text == null ? "" : text;
    }

    /**
     * The recent events of {@code namespace} (null: all) that match {@code fieldSelector}: equality terms
     * ({@code k=v}, {@code k==v}, {@code k!=v}) joined by commas, as {@code kubectl describe} sends
     * ({@code involvedObject.name=…,involvedObject.namespace=…,involvedObject.uid=…}); oldest first.
     *
     * @throws ApiException 400 for a field Events do not have
     */
    synchronized List<ObjectNode> recent(String namespace, String fieldSelector) {
        List<String[]> terms = new ArrayList<>();
        if (fieldSelector != null && !fieldSelector.isBlank()) {
            for (String term : fieldSelector.split(",")) {
                boolean negated = term.contains("!=");
                String[] kv = term.split(negated ? "!=" : "==?", 2);
                if (kv.length != 2 || !FIELDS.containsKey(kv[0].strip())) {
                    throw ApiException.badRequest("field label not supported: " + kv[0].strip());
                }
                terms.add(new String[] {kv[0].strip(), kv[1].strip(), negated ? "!" : ""});
            }
        }
        List<ObjectNode> events = new ArrayList<>();
        for (ObjectNode event : recent) {
            if (namespace != null && !namespace.equals(StoredObject.string(event.path("metadata").path("namespace")))) {
                continue;
            }
            boolean matches = true;
            for (String[] term : terms) {
                matches &= term[1].equals(FIELDS.get(term[0]).apply(event)) != "!".equals(term[2]);
            }
            if (matches) {
                events.add(event);
            }
        }
        return events;
    }

    synchronized ObjectNode get(String namespace, String name) {
        for (ObjectNode event : recent) {
            if (namespace.equals(StoredObject.string(event.path("metadata").path("namespace")))
                    && name.equals(StoredObject.string(event.path("metadata").path("name")))) {
                return event;
            }
        }
        throw ApiException.notFound("events \"" + name + "\"");
    }

    synchronized long accepted() {
        return accepted;
    }
}
