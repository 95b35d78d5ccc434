package io.devhealth.simulators.kube;

import java.util.Map;
import java.util.TreeMap;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * One version of a stored pod: its JSON tree (never changed after construction: writers copy it first),
 * the same serialized once (what GET, LIST and watches send), and the fields selectors look at.
 */
record StoredPod(String namespace, String name, String uid, long resourceVersion, String phase, String nodeName,
                 Map<String, String> labels, ObjectNode json, String text) {

    static StoredPod of(ObjectNode json, ObjectMapper mapper) {
        JsonNode metadata = json.path("metadata");
        Map<String, String> labels = new TreeMap<>();
        metadata.path("labels").properties().forEach(e -> labels.put(e.getKey(), string(e.getValue())));
        String resourceVersion = string(metadata.path("resourceVersion"));
        return new StoredPod(string(metadata.path("namespace")), string(metadata.path("name")), string(metadata.path("uid")),
                resourceVersion == null ? 0 : Long.parseLong(resourceVersion), string(json.path("status").path("phase")),
                string(json.path("spec").path("nodeName")), Map.copyOf(labels), json, mapper.writeValueAsString(json));
    }

    /** The same content with another resourceVersion (a delete's final state, a pod that left a watch's selector). */
    StoredPod withResourceVersion(long version, ObjectMapper mapper) {
        ObjectNode copy = json.deepCopy();
        ((ObjectNode) copy.path("metadata")).put("resourceVersion", Long.toString(version));
        return of(copy, mapper);
    }

    static String string(JsonNode node) {
        return node != null && node.isString() ? node.stringValue() : null;
    }
}
