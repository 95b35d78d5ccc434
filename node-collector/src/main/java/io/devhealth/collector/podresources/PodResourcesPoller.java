package io.devhealth.collector.podresources;

import io.devhealth.collector.grpc.UnixChannels;
import io.devhealth.collector.publish.ReportPublisher;
import io.devhealth.schema.avro.NodeAllocations;
import io.devhealth.schema.proto.podresources.v1.ListPodResourcesRequest;
import io.devhealth.schema.proto.podresources.v1.ListPodResourcesResponse;
import io.devhealth.schema.proto.podresources.v1.PodResourcesListerGrpc;
import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Polls the kubelet's PodResources {@code List} (there is no Watch) and publishes a
 * {@link NodeAllocations} snapshot when it changes, and again every resend interval so a processor
 * that lost its state converges.
 */
public final class PodResourcesPoller implements AutoCloseable {

    private static final Logger LOGGER = LoggerFactory.getLogger(PodResourcesPoller.class);

    private final String cluster;
    private final String node;
    private final Path socket;
    private final Duration interval;
    private final Duration resendInterval;
    private final ReportPublisher publisher;
    private final Clock clock;
    private final int maxInboundMessageBytes;
    private ManagedChannel channel;
    private ScheduledFuture<?> task;
    private NodeAllocations lastPublished;
    private Instant lastPublishedAt = Instant.MIN;
    private boolean kubeletReachable = true;

    public PodResourcesPoller(String cluster, String node, Path socket, Duration interval, Duration resendInterval,
                              ReportPublisher publisher, Clock clock, int maxInboundMessageBytes) {
        this.cluster = cluster;
        this.node = node;
        this.socket = socket;
        this.interval = interval;
        this.resendInterval = resendInterval;
        this.publisher = publisher;
        this.clock = clock;
        this.maxInboundMessageBytes = maxInboundMessageBytes;
    }

    public void start(ScheduledExecutorService scheduler) {
        channel = UnixChannels.open(socket, maxInboundMessageBytes);
        task = scheduler.scheduleWithFixedDelay(this::pollSafely, 0, interval.toMillis(), TimeUnit.MILLISECONDS);
    }

    private void pollSafely() {
        try {
            poll();
        } catch (RuntimeException e) {
            // A scheduled task that throws is never run again: log and keep polling.
            LOGGER.error("podresources poll failed node={} error=\"{}\"", node, e.toString(), e);
        }
    }

    /** One poll; public for tests that drive it without a scheduler. */
    public void poll() {
        ListPodResourcesResponse response;
        try {
            response = PodResourcesListerGrpc.newBlockingStub(channel)
                    .withDeadlineAfter(interval.toMillis() * 2 + 1_000, TimeUnit.MILLISECONDS)
                    .list(ListPodResourcesRequest.getDefaultInstance());
        } catch (StatusRuntimeException e) {
            if (kubeletReachable) {
                LOGGER.warn("podresources unreachable node={} socket={} status={}", node, socket, e.getStatus());
                kubeletReachable = false;
            }
            return;
        }
        if (!kubeletReachable) {
            LOGGER.info("podresources reachable again node={}", node);
            kubeletReachable = true;
        }
        Instant now = clock.instant();
        NodeAllocations snapshot = AllocationsMapper.map(cluster, node, response, now);
        boolean changed = lastPublished == null || !lastPublished.getPods().equals(snapshot.getPods());
        if (changed || !now.isBefore(lastPublishedAt.plus(resendInterval))) {
            publisher.publish(snapshot);
            LOGGER.debug("allocations published node={} pods={} changed={}", node, snapshot.getPods().size(), changed);
            lastPublished = snapshot;
            lastPublishedAt = now;
        }
    }

    @Override
    public void close() {
        if (task != null) {
            task.cancel(false);
        }
        if (channel != null) {
            channel.shutdownNow();
        }
    }
}
