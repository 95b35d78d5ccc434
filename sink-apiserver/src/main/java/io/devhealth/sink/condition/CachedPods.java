package io.devhealth.sink.condition;

import io.fabric8.kubernetes.api.model.Pod;

/**
 * Where {@link PodStatusWriter} looks for a pod before it reads it from the API server: {@link PodCache}
 * in the sink, a fixed copy in tests. A copy may be stale; the writer never decides from it alone
 * that nothing is to be written, and its patch carries the copy's resourceVersion as a {@code test}.
 */
public interface CachedPods {

    /** No cache: every write reads its pod. */
    CachedPods NONE = (namespace, name) -> null;

    /** The slim copy of the pod ({@link PodCache#slim}), or null when there is none or the cache has not synced yet. */
    Pod get(String namespace, String name);
}
