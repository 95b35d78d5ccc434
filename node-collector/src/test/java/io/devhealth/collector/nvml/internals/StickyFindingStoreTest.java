package io.devhealth.collector.nvml.internals;

import static org.assertj.core.api.Assertions.assertThat;

import io.devhealth.collector.nvml.internals.StickyRecord.Baseline;
import io.devhealth.collector.nvml.internals.StickyRecord.StickyFinding;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class StickyFindingStoreTest {

    private static final String UUID = "GPU-5a1d0000-0000-4000-8000-000000000007";

    @TempDir
    Path dir;

    private static StickyRecord record(long ecc, long energy, String... reasons) {
        List<StickyFinding> findings = java.util.Arrays.stream(reasons)
                .map(r -> new StickyFinding(null, null, r, "UNHEALTHY", r + " text", "2026-01-01T00:00:00Z", "2026-01-01T00:00:01Z", 2))
                .toList();
        return new StickyRecord(StickyRecord.VERSION, UUID, "H200", "00000000:19:00.0", 3, "2026-01-01T00:00:02Z", "boot-1",
                new Baseline(0L, false, false, ecc, energy), findings);
    }

    @Test
    void shouldRoundTripARecordThroughItsFile() {
        StickyFindingStore store = new StickyFindingStore(dir.resolve("state"));
        StickyRecord written = record(2, 1_000, "XID-79", "XID-48");
        assertThat(store.sync(Map.of(UUID, written))).isTrue();
        assertThat(dir.resolve("state").resolve(UUID + ".json")).exists();
        assertThat(dir.resolve("state").resolve(UUID + ".json.tmp")).doesNotExist();
        assertThat(new StickyFindingStore(dir.resolve("state")).load()).containsExactly(written);
    }

    @Test
    void shouldRewriteOnlyWhenFindingsOrDiscreteEvidenceChange() throws IOException {
        StickyFindingStore store = new StickyFindingStore(dir);
        Path file = dir.resolve(UUID + ".json");
        store.sync(Map.of(UUID, record(2, 1_000, "XID-79")));
        Files.setLastModifiedTime(file, FileTime.fromMillis(0));
        store.sync(Map.of(UUID, record(2, 5_000, "XID-79")));
        assertThat(Files.getLastModifiedTime(file).toMillis()).isZero();
        store.sync(Map.of(UUID, record(3, 5_000, "XID-79")));
        assertThat(Files.getLastModifiedTime(file).toMillis()).isPositive();
        assertThat(new StickyFindingStore(dir).load().get(0).baseline().energyMj()).isEqualTo(5_000L);
    }

    @Test
    void shouldDeleteTheFileOfAGpuWithNoStickyFindingsLeft() {
        StickyFindingStore store = new StickyFindingStore(dir);
        store.sync(Map.of(UUID, record(0, 0, "XID-79")));
        StickyFindingStore restarted = new StickyFindingStore(dir);
        assertThat(restarted.load()).hasSize(1);
        assertThat(restarted.sync(Map.of())).isTrue();
        assertThat(dir.resolve(UUID + ".json")).doesNotExist();
    }

    @Test
    void shouldSetAsideRecordsThatDoNotValidate() throws IOException {
        Files.writeString(dir.resolve(UUID + ".json"), "{\"version\": 2, \"uuid\": \"" + UUID + "\", \"findings\": []}");
        Files.writeString(dir.resolve("GPU-other.json"), "{\"version\": 1, \"uuid\": \"" + UUID + "\"}");
        Files.writeString(dir.resolve("GPU-empty.json"), "");
        assertThat(new StickyFindingStore(dir).load()).isEmpty();
        assertThat(dir.resolve(UUID + ".json.corrupt")).exists();
        assertThat(dir.resolve("GPU-other.json.corrupt")).exists();
        assertThat(dir.resolve("GPU-empty.json.corrupt")).exists();
    }

    @Test
    void shouldReportAFailedWriteAndRetryItWithoutThrowing() throws IOException {
        Path blocked = dir.resolve("blocked");
        Files.writeString(blocked, "a file where the directory should be");
        StickyFindingStore store = new StickyFindingStore(blocked);
        assertThat(store.sync(Map.of(UUID, record(0, 0, "XID-79")))).isFalse();
        assertThat(store.sync(Map.of(UUID, record(0, 0, "XID-79")))).isFalse();
        Files.delete(blocked);
        assertThat(store.sync(Map.of(UUID, record(0, 0, "XID-79")))).isTrue();
        assertThat(blocked.resolve(UUID + ".json")).exists();
    }

    @Test
    void shouldStartEmptyWithoutADirectory() {
        assertThat(new StickyFindingStore(dir.resolve("missing")).load()).isEmpty();
    }
}
