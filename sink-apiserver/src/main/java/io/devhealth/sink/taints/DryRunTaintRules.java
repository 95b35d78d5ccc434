package io.devhealth.sink.taints;

import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Dry-run: the rules the sink would have, kept in this instance's memory and never written. It still
 * reads what a decision reads (the device's slice, the node count), so that the log says what the real
 * mode would do on this cluster. Caps and the breaker count only this instance's would-be rules.
 */
final class DryRunTaintRules implements TaintRuleStore {

    private static final Logger LOGGER = LoggerFactory.getLogger(DryRunTaintRules.class);

    private final TaintRuleStore reads;
    private final Map<TaintedDevice, Rule> rules = new LinkedHashMap<>();

    /** @param reads answers {@link #taintedBySlice} and {@link #nodeCount}; its writes are never called */
    DryRunTaintRules(TaintRuleStore reads) {
        this.reads = reads;
    }

    @Override
    public synchronized List<Rule> list() {
        return new ArrayList<>(rules.values());
    }

    @Override
    public synchronized Rule create(TaintedDevice device, Instant now, String reason) {
        LOGGER.info("dry run: would create devicetaintrule rule={} device={} reason=\"{}\"", device.ruleName(), device, reason);
        return rules.computeIfAbsent(device, d -> new Rule(d, now));
    }

    @Override
    public synchronized void delete(TaintedDevice device) {
        LOGGER.info("dry run: would delete devicetaintrule rule={} device={}", device.ruleName(), device);
        rules.remove(device);
    }

    @Override
    public boolean taintedBySlice(TaintedDevice device) {
        return reads.taintedBySlice(device);
    }

    @Override
    public int nodeCount() {
        return reads.nodeCount();
    }

    @Override
    public boolean writes() {
        return false;
    }
}
