package io.devhealth.collector.publish;

import java.util.Arrays;
import java.util.List;

/**
 * Which topics {@link KafkaSpoolSender} writes (setting {@code publish.layout};
 * docs/proposals/one-node-stream.md).
 */
public enum PublishLayout {

    /** Every record as a {@code NodeEvent} on {@code node-events}, in spool order: the current layout. */
    NODE_EVENTS("node-events"),
    /**
     * The earlier layout: reports and heartbeats to device-reports, allocation snapshots to
     * node-allocations, inventories to device-inventory. Kept for the upgrade window only: processors
     * that read node-events must be rolled out before collectors stop writing these.
     */
    THREE_TOPICS("three-topics");

    private final String configValue;

    PublishLayout(String configValue) {
        this.configValue = configValue;
    }

    /** The value of {@code publish.layout} that selects this layout. */
    public String configValue() {
        return configValue;
    }

    /** Every accepted value of {@code publish.layout}. */
    public static List<String> configValues() {
        return Arrays.stream(values()).map(PublishLayout::configValue).toList();
    }

    /** @throws IllegalArgumentException for a value that names no layout */
    public static PublishLayout fromConfigValue(String value) {
        for (PublishLayout layout : values()) {
            if (layout.configValue.equals(value)) {
                return layout;
            }
        }
        throw new IllegalArgumentException("unknown publish layout '" + value + "', expected one of " + configValues());
    }
}
