package io.devhealth.simulators.kube;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * One version of a stored object: its JSON tree (never changed after construction: writers copy it
 * first), the same serialized once (what GET, LIST and watches send), and the fields selectors look at.
 *
 * @param namespace null for a cluster-scoped object
 * @param fields the values of its kind's selectable fields ({@link ResourceType#fields()}), absent when unset
 */
record StoredObject(String namespace, String name, String uid, long resourceVersion, Map<String, String> labels,
                    Map<String, String> fields, ObjectNode json, String text) {

    static StoredObject of(ResourceType type, ObjectNode json, ObjectMapper mapper) {
        JsonNode metadata = json.path("metadata");
        Map<String, String> labels = new TreeMap<>();
        metadata.path("labels").properties().forEach(e -> labels.put(e.getKey(), string(e.getValue())));
        Map<String, String> fields = new HashMap<>();
        for (Map.Entry<String, List<String>> field : type.fields().entrySet()) {
            JsonNode value = json;
            for (String step : field.getValue()) {
                value = value.path(step);
            }
            if (string(value) != null) {
                fields.put(field.getKey(), string(value));
            }
        }
        String resourceVersion = string(metadata.path("resourceVersion"));
        return new StoredObject(string(metadata.path("namespace")), string(metadata.path("name")), string(metadata.path("uid")),
                resourceVersion == null ? 0 : Long.parseLong(resourceVersion), Map.copyOf(labels), Map.copyOf(fields), json,
                mapper.writeValueAsString(json));
    }

    /** The same content with another resourceVersion (a delete's final state, an object that left a watch's selector). */
    StoredObject withResourceVersion(ResourceType type, long version, ObjectMapper mapper) {
        ObjectNode copy = json.deepCopy();
        ((ObjectNode) copy.path("metadata")).put("resourceVersion", Long.toString(version));
        return of(type, copy, mapper);
    }

    static String string(JsonNode node) {
        return node != null && node.isString() ? node.stringValue() : null;
    }
}
