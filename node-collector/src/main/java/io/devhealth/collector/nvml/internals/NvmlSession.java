package io.devhealth.collector.nvml.internals;

import com.sun.jna.Pointer;
import io.devhealth.collector.nvml.jna.Nvml;
import io.devhealth.collector.nvml.jna.NvmlEventType;
import io.devhealth.collector.nvml.jna.NvmlException;
import java.time.Clock;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One NVML initialisation: {@code nvmlInit_v2}, the GPUs it enumerated, one event set registered
 * with the wanted types each GPU supports, and the event thread. Closing it undoes all of that in
 * reverse; re-initialising NVML (after a lost GPU, or to rescan) means a new session.
 */
public final class NvmlSession implements AutoCloseable {

    private static final Logger LOGGER = LoggerFactory.getLogger(NvmlSession.class);

    private final Nvml nvml;
    private final List<GpuDevice> devices;
    private final Map<String, String> unmonitored;
    private final int unidentified;
    private final Pointer eventSet;
    private final EventLoop loop;
    private final Duration waitTimeout;

    private NvmlSession(Nvml nvml, List<GpuDevice> devices, Map<String, String> unmonitored, int unidentified, Pointer eventSet,
            EventLoop loop, Duration waitTimeout) {
        this.nvml = nvml;
        this.devices = devices;
        this.unmonitored = unmonitored;
        this.unidentified = unidentified;
        this.eventSet = eventSet;
        this.loop = loop;
        this.waitTimeout = waitTimeout;
    }

    /**
     * Initialises NVML, enumerates, registers {@code wantedMask} ∩ supported per GPU and starts the
     * event thread. On failure NVML is shut down again and the exception says why.
     */
    public static NvmlSession open(Nvml nvml, long wantedMask, EventCoalescer coalescer, EventLoopListener listener, Clock clock,
            Duration waitTimeout) throws NvmlException {
        nvml.init();
        Pointer eventSet = null;
        try {
            DeviceEnumerator.Enumeration enumeration = DeviceEnumerator.enumerate(nvml);
            List<GpuDevice> devices = enumeration.devices();
            Map<String, String> unmonitored = new HashMap<>();
            try {
                eventSet = nvml.createEventSet();
            } catch (NvmlException e) {
                devices.forEach(d -> unmonitored.put(d.uuid(), "cannot create an NVML event set: " + e.getMessage()));
            }
            if (eventSet != null) {
                for (GpuDevice device : devices) {
                    String problem = register(nvml, device, wantedMask, eventSet);
                    if (problem != null) {
                        unmonitored.put(device.uuid(), problem);
                    }
                }
            }
            EventLoop loop = eventSet == null ? null
                    : new EventLoop(nvml, eventSet, devices, coalescer, listener, clock, waitTimeout);
            NvmlSession session = new NvmlSession(nvml, List.copyOf(devices), Map.copyOf(unmonitored), enumeration.unidentified(),
                    eventSet, loop, waitTimeout);
            if (loop != null) {
                loop.start();
            }
            return session;
        } catch (NvmlException | RuntimeException e) {
            freeQuietly(nvml, eventSet);
            shutdownQuietly(nvml);
            throw e;
        }
    }

    /** Registers the supported subset of the wanted events; the problem in words when XID events cannot be watched, else null. */
    private static String register(Nvml nvml, GpuDevice device, long wantedMask, Pointer eventSet) {
        long supported;
        try {
            supported = nvml.supportedEventTypes(device.handle());
        } catch (NvmlException e) {
            return e.isNotSupported() ? "NVML reports no supported event types" : "cannot read supported event types: " + e.getMessage();
        }
        long mask = wantedMask & supported;
        if ((mask & NvmlEventType.XID_CRITICAL_ERROR.bit()) == 0) {
            // Nothing but XIDs says "fallen off the bus" or "GSP error" in time; readings alone are a partial watch.
            if (mask != 0) {
                tryRegister(nvml, device, mask, eventSet);
            }
            return "XID events not supported (supported mask 0x" + Long.toHexString(supported) + ")";
        }
        String problem = tryRegister(nvml, device, mask, eventSet);
        if (problem == null) {
            LOGGER.info("nvml events registered gpu={} types={} unsupported={}", device.uuid(), NvmlEventType.inMask(mask),
                    NvmlEventType.inMask(wantedMask & ~supported));
        }
        return problem;
    }

    private static String tryRegister(Nvml nvml, GpuDevice device, long mask, Pointer eventSet) {
        try {
            nvml.registerEvents(device.handle(), mask, eventSet);
            return null;
        } catch (NvmlException e) {
            // NOT_SUPPORTED: this GPU takes none of these event types; the set stays usable, with nothing registered for it.
            return "cannot register NVML events: " + e.getMessage();
        }
    }

    public Nvml nvml() {
        return nvml;
    }

    public List<GpuDevice> devices() {
        return devices;
    }

    /** How many GPUs NVML counts but could not identify (no handle or UUID, typically GPU_IS_LOST). */
    public int unidentified() {
        return unidentified;
    }

    /** GPUs whose XID events are not watched, with the reason. */
    public Map<String, String> unmonitored() {
        return unmonitored;
    }

    /** How long since the event wait last returned; null when no event thread runs. */
    public Duration eventLoopSilence() {
        return loop == null ? null : loop.silence();
    }

    @Override
    public void close() {
        boolean stopped = loop == null || loop.stop(waitTimeout.plusSeconds(1));
        if (stopped) {
            freeQuietly(nvml, eventSet);
        } else {
            // Freeing a set a thread still waits on is undefined behaviour in C: leak it instead.
            LOGGER.warn("nvml event thread did not stop; event set left allocated");
        }
        shutdownQuietly(nvml);
    }

    private static void freeQuietly(Nvml nvml, Pointer eventSet) {
        if (eventSet != null) {
            try {
                nvml.freeEventSet(eventSet);
            } catch (NvmlException e) {
                LOGGER.debug("nvml event set free failed error=\"{}\"", e.getMessage());
            }
        }
    }

    private static void shutdownQuietly(Nvml nvml) {
        try {
            nvml.shutdown();
        } catch (NvmlException e) {
            LOGGER.debug("nvml shutdown failed error=\"{}\"", e.getMessage());
        }
    }
}
