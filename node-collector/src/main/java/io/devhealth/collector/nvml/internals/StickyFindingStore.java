package io.devhealth.collector.nvml.internals;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps the sticky NVML findings of each GPU on the node's disk, one JSON file per GPU UUID
 * ({@code <dir>/<uuid>.json}), so that a collector restart (rollout, OOM kill) does not turn a GPU
 * that fell off the bus Healthy again.
 *
 * <p>Why small files with an atomic rename and not the spool's RocksDB: the spool's database belongs
 * to {@code DiskSpool} (it is set aside and started anew when corrupt, and is sized and compacted for
 * a record stream), while this state is a handful of records of a few hundred bytes written only when
 * a GPU fails or recovers. A second RocksDB instance would add memory, background threads and a lock
 * file for that. A file per GPU isolates damage (one bad file drops one GPU's findings, never the
 * others'), and plain JSON can be read with {@code cat} by whoever does the post-mortem. Each write
 * goes to a temporary file that is fsynced, renamed atomically over the old one, and the directory
 * fsynced: a crash leaves the old or the new file, never half of one.
 *
 * <p>Never throws: an unreadable file is logged, moved aside to {@code <uuid>.json.corrupt} (one per
 * GPU, for inspection) and skipped; a failed write is logged and retried on the next {@link #sync}.
 * Not thread-safe: the NVML scheduler thread owns it.
 */
public final class StickyFindingStore {

    private static final Logger LOGGER = LoggerFactory.getLogger(StickyFindingStore.class);
    private static final String SUFFIX = ".json";
    private static final ObjectMapper MAPPER = JsonMapper.builder()
            .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES)
            .enable(SerializationFeature.INDENT_OUTPUT)
            .build();

    private final Path directory;
    /** uuid → {@link StickyRecord#writeKey()} of what is on disk. */
    private final Map<String, String> written = new HashMap<>();
    private final Set<String> failing = new HashSet<>();

    public StickyFindingStore(Path directory) {
        this.directory = directory;
    }

    public Path directory() {
        return directory;
    }

    /** Every readable record; bad files are set aside with an error line. */
    public List<StickyRecord> load() {
        List<StickyRecord> records = new ArrayList<>();
        if (!Files.isDirectory(directory)) {
            return records;
        }
        try (DirectoryStream<Path> files = Files.newDirectoryStream(directory, "*" + SUFFIX)) {
            for (Path file : files) {
                StickyRecord record = read(file);
                if (record != null) {
                    records.add(record);
                    written.put(record.uuid(), record.writeKey());
                }
            }
        } catch (IOException | RuntimeException e) {
            LOGGER.error("nvml sticky findings unreadable dir={} error=\"{}\": starting without them", directory, e.toString());
        }
        return records;
    }

    private StickyRecord read(Path file) {
        String name = file.getFileName().toString();
        String uuid = name.substring(0, name.length() - SUFFIX.length());
        try {
            StickyRecord record = MAPPER.readValue(file.toFile(), StickyRecord.class);
            String problem = record == null ? "empty file" : record.problem(uuid);
            if (problem == null) {
                return record;
            }
            setAside(file, problem);
        } catch (IOException | RuntimeException e) {
            setAside(file, e.getClass().getSimpleName() + ": " + firstLine(e.getMessage()));
        }
        return null;
    }

    private static void setAside(Path file, String problem) {
        Path aside = file.resolveSibling(file.getFileName() + ".corrupt");
        try {
            Files.move(file, aside, StandardCopyOption.REPLACE_EXISTING);
            LOGGER.error("nvml sticky finding dropped file={} reason=unreadable problem=\"{}\" movedTo={}", file, problem, aside);
        } catch (IOException e) {
            LOGGER.error("nvml sticky finding dropped file={} reason=unreadable problem=\"{}\" moveError=\"{}\"", file, problem,
                    e.toString());
        }
    }

    /**
     * Makes the disk hold exactly {@code records} (by GPU UUID): writes a record whose
     * {@link StickyRecord#writeKey()} changed, deletes the file of a GPU that has none left. Returns
     * false when something could not be written (already logged).
     */
    public boolean sync(Map<String, StickyRecord> records) {
        boolean ok = true;
        for (StickyRecord record : records.values()) {
            String key = record.writeKey();
            if (!key.equals(written.get(record.uuid()))) {
                boolean done = attempt(record.uuid(), () -> write(record), "write");
                ok &= done;
                if (done) {
                    written.put(record.uuid(), key);
                }
            }
        }
        for (String uuid : new ArrayList<>(written.keySet())) {
            if (!records.containsKey(uuid)) {
                boolean deleted = attempt(uuid, () -> Files.deleteIfExists(file(uuid)), "delete");
                ok &= deleted;
                if (deleted) {
                    written.remove(uuid);
                }
            }
        }
        return ok;
    }

    @FunctionalInterface
    private interface Io {
        void run() throws IOException;
    }

    private boolean attempt(String uuid, Io io, String what) {
        try {
            io.run();
            if (failing.remove(uuid)) {
                LOGGER.info("nvml sticky findings store recovered gpu={} dir={}", uuid, directory);
            }
            return true;
        } catch (IOException | RuntimeException e) {
            // Logged once per GPU until it works again: a read-only disk must not flood the log every tick.
            if (failing.add(uuid)) {
                LOGGER.error("nvml sticky findings {} failed gpu={} dir={} error=\"{}\": they will not survive a restart until it works",
                        what, uuid, directory, e.toString());
            }
            return false;
        }
    }

    private void write(StickyRecord record) throws IOException {
        if (!StickyRecord.UUID.matcher(record.uuid()).matches()) {
            throw new IOException("GPU UUID not usable as a file name: " + record.uuid());
        }
        Files.createDirectories(directory);
        Path target = file(record.uuid());
        Path temporary = directory.resolve(record.uuid() + SUFFIX + ".tmp");
        byte[] bytes = MAPPER.writeValueAsBytes(record);
        try (FileChannel channel = FileChannel.open(temporary, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING)) {
            channel.write(ByteBuffer.wrap(bytes));
            channel.force(true);
        }
        try {
            Files.move(temporary, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (AtomicMoveNotSupportedException e) {
            Files.move(temporary, target, StandardCopyOption.REPLACE_EXISTING);
        }
        forceDirectory();
    }

    /** The rename is durable only once the directory entry is: fsync the directory (works on Linux, a no-op elsewhere). */
    private void forceDirectory() {
        try (FileChannel channel = FileChannel.open(directory, StandardOpenOption.READ)) {
            channel.force(true);
        } catch (IOException e) {
            LOGGER.debug("nvml sticky findings directory fsync not possible dir={} error=\"{}\"", directory, e.toString());
        }
    }

    private Path file(String uuid) {
        return directory.resolve(uuid + SUFFIX);
    }

    private static String firstLine(String text) {
        if (text == null) {
            return "";
        }
        int newline = text.indexOf('\n');
        return newline < 0 ? text : text.substring(0, newline);
    }
}
