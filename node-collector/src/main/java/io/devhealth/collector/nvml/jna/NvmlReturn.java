package io.devhealth.collector.nvml.jna;

/** {@code nvmlReturn_t} values, as nvml.h numbers them. */
public final class NvmlReturn {

    public static final int SUCCESS = 0;
    public static final int ERROR_UNINITIALIZED = 1;
    public static final int ERROR_INVALID_ARGUMENT = 2;
    public static final int ERROR_NOT_SUPPORTED = 3;
    public static final int ERROR_NO_PERMISSION = 4;
    public static final int ERROR_NOT_FOUND = 6;
    public static final int ERROR_INSUFFICIENT_SIZE = 7;
    public static final int ERROR_DRIVER_NOT_LOADED = 9;
    public static final int ERROR_TIMEOUT = 10;
    public static final int ERROR_LIBRARY_NOT_FOUND = 12;
    public static final int ERROR_FUNCTION_NOT_FOUND = 13;
    public static final int ERROR_GPU_IS_LOST = 15;
    public static final int ERROR_RESET_REQUIRED = 16;
    /** A versioned struct's version is one the library does not know. */
    public static final int ERROR_ARGUMENT_VERSION_MISMATCH = 25;
    public static final int ERROR_UNKNOWN = 999;

    private NvmlReturn() {}

    /** The constant's name without the {@code NVML_} prefix, for logs and messages. */
    public static String name(int code) {
        return switch (code) {
            case SUCCESS -> "SUCCESS";
            case ERROR_UNINITIALIZED -> "ERROR_UNINITIALIZED";
            case ERROR_INVALID_ARGUMENT -> "ERROR_INVALID_ARGUMENT";
            case ERROR_NOT_SUPPORTED -> "ERROR_NOT_SUPPORTED";
            case ERROR_NO_PERMISSION -> "ERROR_NO_PERMISSION";
            case 5 -> "ERROR_ALREADY_INITIALIZED";
            case ERROR_NOT_FOUND -> "ERROR_NOT_FOUND";
            case ERROR_INSUFFICIENT_SIZE -> "ERROR_INSUFFICIENT_SIZE";
            case 8 -> "ERROR_INSUFFICIENT_POWER";
            case ERROR_DRIVER_NOT_LOADED -> "ERROR_DRIVER_NOT_LOADED";
            case ERROR_TIMEOUT -> "ERROR_TIMEOUT";
            case 11 -> "ERROR_IRQ_ISSUE";
            case ERROR_LIBRARY_NOT_FOUND -> "ERROR_LIBRARY_NOT_FOUND";
            case ERROR_FUNCTION_NOT_FOUND -> "ERROR_FUNCTION_NOT_FOUND";
            case 14 -> "ERROR_CORRUPTED_INFOROM";
            case ERROR_GPU_IS_LOST -> "ERROR_GPU_IS_LOST";
            case ERROR_RESET_REQUIRED -> "ERROR_RESET_REQUIRED";
            case 17 -> "ERROR_OPERATING_SYSTEM";
            case 18 -> "ERROR_LIB_RM_VERSION_MISMATCH";
            case 19 -> "ERROR_IN_USE";
            case 20 -> "ERROR_MEMORY";
            case 21 -> "ERROR_NO_DATA";
            case ERROR_ARGUMENT_VERSION_MISMATCH -> "ERROR_ARGUMENT_VERSION_MISMATCH";
            case 27 -> "ERROR_NOT_READY";
            case 28 -> "ERROR_GPU_NOT_FOUND";
            case ERROR_UNKNOWN -> "ERROR_UNKNOWN";
            default -> "ERROR_" + code;
        };
    }
}
