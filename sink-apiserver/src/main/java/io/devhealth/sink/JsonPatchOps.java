package io.devhealth.sink;

import java.util.LinkedHashMap;
import java.util.Map;

/** One RFC 6902 JSON Patch operation as a map, for fabric8 to serialise; shared by the sink's writers. */
public final class JsonPatchOps {

    private JsonPatchOps() {}

    public static Map<String, Object> op(String op, String path, Object value) {
        Map<String, Object> operation = new LinkedHashMap<>();
        operation.put("op", op);
        operation.put("path", path);
        operation.put("value", value);
        return operation;
    }
}
