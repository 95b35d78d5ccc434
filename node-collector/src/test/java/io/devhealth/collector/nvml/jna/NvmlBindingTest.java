package io.devhealth.collector.nvml.jna;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.jna.Memory;
import com.sun.jna.Pointer;
import io.devhealth.simulators.nvml.NvmlStub;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The JNA binding against the gcc-built stub libnvidia-ml.so.1: real dlopen, real calls, real structs. */
class NvmlBindingTest {

    private NvmlStub stub;
    private Nvml nvml;

    @BeforeEach
    void load() throws Exception {
        stub = NvmlStub.load(2);
        nvml = Nvml.load(stub.libraryPath());
        nvml.init();
    }

    @AfterEach
    void unload() throws Exception {
        nvml.shutdown();
        stub.close();
    }

    @Test
    void shouldLayOutStructsAsNvmlHeaderSays() {
        NvmlEventData event = new NvmlEventData();
        assertThat(event.size()).isEqualTo(NvmlEventData.SIZE);
        assertThat(event.offsetOf("device")).isEqualTo(NvmlEventData.OFFSET_DEVICE);
        assertThat(event.offsetOf("eventType")).isEqualTo(NvmlEventData.OFFSET_EVENT_TYPE);
        assertThat(event.offsetOf("eventData")).isEqualTo(NvmlEventData.OFFSET_EVENT_DATA);
        assertThat(event.offsetOf("gpuInstanceId")).isEqualTo(NvmlEventData.OFFSET_GPU_INSTANCE_ID);
        assertThat(event.offsetOf("computeInstanceId")).isEqualTo(NvmlEventData.OFFSET_COMPUTE_INSTANCE_ID);
        assertThat(new NvmlPciInfo().size()).isEqualTo(NvmlPciInfo.SIZE);
        NvmlFieldValue field = new NvmlFieldValue();
        assertThat(field.size()).isEqualTo(NvmlFieldValue.SIZE);
        assertThat(field.offsetOf("valueType")).isEqualTo(NvmlFieldValue.OFFSET_VALUE_TYPE);
        assertThat(field.offsetOf("nvmlReturn")).isEqualTo(NvmlFieldValue.OFFSET_RETURN);
        assertThat(field.offsetOf("value")).isEqualTo(NvmlFieldValue.OFFSET_VALUE);
        NvmlTemperature temperature = new NvmlTemperature();
        assertThat(temperature.size()).isEqualTo(NvmlTemperature.SIZE);
        assertThat(temperature.offsetOf("sensorType")).isEqualTo(NvmlTemperature.OFFSET_SENSOR_TYPE);
        assertThat(temperature.offsetOf("temperature")).isEqualTo(NvmlTemperature.OFFSET_TEMPERATURE);
        assertThat(NvmlTemperature.VERSION_1).isEqualTo(0x0100000C);
    }

    @Test
    void shouldEnumerateGpusWithIdentity() throws Exception {
        stub.setIdentity(1, "GPU-11111111-2222-3333-4444-555555555555", "NVIDIA H200");
        assertThat(nvml.deviceCount()).isEqualTo(2);
        Pointer second = nvml.handleByIndex(1);
        assertThat(nvml.uuid(second)).isEqualTo("GPU-11111111-2222-3333-4444-555555555555");
        assertThat(nvml.name(second)).isEqualTo("NVIDIA H200");
        assertThat(nvml.index(second)).isEqualTo(1);
        assertThat(nvml.pciBusId(second)).isEqualTo("00000000:19:00.0");
        assertThat(nvml.migEnabled(second)).isFalse();
        assertThat(nvml.driverVersion()).contains("stub");
    }

    @Test
    void shouldEnumerateMigInstances() throws Exception {
        stub.setMig(0, new int[] {1, 2}, new int[] {0, 0});
        Pointer gpu = nvml.handleByIndex(0);
        assertThat(nvml.migEnabled(gpu)).isTrue();
        assertThat(nvml.maxMigDeviceCount(gpu)).isEqualTo(7);
        Pointer mig = nvml.migDeviceHandle(gpu, 1);
        assertThat(nvml.gpuInstanceId(mig)).isEqualTo(2);
        assertThat(nvml.computeInstanceId(mig)).isZero();
        assertThat(nvml.uuid(mig)).startsWith("MIG-");
        assertThat(nvml.migDeviceHandle(gpu, 2)).isNull();
    }

    @Test
    void shouldReadHealthReadings() throws Exception {
        stub.setTemperature(0, 91).setRemappedRows(0, 3, 1, true, false).setVolatileUncorrectedEcc(0, 4)
                .setRecoveryAction(0, NvmlStub.RECOVERY_GPU_RESET).setClocksEventReasons(0, NvmlStub.CLOCKS_HW_THERMAL)
                .setNvLinkActive(0, 3, false).setPower(0, 650_000, 700_000).setRetiredPagesPending(0, true);
        Pointer gpu = nvml.handleByIndex(0);
        assertThat(nvml.temperature(gpu)).isEqualTo(91);
        assertThat(nvml.temperatureThreshold(gpu, 1)).isEqualTo(90);
        assertThat(nvml.remappedRows(gpu)).isEqualTo(new Nvml.RemappedRows(3, 1, true, false));
        assertThat(nvml.volatileUncorrectedEccErrors(gpu)).isEqualTo(4);
        assertThat(nvml.fieldValue(gpu, NvmlFieldValue.FI_DEV_GET_GPU_RECOVERY_ACTION)).isEqualTo(1);
        assertThat(nvml.clocksEventReasons(gpu)).isEqualTo(NvmlStub.CLOCKS_HW_THERMAL);
        assertThat(nvml.nvLinkActive(gpu, 3)).isFalse();
        assertThat(nvml.nvLinkActive(gpu, 2)).isTrue();
        assertThat(nvml.powerUsageMilliwatts(gpu)).isEqualTo(650_000);
        assertThat(nvml.enforcedPowerLimitMilliwatts(gpu)).isEqualTo(700_000);
        assertThat(nvml.retiredPagesPending(gpu)).isTrue();
        assertThatThrownBy(() -> nvml.nvLinkActive(gpu, 20)).isInstanceOfSatisfying(NvmlException.class,
                e -> assertThat(e.isNotSupported()).isTrue());
    }

    @Test
    void shouldReadTemperatureThroughTheVersionedCall() throws Exception {
        stub.setTemperature(0, 77).setReturn(0, "nvmlDeviceGetTemperature", NvmlStub.ERROR_UNKNOWN);
        assertThat(nvml.temperature(nvml.handleByIndex(0))).isEqualTo(77);
    }

    @Test
    void shouldFallBackToTheDeprecatedTemperatureCallWhereTheDriverLacksTheVersionedOne() throws Exception {
        Pointer gpu = nvml.handleByIndex(0);
        stub.setTemperature(0, 66).setReturn(-1, "nvmlDeviceGetTemperatureV", NvmlStub.ERROR_FUNCTION_NOT_FOUND);
        assertThat(nvml.temperature(gpu)).isEqualTo(66);
        // Remembered: later polls do not ask for the missing function again.
        stub.setReturn(-1, "nvmlDeviceGetTemperatureV", NvmlStub.SUCCESS).setReturn(0, "nvmlDeviceGetTemperature", NvmlStub.ERROR_UNKNOWN);
        assertThatThrownBy(() -> nvml.temperature(gpu)).isInstanceOfSatisfying(NvmlException.class,
                e -> assertThat(e).hasMessageContaining("nvmlDeviceGetTemperature"));
    }

    @Test
    void shouldFallBackToTheDeprecatedTemperatureCallOnAStructVersionMismatch() throws Exception {
        stub.setTemperature(1, 55).setReturn(-1, "nvmlDeviceGetTemperatureV", NvmlStub.ERROR_ARGUMENT_VERSION_MISMATCH);
        assertThat(nvml.temperature(nvml.handleByIndex(1))).isEqualTo(55);
    }

    @Test
    void shouldWaitForQueuedEventsAndTimeOut() throws Exception {
        Pointer gpu = nvml.handleByIndex(1);
        Pointer set = nvml.createEventSet();
        nvml.registerEvents(gpu, NvmlEventType.XID_CRITICAL_ERROR.bit(), set);
        Memory data = new Memory(NvmlEventData.SIZE);
        assertThat(nvml.waitEvent(set, data, 10)).isEqualTo(NvmlReturn.ERROR_TIMEOUT);
        stub.queueXid(1, 79);
        assertThat(nvml.waitEvent(set, data, 1000)).isEqualTo(NvmlReturn.SUCCESS);
        assertThat(data.getLong(NvmlEventData.OFFSET_DEVICE)).isEqualTo(Pointer.nativeValue(gpu));
        assertThat(data.getLong(NvmlEventData.OFFSET_EVENT_TYPE)).isEqualTo(NvmlEventType.XID_CRITICAL_ERROR.bit());
        assertThat(data.getLong(NvmlEventData.OFFSET_EVENT_DATA)).isEqualTo(79);
        assertThat(data.getInt(NvmlEventData.OFFSET_GPU_INSTANCE_ID)).isEqualTo(NvmlEventData.NO_INSTANCE);
        nvml.freeEventSet(set);
    }

    @Test
    void shouldReportUnsupportedEventTypesAsNvmlDoes() throws Exception {
        stub.setSupportedEvents(0, NvmlStub.EVENT_XID);
        Pointer gpu = nvml.handleByIndex(0);
        assertThat(nvml.supportedEventTypes(gpu)).isEqualTo(NvmlStub.EVENT_XID);
        Pointer set = nvml.createEventSet();
        assertThatThrownBy(() -> nvml.registerEvents(gpu, NvmlStub.EVENT_XID | NvmlStub.EVENT_DOUBLE_BIT_ECC, set))
                .isInstanceOfSatisfying(NvmlException.class, e -> assertThat(e.code()).isEqualTo(NvmlReturn.ERROR_NOT_SUPPORTED));
        nvml.freeEventSet(set);
    }

    @Test
    void shouldSurfaceLostGpuAsGpuIsLost() throws Exception {
        Pointer gpu = nvml.handleByIndex(0);
        stub.setLost(0, true);
        assertThatThrownBy(() -> nvml.temperature(gpu)).isInstanceOfSatisfying(NvmlException.class, e -> {
            assertThat(e.isGpuLost()).isTrue();
            assertThat(e).hasMessageContaining("ERROR_GPU_IS_LOST").hasMessageContaining("GPU is lost");
        });
    }

    @Test
    void shouldFailToLoadMissingLibraryWithAClearError(@TempDir Path empty) {
        assertThatThrownBy(() -> Nvml.load(empty)).isInstanceOf(NvmlUnavailableException.class)
                .hasMessageContaining(empty.resolve(Nvml.SONAME).toString());
    }
}
