package io.devhealth.collector.spool;

import static org.assertj.core.api.Assertions.assertThat;

import io.devhealth.testkit.time.MutableClock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DiskSpoolTest {

    @TempDir
    Path dir;

    private final MutableClock clock = MutableClock.at("2026-11-30T10:00:00Z");

    private DiskSpool open(long maxBytes) {
        return DiskSpool.open(new DiskSpool.Settings(dir.resolve("spool"), maxBytes, Duration.ofMillis(50)), clock);
    }

    private static AppendResult append(DiskSpool spool, Priority priority, String text) {
        return spool.append(RecordType.DEVICE_REPORT, priority, seq -> (text + "#" + seq).getBytes(StandardCharsets.UTF_8));
    }

    private static List<String> payloads(List<SpoolEntry> entries) {
        return entries.stream().map(e -> new String(e.payload(), StandardCharsets.UTF_8)).toList();
    }

    @Test
    void shouldAssignIncreasingSequencesAndHandOutInOrder() {
        try (DiskSpool spool = open(1 << 20)) {
            assertThat(append(spool, Priority.ESSENTIAL, "a").sequence()).isEqualTo(1);
            assertThat(append(spool, Priority.KEEPALIVE, "b").sequence()).isEqualTo(2);
            assertThat(append(spool, Priority.ESSENTIAL, "c").sequence()).isEqualTo(3);

            List<SpoolEntry> first = spool.nextForSend(2);
            List<SpoolEntry> rest = spool.nextForSend(10);

            assertThat(payloads(first)).containsExactly("a#1", "b#2");
            assertThat(payloads(rest)).containsExactly("c#3");
            assertThat(first.get(1).priority()).isEqualTo(Priority.KEEPALIVE);
            assertThat(first.get(0).acceptedAt()).isEqualTo(clock.instant());
            assertThat(spool.nextForSend(10)).isEmpty();
            assertThat(spool.records()).isEqualTo(3);
        }
    }

    @Test
    void shouldKeepEpochSequenceAndUnacknowledgedRecordsAcrossRestart() {
        long epoch;
        try (DiskSpool spool = open(1 << 20)) {
            epoch = spool.epoch();
            append(spool, Priority.ESSENTIAL, "a");
            append(spool, Priority.ESSENTIAL, "b");
            append(spool, Priority.ESSENTIAL, "c");
            List<SpoolEntry> sent = spool.nextForSend(10);
            spool.acknowledge(sent.get(0)); // only "a" reached Kafka
        }
        clock.advance(Duration.ofHours(1));
        try (DiskSpool spool = open(1 << 20)) {
            assertThat(spool.epoch()).isEqualTo(epoch);
            assertThat(spool.records()).isEqualTo(2);
            assertThat(payloads(spool.nextForSend(10))).containsExactly("b#2", "c#3");
            assertThat(append(spool, Priority.ESSENTIAL, "d").sequence()).isEqualTo(4);
        }
    }

    @Test
    void shouldNeverReuseSequencesAfterTheSpoolDrainedAndRestarted() {
        try (DiskSpool spool = open(1 << 20)) {
            append(spool, Priority.ESSENTIAL, "a");
            append(spool, Priority.ESSENTIAL, "b");
            spool.nextForSend(10).forEach(spool::acknowledge);
            assertThat(spool.records()).isZero();
            assertThat(spool.bytes()).isZero();
        }
        try (DiskSpool spool = open(1 << 20)) {
            assertThat(spool.records()).isZero();
            assertThat(append(spool, Priority.ESSENTIAL, "c").sequence()).isEqualTo(3);
        }
    }

    @Test
    void shouldStartANewEpochWhenTheSpoolIsLost() throws Exception {
        long first;
        try (DiskSpool spool = open(1 << 20)) {
            first = spool.epoch();
        }
        try (var paths = java.nio.file.Files.walk(dir.resolve("spool"))) {
            paths.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
        clock.advance(Duration.ofSeconds(5));
        try (DiskSpool spool = open(1 << 20)) {
            assertThat(spool.epoch()).isGreaterThan(first);
            assertThat(append(spool, Priority.ESSENTIAL, "a").sequence()).isEqualTo(1);
        }
    }

    @Test
    void shouldEvictOldestUnsentKeepAlivesToMakeRoomForAChange() {
        try (DiskSpool spool = open(1_000)) {
            // Each record: 9 key + 11 header + ~100 payload bytes.
            String filler = "k".repeat(96);
            for (int i = 0; i < 8; i++) {
                assertThat(append(spool, Priority.KEEPALIVE, filler).accepted()).isTrue();
            }
            long before = spool.bytes();
            AppendResult change = append(spool, Priority.ESSENTIAL, "c".repeat(200));

            assertThat(change.accepted()).isTrue();
            assertThat(spool.bytes()).isLessThanOrEqualTo(1_000);
            assertThat(spool.dropped(Priority.KEEPALIVE, DiskSpool.DropReason.EVICTED)).isGreaterThanOrEqualTo(1);
            assertThat(spool.bytes()).isLessThan(before + 220);
            List<SpoolEntry> left = spool.nextForSend(100);
            // The oldest keep-alives went, the newest and the change stayed, in order.
            assertThat(left.get(left.size() - 1).priority()).isEqualTo(Priority.ESSENTIAL);
            assertThat(left.get(0).sequence()).isGreaterThan(1);
            assertThat(left).extracting(SpoolEntry::sequence).isSorted();
        }
    }

    @Test
    void shouldRejectAndCountWhenNothingIsLeftToEvictAndAcceptAgainOnceDrained() {
        try (DiskSpool spool = open(600)) {
            String filler = "e".repeat(180);
            int accepted = 0;
            for (int i = 0; i < 5; i++) {
                if (append(spool, Priority.ESSENTIAL, filler).accepted()) {
                    accepted++;
                }
            }
            assertThat(accepted).isEqualTo(2);
            assertThat(spool.dropped(Priority.ESSENTIAL, DiskSpool.DropReason.REJECTED_FULL)).isEqualTo(3);
            AppendResult keepAlive = append(spool, Priority.KEEPALIVE, filler);
            assertThat(keepAlive.outcome()).isEqualTo(AppendResult.Outcome.REJECTED_FULL);
            assertThat(spool.dropped(Priority.KEEPALIVE, DiskSpool.DropReason.REJECTED_FULL)).isEqualTo(1);

            spool.nextForSend(10).forEach(spool::acknowledge);

            AppendResult after = append(spool, Priority.ESSENTIAL, filler);
            assertThat(after.accepted()).isTrue();
            // Rejected records took no sequence: no gap the processor would have to explain.
            assertThat(after.sequence()).isEqualTo(3);
        }
    }

    @Test
    void shouldNotEvictKeepAlivesAlreadyHandedToKafka() {
        try (DiskSpool spool = open(500)) {
            String filler = "k".repeat(180);
            append(spool, Priority.KEEPALIVE, filler);
            append(spool, Priority.KEEPALIVE, filler);
            spool.nextForSend(10); // both in flight

            AppendResult change = append(spool, Priority.ESSENTIAL, filler);

            assertThat(change.outcome()).isEqualTo(AppendResult.Outcome.REJECTED_FULL);
            assertThat(spool.dropped(Priority.KEEPALIVE, DiskSpool.DropReason.EVICTED)).isZero();
        }
    }

    @Test
    void shouldNotRememberKeepAlivesThatWereHandedOut() {
        try (DiskSpool spool = open(1 << 20)) {
            for (int i = 0; i < 1_000; i++) {
                append(spool, Priority.KEEPALIVE, "k");
            }
            assertThat(spool.evictionCandidates()).isEqualTo(1_000);

            spool.nextForSend(2_000).forEach(spool::acknowledge);

            assertThat(spool.evictionCandidates()).isZero();
            assertThat(spool.records()).isZero();
        }
    }

    @Test
    void shouldHandOutAgainFromTheRewoundSequence() {
        try (DiskSpool spool = open(1 << 20)) {
            for (String s : List.of("a", "b", "c", "d")) {
                append(spool, Priority.ESSENTIAL, s);
            }
            List<SpoolEntry> sent = spool.nextForSend(10);
            spool.acknowledge(sent.get(0));

            spool.rewindTo(3);
            assertThat(payloads(spool.nextForSend(10))).containsExactly("c#3", "d#4");

            spool.rewindTo(Long.MIN_VALUE);
            assertThat(payloads(spool.nextForSend(10))).containsExactly("b#2", "c#3", "d#4");
        }
    }

    @Test
    void shouldCountADoubleAcknowledgementOnce() {
        try (DiskSpool spool = open(1 << 20)) {
            append(spool, Priority.ESSENTIAL, "a");
            append(spool, Priority.ESSENTIAL, "b");
            SpoolEntry a = spool.nextForSend(1).get(0);

            spool.acknowledge(a);
            spool.acknowledge(a);

            assertThat(spool.records()).isEqualTo(1);
        }
    }

    @Test
    void shouldReportTheAgeOfTheOldestRecord() {
        try (DiskSpool spool = open(1 << 20)) {
            assertThat(spool.oldestAcceptedAt()).isEmpty();
            Instant first = clock.instant();
            append(spool, Priority.ESSENTIAL, "a");
            clock.advance(Duration.ofSeconds(30));
            append(spool, Priority.ESSENTIAL, "b");

            assertThat(spool.oldestAcceptedAt()).contains(first);
            spool.acknowledge(spool.nextForSend(1).get(0));
            assertThat(spool.oldestAcceptedAt()).contains(first.plusSeconds(30));
        }
    }

    @Test
    void shouldRebuildEvictionCandidatesAfterRestart() {
        try (DiskSpool spool = open(500)) {
            String filler = "k".repeat(180);
            append(spool, Priority.KEEPALIVE, filler);
            append(spool, Priority.KEEPALIVE, filler);
        }
        try (DiskSpool spool = open(500)) {
            assertThat(append(spool, Priority.ESSENTIAL, "e".repeat(180)).accepted()).isTrue();
            assertThat(spool.dropped(Priority.KEEPALIVE, DiskSpool.DropReason.EVICTED)).isEqualTo(1);
        }
    }

    @Test
    void shouldSetACorruptSpoolAsideAndStartAnew() throws Exception {
        long epoch;
        try (DiskSpool spool = open(1 << 20)) {
            epoch = spool.epoch();
            append(spool, Priority.ESSENTIAL, "a");
        }
        try (var files = java.nio.file.Files.list(dir.resolve("spool"))) {
            for (Path file : files.filter(f -> f.getFileName().toString().startsWith("MANIFEST")).toList()) {
                java.nio.file.Files.write(file, "garbage".getBytes(StandardCharsets.US_ASCII));
            }
        }
        clock.advance(Duration.ofSeconds(1));
        try (DiskSpool spool = open(1 << 20)) {
            assertThat(spool.epoch()).isNotEqualTo(epoch);
            assertThat(spool.records()).isZero();
        }
        try (var siblings = java.nio.file.Files.list(dir)) {
            assertThat(siblings.map(p -> p.getFileName().toString())).anyMatch(n -> n.startsWith("spool.corrupt-"));
        }
    }
}
