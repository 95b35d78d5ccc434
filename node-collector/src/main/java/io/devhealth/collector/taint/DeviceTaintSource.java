package io.devhealth.collector.taint;

import io.devhealth.collector.dra.ObservedDevice;
import io.devhealth.collector.dra.SnapshotDiff;
import io.devhealth.collector.inventory.ResourceSliceInventory;
import io.devhealth.collector.inventory.ResourceSliceMapper;
import io.devhealth.collector.inventory.ResourceSliceMapper.SliceDevice;
import io.devhealth.collector.publish.ReportPublisher;
import io.devhealth.schema.OwnTaintRules;
import io.devhealth.schema.avro.DeviceHealthReport;
import io.devhealth.schema.avro.SourceKind;
import io.devhealth.collector.taint.TaintPolicy.Taint;
import io.devhealth.collector.taint.TaintPolicy.Verdict;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceTaint;
import io.fabric8.kubernetes.api.model.resource.v1beta2.DeviceTaintRule;
import io.fabric8.kubernetes.api.model.resource.v1beta2.DeviceTaintSelector;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Device taints (KEP-5055) as a health source: NVIDIA's DRA driver reports a GPU's health only as
 * taints on its ResourceSlice devices, and an administrator may taint devices with a DeviceTaintRule.
 * For every device of the node's slices this source reports, as source {@code TAINT} named after the
 * device's driver, the health its taints have by the {@link TaintPolicy}: a new or changed taint is a
 * CHANGE, a removed one a recovery (Healthy), a device gone from the slices ABSENT.
 *
 * <p>Taints are state, not a stream, so the source re-states every device at a keep-alive interval
 * ({@code timeout / 3}) and announces {@code timeout} with each report: the processor's silence rule
 * applies to it as to any other source, and a collector that stops watching turns its taint view
 * Unknown instead of keeping a stale one.
 *
 * <p>The node's slices come from the inventory's watch; DeviceTaintRules from a watch of their own
 * (cluster-wide: a rule may select devices of any node; there are few). DeviceTaintRule is read in
 * {@code resource.k8s.io/v1beta2}, the version 1.36 serves (behind {@code DRADeviceTaintRules}); a
 * cluster that serves none makes that watch fail and retry, and slice taints are reported regardless.
 */
public final class DeviceTaintSource implements AutoCloseable {

    private static final Logger LOGGER = LoggerFactory.getLogger(DeviceTaintSource.class);
    private static final Duration COALESCE = Duration.ofMillis(250);

    private final KubernetesClient client;
    private final String cluster;
    private final String node;
    private final ResourceSliceInventory slices;
    private final TaintPolicy policy;
    private final ReportPublisher publisher;
    private final Clock clock;
    private final ScheduledExecutorService scheduler;
    private final Duration timeout;
    private final Map<String, SnapshotDiff> diffs = new HashMap<>();
    private final AtomicBoolean queued = new AtomicBoolean();
    private SharedIndexInformer<DeviceTaintRule> rules;

    /**
     * @param timeout announced with every report; the source re-states each device every third of it.
     *     The heartbeat does not list this source: its keep-alives are its liveness.
     */
    public DeviceTaintSource(KubernetesClient client, String cluster, String node, ResourceSliceInventory slices, TaintPolicy policy,
                             ReportPublisher publisher, Clock clock,
                             ScheduledExecutorService scheduler, Duration timeout) {
        this.client = client;
        this.cluster = cluster;
        this.node = node;
        this.slices = slices;
        this.policy = policy;
        this.publisher = publisher;
        this.clock = clock;
        this.scheduler = scheduler;
        this.timeout = timeout;
    }

    public void start() {
        slices.onSlicesChanged(this::changed);
        rules = client.resources(DeviceTaintRule.class).runnableInformer(0);
        rules.addEventHandler(new ResourceEventHandler<>() {
            @Override
            public void onAdd(DeviceTaintRule rule) {
                changed();
            }

            @Override
            public void onUpdate(DeviceTaintRule before, DeviceTaintRule after) {
                changed();
            }

            @Override
            public void onDelete(DeviceTaintRule rule, boolean finalStateUnknown) {
                changed();
            }
        });
        rules.exceptionHandler((started, error) -> {
            LOGGER.warn("devicetaintrule watch failed node={} started={} error=\"{}\"", node, started, error.toString());
            return true;
        });
        rules.start();
        long keepAlive = Math.max(1, timeout.toMillis() / 3);
        scheduler.scheduleWithFixedDelay(this::reportSafely, keepAlive, keepAlive, TimeUnit.MILLISECONDS);
    }

    private void changed() {
        if (queued.compareAndSet(false, true)) {
            scheduler.schedule(this::reportSafely, COALESCE.toMillis(), TimeUnit.MILLISECONDS);
        }
    }

    private void reportSafely() {
        queued.set(false);
        try {
            report();
        } catch (RuntimeException e) {
            LOGGER.error("taint report failed node={} error=\"{}\"", node, e.toString(), e);
        }
    }

    private synchronized void report() {
        List<SliceDevice> devices = ResourceSliceMapper.currentDevices(node, slices.slices());
        if (devices.isEmpty() && diffs.isEmpty()) {
            return; // not listed yet, or a node without devices
        }
        List<DeviceTaintRule> activeRules = rules == null ? List.of() : rules.getStore().list();
        Map<String, List<ObservedDevice>> byDriver = new LinkedHashMap<>();
        diffs.keySet().forEach(driver -> byDriver.put(driver, new ArrayList<>()));
        for (SliceDevice device : devices) {
            Verdict verdict = policy.judge(taintsOf(device, activeRules));
            byDriver.computeIfAbsent(device.driver(), d -> new ArrayList<>()).add(new ObservedDevice(device.pool(),
                    device.device().getName(), verdict.health(), verdict.message(), timeout.toSeconds()));
        }
        byDriver.forEach((driver, observed) -> {
            SnapshotDiff diff = diffs.computeIfAbsent(driver, d -> new SnapshotDiff(cluster, node, d, SourceKind.TAINT, timeout, clock));
            for (DeviceHealthReport report : diff.apply(observed)) {
                publisher.publish(report);
                if (report.getKind() != io.devhealth.schema.avro.ReportKind.KEEPALIVE) {
                    LOGGER.info("device taints node={} driver={} pool={} device={} health={} kind={} message=\"{}\"", node, driver,
                            report.getDevice().getPool(), report.getDevice().getDevice(), report.getHealth(), report.getKind(),
                            report.getMessage());
                }
            }
        });
    }

    /**
     * The device's own taints and those of every rule that selects it, except the rules devhealth's sink
     * created ({@link OwnTaintRules}): they restate what devhealth already concluded about the device.
     */
    static List<Taint> taintsOf(SliceDevice device, List<DeviceTaintRule> rules) {
        List<Taint> taints = new ArrayList<>();
        if (device.device().getTaints() != null) {
            for (DeviceTaint taint : device.device().getTaints()) {
                taints.add(new Taint(taint.getKey(), taint.getValue(), taint.getEffect()));
            }
        }
        for (DeviceTaintRule rule : rules) {
            if (rule.getMetadata() != null && OwnTaintRules.isOwn(rule.getMetadata().getLabels())) {
                continue;
            }
            if (rule.getSpec() != null && rule.getSpec().getTaint() != null && selects(rule.getSpec().getDeviceSelector(), device)) {
                var taint = rule.getSpec().getTaint();
                taints.add(new Taint(taint.getKey(), taint.getValue(), taint.getEffect()));
            }
        }
        return taints;
    }

    /** A selector's unset fields match any device, as the API server's rule evaluation does. */
    static boolean selects(DeviceTaintSelector selector, SliceDevice device) {
        if (selector == null) {
            return true;
        }
        return (selector.getDriver() == null || selector.getDriver().equals(device.driver()))
                && (selector.getPool() == null || selector.getPool().equals(device.pool()))
                && (selector.getDevice() == null || selector.getDevice().equals(device.device().getName()));
    }

    @Override
    public void close() {
        if (rules != null) {
            rules.close();
        }
    }
}
