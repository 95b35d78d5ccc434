package io.devhealth.collector.nvml.jna;

/** {@code libnvidia-ml.so.1} could not be loaded (no NVIDIA driver on the node, or a wrong path). */
public final class NvmlUnavailableException extends Exception {

    private static final long serialVersionUID = 1L;

    public NvmlUnavailableException(String message, Throwable cause) {
        super(message, cause);
    }
}
