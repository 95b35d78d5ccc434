package io.devhealth.query.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import org.junit.jupiter.api.Test;

class PageTokensTest {

    private final PageTokens tokens = PageTokens.withSecret("shared-secret");

    @Test
    void shouldRoundTripPositions() {
        String history = tokens.history("node-1/gpu/node-1/gpu-0", 1_700_000_000_000L, 2);
        String after = tokens.afterKey("node-1", "node-1/gpu.example.com/node-1/gpu-3");

        assertThat(tokens.parseHistory("node-1/gpu/node-1/gpu-0", history)).isEqualTo(new PageTokens.HistoryPosition(1_700_000_000_000L, 2));
        assertThat(tokens.parseAfterKey("node-1", after)).isEqualTo("node-1/gpu.example.com/node-1/gpu-3");
    }

    @Test
    void shouldBeValidOnEveryInstanceThatSharesTheSecret() {
        String token = tokens.afterKey("node-1", "node-1/k");

        assertThat(PageTokens.withSecret("shared-secret").parseAfterKey("node-1", token)).isEqualTo("node-1/k");
        assertInvalid(() -> PageTokens.withSecret("other-secret").parseAfterKey("node-1", token));
        assertInvalid(() -> PageTokens.withSecret(null).parseAfterKey("node-1", token));
    }

    @Test
    void shouldRejectATamperedToken() {
        String token = tokens.afterKey("node-1", "node-1/a");
        String forgedPayload = Base64.getUrlEncoder().withoutPadding().encodeToString("k:node-1/z".getBytes(StandardCharsets.UTF_8));

        assertInvalid(() -> tokens.parseAfterKey("node-1", forgedPayload + token.substring(token.indexOf('.'))));
        assertInvalid(() -> tokens.parseAfterKey("node-1", token.substring(0, token.length() - 2)));
        assertInvalid(() -> tokens.parseAfterKey("node-1", "bm90LWEtdG9rZW4"));
        assertInvalid(() -> tokens.parseAfterKey("node-1", "!!!.???"));
    }

    @Test
    void shouldRejectATokenFromAnotherQuery() {
        String fromNode1 = tokens.afterKey("node-1", "node-1/a");
        String historyToken = tokens.history("node-1/d/p/gpu-0", 5, 1);

        assertInvalid(() -> tokens.parseAfterKey("node-2", fromNode1));
        assertInvalid(() -> tokens.parseHistory("node-1/d/p/gpu-1", historyToken));
        assertInvalid(() -> tokens.parseHistory("node-1", fromNode1));
    }

    private static void assertInvalid(Runnable parse) {
        assertThatThrownBy(parse::run).isInstanceOfSatisfying(QueryException.class, e -> {
            assertThat(e.status()).isEqualTo(400);
            assertThat(e.getMessage()).contains("invalid continue token");
        });
    }
}
