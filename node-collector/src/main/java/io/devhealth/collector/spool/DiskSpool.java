package io.devhealth.collector.spool;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongFunction;
import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.CompressionType;
import org.rocksdb.InfoLogLevel;
import org.rocksdb.LRUCache;
import org.rocksdb.Options;
import org.rocksdb.ReadOptions;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;
import org.rocksdb.Slice;
import org.rocksdb.Status;
import org.rocksdb.WALRecoveryMode;
import org.rocksdb.WriteBatch;
import org.rocksdb.WriteOptions;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The collector's bounded on-disk queue between its sources and Kafka, on RocksDB.
 *
 * <p><b>Order and identity.</b> Every accepted record gets the next sequence number of the spool,
 * written in the same atomic batch as the record. Sequences strictly increase within the spool's
 * {@linkplain #epoch() epoch}, across restarts of the collector: the epoch is chosen once, when the
 * spool directory is created, and changes only when the spool is lost (deleted, or found corrupt and
 * set aside). So (epoch, sequence) identifies a record for good, and a record replayed after a crash
 * carries the same identity as its first delivery: the processor can drop the duplicate.
 *
 * <p><b>Durability.</b> {@link #append} returns after RocksDB wrote the record to its write-ahead
 * log through {@code write(2)}: the bytes are in the kernel's page cache, so a crash or
 * {@code kill -9} of the collector loses nothing accepted. The log is fsynced every
 * {@code fsyncInterval} (a background thread), or on every append when the interval is zero; only
 * a crash of the whole node within that interval can lose accepted records. Recovery replays the
 * log up to the first torn record ({@link WALRecoveryMode#PointInTimeRecovery}).
 *
 * <p><b>Budget.</b> At most {@code maxBytes} of records (keys and values as stored; RocksDB's own
 * files add overhead on top, see docs/COLLECTOR.md). When a record does not fit, the oldest
 * unsent {@linkplain Priority#KEEPALIVE keep-alives} are evicted to make room; when there are none,
 * the record is rejected. Nothing ever waits for space: the callers are gRPC stream threads.
 * Every eviction and rejection is counted ({@link #dropped}).
 *
 * <p><b>Sending.</b> One sender takes records in sequence order ({@link #nextForSend}) and removes
 * each only when Kafka acknowledged it ({@link #acknowledge}); {@link #rewindTo} hands records out
 * again after a failed send. Records handed out are never evicted.
 *
 * <p>Thread-safe: one monitor guards the in-memory accounting and every write.
 */
public final class DiskSpool implements AutoCloseable {

    private static final Logger LOGGER = LoggerFactory.getLogger(DiskSpool.class);

    private static final String META_EPOCH = "epoch";
    private static final String META_LAST_SEQUENCE = "last-sequence";
    private static final long WRITE_BUFFER_BYTES = 4L * 1024 * 1024;
    private static final long BLOCK_CACHE_BYTES = 4L * 1024 * 1024;
    private static final long MAX_WAL_BYTES = 64L * 1024 * 1024;

    /**
     * @param directory the spool's own directory (created if missing); on a node a hostPath, so that it outlives the pod
     * @param maxBytes the disk budget for records
     * @param fsyncInterval how often the write-ahead log is fsynced; {@link Duration#ZERO} = on every append
     */
    public record Settings(Path directory, long maxBytes, Duration fsyncInterval) {

        public static final long DEFAULT_MAX_BYTES = 256L * 1024 * 1024;
        public static final Duration DEFAULT_FSYNC_INTERVAL = Duration.ofSeconds(1);

        public Settings {
            Objects.requireNonNull(directory, "directory");
            if (maxBytes <= 0) {
                throw new IllegalArgumentException("maxBytes must be positive");
            }
            if (fsyncInterval.isNegative()) {
                throw new IllegalArgumentException("fsyncInterval must not be negative");
            }
        }
    }

    private final Settings settings;
    private final Clock clock;
    private final Options options;
    private final LRUCache blockCache;
    private final WriteOptions writeOptions;
    private final RocksDB db;
    private final long epoch;
    private final ScheduledExecutorService syncer;
    private final EvictionQueue evictable = new EvictionQueue();
    private final Map<Priority, LongAdder> evicted = new EnumMap<>(Priority.class);
    private final Map<Priority, LongAdder> rejected = new EnumMap<>(Priority.class);
    private final Map<Priority, LongAdder> failed = new EnumMap<>(Priority.class);

    private long lastSequence;
    private long lastHandedOut;
    /** No live record has a smaller sequence: scans start here instead of wading through delete tombstones. */
    private long firstLiveHint;
    private long records;
    private long bytes;
    private boolean dirty;
    private boolean closed;

    private DiskSpool(Settings settings, Clock clock, Options options, LRUCache blockCache, RocksDB db) throws RocksDBException {
        this.settings = settings;
        this.clock = clock;
        this.options = options;
        this.blockCache = blockCache;
        this.db = db;
        this.writeOptions = new WriteOptions().setSync(settings.fsyncInterval().isZero());
        for (Priority priority : Priority.values()) {
            evicted.put(priority, new LongAdder());
            rejected.put(priority, new LongAdder());
            failed.put(priority, new LongAdder());
        }
        this.epoch = loadOrCreateEpoch();
        recover();
        if (settings.fsyncInterval().isZero()) {
            this.syncer = null;
        } else {
            this.syncer = Executors.newSingleThreadScheduledExecutor(runnable -> {
                Thread thread = new Thread(runnable, "devhealth-spool-fsync");
                thread.setDaemon(true);
                return thread;
            });
            long ms = Math.max(1, settings.fsyncInterval().toMillis());
            syncer.scheduleWithFixedDelay(this::syncIfDirty, ms, ms, TimeUnit.MILLISECONDS);
        }
    }

    /**
     * Opens the spool in {@code settings.directory()}, replaying what an earlier run left there. A
     * directory RocksDB reports as corrupt is renamed to {@code <dir>.corrupt-<millis>} (kept for
     * inspection) and a new spool with a new epoch is started: the collector must keep running.
     */
    public static DiskSpool open(Settings settings, Clock clock) {
        RocksDB.loadLibrary();
        try {
            Files.createDirectories(settings.directory());
        } catch (IOException e) {
            throw new SpoolException("cannot create spool directory " + settings.directory(), e);
        }
        try {
            return openOnce(settings, clock);
        } catch (RocksDBException e) {
            if (!isCorruption(e)) {
                throw new SpoolException("cannot open spool " + settings.directory() + ": " + e.getMessage(), e);
            }
            Path aside = settings.directory().resolveSibling(settings.directory().getFileName() + ".corrupt-" + clock.millis());
            LOGGER.error("spool corrupt, set aside and started anew dir={} movedTo={} error=\"{}\"",
                    settings.directory(), aside, e.getMessage());
            try {
                Files.move(settings.directory(), aside);
                Files.createDirectories(settings.directory());
                return openOnce(settings, clock);
            } catch (IOException | RocksDBException again) {
                throw new SpoolException("cannot start a new spool in " + settings.directory(), again);
            }
        }
    }

    private static boolean isCorruption(RocksDBException e) {
        Status status = e.getStatus();
        return status != null && status.getCode() == Status.Code.Corruption;
    }

    private static DiskSpool openOnce(Settings settings, Clock clock) throws RocksDBException {
        LRUCache cache = new LRUCache(BLOCK_CACHE_BYTES);
        Options options = new Options()
                .setCreateIfMissing(true)
                .setWalRecoveryMode(WALRecoveryMode.PointInTimeRecovery)
                .setWriteBufferSize(WRITE_BUFFER_BYTES)
                .setMaxWriteBufferNumber(2)
                .setMaxTotalWalSize(MAX_WAL_BYTES)
                .setMaxOpenFiles(64)
                .setKeepLogFileNum(2)
                .setInfoLogLevel(InfoLogLevel.WARN_LEVEL)
                .setMaxBackgroundJobs(1)
                .setCompressionType(CompressionType.LZ4_COMPRESSION)
                .setTableFormatConfig(new BlockBasedTableConfig().setBlockCache(cache));
        try {
            RocksDB db = RocksDB.open(options, settings.directory().toString());
            try {
                return new DiskSpool(settings, clock, options, cache, db);
            } catch (RocksDBException | RuntimeException e) {
                db.close();
                throw e;
            }
        } catch (RocksDBException | RuntimeException e) {
            options.close();
            cache.close();
            throw e;
        }
    }

    private long loadOrCreateEpoch() throws RocksDBException {
        byte[] stored = db.get(SpoolFormat.metaKey(META_EPOCH));
        if (stored != null) {
            return SpoolFormat.longValue(stored);
        }
        long created = Math.max(1, clock.millis());
        try (WriteOptions sync = new WriteOptions().setSync(true)) {
            db.put(sync, SpoolFormat.metaKey(META_EPOCH), SpoolFormat.longBytes(created));
        }
        LOGGER.info("spool created dir={} epoch={}", settings.directory(), created);
        return created;
    }

    /** Rebuilds the accounting from what is on disk. */
    private void recover() throws RocksDBException {
        byte[] last = db.get(SpoolFormat.metaKey(META_LAST_SEQUENCE));
        long maxKey = 0;
        long firstKey = -1;
        try (ReadOptions read = new ReadOptions().setIterateUpperBound(new Slice(SpoolFormat.RECORDS_END));
             RocksIterator it = db.newIterator(read)) {
            for (it.seek(SpoolFormat.recordKey(0)); it.isValid(); it.next()) {
                byte[] key = it.key();
                byte[] value = it.value();
                long sequence = SpoolFormat.sequenceOf(key);
                long size = (long) key.length + value.length;
                if (firstKey < 0) {
                    firstKey = sequence;
                }
                maxKey = sequence;
                records++;
                bytes += size;
                if (SpoolFormat.priorityOf(value) == Priority.KEEPALIVE) {
                    evictable.add(sequence, (int) size);
                }
            }
            it.status();
        }
        lastSequence = Math.max(last == null ? 0 : SpoolFormat.longValue(last), maxKey);
        lastHandedOut = firstKey < 0 ? lastSequence : firstKey - 1;
        firstLiveHint = lastHandedOut + 1;
        LOGGER.info("spool opened dir={} epoch={} records={} bytes={} lastSequence={} maxBytes={} fsyncIntervalMs={}",
                settings.directory(), epoch, records, bytes, lastSequence, settings.maxBytes(),
                settings.fsyncInterval().toMillis());
    }

    /** Chosen when the spool was created; part of every record's identity. */
    public long epoch() {
        return epoch;
    }

    /**
     * Accepts a record, or counts why not. Never blocks on space.
     *
     * @param encoder builds the payload for the sequence the record gets (records carry their sequence inside)
     */
    public synchronized AppendResult append(RecordType type, Priority priority, LongFunction<byte[]> encoder) {
        if (closed) {
            failed.get(priority).increment();
            return AppendResult.rejected(AppendResult.Outcome.FAILED);
        }
        long sequence = lastSequence + 1;
        byte[] payload;
        try {
            payload = encoder.apply(sequence);
        } catch (RuntimeException e) {
            failed.get(priority).increment();
            LOGGER.error("spool record not encoded type={} error=\"{}\"", type, e.toString(), e);
            return AppendResult.rejected(AppendResult.Outcome.FAILED);
        }
        Instant now = clock.instant();
        byte[] key = SpoolFormat.recordKey(sequence);
        byte[] value = SpoolFormat.value(type, priority, now, payload);
        long size = (long) key.length + value.length;
        try (WriteBatch batch = new WriteBatch()) {
            int evictions = makeRoom(size, batch);
            if (evictions < 0) {
                rejected.get(priority).increment();
                LOGGER.debug("spool full, record rejected type={} priority={} bytes={}", type, priority, bytes);
                return AppendResult.rejected(AppendResult.Outcome.REJECTED_FULL);
            }
            batch.put(key, value);
            batch.put(SpoolFormat.metaKey(META_LAST_SEQUENCE), SpoolFormat.longBytes(sequence));
            db.write(writeOptions, batch);
            commitEvictions(evictions);
        } catch (RocksDBException e) {
            failed.get(priority).increment();
            LOGGER.error("spool write failed type={} sequence={} error=\"{}\"", type, sequence, e.getMessage());
            return AppendResult.rejected(AppendResult.Outcome.FAILED);
        }
        lastSequence = sequence;
        records++;
        bytes += size;
        dirty = true;
        if (priority == Priority.KEEPALIVE) {
            evictable.add(sequence, (int) size);
        }
        notifyAll();
        return AppendResult.accepted(sequence);
    }

    /**
     * Adds deletes of the oldest evictable keep-alives to {@code batch} until {@code size} fits.
     *
     * @return how many were added (taken off the queue by {@link #commitEvictions}), or -1 when the record cannot fit
     */
    private int makeRoom(long size, WriteBatch batch) throws RocksDBException {
        if (size > settings.maxBytes()) {
            return -1;
        }
        long free = settings.maxBytes() - bytes;
        int count = 0;
        long freed = 0;
        // Walk the queue without consuming it: the batch may still fail.
        List<long[]> plan = new ArrayList<>();
        while (free + freed < size) {
            while (!evictable.isEmpty() && evictable.peekSequence() <= lastHandedOut) {
                evictable.poll(); // handed to Kafka already: it leaves on acknowledgement
            }
            if (evictable.size() <= count) {
                return -1;
            }
            plan.add(new long[] {evictable.sequenceAt(count), evictable.sizeAt(count)});
            freed += plan.get(count)[1];
            count++;
        }
        for (long[] victim : plan) {
            batch.delete(SpoolFormat.recordKey(victim[0]));
        }
        return count;
    }

    private void commitEvictions(int count) {
        for (int i = 0; i < count; i++) {
            records--;
            bytes -= evictable.peekSize();
            evictable.poll();
            evicted.get(Priority.KEEPALIVE).increment();
        }
        if (count > 0) {
            LOGGER.debug("spool full, keep-alives evicted count={}", count);
        }
    }

    /**
     * The next records for Kafka in sequence order, after those already handed out; they stay in
     * the spool until {@linkplain #acknowledge acknowledged}.
     */
    public synchronized List<SpoolEntry> nextForSend(int maxRecords) {
        List<SpoolEntry> out = new ArrayList<>();
        if (closed || lastHandedOut >= lastSequence) {
            return out;
        }
        try (Slice lower = new Slice(SpoolFormat.recordKey(lastHandedOut + 1));
             Slice upper = new Slice(SpoolFormat.RECORDS_END);
             ReadOptions read = new ReadOptions().setIterateLowerBound(lower).setIterateUpperBound(upper);
             RocksIterator it = db.newIterator(read)) {
            for (it.seek(SpoolFormat.recordKey(lastHandedOut + 1)); it.isValid() && out.size() < maxRecords; it.next()) {
                out.add(SpoolFormat.entry(it.key(), it.value()));
            }
            it.status();
        } catch (RocksDBException e) {
            LOGGER.error("spool read failed after={} error=\"{}\"", lastHandedOut, e.getMessage());
            return out;
        }
        if (!out.isEmpty()) {
            lastHandedOut = out.get(out.size() - 1).sequence();
        } else {
            lastHandedOut = lastSequence; // everything after was evicted
        }
        // Handed out means no longer evictable: keep the queue as short as what is waiting.
        while (!evictable.isEmpty() && evictable.peekSequence() <= lastHandedOut) {
            evictable.poll();
        }
        return out;
    }

    /** Waits (at most {@code timeout}) until records not yet handed out exist. */
    public synchronized boolean awaitUnsent(Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!closed && lastHandedOut >= lastSequence) {
            long remaining = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
            if (remaining <= 0) {
                return false;
            }
            wait(remaining);
        }
        return !closed;
    }

    /** Kafka has the record: remove it for good. */
    public synchronized void acknowledge(SpoolEntry entry) {
        if (closed) {
            return; // still on disk: sent again after the restart, a duplicate the processor drops
        }
        byte[] key = SpoolFormat.recordKey(entry.sequence());
        try {
            if (db.get(key) == null) {
                return; // acknowledged twice (a resend after a producer failure): count it once
            }
            db.delete(writeOptions, key);
        } catch (RocksDBException e) {
            LOGGER.warn("spool delete failed sequence={} error=\"{}\"", entry.sequence(), e.getMessage());
            return;
        }
        records--;
        bytes -= entry.storedBytes();
        dirty = true;
    }

    /**
     * Hands out again every record from {@code sequence} on (a send failed there); records before it
     * stay handed out. {@code Long.MIN_VALUE} rewinds to the oldest record in the spool.
     */
    public synchronized void rewindTo(long sequence) {
        long target = sequence == Long.MIN_VALUE ? firstLive().orElse(lastSequence + 1) : sequence;
        lastHandedOut = Math.min(lastHandedOut, target - 1);
        notifyAll();
    }

    private Optional<Long> firstLive() {
        try (Slice lower = new Slice(SpoolFormat.recordKey(firstLiveHint));
             Slice upper = new Slice(SpoolFormat.RECORDS_END);
             ReadOptions read = new ReadOptions().setIterateLowerBound(lower).setIterateUpperBound(upper);
             RocksIterator it = db.newIterator(read)) {
            it.seek(SpoolFormat.recordKey(firstLiveHint));
            if (it.isValid()) {
                long first = SpoolFormat.sequenceOf(it.key());
                firstLiveHint = first;
                return Optional.of(first);
            }
            firstLiveHint = lastSequence + 1;
            return Optional.empty();
        }
    }

    /** When the oldest record still in the spool was accepted; empty when the spool is empty. */
    public synchronized Optional<Instant> oldestAcceptedAt() {
        if (closed || records == 0) {
            return Optional.empty();
        }
        Optional<Long> first = firstLive();
        if (first.isEmpty()) {
            return Optional.empty();
        }
        try {
            byte[] key = SpoolFormat.recordKey(first.get());
            byte[] value = db.get(key);
            return value == null ? Optional.empty() : Optional.of(SpoolFormat.entry(key, value).acceptedAt());
        } catch (RocksDBException e) {
            return Optional.empty();
        }
    }

    /** Stores a small named value with the spool (written through to disk at once). */
    public synchronized void putMetadata(String name, byte[] value) {
        try (WriteOptions sync = new WriteOptions().setSync(true)) {
            db.put(sync, SpoolFormat.metaKey(name), value);
        } catch (RocksDBException e) {
            throw new SpoolException("cannot store spool metadata " + name, e);
        }
    }

    /** The metadata whose names start with {@code prefix}. */
    public synchronized Map<String, byte[]> metadata(String prefix) {
        Map<String, byte[]> out = new LinkedHashMap<>();
        byte[] start = SpoolFormat.metaKey(prefix);
        try (RocksIterator it = db.newIterator()) {
            for (it.seek(start); it.isValid(); it.next()) {
                String name = SpoolFormat.metaName(it.key());
                if (it.key()[0] != SpoolFormat.META_PREFIX || !name.startsWith(prefix)) {
                    break;
                }
                out.put(name, it.value());
            }
        }
        return out;
    }

    public synchronized long records() {
        return records;
    }

    public synchronized long bytes() {
        return bytes;
    }

    /** Keep-alives that could still be evicted (tests: the queue must not grow with acknowledged ones). */
    synchronized int evictionCandidates() {
        return evictable.size();
    }

    public long maxBytes() {
        return settings.maxBytes();
    }

    public synchronized long lastSequence() {
        return lastSequence;
    }

    /** Records given up because of {@code outcome} (evicted or rejected keep-alives, rejected essentials, failures). */
    public long dropped(Priority priority, DropReason reason) {
        return switch (reason) {
            case EVICTED -> evicted.get(priority).sum();
            case REJECTED_FULL -> rejected.get(priority).sum();
            case FAILED -> failed.get(priority).sum();
        };
    }

    /** Why a record was given up. */
    public enum DropReason {
        /** A spooled keep-alive removed to make room for a newer record. */
        EVICTED,
        /** A new record refused: the budget was full and nothing could be evicted. */
        REJECTED_FULL,
        /** A new record the storage could not take (disk error, closed). */
        FAILED
    }

    /** Forces the write-ahead log to the device now. */
    public synchronized void sync() {
        if (closed) {
            return;
        }
        try {
            db.syncWal();
            dirty = false;
        } catch (RocksDBException e) {
            LOGGER.warn("spool fsync failed error=\"{}\"", e.getMessage());
        }
    }

    private void syncIfDirty() {
        boolean needed;
        synchronized (this) {
            needed = dirty && !closed;
        }
        if (needed) {
            sync();
        }
    }

    public Path directory() {
        return settings.directory();
    }

    @Override
    public void close() {
        if (syncer != null) {
            syncer.shutdownNow();
        }
        synchronized (this) {
            if (closed) {
                return;
            }
            try {
                db.syncWal();
            } catch (RocksDBException e) {
                LOGGER.warn("spool fsync at close failed error=\"{}\"", e.getMessage());
            }
            closed = true;
            notifyAll();
            db.close();
            writeOptions.close();
            options.close();
            blockCache.close();
        }
        LOGGER.info("spool closed dir={} records={} bytes={}", settings.directory(), records, bytes);
    }
}
