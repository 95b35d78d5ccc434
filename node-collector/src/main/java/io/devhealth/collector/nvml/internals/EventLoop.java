package io.devhealth.collector.nvml.internals;

import com.sun.jna.Memory;
import com.sun.jna.Pointer;
import io.devhealth.collector.nvml.jna.Nvml;
import io.devhealth.collector.nvml.jna.NvmlEventData;
import io.devhealth.collector.nvml.jna.NvmlEventType;
import io.devhealth.collector.nvml.jna.NvmlReturn;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The dedicated platform thread around {@code nvmlEventSetWait_v2}: it blocks up to the wait
 * timeout, maps each event to its device (by handle, and GI/CI for MIG) and counts it into the
 * {@link EventCoalescer}. It never publishes, so a slow Kafka or a storm on one GPU cannot hold up
 * the evaluation of another.
 */
final class EventLoop implements Runnable {

    private static final Logger LOGGER = LoggerFactory.getLogger(EventLoop.class);

    private final Nvml nvml;
    private final Pointer eventSet;
    private final Map<Long, GpuDevice> byHandle = new HashMap<>();
    private final Set<DeviceKey> migKeys = new HashSet<>();
    private final EventCoalescer coalescer;
    private final EventLoopListener listener;
    private final Clock clock;
    private final int timeoutMs;
    private final Thread thread;
    private volatile boolean running = true;
    private volatile Instant lastReturn;
    // Liveness of a real thread is measured on the monotonic clock, not the injected domain clock:
    // a test clock moved by an hour must not make a healthy loop look stuck.
    private volatile long lastReturnNanos = System.nanoTime();

    EventLoop(Nvml nvml, Pointer eventSet, List<GpuDevice> devices, EventCoalescer coalescer, EventLoopListener listener, Clock clock,
            Duration timeout) {
        this.nvml = nvml;
        this.eventSet = eventSet;
        for (GpuDevice device : devices) {
            byHandle.put(Pointer.nativeValue(device.handle()), device);
            for (GpuDevice.MigDevice mig : device.migDevices()) {
                migKeys.add(new DeviceKey(device.uuid(), mig.gpuInstanceId(), mig.computeInstanceId()));
            }
        }
        this.coalescer = coalescer;
        this.listener = listener;
        this.clock = clock;
        this.timeoutMs = (int) Math.max(1, timeout.toMillis());
        this.lastReturn = clock.instant();
        this.thread = new Thread(this, "devhealth-nvml-events");
        this.thread.setDaemon(true);
    }

    void start() {
        thread.start();
    }

    /** How long since the wait last returned, on the monotonic clock. */
    Duration silence() {
        return Duration.ofNanos(System.nanoTime() - lastReturnNanos);
    }

    /** Stops the loop and waits for it; false if it is still inside NVML after {@code grace} (then the set must not be freed). */
    boolean stop(Duration grace) {
        running = false;
        try {
            thread.join(grace.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return !thread.isAlive();
    }

    @Override
    public void run() {
        // One reused native buffer: reading it at fixed offsets avoids JNA's reflective Structure.read per event.
        Memory data = new Memory(NvmlEventData.SIZE);
        int consecutiveErrors = 0;
        while (running) {
            int code = nvml.waitEvent(eventSet, data, timeoutMs);
            lastReturn = clock.instant();
            lastReturnNanos = System.nanoTime();
            switch (code) {
                case NvmlReturn.SUCCESS -> {
                    consecutiveErrors = 0;
                    record(data, lastReturn);
                }
                case NvmlReturn.ERROR_TIMEOUT -> consecutiveErrors = 0;
                case NvmlReturn.ERROR_GPU_IS_LOST -> {
                    LOGGER.warn("nvml event wait returned GPU_IS_LOST");
                    listener.onGpuLost();
                    pause(++consecutiveErrors);
                }
                default -> {
                    if (consecutiveErrors == 0 || Long.bitCount(consecutiveErrors) == 1) {
                        LOGGER.warn("nvml event wait failed code={} consecutive={}", NvmlReturn.name(code), consecutiveErrors + 1);
                    }
                    pause(++consecutiveErrors);
                }
            }
        }
    }

    private void record(Memory data, Instant at) {
        long handle = data.getLong(NvmlEventData.OFFSET_DEVICE);
        long bit = data.getLong(NvmlEventData.OFFSET_EVENT_TYPE);
        GpuDevice device = byHandle.get(handle);
        NvmlEventType type = NvmlEventType.ofBit(bit);
        if (device == null || type == null) {
            LOGGER.debug("nvml event ignored handle={} type={}", handle, bit);
            return;
        }
        long payload = type == NvmlEventType.XID_CRITICAL_ERROR ? data.getLong(NvmlEventData.OFFSET_EVENT_DATA) : 0L;
        DeviceKey key = device.key();
        int gi = data.getInt(NvmlEventData.OFFSET_GPU_INSTANCE_ID);
        int ci = data.getInt(NvmlEventData.OFFSET_COMPUTE_INSTANCE_ID);
        if (device.migEnabled() && gi != NvmlEventData.NO_INSTANCE && ci != NvmlEventData.NO_INSTANCE) {
            DeviceKey mig = new DeviceKey(device.uuid(), gi, ci);
            // An instance unknown to this session (created since) is blamed on the whole GPU rather than dropped.
            if (migKeys.contains(mig)) {
                key = mig;
            }
        }
        if (coalescer.record(new EventCoalescer.EventKey(key, type, payload), at)) {
            listener.onNewEventKey();
        }
    }

    /** Backs off on repeated errors so a broken driver cannot spin the thread; bounded by the wait timeout. */
    private void pause(int consecutiveErrors) {
        long millis = Math.min(timeoutMs, 10L << Math.min(consecutiveErrors, 10));
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            running = false;
        }
    }
}
