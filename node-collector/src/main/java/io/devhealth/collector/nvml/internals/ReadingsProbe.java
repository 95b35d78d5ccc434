package io.devhealth.collector.nvml.internals;

import com.sun.jna.Pointer;
import io.devhealth.collector.nvml.jna.Nvml;
import io.devhealth.collector.nvml.jna.NvmlException;
import io.devhealth.collector.nvml.jna.NvmlFieldValue;
import io.devhealth.collector.nvml.jna.NvmlReturn;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads one GPU's health readings. A reading that answers NOT_SUPPORTED (or whose function the
 * driver lacks) is remembered and not asked again for that GPU, so a poll of an old GPU costs only
 * what it supports. GPU_IS_LOST aborts the poll with the exception; any other failure is kept as an
 * error in the {@link Readings}.
 */
public final class ReadingsProbe {

    private static final Logger LOGGER = LoggerFactory.getLogger(ReadingsProbe.class);
    /** NVML_NVLINK_MAX_LINKS. */
    static final int MAX_NVLINKS = 36;
    private static final int THRESHOLD_SLOWDOWN = 1;

    private final Map<String, Set<String>> unsupported = new HashMap<>();

    @FunctionalInterface
    private interface Read<T> {
        T get() throws NvmlException;
    }

    public Readings read(Nvml nvml, GpuDevice gpu) throws NvmlException {
        Pointer h = gpu.handle();
        Set<String> skip = unsupported.computeIfAbsent(gpu.uuid(), u -> new HashSet<>());
        List<String> errors = new ArrayList<>();
        Map<Integer, Boolean> links = new TreeMap<>();
        for (int link = 0; link < MAX_NVLINKS; link++) {
            int l = link;
            Boolean active = read(gpu, skip, errors, "nvlink" + link, () -> nvml.nvLinkActive(h, l));
            if (active != null) {
                links.put(link, active);
            }
        }
        return new Readings(
                read(gpu, skip, errors, "temperature", () -> nvml.temperature(h)),
                read(gpu, skip, errors, "slowdown", () -> nvml.temperatureThreshold(h, THRESHOLD_SLOWDOWN)),
                read(gpu, skip, errors, "remappedRows", () -> nvml.remappedRows(h)),
                read(gpu, skip, errors, "retiredPagesPending", () -> nvml.retiredPagesPending(h)),
                read(gpu, skip, errors, "volatileUncorrectedEcc", () -> nvml.volatileUncorrectedEccErrors(h)),
                links,
                read(gpu, skip, errors, "clocksEventReasons", () -> nvml.clocksEventReasons(h)),
                read(gpu, skip, errors, "power", () -> nvml.powerUsageMilliwatts(h)),
                read(gpu, skip, errors, "powerLimit", () -> nvml.enforcedPowerLimitMilliwatts(h)),
                read(gpu, skip, errors, "energy", () -> nvml.totalEnergyMillijoules(h)),
                read(gpu, skip, errors, "recoveryAction", () -> nvml.fieldValue(h, NvmlFieldValue.FI_DEV_GET_GPU_RECOVERY_ACTION)),
                errors);
    }

    /** Forgets what a GPU did not support (after re-initialisation the driver may have changed). */
    public void forget() {
        unsupported.clear();
    }

    private static <T> T read(GpuDevice gpu, Set<String> skip, List<String> errors, String reading, Read<T> read)
            throws NvmlException {
        if (skip.contains(reading)) {
            return null;
        }
        try {
            return read.get();
        } catch (NvmlException e) {
            if (e.isGpuLost()) {
                throw e;
            }
            // NVLink ids beyond the GPU's link count answer INVALID_ARGUMENT; MIG makes remapped rows NOT_SUPPORTED.
            if (e.isNotSupported() || e.code() == NvmlReturn.ERROR_INVALID_ARGUMENT) {
                skip.add(reading);
                if (!reading.startsWith("nvlink")) {
                    LOGGER.info("nvml reading not supported gpu={} reading={} code={}", gpu.uuid(), reading, NvmlReturn.name(e.code()));
                }
            } else {
                errors.add(e.getMessage());
            }
            return null;
        }
    }
}
