package io.devhealth.query.access;

import static org.assertj.core.api.Assertions.assertThat;

import io.devhealth.testkit.time.MutableClock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class BearerTokensTest {

    private final MutableClock clock = MutableClock.at("2026-11-29T10:00:00Z");

    @Test
    void shouldAcceptTokensFromTheFileAndTheEnvironmentOnly(@TempDir Path dir) throws Exception {
        Path file = Files.writeString(dir.resolve("tokens"), "# query tokens\n  alpha-token \n\nbeta-token\r\n");
        BearerTokens tokens = new BearerTokens(file, "env-token", Duration.ofSeconds(10), clock);

        assertThat(tokens.count()).isEqualTo(3);
        assertThat(tokens.matches("alpha-token")).isTrue();
        assertThat(tokens.matches("beta-token")).isTrue();
        assertThat(tokens.matches("env-token")).isTrue();
        assertThat(tokens.matches("# query tokens")).isFalse();
        assertThat(tokens.matches("alpha-toke")).isFalse();
        assertThat(tokens.matches("alpha-tokenX")).isFalse();
        assertThat(tokens.matches("")).isFalse();
        assertThat(tokens.matches(null)).isFalse();
    }

    @Test
    void shouldRejectOverlongTokensWithoutHashingThem() {
        BearerTokens tokens = new BearerTokens(null, "a".repeat(BearerTokens.MAX_TOKEN_LENGTH + 1), Duration.ofSeconds(1), clock);

        assertThat(tokens.matches("a".repeat(BearerTokens.MAX_TOKEN_LENGTH + 1))).isFalse();
    }

    @Test
    void shouldPickUpARotatedTokenFileAfterTheReloadInterval(@TempDir Path dir) throws Exception {
        Path file = Files.writeString(dir.resolve("tokens"), "old-token\n");
        BearerTokens tokens = new BearerTokens(file, null, Duration.ofSeconds(10), clock);
        assertThat(tokens.matches("old-token")).isTrue();

        Files.writeString(file, "new-token\n");
        clock.advance(Duration.ofSeconds(5));
        assertThat(tokens.matches("old-token")).as("not re-read before the interval").isTrue();

        clock.advance(Duration.ofSeconds(6));
        assertThat(tokens.matches("new-token")).isTrue();
        assertThat(tokens.matches("old-token")).isFalse();
    }

    @Test
    void shouldFollowASecretVolumesSymlinkSwap(@TempDir Path dir) throws Exception {
        // Kubernetes updates a mounted Secret by pointing ..data at a new directory.
        Path first = Files.createDirectories(dir.resolve("..2026_1"));
        Path second = Files.createDirectories(dir.resolve("..2026_2"));
        Files.writeString(first.resolve("tokens"), "first\n");
        Files.writeString(second.resolve("tokens"), "second\n");
        Path data = Files.createSymbolicLink(dir.resolve("..data"), first.getFileName());
        Path file = Files.createSymbolicLink(dir.resolve("tokens"), Path.of("..data/tokens"));
        BearerTokens tokens = new BearerTokens(file, null, Duration.ofSeconds(1), clock);
        assertThat(tokens.matches("first")).isTrue();

        Files.delete(data);
        Files.createSymbolicLink(data, second.getFileName());
        clock.advance(Duration.ofSeconds(2));

        assertThat(tokens.matches("second")).isTrue();
        assertThat(tokens.matches("first")).isFalse();
    }

    @Test
    void shouldKeepTheTokensInForceWhileTheFileCannotBeRead(@TempDir Path dir) throws Exception {
        Path file = Files.writeString(dir.resolve("tokens"), "kept\n");
        BearerTokens tokens = new BearerTokens(file, null, Duration.ofSeconds(1), clock);

        Files.delete(file);
        clock.advance(Duration.ofSeconds(2));
        assertThat(tokens.matches("kept")).isTrue();

        Files.writeString(file, "");
        clock.advance(Duration.ofSeconds(2));
        assertThat(tokens.matches("kept")).as("an empty file revokes every token").isFalse();
        assertThat(tokens.count()).isZero();
    }

    @Test
    void shouldAdmitNothingWhenTheFileNeverExisted(@TempDir Path dir) {
        BearerTokens tokens = new BearerTokens(dir.resolve("missing"), null, Duration.ofSeconds(1), clock);

        assertThat(tokens.matches("anything")).isFalse();
    }
}
