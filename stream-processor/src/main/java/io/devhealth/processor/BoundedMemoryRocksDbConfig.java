package io.devhealth.processor;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.streams.state.RocksDBConfigSetter;
import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.Cache;
import org.rocksdb.LRUCache;
import org.rocksdb.Options;
import org.rocksdb.WriteBufferManager;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Bounds the memory of every RocksDB store of this JVM by one configured total
 * ({@link ProcessorConfig#ROCKSDB_MEMORY}): a shared block cache and a shared write-buffer manager
 * charging memtables into it (the pattern of Kafka Streams' memory-management guide). Without it each
 * store instance (one per store per partition) takes about 50 MiB of cache and 48 MiB of memtables.
 */
public final class BoundedMemoryRocksDbConfig implements RocksDBConfigSetter {

    private static final Logger LOGGER = LoggerFactory.getLogger(BoundedMemoryRocksDbConfig.class);

    /** Streams property carrying the budget (set by {@link StreamProcessorApp#streamsProperties}). */
    public static final String TOTAL_BYTES_CONFIG = "devhealth.rocksdb.total.bytes";
    public static final String MEMTABLE_RATIO_CONFIG = "devhealth.rocksdb.memtable.ratio";
    static final double INDEX_FILTER_RATIO = 0.1;

    /** Shared by every store that asks for the same budget; lives as long as the JVM, as the stores may. */
    private static final Map<RocksDbMemoryBudget, Shared> SHARED = new ConcurrentHashMap<>();

    private record Shared(Cache cache, WriteBufferManager writeBuffers) {}

    @Override
    public void setConfig(String storeName, Options options, Map<String, Object> configs) {
        RocksDbMemoryBudget budget = budget(configs);
        Shared shared = SHARED.computeIfAbsent(budget, b -> {
            LOGGER.info("rocksdb memory bounded totalBytes={} memtableBytes={} writeBufferBytes={}", b.totalBytes(),
                    b.memtableBytes(), b.writeBufferBytes());
            Cache cache = new LRUCache(b.blockCacheBytes(), -1, false, b.indexFilterRatio());
            return new Shared(cache, new WriteBufferManager(b.memtableBytes(), cache));
        });
        BlockBasedTableConfig table = (BlockBasedTableConfig) options.tableFormatConfig();
        table.setBlockCache(shared.cache());
        table.setCacheIndexAndFilterBlocks(true);
        table.setCacheIndexAndFilterBlocksWithHighPriority(true);
        table.setPinTopLevelIndexAndFilter(true);
        options.setWriteBufferManager(shared.writeBuffers());
        options.setWriteBufferSize(budget.writeBufferBytes());
        options.setMaxWriteBufferNumber(budget.maxWriteBuffers());
        options.setTableFormatConfig(table);
    }

    static RocksDbMemoryBudget budget(Map<String, Object> configs) {
        Object total = configs.get(TOTAL_BYTES_CONFIG);
        Object ratio = configs.get(MEMTABLE_RATIO_CONFIG);
        long totalBytes = total == null ? ProcessorConfig.DEFAULT_ROCKSDB_MEMORY : Long.parseLong(total.toString());
        double memtableRatio = ratio == null ? ProcessorConfig.DEFAULT_ROCKSDB_MEMTABLE_RATIO : Double.parseDouble(ratio.toString());
        return new RocksDbMemoryBudget(totalBytes, memtableRatio, INDEX_FILTER_RATIO);
    }

    @Override
    public void close(String storeName, Options options) {
        // The cache and write-buffer manager are shared by every store: closing them here would break the others.
    }
}
