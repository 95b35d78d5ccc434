package io.devhealth.collector.nvml.jna;

import com.sun.jna.Structure;

/**
 * {@code nvmlTemperature_t}, the argument of {@code nvmlDeviceGetTemperatureV} (header 12.8+):
 * 12 bytes. The caller sets the version and the sensor; NVML fills in the temperature.
 *
 * <pre>
 * 0  version      unsigned int               NVML_STRUCT_VERSION(Temperature, 1) = sizeof | 1 &lt;&lt; 24
 * 4  sensorType   nvmlTemperatureSensors_t   GPU 0
 * 8  temperature  int                        °C, signed
 * </pre>
 */
@Structure.FieldOrder({"version", "sensorType", "temperature"})
public final class NvmlTemperature extends Structure {

    public static final int SIZE = 12;
    public static final int OFFSET_VERSION = 0;
    public static final int OFFSET_SENSOR_TYPE = 4;
    public static final int OFFSET_TEMPERATURE = 8;
    /** {@code nvmlTemperature_v1}: 0x0100000C. */
    public static final int VERSION_1 = SIZE | (1 << 24);

    public int version;
    public int sensorType;
    public int temperature;

    public int offsetOf(String field) {
        return fieldOffset(field);
    }
}
