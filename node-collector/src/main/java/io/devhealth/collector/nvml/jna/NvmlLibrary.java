package io.devhealth.collector.nvml.jna;

import com.sun.jna.Library;
import com.sun.jna.Pointer;
import com.sun.jna.ptr.IntByReference;
import com.sun.jna.ptr.LongByReference;
import com.sun.jna.ptr.PointerByReference;

/**
 * The NVML C functions devhealth calls, as JNA maps them. Every function returns {@code nvmlReturn_t}
 * (a 4-byte enum, {@link NvmlReturn}). {@code unsigned int} is a Java {@code int} (read it with
 * {@link Integer#toUnsignedLong}), {@code unsigned long long} a {@code long}, handles are pointers.
 * Versioned names ({@code _v2}, {@code _v3}) are bound explicitly: nvml.h maps the plain names to them
 * with {@code #define}s that JNA never sees, and the plain exported symbols are older versions of the calls.
 */
public interface NvmlLibrary extends Library {

    int nvmlInit_v2();

    int nvmlShutdown();

    String nvmlErrorString(int result);

    int nvmlSystemGetDriverVersion(byte[] version, int length);

    int nvmlDeviceGetCount_v2(IntByReference count);

    int nvmlDeviceGetHandleByIndex_v2(int index, PointerByReference device);

    int nvmlDeviceGetUUID(Pointer device, byte[] uuid, int length);

    int nvmlDeviceGetName(Pointer device, byte[] name, int length);

    int nvmlDeviceGetIndex(Pointer device, IntByReference index);

    int nvmlDeviceGetPciInfo_v3(Pointer device, NvmlPciInfo pci);

    int nvmlDeviceGetMigMode(Pointer device, IntByReference current, IntByReference pending);

    int nvmlDeviceGetMaxMigDeviceCount(Pointer device, IntByReference count);

    int nvmlDeviceGetMigDeviceHandleByIndex(Pointer device, int index, PointerByReference migDevice);

    int nvmlDeviceGetGpuInstanceId(Pointer migDevice, IntByReference id);

    int nvmlDeviceGetComputeInstanceId(Pointer migDevice, IntByReference id);

    int nvmlEventSetCreate(PointerByReference set);

    int nvmlDeviceGetSupportedEventTypes(Pointer device, LongByReference eventTypes);

    int nvmlDeviceRegisterEvents(Pointer device, long eventTypes, Pointer set);

    /** {@code data} points at {@link NvmlEventData#SIZE} bytes laid out as {@link NvmlEventData}. */
    int nvmlEventSetWait_v2(Pointer set, Pointer data, int timeoutMs);

    int nvmlEventSetFree(Pointer set);

    /** DEPRECATED(13.0); the only temperature call of drivers before header 12.8. */
    int nvmlDeviceGetTemperature(Pointer device, int sensor, IntByReference celsius);

    /** Header 12.8+. {@code temperature} points at {@link NvmlTemperature#SIZE} bytes laid out as {@link NvmlTemperature}. */
    int nvmlDeviceGetTemperatureV(Pointer device, Pointer temperature);

    int nvmlDeviceGetTemperatureThreshold(Pointer device, int thresholdType, IntByReference celsius);

    int nvmlDeviceGetRemappedRows(Pointer device, IntByReference corrected, IntByReference uncorrected,
            IntByReference pending, IntByReference failureOccurred);

    int nvmlDeviceGetRetiredPagesPendingStatus(Pointer device, IntByReference isPending);

    int nvmlDeviceGetTotalEccErrors(Pointer device, int errorType, int counterType, LongByReference count);

    int nvmlDeviceGetNvLinkState(Pointer device, int link, IntByReference isActive);

    /** Header 12.2+; older drivers only export {@link #nvmlDeviceGetCurrentClocksThrottleReasons}. */
    int nvmlDeviceGetCurrentClocksEventReasons(Pointer device, LongByReference reasons);

    /** The pre-12.2 name of {@link #nvmlDeviceGetCurrentClocksEventReasons} (DEPRECATED(13.0)). */
    int nvmlDeviceGetCurrentClocksThrottleReasons(Pointer device, LongByReference reasons);

    int nvmlDeviceGetPowerUsage(Pointer device, IntByReference milliwatts);

    int nvmlDeviceGetEnforcedPowerLimit(Pointer device, IntByReference milliwatts);

    int nvmlDeviceGetTotalEnergyConsumption(Pointer device, LongByReference millijoules);

    /** {@code values} points at {@code count} × {@link NvmlFieldValue#SIZE} bytes laid out as {@link NvmlFieldValue}. */
    int nvmlDeviceGetFieldValues(Pointer device, int count, Pointer values);
}
