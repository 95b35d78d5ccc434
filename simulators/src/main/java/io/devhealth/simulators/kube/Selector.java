package io.devhealth.simulators.kube;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;

/**
 * Which objects a LIST or WATCH asks for: a namespace (or all), a field selector on {@code metadata.name},
 * {@code metadata.namespace} and the kind's own fields ({@link ResourceType#fields()}: for pods
 * {@code status.phase} and {@code spec.nodeName}) with {@code =}, {@code ==}, {@code !=}, and an
 * equality-based label selector ({@code k=v}, {@code k==v}, {@code k!=v}, {@code k}, {@code !k}).
 * Anything else is refused with 400, as a real API server refuses unknown field labels; set-based label
 * selectors ({@code in}, {@code notin}) are not supported.
 */
record Selector(String namespace, List<Requirement> fields, List<Requirement> labels) {

    private static final Map<String, Function<StoredObject, String>> METADATA_FIELDS = Map.of(
            "metadata.name", StoredObject::name,
            "metadata.namespace", StoredObject::namespace);

    /** {@code key op value}; for labels, value null means "exists" ({@code equal}) or "does not exist" ({@code !equal}). */
    record Requirement(String key, boolean equal, String value) {
    }

    static Selector parse(ResourceType type, String namespace, String fieldSelector, String labelSelector) {
        List<Requirement> fields = requirements(fieldSelector, false);
        for (Requirement field : fields) {
            if (!METADATA_FIELDS.containsKey(field.key()) && !type.fields().containsKey(field.key())) {
                throw ApiException.badRequest("field label not supported: " + field.key());
            }
        }
        return new Selector(namespace, fields, requirements(labelSelector, true));
    }

    boolean matches(StoredObject object) {
        if (namespace != null && !namespace.equals(object.namespace())) {
            return false;
        }
        for (Requirement field : fields) {
            Function<StoredObject, String> metadata = METADATA_FIELDS.get(field.key());
            String value = metadata != null ? metadata.apply(object) : object.fields().get(field.key());
            // A missing field compares as "", as the API server's field sets do.
            String actual = Objects.requireNonNullElse(value, "");
            if (actual.equals(field.value()) != field.equal()) {
                return false;
            }
        }
        for (Requirement label : labels) {
            String actual = object.labels().get(label.key());
            boolean holds = label.value() == null ? actual != null : label.value().equals(actual);
            if (holds != label.equal()) {
                return false;
            }
        }
        return true;
    }

    private static List<Requirement> requirements(String selector, boolean labels) {
        List<Requirement> requirements = new ArrayList<>();
        if (selector == null || selector.isBlank()) {
            return requirements;
        }
        for (String raw : selector.split(",")) {
            String term = raw.trim();
            int ne = term.indexOf("!=");
            int eq = term.indexOf('=');
            if (ne > 0) {
                requirements.add(new Requirement(term.substring(0, ne).trim(), false, term.substring(ne + 2).trim()));
            } else if (eq > 0) {
                int valueStart = term.startsWith("==", eq) ? eq + 2 : eq + 1;
                requirements.add(new Requirement(term.substring(0, eq).trim(), true, term.substring(valueStart).trim()));
            } else if (labels && !term.isEmpty() && !term.contains(" ") && !term.contains("(")) {
                boolean absent = term.startsWith("!");
                requirements.add(new Requirement(absent ? term.substring(1) : term, !absent, null));
            } else {
                throw ApiException.badRequest("unsupported " + (labels ? "label" : "field") + " selector term: " + term);
            }
        }
        return requirements;
    }
}
