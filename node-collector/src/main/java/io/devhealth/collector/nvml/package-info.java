/**
 * GPU health from NVML: {@link io.devhealth.collector.nvml.NvmlHealthSource} (the source),
 * {@link io.devhealth.collector.nvml.HealthPolicy} (what each signal means, as data; defaults in
 * {@code default-health-policy.json}), {@link io.devhealth.collector.nvml.XidCatalog} (NVIDIA's XID
 * catalogue, {@code xid-catalog.tsv}, whose immediate action classifies every XID it lists) and
 * {@link io.devhealth.collector.nvml.NvmlConfig} (settings). The JNA binding is in {@code .jna},
 * the machinery in {@code .internals}.
 *
 * <h2>Recovery</h2>
 * Findings whose rule says {@code untilReset} (the XIDs NVIDIA's catalogue answers with a GPU reset,
 * a reboot or a person, double-bit ECC, a lost GPU) hold until one of these is seen on that GPU:
 * <ol>
 *   <li>a GPU that answered GPU_IS_LOST (or vanished from enumeration) answers again, after NVML was
 *       re-initialised (every reinit interval while a GPU is lost);
 *   <li>the recovery-action field returns to NONE after having asked for an action;
 *   <li>a pending row remap or page retirement is no longer pending (both complete only on reset);
 *   <li>the volatile uncorrected ECC counter or the energy counter went down (both restart when the
 *       driver reloads; on a reset alone, UNCONFIRMED).
 * </ol>
 * Then every untilReset finding of the GPU and its MIG instances is removed, and a Healthy
 * {@code RESET-DETECTED} finding says "GPU reset detected: …" for the default hold time. Findings
 * without untilReset expire {@code holdSeconds} after their last occurrence; reading findings clear
 * with the reading.
 *
 * <h2>Restarts</h2>
 * With a state directory ({@code nvml.state.dir}, by default {@code <spool.dir>/nvml-sticky}) the
 * untilReset findings of each GPU are kept on disk with the GPU's reset evidence and the node's boot
 * id, written before the report that carries them and deleted before the recovery is reported. The
 * next run applies them before its first report; the kept evidence is compared with its first poll,
 * so a reset while no collector ran recovers the GPU, and a changed boot id (a node reboot resets the
 * GPUs) drops them. See docs/COLLECTOR.md §8.
 */
package io.devhealth.collector.nvml;
