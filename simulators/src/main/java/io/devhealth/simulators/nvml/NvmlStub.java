package io.devhealth.simulators.nvml;

import com.sun.jna.Library;
import com.sun.jna.Native;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Map;

/**
 * Controls a stub {@code libnvidia-ml.so.1}: how many GPUs it has, what they read, which events are
 * queued, which calls fail.
 *
 * <p>Every {@link #load()} copies the library into a fresh temporary directory. The dynamic loader
 * keys loaded objects by file, so each copy has its own globals: tests (and the demo's simulated
 * nodes) that each load a stub never see each other's GPUs. Point the code under test at
 * {@link #libraryPath()} (or {@link #libraryDirectory()}); it then loads the very same copy this
 * controller drives.
 *
 * <p>GPUs start with defaults: UUID {@code GPU-5a1d0000-0000-4000-8000-00000000000<i>}, 45 °C with a
 * 90 °C slowdown threshold, 18 active NVLinks, 120 W of a 700 W limit, every health event type
 * supported, nothing pending.
 */
public final class NvmlStub implements AutoCloseable {

    public static final String LIBRARY_FILE = "libnvidia-ml.so.1";
    private static final String RESOURCE = "/io/devhealth/simulators/nvml/" + LIBRARY_FILE;

    /** NVML return codes the tests use ({@code nvmlReturn_t}). */
    public static final int SUCCESS = 0;
    public static final int ERROR_NO_PERMISSION = 4;
    public static final int ERROR_NOT_SUPPORTED = 3;
    public static final int ERROR_DRIVER_NOT_LOADED = 9;
    /** What the binding sees when the library does not export a function. */
    public static final int ERROR_FUNCTION_NOT_FOUND = 13;
    public static final int ERROR_GPU_IS_LOST = 15;
    public static final int ERROR_ARGUMENT_VERSION_MISMATCH = 25;
    public static final int ERROR_UNKNOWN = 999;

    /** Event type bits ({@code nvmlEventType*}). */
    public static final long EVENT_SINGLE_BIT_ECC = 0x1L;
    public static final long EVENT_DOUBLE_BIT_ECC = 0x2L;
    public static final long EVENT_XID = 0x8L;
    public static final long EVENT_SINGLE_BIT_ECC_STORM = 0x200L;
    public static final long EVENT_DRAM_RETIREMENT = 0x400L;
    public static final long EVENT_DRAM_RETIREMENT_FAILURE = 0x800L;
    public static final long EVENT_NON_FATAL_POISON = 0x1000L;
    public static final long EVENT_FATAL_POISON = 0x2000L;
    public static final long EVENT_GPU_UNAVAILABLE = 0x4000L;
    public static final long EVENT_GPU_RECOVERY_ACTION = 0x8000L;
    /** gpuInstanceId / computeInstanceId of an event that no MIG instance can be blamed for. */
    public static final int NO_INSTANCE = 0xFFFFFFFF;

    /** Clock event reason bits. */
    public static final long CLOCKS_HW_SLOWDOWN = 0x8L;
    public static final long CLOCKS_SW_THERMAL = 0x20L;
    public static final long CLOCKS_HW_THERMAL = 0x40L;

    /** Values of the GPU recovery-action field (NVML_FI_DEV_GET_GPU_RECOVERY_ACTION). */
    public static final int RECOVERY_NONE = 0;
    public static final int RECOVERY_GPU_RESET = 1;
    public static final int RECOVERY_NODE_REBOOT = 2;

    /** The stub's control functions; see nvml_stub.c. */
    interface Control extends Library {
        void stub_reset();
        void stub_set_device_count(int count);
        int stub_init_count();
        int stub_init_calls();
        void stub_set_init_result(int rc);
        void stub_set_identity(int index, String uuid, String name);
        void stub_set_temperature(int index, int celsius);
        void stub_set_slowdown_threshold(int index, int celsius);
        void stub_set_retired_pages_pending(int index, int pending);
        void stub_set_volatile_uncorrected_ecc(int index, long count);
        void stub_set_clocks_event_reasons(int index, long reasons);
        void stub_set_power(int index, int milliwatts);
        void stub_set_power_limit(int index, int milliwatts);
        void stub_set_energy(int index, long millijoules);
        void stub_set_recovery_action(int index, int action);
        void stub_set_supported_events(int index, long mask);
        void stub_set_nvlink_count(int index, int links);
        void stub_set_remapped_rows(int index, int corrected, int uncorrected, int pending, int failure);
        void stub_set_nvlink_state(int index, int link, int active);
        long stub_registered_events(int index);
        void stub_set_mig(int index, int count, int[] gi, int[] ci);
        void stub_set_return(int index, String function, int rc);
        int stub_queue_events(int index, long type, long data, int gi, int ci, long count);
        long stub_pending_events();
        long stub_delivered_events();
        void stub_set_lost(int index, int lost);
        void stub_reset_gpu(int index);
    }

    private final Path directory;
    private final Path library;
    private final Control control;

    private NvmlStub(Path directory, Path library, Control control) {
        this.directory = directory;
        this.library = library;
        this.control = control;
    }

    /** Loads a private copy of the stub with {@code gpus} GPUs at their defaults. */
    public static NvmlStub load(int gpus) {
        NvmlStub stub = load();
        stub.setDeviceCount(gpus);
        return stub;
    }

    /** Loads a private copy of the stub with no GPUs. */
    public static NvmlStub load() {
        try {
            Path directory = Files.createTempDirectory("devhealth-nvml-stub");
            Path library = directory.resolve(LIBRARY_FILE);
            try (InputStream in = NvmlStub.class.getResourceAsStream(RESOURCE)) {
                if (in == null) {
                    throw new IllegalStateException(RESOURCE + " is not on the classpath: the simulators build compiles it with gcc");
                }
                Files.copy(in, library, StandardCopyOption.REPLACE_EXISTING);
            }
            Control control = Native.load(library.toString(), Control.class, Map.of(Library.OPTION_STRING_ENCODING, "UTF-8"));
            control.stub_reset();
            return new NvmlStub(directory, library, control);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot extract the NVML stub", e);
        }
    }

    /** The stub's file; give it to the NVML binding under test. */
    public Path libraryPath() {
        return library;
    }

    /** The directory holding {@link #libraryPath()}, for {@code jna.library.path}-style settings. */
    public Path libraryDirectory() {
        return directory;
    }

    public NvmlStub setDeviceCount(int count) {
        control.stub_set_device_count(count);
        return this;
    }

    /** UUID of GPU {@code index} as the stub reports it by default. */
    public static String defaultUuid(int index) {
        return String.format("GPU-5a1d0000-0000-4000-8000-%012d", index);
    }

    /** Outstanding nvmlInit_v2 calls not yet matched by nvmlShutdown. */
    public int initCount() {
        return control.stub_init_count();
    }

    public int initCalls() {
        return control.stub_init_calls();
    }

    /** What the next nvmlInit_v2 calls return (e.g. {@link #ERROR_DRIVER_NOT_LOADED}). */
    public NvmlStub setInitResult(int rc) {
        control.stub_set_init_result(rc);
        return this;
    }

    public NvmlStub setIdentity(int gpu, String uuid, String name) {
        control.stub_set_identity(gpu, uuid, name);
        return this;
    }

    public NvmlStub setTemperature(int gpu, int celsius) {
        control.stub_set_temperature(gpu, celsius);
        return this;
    }

    public NvmlStub setSlowdownThreshold(int gpu, int celsius) {
        control.stub_set_slowdown_threshold(gpu, celsius);
        return this;
    }

    public NvmlStub setRetiredPagesPending(int gpu, boolean pending) {
        control.stub_set_retired_pages_pending(gpu, pending ? 1 : 0);
        return this;
    }

    public NvmlStub setVolatileUncorrectedEcc(int gpu, long count) {
        control.stub_set_volatile_uncorrected_ecc(gpu, count);
        return this;
    }

    public NvmlStub setClocksEventReasons(int gpu, long reasons) {
        control.stub_set_clocks_event_reasons(gpu, reasons);
        return this;
    }

    public NvmlStub setPower(int gpu, int milliwatts, int limitMilliwatts) {
        control.stub_set_power(gpu, milliwatts);
        control.stub_set_power_limit(gpu, limitMilliwatts);
        return this;
    }

    public NvmlStub setEnergy(int gpu, long millijoules) {
        control.stub_set_energy(gpu, millijoules);
        return this;
    }

    public NvmlStub setRecoveryAction(int gpu, int action) {
        control.stub_set_recovery_action(gpu, action);
        return this;
    }

    /** What nvmlDeviceGetSupportedEventTypes answers for the GPU. */
    public NvmlStub setSupportedEvents(int gpu, long mask) {
        control.stub_set_supported_events(gpu, mask);
        return this;
    }

    public NvmlStub setNvLinkCount(int gpu, int links) {
        control.stub_set_nvlink_count(gpu, links);
        return this;
    }

    public NvmlStub setNvLinkActive(int gpu, int link, boolean active) {
        control.stub_set_nvlink_state(gpu, link, active ? 1 : 0);
        return this;
    }

    public NvmlStub setRemappedRows(int gpu, int corrected, int uncorrected, boolean pending, boolean failure) {
        control.stub_set_remapped_rows(gpu, corrected, uncorrected, pending ? 1 : 0, failure ? 1 : 0);
        return this;
    }

    /** The event mask registered on the GPU through nvmlDeviceRegisterEvents (0 once the set is freed). */
    public long registeredEvents(int gpu) {
        return control.stub_registered_events(gpu);
    }

    /** Enables MIG on the GPU with one instance per (gi[i], ci[i]) pair. */
    public NvmlStub setMig(int gpu, int[] gi, int[] ci) {
        if (gi.length != ci.length) {
            throw new IllegalArgumentException("gi and ci differ in length");
        }
        control.stub_set_mig(gpu, gi.length, gi, ci);
        return this;
    }

    /**
     * Makes {@code function} (an NVML function name; {@code field230} for the recovery-action field)
     * return {@code rc} on GPU {@code gpu}, or on every GPU and device-less calls when {@code gpu} is -1.
     * {@link #SUCCESS} removes the override.
     */
    public NvmlStub setReturn(int gpu, String function, int rc) {
        control.stub_set_return(gpu, function, rc);
        return this;
    }

    public NvmlStub queueXid(int gpu, int xid) {
        return queueEvents(gpu, EVENT_XID, xid, NO_INSTANCE, NO_INSTANCE, 1);
    }

    /** Queues {@code count} identical events; delivered only if the type is registered on the GPU. */
    public NvmlStub queueEvents(int gpu, long type, long data, int gpuInstance, int computeInstance, long count) {
        if (control.stub_queue_events(gpu, type, data, gpuInstance, computeInstance, count) != 0) {
            throw new IllegalArgumentException("cannot queue on GPU " + gpu);
        }
        return this;
    }

    public long pendingEvents() {
        return control.stub_pending_events();
    }

    public long deliveredEvents() {
        return control.stub_delivered_events();
    }

    /** The GPU falls off the bus (every call on it returns GPU_IS_LOST), or comes back without a reset. */
    public NvmlStub setLost(int gpu, boolean lost) {
        control.stub_set_lost(gpu, lost ? 1 : 0);
        return this;
    }

    /**
     * A GPU reset: the GPU is reachable again, volatile ECC counts, pending row remaps and page
     * retirements, the recovery action and the energy counter return to zero, and its queued events
     * are dropped.
     */
    public NvmlStub resetGpu(int gpu) {
        control.stub_reset_gpu(gpu);
        return this;
    }

    /** Puts every GPU back to its defaults with zero GPUs, no overrides and no queued events. */
    public NvmlStub reset() {
        control.stub_reset();
        return this;
    }

    /** Deletes the temporary copy; the loaded library stays mapped until the JVM exits. */
    @Override
    public void close() {
        try {
            Files.deleteIfExists(library);
            Files.deleteIfExists(directory);
        } catch (IOException e) {
            // A leftover file in the temporary directory is harmless.
        }
    }
}
