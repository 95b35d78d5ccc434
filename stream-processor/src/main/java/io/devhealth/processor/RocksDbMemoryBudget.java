package io.devhealth.processor;

/**
 * How one configured total of off-heap memory is shared by every RocksDB store of the processor:
 * one LRU block cache of {@code totalBytes}, into which a write-buffer manager also charges the
 * memtables ({@code memtableBytes}, a share of the total), so that block cache, index and filter
 * blocks and memtables together stay within {@code totalBytes} however many stores and partitions
 * the instance holds. Index and filter blocks go to the cache's high-priority pool.
 */
public record RocksDbMemoryBudget(long totalBytes, double memtableRatio, double indexFilterRatio) {

    /** Below this RocksDB spends its cache on its own bookkeeping. */
    public static final long MIN_TOTAL_BYTES = 16L << 20;
    /** RocksDB's default memtable size; never more per store than that. */
    static final long MAX_WRITE_BUFFER_BYTES = 16L << 20;
    static final long MIN_WRITE_BUFFER_BYTES = 1L << 20;
    /** Two memtables per store: one filling while the other flushes. */
    static final int WRITE_BUFFERS_PER_STORE = 2;
    /** Stores one instance is expected to hold at once (6 stores × a few partitions); sizes each memtable. */
    static final int EXPECTED_STORES = 32;

    public RocksDbMemoryBudget {
        if (totalBytes < MIN_TOTAL_BYTES) {
            throw new IllegalArgumentException("RocksDB memory total must be at least " + MIN_TOTAL_BYTES + " bytes, got " + totalBytes);
        }
        if (!(memtableRatio > 0.0 && memtableRatio < 1.0)) {
            throw new IllegalArgumentException("memtable ratio must be in (0, 1), got " + memtableRatio);
        }
        if (!(indexFilterRatio >= 0.0 && indexFilterRatio < 1.0 - memtableRatio)) {
            throw new IllegalArgumentException("index/filter ratio must be in [0, 1 - memtable ratio), got " + indexFilterRatio);
        }
    }

    /** Capacity of the shared block cache: the whole budget (memtables are charged into it). */
    public long blockCacheBytes() {
        return totalBytes;
    }

    /** Limit of the shared write-buffer manager. */
    public long memtableBytes() {
        return (long) (totalBytes * memtableRatio);
    }

    /** Size of one memtable of one store: its share of the memtable budget, between 1 and 16 MiB. */
    public long writeBufferBytes() {
        long share = memtableBytes() / ((long) EXPECTED_STORES * WRITE_BUFFERS_PER_STORE);
        return Math.max(MIN_WRITE_BUFFER_BYTES, Math.min(MAX_WRITE_BUFFER_BYTES, share));
    }

    public int maxWriteBuffers() {
        return WRITE_BUFFERS_PER_STORE;
    }
}
