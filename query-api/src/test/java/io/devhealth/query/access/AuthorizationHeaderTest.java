package io.devhealth.query.access;

import static org.assertj.core.api.Assertions.assertThat;

import io.devhealth.query.access.AuthorizationHeader.Presented;
import org.junit.jupiter.api.Test;

class AuthorizationHeaderTest {

    @Test
    void shouldReadABearerTokenWhateverTheSchemesCaseAndSpacing() {
        assertThat(AuthorizationHeader.parse("Bearer s3cret")).isEqualTo(new AuthorizationHeader(Presented.TOKEN, "s3cret"));
        assertThat(AuthorizationHeader.parse("bearer   s3cret ").token()).isEqualTo("s3cret");
        assertThat(AuthorizationHeader.parse("BEARER s3cret").token()).isEqualTo("s3cret");
    }

    @Test
    void shouldTellNothingFromAnotherSchemeFromAnUnusableToken() {
        assertThat(AuthorizationHeader.parse(null).presented()).isEqualTo(Presented.NONE);
        assertThat(AuthorizationHeader.parse("  ").presented()).isEqualTo(Presented.NONE);
        assertThat(AuthorizationHeader.parse("Basic czNjcmV0").presented()).isEqualTo(Presented.OTHER_SCHEME);
        assertThat(AuthorizationHeader.parse("Bearer").presented()).isEqualTo(Presented.OTHER_SCHEME);
        assertThat(AuthorizationHeader.parse("Bearertoken x").presented()).isEqualTo(Presented.OTHER_SCHEME);
        assertThat(AuthorizationHeader.parse("Bearer    ").presented()).isEqualTo(Presented.UNUSABLE_TOKEN);
        assertThat(AuthorizationHeader.parse("Bearer " + "a".repeat(BearerTokens.MAX_TOKEN_LENGTH + 1)).presented())
                .isEqualTo(Presented.UNUSABLE_TOKEN);
        assertThat(AuthorizationHeader.parse("Bearer " + "a".repeat(BearerTokens.MAX_TOKEN_LENGTH)).presented())
                .isEqualTo(Presented.TOKEN);
    }

    @Test
    void shouldNeverShowTheTokenInItsText() {
        assertThat(AuthorizationHeader.parse("Bearer s3cret")).asString().doesNotContain("s3cret").contains("TOKEN");
    }
}
