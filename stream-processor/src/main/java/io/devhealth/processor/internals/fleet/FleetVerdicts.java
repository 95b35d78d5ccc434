package io.devhealth.processor.internals.fleet;

import io.devhealth.schema.avro.StatsDimension;
import io.devhealth.schema.avro.TerminatedContainer;
import io.devhealth.schema.avro.TerminatedDevice;
import io.devhealth.schema.avro.TerminatedPod;
import io.devhealth.schema.avro.Verdict;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * The fleet keys a terminated pod's verdict counts under: its node, and each distinct product of its
 * devices (a pod on two H100s counts once for H100), each as {@code DIMENSION:value|VERDICT}, with
 * {@link FleetDimensions}' spelling of dimension and value.
 */
public final class FleetVerdicts {

    private static final char SEPARATOR = '|';

    private FleetVerdicts() {}

    public static List<String> keys(TerminatedPod verdict) {
        Set<String> dimensions = new LinkedHashSet<>();
        dimensions.add(FleetDimensions.key(StatsDimension.NODE, verdict.getNode()));
        for (TerminatedContainer container : verdict.getContainers()) {
            for (TerminatedDevice device : container.getDevices()) {
                dimensions.add(FleetDimensions.key(StatsDimension.PRODUCT, device.getProduct()));
            }
        }
        List<String> keys = new ArrayList<>();
        for (String dimension : dimensions) {
            keys.add(dimension + SEPARATOR + verdict.getVerdict().name());
        }
        return keys;
    }

    /** The {@code DIMENSION:value} part of a key of {@link #keys}. */
    public static String dimensionKey(String key) {
        return key.substring(0, key.lastIndexOf(SEPARATOR));
    }

    /** The verdict of a key of {@link #keys}; {@link Verdict#UNKNOWN} for a symbol this version does not know. */
    public static Verdict verdict(String key) {
        try {
            return Verdict.valueOf(key.substring(key.lastIndexOf(SEPARATOR) + 1));
        } catch (IllegalArgumentException e) {
            return Verdict.UNKNOWN;
        }
    }
}
