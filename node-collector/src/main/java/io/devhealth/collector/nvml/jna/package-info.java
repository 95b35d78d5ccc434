/**
 * JNA binding to {@code libnvidia-ml.so.1}: the raw C interface ({@link io.devhealth.collector.nvml.jna.NvmlLibrary}),
 * struct layouts, constants, and {@link io.devhealth.collector.nvml.jna.Nvml}, a typed wrapper that turns
 * return codes into {@link io.devhealth.collector.nvml.jna.NvmlException}s. Facts (names, layouts,
 * values) come from nvml.h of CUDA 13.3, the NVML header shipped with the CUDA toolkit.
 */
package io.devhealth.collector.nvml.jna;
