/**
 * A stub {@code libnvidia-ml.so.1} (built with gcc from {@code simulators/src/main/c/nvml_stub.c}) and
 * {@link io.devhealth.simulators.nvml.NvmlStub}, which loads a private copy of it and drives its
 * simulated GPUs, readings and queued events, so NVML code runs through the real native path
 * without a GPU.
 */
package io.devhealth.simulators.nvml;
