package io.devhealth.simulators.realkube;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The mounts a kubelet leaves behind, and their removal. The kubelet bind-mounts its root directory onto
 * itself at start (to make it a shared mount) and mounts a tmpfs for every secret, projected and
 * memory-backed emptyDir volume of the pods it runs; none of them is unmounted when the kubelet stops,
 * so whoever started the kubelet unmounts them once it has stopped, or every test cluster and demo
 * leaves its mounts under {@code /tmp} until the machine reboots.
 */
public final class Mounts {

    private static final Logger LOGGER = LoggerFactory.getLogger(Mounts.class);
    private static final Path MOUNTINFO = Path.of("/proc/self/mountinfo");
    private static final int MAX_PASSES = 5;

    private Mounts() {}

    /** The mount points at or below {@code directory}, deepest first; empty where there is no mountinfo. */
    public static List<Path> under(Path directory) {
        if (!Files.isReadable(MOUNTINFO)) {
            return List.of();
        }
        try {
            return under(directory, Files.readAllLines(MOUNTINFO, StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The mount points of {@code mountinfo} (lines as /proc/self/mountinfo has them) at or below {@code directory}, deepest first. */
    static List<Path> under(Path directory, List<String> mountinfo) {
        Path dir = directory.toAbsolutePath().normalize();
        List<Path> found = new ArrayList<>();
        for (String line : mountinfo) {
            String[] fields = line.split(" ");
            if (fields.length < 5) {
                continue;
            }
            Path point = Path.of(unescape(fields[4]));
            // Path.startsWith compares whole names: /tmp/a does not contain /tmp/ab.
            if (point.startsWith(dir)) {
                found.add(point);
            }
        }
        found.sort(Comparator.comparingInt(Path::getNameCount).reversed());
        return found;
    }

    /** mountinfo writes space, tab, newline and backslash in a path as a backslash and three octal digits. */
    static String unescape(String field) {
        StringBuilder out = new StringBuilder(field.length());
        for (int i = 0; i < field.length(); i++) {
            char c = field.charAt(i);
            if (c == '\\' && i + 3 < field.length() && field.substring(i + 1, i + 4).chars().allMatch(d -> d >= '0' && d <= '7')) {
                out.append((char) Integer.parseInt(field.substring(i + 1, i + 4), 8));
                i += 3;
            } else {
                out.append(c);
            }
        }
        return out.toString();
    }

    /**
     * Unmounts everything at or below {@code directory}, deepest first (a volume's tmpfs before the
     * kubelet root's bind mount that holds it), and returns what is still mounted (empty when all went).
     * Runs to the end in an interrupted thread: it is what a thread that was told to stop does on its way out.
     */
    public static List<Path> unmountAll(Path directory) {
        boolean interrupted = Thread.interrupted();
        try {
            List<Path> left = under(directory);
            // A path can be mounted over more than once (the kubelet's bind mount after a restart, say):
            // each pass removes the top one.
            for (int pass = 0; pass < MAX_PASSES && !left.isEmpty(); pass++) {
                left.forEach(Mounts::unmount);
                left = under(directory);
            }
            if (!left.isEmpty()) {
                LOGGER.warn("still mounted after unmounting dir={} mounts={}", directory, left);
            }
            return left;
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private static void unmount(Path point) {
        try {
            Process umount = new ProcessBuilder("umount", point.toString()).redirectErrorStream(true).start();
            String output = new String(umount.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
            if (!umount.waitFor(30, TimeUnit.SECONDS)) {
                umount.destroyForcibly();
                LOGGER.warn("umount did not finish within 30 s mount={}", point);
            } else if (umount.exitValue() != 0) {
                LOGGER.warn("umount failed mount={} exitCode={} output=\"{}\"", point, umount.exitValue(), output);
            } else {
                LOGGER.debug("unmounted mount={}", point);
            }
        } catch (IOException e) {
            LOGGER.warn("cannot run umount mount={} error={}", point, e.toString());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
