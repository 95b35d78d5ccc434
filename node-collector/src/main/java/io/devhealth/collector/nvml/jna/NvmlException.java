package io.devhealth.collector.nvml.jna;

/** An NVML call that did not return SUCCESS. */
public final class NvmlException extends Exception {

    private static final long serialVersionUID = 1L;

    private final int code;
    private final String function;

    public NvmlException(String function, int code, String description) {
        super(function + " returned " + NvmlReturn.name(code) + (description == null ? "" : " (" + description + ")"));
        this.function = function;
        this.code = code;
    }

    public int code() {
        return code;
    }

    public String function() {
        return function;
    }

    public boolean isGpuLost() {
        return code == NvmlReturn.ERROR_GPU_IS_LOST;
    }

    /** The device or driver cannot answer this question (NOT_SUPPORTED, or the function is missing from an old driver). */
    public boolean isNotSupported() {
        return code == NvmlReturn.ERROR_NOT_SUPPORTED || code == NvmlReturn.ERROR_FUNCTION_NOT_FOUND;
    }
}
