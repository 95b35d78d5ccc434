package io.devhealth.schema.serde;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Objects;
import java.util.Optional;

/**
 * How the registry client authenticates: not at all, HTTP basic, or a bearer token.
 *
 * <p>A type of its own so that secrets never reach a log line or an exception message by
 * accident: every {@code toString()} is redacted, and only {@link #authorizationHeader()} reveals
 * the secret, to the HTTP layer.
 */
public sealed interface RegistryCredentials {

    /** The value of the {@code Authorization} header, if any. */
    Optional<String> authorizationHeader();

    static RegistryCredentials none() {
        return None.INSTANCE;
    }

    static RegistryCredentials basic(String user, String password) {
        return new Basic(user, password);
    }

    static RegistryCredentials bearer(String token) {
        return new Bearer(token);
    }

    /** No {@code Authorization} header. */
    final class None implements RegistryCredentials {
        private static final None INSTANCE = new None();

        private None() {
        }

        @Override
        public Optional<String> authorizationHeader() {
            return Optional.empty();
        }

        @Override
        public String toString() {
            return "none";
        }
    }

    /** HTTP basic authentication ({@code Authorization: Basic base64(user:password)}). */
    record Basic(String user, String password) implements RegistryCredentials {
        public Basic {
            Objects.requireNonNull(user, "user");
            Objects.requireNonNull(password, "password");
        }

        @Override
        public Optional<String> authorizationHeader() {
            String pair = user + ":" + password;
            return Optional.of("Basic " + Base64.getEncoder().encodeToString(pair.getBytes(StandardCharsets.UTF_8)));
        }

        /** Shows the user, never the password. */
        @Override
        public String toString() {
            return "basic(user=" + user + ", password=***)";
        }
    }

    /** A bearer token ({@code Authorization: Bearer <token>}), e.g. an OAuth access token. */
    record Bearer(String token) implements RegistryCredentials {
        public Bearer {
            Objects.requireNonNull(token, "token");
        }

        @Override
        public Optional<String> authorizationHeader() {
            return Optional.of("Bearer " + token);
        }

        @Override
        public String toString() {
            return "bearer(***)";
        }
    }
}
