package io.devhealth.collector.nvml.internals;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The node's boot id ({@code /proc/sys/kernel/random/boot_id}: a random UUID the kernel picks at
 * each boot; not namespaced, so a container reads the host's). A change between the run that wrote a
 * sticky finding and this one means the node rebooted, which power-cycles or resets its GPUs and
 * reloads the driver: the remedy NVIDIA's XID catalogue names for every sticky XID.
 */
public final class BootId {

    private static final Logger LOGGER = LoggerFactory.getLogger(BootId.class);

    private BootId() {}

    /** The boot id in {@code file}, or null when it cannot be read (not Linux, no /proc): then reboots are judged by GPU evidence alone. */
    public static String read(Path file) {
        if (file == null) {
            return null;
        }
        try {
            String id = Files.readString(file).trim();
            return id.isEmpty() ? null : id;
        } catch (IOException | RuntimeException e) {
            LOGGER.warn("node boot id unreadable file={} error=\"{}\": a reboot is recognised only by GPU reset evidence", file,
                    e.toString());
            return null;
        }
    }
}
