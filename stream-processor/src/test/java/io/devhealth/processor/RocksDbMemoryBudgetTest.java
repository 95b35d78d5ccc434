package io.devhealth.processor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;
import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.Options;
import org.rocksdb.RocksDB;

class RocksDbMemoryBudgetTest {

    @Test
    void shouldSplitTheTotalIntoCacheAndMemtables() {
        RocksDbMemoryBudget budget = new RocksDbMemoryBudget(256L << 20, 0.5, 0.1);

        assertThat(budget.blockCacheBytes()).as("memtables are charged into the cache").isEqualTo(256L << 20);
        assertThat(budget.memtableBytes()).isEqualTo(128L << 20);
        assertThat(budget.writeBufferBytes()).as("128 MiB over 32 stores x 2 buffers").isEqualTo(2L << 20);
        assertThat(budget.maxWriteBuffers()).isEqualTo(2);
    }

    @Test
    void shouldKeepEachMemtableBetweenOneAndSixteenMebibytes() {
        assertThat(new RocksDbMemoryBudget(16L << 20, 0.1, 0.1).writeBufferBytes()).isEqualTo(1L << 20);
        assertThat(new RocksDbMemoryBudget(64L << 30, 0.5, 0.1).writeBufferBytes()).isEqualTo(16L << 20);
    }

    @Test
    void shouldRefuseBudgetsThatCannotWork() {
        assertThatThrownBy(() -> new RocksDbMemoryBudget(1L << 20, 0.5, 0.1)).hasMessageContaining("at least");
        assertThatThrownBy(() -> new RocksDbMemoryBudget(256L << 20, 1.0, 0.1)).hasMessageContaining("memtable ratio");
        assertThatThrownBy(() -> new RocksDbMemoryBudget(256L << 20, 0.5, 0.6)).hasMessageContaining("index/filter");
    }

    @Test
    void shouldShareOneCacheAcrossStoresAndSizeTheirMemtables() {
        RocksDB.loadLibrary();
        Map<String, Object> configs = Map.of(BoundedMemoryRocksDbConfig.TOTAL_BYTES_CONFIG, "67108864",
                BoundedMemoryRocksDbConfig.MEMTABLE_RATIO_CONFIG, "0.25");
        BoundedMemoryRocksDbConfig setter = new BoundedMemoryRocksDbConfig();
        try (Options first = new Options().setTableFormatConfig(new BlockBasedTableConfig());
             Options second = new Options().setTableFormatConfig(new BlockBasedTableConfig())) {
            setter.setConfig("device-state", first, configs);
            setter.setConfig("pod-status", second, configs);

            assertThat(first.writeBufferSize()).isEqualTo(1L << 20);
            assertThat(first.maxWriteBufferNumber()).isEqualTo(2);
            BlockBasedTableConfig table = (BlockBasedTableConfig) first.tableFormatConfig();
            assertThat(table.cacheIndexAndFilterBlocks()).isTrue();
            setter.close("device-state", first);
            setter.close("pod-status", second);
        }
        assertThat(BoundedMemoryRocksDbConfig.budget(configs).memtableBytes()).isEqualTo(16L << 20);
    }
}
