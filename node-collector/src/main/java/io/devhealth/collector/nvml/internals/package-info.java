/**
 * How the NVML health source works inside; callers use {@link io.devhealth.collector.nvml.NvmlHealthSource}.
 *
 * <p>Threads: one daemon thread per NVML session blocks in {@code nvmlEventSetWait_v2}
 * ({@link io.devhealth.collector.nvml.internals.EventLoop}) and only counts events into the
 * {@link io.devhealth.collector.nvml.internals.EventCoalescer}; one scheduler thread does everything
 * else (enumeration, readings, policy, reports), so the state classes need no locks.
 */
package io.devhealth.collector.nvml.internals;
