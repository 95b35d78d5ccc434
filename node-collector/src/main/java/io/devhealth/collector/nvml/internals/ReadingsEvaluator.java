package io.devhealth.collector.nvml.internals;

import io.devhealth.collector.nvml.HealthPolicy;
import io.devhealth.collector.nvml.HealthPolicy.ClockReason;
import io.devhealth.collector.nvml.HealthPolicy.ReadingRule;
import io.devhealth.collector.nvml.HealthPolicy.RecoveryAction;
import io.devhealth.collector.nvml.HealthPolicy.Rule;
import io.devhealth.schema.avro.HealthStatus;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/** Applies the policy's reading rules to one poll of one GPU. Stateless except for the links seen active, which the caller keeps. */
final class ReadingsEvaluator {

    private final HealthPolicy policy;

    ReadingsEvaluator(HealthPolicy policy) {
        this.policy = policy;
    }

    /**
     * The findings {@code readings} give; {@code linksSeenActive} is updated with the links active now.
     * {@code xidsWatched}: the GPU's XID events reach the collector, so the XIDs judge what they report.
     */
    List<FindingSpec> evaluate(Readings readings, Set<Integer> linksSeenActive, boolean xidsWatched) {
        HealthPolicy.Readings rules = policy.readings();
        List<FindingSpec> findings = new ArrayList<>();
        if (readings.remappedRows() != null) {
            if (readings.remappedRows().failureOccurred()) {
                add(findings, "REMAPPED-ROWS-FAILURE", rules.remappedRowsFailure(), rules.remappedRowsFailure().description());
            }
            if (readings.remappedRows().pending()) {
                add(findings, "REMAPPED-ROWS-PENDING", rules.remappedRowsPending(), rules.remappedRowsPending().description());
            }
        }
        if (Boolean.TRUE.equals(readings.retiredPagesPending())) {
            add(findings, "RETIRED-PAGES-PENDING", rules.retiredPagesPending(), rules.retiredPagesPending().description());
        }
        ReadingRule ecc = rules.volatileUncorrectedEcc();
        long eccThreshold = ecc.threshold() == null ? 1 : Math.max(1, ecc.threshold());
        if (readings.volatileUncorrectedEcc() != null && readings.volatileUncorrectedEcc() >= eccThreshold) {
            // The counter also counts errors the GPU contained to one application (XID 94, "restart the
            // application"). Where XIDs are watched, each error's XID carries the verdict (48 and 95 are
            // sticky Unhealthy, 94 is not), so the counter only informs; where they are not, it is the only signal.
            boolean byXid = xidsWatched && ecc.actionWhenXidsWatched() != null;
            String text = readings.volatileUncorrectedEcc() + " " + ecc.description() + (byXid ? "; each is judged by its XID" : "");
            add(findings, "ECC-UNCORRECTED", byXid ? ecc.actionWhenXidsWatched() : ecc.action(), text);
        }
        temperature(readings, rules.temperature(), findings);
        nvLinks(readings, rules.nvlinkDown(), linksSeenActive, findings);
        clocks(readings, rules.clocksEvent(), findings);
        power(readings, rules.power(), findings);
        recoveryAction(readings, rules.recoveryAction(), findings);
        if (!readings.errors().isEmpty()) {
            Rule rule = policy.conditions().nvmlError();
            HealthStatus health = FindingSpec.health(rule.action());
            if (health != null) {
                findings.add(new FindingSpec("NVML-ERROR", health, rule.description() + ": " + String.join("; ", readings.errors())));
            }
        }
        return findings;
    }

    private static void temperature(Readings readings, ReadingRule rule, List<FindingSpec> findings) {
        if (readings.temperatureC() == null || readings.slowdownC() == null || readings.slowdownC() <= 0) {
            return;
        }
        int margin = rule.marginCelsius() == null ? 0 : rule.marginCelsius();
        int temperature = readings.temperatureC();
        int slowdown = readings.slowdownC();
        if (temperature >= slowdown - margin) {
            String text = temperature >= slowdown || margin == 0
                    ? String.format(Locale.ROOT, "temperature %d °C at or above slowdown %d °C", temperature, slowdown)
                    : String.format(Locale.ROOT, "temperature %d °C within %d °C of slowdown %d °C", temperature, margin, slowdown);
            add(findings, "TEMPERATURE", rule, text);
        }
    }

    private static void nvLinks(Readings readings, ReadingRule rule, Set<Integer> seenActive, List<FindingSpec> findings) {
        boolean onlySeen = rule.onlyLinksSeenActive() == null || rule.onlyLinksSeenActive();
        List<Integer> down = new ArrayList<>();
        for (Map.Entry<Integer, Boolean> link : readings.nvLinks().entrySet()) {
            if (link.getValue()) {
                seenActive.add(link.getKey());
            } else if (!onlySeen || seenActive.contains(link.getKey())) {
                down.add(link.getKey());
            }
        }
        if (!down.isEmpty()) {
            add(findings, "NVLINK-DOWN", rule, (down.size() == 1 ? "NVLink link " : "NVLink links ")
                    + down.stream().map(String::valueOf).collect(Collectors.joining(", ")) + " down");
        }
    }

    private static void clocks(Readings readings, ReadingRule rule, List<FindingSpec> findings) {
        if (readings.clocksEventReasons() == null) {
            return;
        }
        List<String> active = new ArrayList<>();
        for (ClockReason reason : rule.reasons()) {
            if ((readings.clocksEventReasons() & reason.bit()) != 0) {
                active.add(reason.text());
            }
        }
        if (!active.isEmpty()) {
            add(findings, "CLOCKS-EVENT", rule, rule.description() + ": " + String.join(", ", active));
        }
    }

    private static void power(Readings readings, ReadingRule rule, List<FindingSpec> findings) {
        if (readings.powerMw() == null || readings.powerLimitMw() == null || readings.powerLimitMw() <= 0) {
            return;
        }
        double ratio = rule.ratioOfLimit() == null ? 1.0 : rule.ratioOfLimit();
        if (readings.powerMw() >= ratio * readings.powerLimitMw()) {
            int watts = readings.powerMw() / 1000;
            int limit = readings.powerLimitMw() / 1000;
            add(findings, "POWER", rule, ratio == 1.0
                    ? String.format(Locale.ROOT, "power %d W at or above the %d W limit", watts, limit)
                    : String.format(Locale.ROOT, "power %d W at or above %d%% of the %d W limit", watts, Math.round(ratio * 100), limit));
        }
    }

    private static void recoveryAction(Readings readings, Map<RecoveryAction, Rule> rules, List<FindingSpec> findings) {
        if (readings.recoveryAction() == null || readings.recoveryAction() == 0) {
            return;
        }
        RecoveryAction action = RecoveryAction.of(readings.recoveryAction());
        Rule rule = action == null ? null : rules.get(action);
        if (rule == null) {
            findings.add(new FindingSpec("RECOVERY-ACTION", HealthStatus.UNKNOWN,
                    "NVML recovery action " + readings.recoveryAction() + " (not known to this policy)"));
            return;
        }
        HealthStatus health = FindingSpec.health(rule.action());
        if (health != null) {
            findings.add(new FindingSpec("RECOVERY-ACTION", health, rule.description()));
        }
    }

    private static void add(List<FindingSpec> findings, String reason, ReadingRule rule, String text) {
        add(findings, reason, rule.action(), text);
    }

    private static void add(List<FindingSpec> findings, String reason, HealthPolicy.Action action, String text) {
        HealthStatus health = FindingSpec.health(action);
        if (health != null) {
            findings.add(new FindingSpec(reason, health, text));
        }
    }

    private static void add(List<FindingSpec> findings, String reason, Rule rule, String text) {
        HealthStatus health = FindingSpec.health(rule.action());
        if (health != null) {
            findings.add(new FindingSpec(reason, health, text));
        }
    }
}
