package io.devhealth.processor.internals;

import com.google.protobuf.InvalidProtocolBufferException;
import java.util.ArrayList;
import java.util.List;

/**
 * How a node value names its refreshes' devices and sources small ({@code PendingRefreshValue} in
 * {@code processor_state.proto}). A node's device-state keys share their node, driver and pool
 * ({@code node/driver/pool/gpu-3}; with the NVIDIA driver the pool is the node again), so each key is
 * written as the number of leading characters it shares with the previous refresh's key and the rest;
 * and a node's devices are refreshed by the same one or two sources, so each source key is written once
 * per value and named by its index. With the times written relative to the node's, a node value of 8 GPUs
 * named as cloud nodes are (ip-10-0-12-34.ec2.internal) takes 272 bytes, where whole keys and times took 975.
 *
 * <p>One instance writes one node value; the static methods read one back.
 */
final class RefreshKeys {

    private final List<String> sources = new ArrayList<>(2);
    private String previous = "";

    /**
     * The leading characters {@code device} shares with the previous key given here (none for the first),
     * never ending between the two halves of a surrogate pair (the rest is written as UTF-8 on its own).
     */
    int shared(String device) {
        int limit = Math.min(previous.length(), device.length());
        int shared = 0;
        while (shared < limit && previous.charAt(shared) == device.charAt(shared)) {
            shared++;
        }
        if (shared > 0 && Character.isHighSurrogate(device.charAt(shared - 1))) {
            shared--;
        }
        previous = device;
        return shared;
    }

    /** The index of source key {@code source}, numbered in the order of first use. */
    int source(String source) {
        int index = sources.indexOf(source); // one or two sources per node: a scan beats a map
        if (index < 0) {
            sources.add(source);
            index = sources.size() - 1;
        }
        return index;
    }

    /** The source keys numbered so far, by index. */
    List<String> sources() {
        return sources;
    }

    /** The device key written as {@code shared} characters of {@code previous} and {@code suffix}. */
    static String device(String previous, int shared, String suffix) throws InvalidProtocolBufferException {
        if (shared < 0 || shared > previous.length()) {
            throw new InvalidProtocolBufferException("a refresh shares " + Integer.toUnsignedString(shared)
                    + " characters of the previous device key, which has " + previous.length());
        }
        return shared == 0 ? suffix : previous.substring(0, shared) + suffix;
    }

    /** Source key number {@code index} of {@code sources}. */
    static String source(List<String> sources, int index) throws InvalidProtocolBufferException {
        if (index < 0 || index >= sources.size()) {
            throw new InvalidProtocolBufferException("a refresh names source " + Integer.toUnsignedString(index) + " of "
                    + sources.size());
        }
        return sources.get(index);
    }
}
