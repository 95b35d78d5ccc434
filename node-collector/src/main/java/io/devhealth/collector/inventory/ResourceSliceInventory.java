package io.devhealth.collector.inventory;

import io.devhealth.collector.publish.ReportPublisher;
import io.devhealth.schema.avro.InventoryDevice;
import io.devhealth.schema.avro.NodeDevices;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Watches this node's ResourceSlices (an informer with field selector {@code spec.nodeName=<node>})
 * and publishes the node's {@link NodeDevices} (on node-events) when it changes, and again every
 * resend interval. Bursts of slice events (a driver publishing many slices at start) are coalesced
 * into one publication.
 */
public final class ResourceSliceInventory implements AutoCloseable {

    private static final Logger LOGGER = LoggerFactory.getLogger(ResourceSliceInventory.class);
    private static final Duration COALESCE = Duration.ofMillis(250);

    private final KubernetesClient client;
    private final String cluster;
    private final String node;
    private final ReportPublisher publisher;
    private final Clock clock;
    private final ScheduledExecutorService scheduler;
    private final Duration resendInterval;
    private final boolean serverSideFilter;
    private final AtomicBoolean publishQueued = new AtomicBoolean();
    private final List<Runnable> listeners = new java.util.concurrent.CopyOnWriteArrayList<>();
    private SharedIndexInformer<ResourceSlice> informer;
    private List<InventoryDevice> lastPublished;
    private Instant lastPublishedAt = Instant.MIN;

    public ResourceSliceInventory(KubernetesClient client, String cluster, String node, ReportPublisher publisher, Clock clock,
                                  ScheduledExecutorService scheduler, Duration resendInterval) {
        this(client, cluster, node, publisher, clock, scheduler, resendInterval, true);
    }

    /**
     * @param serverSideFilter false only against fabric8's mock API server, which cannot evaluate a
     *     field selector on {@code spec.nodeName} (it returns nothing); the slices are then filtered here only
     */
    ResourceSliceInventory(KubernetesClient client, String cluster, String node, ReportPublisher publisher, Clock clock,
                           ScheduledExecutorService scheduler, Duration resendInterval, boolean serverSideFilter) {
        this.serverSideFilter = serverSideFilter;
        this.client = client;
        this.cluster = cluster;
        this.node = node;
        this.publisher = publisher;
        this.clock = clock;
        this.scheduler = scheduler;
        this.resendInterval = resendInterval;
    }

    public void start() {
        // The field selector keeps 10k collectors from each watching every slice of the cluster.
        informer = serverSideFilter
                ? client.resources(ResourceSlice.class).withField("spec.nodeName", node).runnableInformer(0)
                : client.resources(ResourceSlice.class).runnableInformer(0);
        informer.addEventHandler(new ResourceEventHandler<>() {
            @Override
            public void onAdd(ResourceSlice slice) {
                changed();
            }

            @Override
            public void onUpdate(ResourceSlice before, ResourceSlice after) {
                changed();
            }

            @Override
            public void onDelete(ResourceSlice slice, boolean finalStateUnknown) {
                changed();
            }
        });
        informer.exceptionHandler((started, error) -> {
            LOGGER.warn("resourceslice watch failed node={} started={} error=\"{}\"", node, started, error.toString());
            return true; // keep retrying: the API server may come back
        });
        informer.start().whenComplete((ignored, error) -> {
            if (error == null) {
                LOGGER.info("resourceslice inventory synced node={}", node);
                changed(); // an empty inventory is news too
            }
        });
        long ms = resendInterval.toMillis();
        scheduler.scheduleWithFixedDelay(this::publishSafely, ms, ms, TimeUnit.MILLISECONDS);
    }

    /**
     * Calls {@code listener} (on the scheduler) after the node's slices changed, coalesced as the
     * inventory's own publication is: the device-taint source reads the same watch instead of a
     * second one per node.
     */
    public void onSlicesChanged(Runnable listener) {
        listeners.add(listener);
    }

    /** The node's slices as last listed or watched; empty before the first list. */
    public List<ResourceSlice> slices() {
        return informer == null || !informer.hasSynced() ? List.of() : informer.getStore().list();
    }

    /** Whether the informer has listed the slices once. */
    public boolean synced() {
        return informer != null && informer.hasSynced();
    }

    private void changed() {
        if (publishQueued.compareAndSet(false, true)) {
            scheduler.schedule(this::publishSafely, COALESCE.toMillis(), TimeUnit.MILLISECONDS);
        }
    }

    private void publishSafely() {
        boolean changed = publishQueued.getAndSet(false);
        try {
            publishIfDue();
        } catch (RuntimeException e) {
            LOGGER.error("inventory publish failed node={} error=\"{}\"", node, e.toString(), e);
        }
        if (changed) {
            for (Runnable listener : listeners) {
                try {
                    listener.run();
                } catch (RuntimeException e) {
                    LOGGER.error("resourceslice listener failed node={} error=\"{}\"", node, e.toString(), e);
                }
            }
        }
    }

    private synchronized void publishIfDue() {
        if (informer == null || !informer.hasSynced()) {
            return;
        }
        List<InventoryDevice> devices = ResourceSliceMapper.devices(node, informer.getStore().list());
        Instant now = clock.instant();
        boolean changed = !devices.equals(lastPublished);
        if (!changed && now.isBefore(lastPublishedAt.plus(resendInterval))) {
            return;
        }
        publisher.publish(NodeDevices.newBuilder().setCluster(cluster).setNode(node).setObservedAt(now).setDevices(devices).build());
        LOGGER.info("inventory published node={} devices={} changed={}", node, devices.size(), changed);
        lastPublished = devices;
        lastPublishedAt = now;
    }

    @Override
    public void close() {
        if (informer != null) {
            informer.close();
        }
    }
}
