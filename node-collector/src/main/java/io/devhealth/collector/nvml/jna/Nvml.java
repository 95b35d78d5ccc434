package io.devhealth.collector.nvml.jna;

import com.sun.jna.Library;
import com.sun.jna.Memory;
import com.sun.jna.Native;
import com.sun.jna.Pointer;
import com.sun.jna.ptr.IntByReference;
import com.sun.jna.ptr.LongByReference;
import com.sun.jna.ptr.PointerByReference;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Typed access to NVML: each method calls one C function and either returns its result or throws
 * {@link NvmlException} with the return code. A function that an older driver does not export
 * (JNA resolves symbols on first call) surfaces as {@link NvmlReturn#ERROR_FUNCTION_NOT_FOUND},
 * which {@link NvmlException#isNotSupported()} treats like NOT_SUPPORTED. Thread-safe, as NVML is.
 */
public final class Nvml {

    private static final Logger LOGGER = LoggerFactory.getLogger(Nvml.class);

    /** The soname the driver ships (there is no unversioned {@code libnvidia-ml.so} on driver-only nodes). */
    public static final String SONAME = "libnvidia-ml.so.1";

    private static final int UUID_BUFFER = 96;     // NVML_DEVICE_UUID_V2_BUFFER_SIZE
    private static final int NAME_BUFFER = 96;     // NVML_DEVICE_NAME_V2_BUFFER_SIZE
    private static final int VERSION_BUFFER = 80;  // NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE
    private static final int TEMPERATURE_GPU = 0;  // NVML_TEMPERATURE_GPU
    private static final int MEMORY_ERROR_UNCORRECTED = 1;
    private static final int ECC_COUNTER_VOLATILE = 0;

    private final NvmlLibrary library;
    private final String loadedFrom;
    /** Set once the library shows it lacks nvmlDeviceGetTemperatureV (or its struct version), so later polls go straight to the old call. */
    private volatile boolean temperatureVUnavailable;

    private Nvml(NvmlLibrary library, String loadedFrom) {
        this.library = library;
        this.loadedFrom = loadedFrom;
    }

    /**
     * Loads NVML. With {@code location} (a file, or a directory holding {@value #SONAME}) only that is
     * tried; without it the dynamic loader's search path is asked for {@value #SONAME}, then JNA's
     * search for {@code nvidia-ml} (which also matches versioned sonames on {@code jna.library.path}).
     */
    public static Nvml load(Path location) throws NvmlUnavailableException {
        List<String> candidates = new ArrayList<>();
        if (location != null) {
            candidates.add((Files.isDirectory(location) ? location.resolve(SONAME) : location).toAbsolutePath().toString());
        } else {
            candidates.add(SONAME);
            candidates.add("nvidia-ml");
        }
        UnsatisfiedLinkError last = null;
        for (String candidate : candidates) {
            try {
                NvmlLibrary library = Native.load(candidate, NvmlLibrary.class,
                        Map.of(Library.OPTION_STRING_ENCODING, StandardCharsets.UTF_8.name()));
                LOGGER.debug("nvml loaded from={}", candidate);
                return new Nvml(library, candidate);
            } catch (UnsatisfiedLinkError e) {
                last = e;
            }
        }
        throw new NvmlUnavailableException("cannot load " + String.join(" or ", candidates) + ": "
                + (last == null ? "not found" : firstLine(last.getMessage())), last);
    }

    private static String firstLine(String message) {
        if (message == null) {
            return "not found";
        }
        int newline = message.indexOf('\n');
        return newline < 0 ? message : message.substring(0, newline);
    }

    /** Where the library was loaded from (a path or a soname). */
    public String loadedFrom() {
        return loadedFrom;
    }

    public void init() throws NvmlException {
        check("nvmlInit_v2", call(library::nvmlInit_v2));
    }

    public void shutdown() throws NvmlException {
        check("nvmlShutdown", call(library::nvmlShutdown));
    }

    /** NVML's own text for a return code; null when even that fails. */
    public String errorString(int code) {
        try {
            return library.nvmlErrorString(code);
        } catch (UnsatisfiedLinkError e) {
            return null;
        }
    }

    public String driverVersion() throws NvmlException {
        byte[] buffer = new byte[VERSION_BUFFER];
        check("nvmlSystemGetDriverVersion", call(() -> library.nvmlSystemGetDriverVersion(buffer, buffer.length)));
        return Native.toString(buffer, StandardCharsets.UTF_8.name());
    }

    public int deviceCount() throws NvmlException {
        IntByReference count = new IntByReference();
        check("nvmlDeviceGetCount_v2", call(() -> library.nvmlDeviceGetCount_v2(count)));
        return count.getValue();
    }

    public Pointer handleByIndex(int index) throws NvmlException {
        PointerByReference handle = new PointerByReference();
        check("nvmlDeviceGetHandleByIndex_v2", call(() -> library.nvmlDeviceGetHandleByIndex_v2(index, handle)));
        return handle.getValue();
    }

    public String uuid(Pointer device) throws NvmlException {
        byte[] buffer = new byte[UUID_BUFFER];
        check("nvmlDeviceGetUUID", call(() -> library.nvmlDeviceGetUUID(device, buffer, buffer.length)));
        return Native.toString(buffer, StandardCharsets.UTF_8.name());
    }

    public String name(Pointer device) throws NvmlException {
        byte[] buffer = new byte[NAME_BUFFER];
        check("nvmlDeviceGetName", call(() -> library.nvmlDeviceGetName(device, buffer, buffer.length)));
        return Native.toString(buffer, StandardCharsets.UTF_8.name());
    }

    public int index(Pointer device) throws NvmlException {
        IntByReference index = new IntByReference();
        check("nvmlDeviceGetIndex", call(() -> library.nvmlDeviceGetIndex(device, index)));
        return index.getValue();
    }

    public String pciBusId(Pointer device) throws NvmlException {
        NvmlPciInfo pci = new NvmlPciInfo();
        check("nvmlDeviceGetPciInfo_v3", call(() -> library.nvmlDeviceGetPciInfo_v3(device, pci)));
        pci.read();
        return pci.busId();
    }

    /** Whether MIG mode is currently enabled. */
    public boolean migEnabled(Pointer device) throws NvmlException {
        IntByReference current = new IntByReference();
        IntByReference pending = new IntByReference();
        check("nvmlDeviceGetMigMode", call(() -> library.nvmlDeviceGetMigMode(device, current, pending)));
        return current.getValue() == 1; // NVML_DEVICE_MIG_ENABLE
    }

    public int maxMigDeviceCount(Pointer device) throws NvmlException {
        IntByReference count = new IntByReference();
        check("nvmlDeviceGetMaxMigDeviceCount", call(() -> library.nvmlDeviceGetMaxMigDeviceCount(device, count)));
        return count.getValue();
    }

    /** The MIG device at {@code index}, or null where that slot holds no instance (NOT_FOUND). */
    public Pointer migDeviceHandle(Pointer device, int index) throws NvmlException {
        PointerByReference handle = new PointerByReference();
        int code = call(() -> library.nvmlDeviceGetMigDeviceHandleByIndex(device, index, handle));
        if (code == NvmlReturn.ERROR_NOT_FOUND) {
            return null;
        }
        check("nvmlDeviceGetMigDeviceHandleByIndex", code);
        return handle.getValue();
    }

    public int gpuInstanceId(Pointer migDevice) throws NvmlException {
        IntByReference id = new IntByReference();
        check("nvmlDeviceGetGpuInstanceId", call(() -> library.nvmlDeviceGetGpuInstanceId(migDevice, id)));
        return id.getValue();
    }

    public int computeInstanceId(Pointer migDevice) throws NvmlException {
        IntByReference id = new IntByReference();
        check("nvmlDeviceGetComputeInstanceId", call(() -> library.nvmlDeviceGetComputeInstanceId(migDevice, id)));
        return id.getValue();
    }

    public Pointer createEventSet() throws NvmlException {
        PointerByReference set = new PointerByReference();
        check("nvmlEventSetCreate", call(() -> library.nvmlEventSetCreate(set)));
        return set.getValue();
    }

    public long supportedEventTypes(Pointer device) throws NvmlException {
        LongByReference types = new LongByReference();
        check("nvmlDeviceGetSupportedEventTypes", call(() -> library.nvmlDeviceGetSupportedEventTypes(device, types)));
        return types.getValue();
    }

    public void registerEvents(Pointer device, long types, Pointer set) throws NvmlException {
        check("nvmlDeviceRegisterEvents", call(() -> library.nvmlDeviceRegisterEvents(device, types, set)));
    }

    /**
     * Blocks up to {@code timeoutMs} for the next event, written into {@code buffer}
     * ({@link NvmlEventData#SIZE} bytes). Returns the raw code: SUCCESS, ERROR_TIMEOUT,
     * ERROR_GPU_IS_LOST, … The caller's loop decides, so no exception is built per timeout.
     */
    public int waitEvent(Pointer set, Pointer buffer, int timeoutMs) {
        return call(() -> library.nvmlEventSetWait_v2(set, buffer, timeoutMs));
    }

    public void freeEventSet(Pointer set) throws NvmlException {
        check("nvmlEventSetFree", call(() -> library.nvmlEventSetFree(set)));
    }

    /**
     * GPU temperature in °C through {@code nvmlDeviceGetTemperatureV}; on a driver that does not
     * export it, or does not know its struct version, through the deprecated
     * {@code nvmlDeviceGetTemperature}, which such drivers still serve.
     */
    public int temperature(Pointer device) throws NvmlException {
        if (!temperatureVUnavailable) {
            Memory temperature = new Memory(NvmlTemperature.SIZE);
            temperature.clear();
            temperature.setInt(NvmlTemperature.OFFSET_VERSION, NvmlTemperature.VERSION_1);
            temperature.setInt(NvmlTemperature.OFFSET_SENSOR_TYPE, TEMPERATURE_GPU);
            int code = call(() -> library.nvmlDeviceGetTemperatureV(device, temperature));
            if (code == NvmlReturn.SUCCESS) {
                return temperature.getInt(NvmlTemperature.OFFSET_TEMPERATURE);
            }
            if (code != NvmlReturn.ERROR_FUNCTION_NOT_FOUND && code != NvmlReturn.ERROR_ARGUMENT_VERSION_MISMATCH) {
                check("nvmlDeviceGetTemperatureV", code);
            }
            temperatureVUnavailable = true;
            LOGGER.info("nvml temperature call fallback function=nvmlDeviceGetTemperature reason={}", NvmlReturn.name(code));
        }
        IntByReference celsius = new IntByReference();
        check("nvmlDeviceGetTemperature", call(() -> library.nvmlDeviceGetTemperature(device, TEMPERATURE_GPU, celsius)));
        return celsius.getValue();
    }

    /** {@code type}: SHUTDOWN 0, SLOWDOWN 1, MEM_MAX 2, GPU_MAX 3. */
    public int temperatureThreshold(Pointer device, int type) throws NvmlException {
        IntByReference celsius = new IntByReference();
        check("nvmlDeviceGetTemperatureThreshold", call(() -> library.nvmlDeviceGetTemperatureThreshold(device, type, celsius)));
        return celsius.getValue();
    }

    /** Ampere+; NOT_SUPPORTED with MIG enabled and active instances. */
    public RemappedRows remappedRows(Pointer device) throws NvmlException {
        IntByReference corrected = new IntByReference();
        IntByReference uncorrected = new IntByReference();
        IntByReference pending = new IntByReference();
        IntByReference failure = new IntByReference();
        check("nvmlDeviceGetRemappedRows", call(() -> library.nvmlDeviceGetRemappedRows(device, corrected, uncorrected, pending, failure)));
        return new RemappedRows(Integer.toUnsignedLong(corrected.getValue()), Integer.toUnsignedLong(uncorrected.getValue()),
                pending.getValue() != 0, failure.getValue() != 0);
    }

    /** Rows remapped so far, whether a remap waits for a GPU reset, whether a remap has ever failed. */
    public record RemappedRows(long corrected, long uncorrected, boolean pending, boolean failureOccurred) {}

    public boolean retiredPagesPending(Pointer device) throws NvmlException {
        IntByReference pending = new IntByReference();
        check("nvmlDeviceGetRetiredPagesPendingStatus", call(() -> library.nvmlDeviceGetRetiredPagesPendingStatus(device, pending)));
        return pending.getValue() != 0;
    }

    /** Uncorrected ECC errors since the driver loaded (volatile counter); needs ECC enabled. */
    public long volatileUncorrectedEccErrors(Pointer device) throws NvmlException {
        LongByReference count = new LongByReference();
        check("nvmlDeviceGetTotalEccErrors", call(() -> library.nvmlDeviceGetTotalEccErrors(device, MEMORY_ERROR_UNCORRECTED,
                ECC_COUNTER_VOLATILE, count)));
        return count.getValue();
    }

    public boolean nvLinkActive(Pointer device, int link) throws NvmlException {
        IntByReference active = new IntByReference();
        check("nvmlDeviceGetNvLinkState", call(() -> library.nvmlDeviceGetNvLinkState(device, link, active)));
        return active.getValue() == 1;
    }

    /** Current clock event reasons; falls back to the pre-12.2 name on drivers without the new one. */
    public long clocksEventReasons(Pointer device) throws NvmlException {
        LongByReference reasons = new LongByReference();
        int code = call(() -> library.nvmlDeviceGetCurrentClocksEventReasons(device, reasons));
        if (code == NvmlReturn.ERROR_FUNCTION_NOT_FOUND) {
            check("nvmlDeviceGetCurrentClocksThrottleReasons", call(() -> library.nvmlDeviceGetCurrentClocksThrottleReasons(device, reasons)));
        } else {
            check("nvmlDeviceGetCurrentClocksEventReasons", code);
        }
        return reasons.getValue();
    }

    public int powerUsageMilliwatts(Pointer device) throws NvmlException {
        IntByReference milliwatts = new IntByReference();
        check("nvmlDeviceGetPowerUsage", call(() -> library.nvmlDeviceGetPowerUsage(device, milliwatts)));
        return milliwatts.getValue();
    }

    public int enforcedPowerLimitMilliwatts(Pointer device) throws NvmlException {
        IntByReference milliwatts = new IntByReference();
        check("nvmlDeviceGetEnforcedPowerLimit", call(() -> library.nvmlDeviceGetEnforcedPowerLimit(device, milliwatts)));
        return milliwatts.getValue();
    }

    /** Energy since the driver was last reloaded, in mJ. */
    public long totalEnergyMillijoules(Pointer device) throws NvmlException {
        LongByReference energy = new LongByReference();
        check("nvmlDeviceGetTotalEnergyConsumption", call(() -> library.nvmlDeviceGetTotalEnergyConsumption(device, energy)));
        return energy.getValue();
    }

    /** One integer-valued field through {@code nvmlDeviceGetFieldValues}; the field's own return code is checked too. */
    public long fieldValue(Pointer device, int fieldId) throws NvmlException {
        Memory value = new Memory(NvmlFieldValue.SIZE);
        value.clear();
        value.setInt(NvmlFieldValue.OFFSET_FIELD_ID, fieldId);
        check("nvmlDeviceGetFieldValues", call(() -> library.nvmlDeviceGetFieldValues(device, 1, value)));
        check("nvmlDeviceGetFieldValues[" + fieldId + "]", value.getInt(NvmlFieldValue.OFFSET_RETURN));
        return switch (value.getInt(NvmlFieldValue.OFFSET_VALUE_TYPE)) {
            case NvmlFieldValue.VALUE_TYPE_UNSIGNED_INT -> Integer.toUnsignedLong(value.getInt(NvmlFieldValue.OFFSET_VALUE));
            case NvmlFieldValue.VALUE_TYPE_SIGNED_INT -> value.getInt(NvmlFieldValue.OFFSET_VALUE);
            case NvmlFieldValue.VALUE_TYPE_UNSIGNED_SHORT -> Short.toUnsignedLong(value.getShort(NvmlFieldValue.OFFSET_VALUE));
            case NvmlFieldValue.VALUE_TYPE_DOUBLE -> (long) value.getDouble(NvmlFieldValue.OFFSET_VALUE);
            default -> value.getLong(NvmlFieldValue.OFFSET_VALUE);
        };
    }

    @FunctionalInterface
    private interface NativeCall {
        int invoke();
    }

    private static int call(NativeCall call) {
        try {
            return call.invoke();
        } catch (UnsatisfiedLinkError e) {
            // JNA looks a symbol up on its first call: an older driver lacks newer functions.
            return NvmlReturn.ERROR_FUNCTION_NOT_FOUND;
        }
    }

    private void check(String function, int code) throws NvmlException {
        if (code != NvmlReturn.SUCCESS) {
            throw new NvmlException(function, code, errorString(code));
        }
    }
}
