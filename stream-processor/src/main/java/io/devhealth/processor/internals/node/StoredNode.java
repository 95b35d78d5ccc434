package io.devhealth.processor.internals.node;

import io.devhealth.processor.internals.rules.DeviceState;
import io.devhealth.processor.internals.rules.NodeState;
import io.devhealth.processor.internals.rules.PendingRefresh;
import java.util.Map;

/**
 * The value of the {@code node-state} store: the node's state and the pending refreshes of its
 * devices, as of the last commit ({@link NodeStore} writes it).
 *
 * @param refreshes by device-state key
 */
public record StoredNode(NodeState state, Map<String, PendingRefresh> refreshes) {

    public StoredNode {
        refreshes = refreshes == null ? Map.of() : Map.copyOf(refreshes);
    }

    /**
     * Device {@code key} of this node as it is: {@code written}, its value in the {@code device-state}
     * store, with the keep-alives kept here applied. The one place that says how a device is read from
     * the stores: at restore, and by interactive queries.
     */
    public DeviceState device(String key, DeviceState written) {
        PendingRefresh refresh = written == null ? null : refreshes.get(key);
        return refresh == null ? written : written.withRefresh(refresh);
    }
}
