package io.devhealth.query;

import io.devhealth.query.access.QuerySecurityConfig;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashMap;
import java.util.Map;
import org.apache.kafka.common.config.ConfigException;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.Test;

/** The query API is closed unless credentials are configured or the operator opts out, as its configuration is read. */
class QueryConfigSecurityTest {

    private static Map<String, String> environment(String... pairs) {
        Map<String, String> env = new HashMap<>(Map.of("DEVHEALTH_KAFKA_BOOTSTRAP_SERVERS", "k:9092",
                "DEVHEALTH_SCHEMA_REGISTRY_URL", "mem://p"));
        for (int i = 0; i < pairs.length; i += 2) {
            env.put(pairs[i], pairs[i + 1]);
        }
        return env;
    }

    @Test
    void shouldRefuseAQueryApiWithoutCredentialsNamingTheSettings() {
        ThrowingCallable config = () -> QueryConfig.fromEnvironment(environment(), Map.of());

        assertThatThrownBy(config).isInstanceOf(ConfigException.class)
                .hasMessageContaining("query.auth.token.file").hasMessageContaining("DEVHEALTH_QUERY_AUTH_TOKEN_FILE")
                .hasMessageContaining("DEVHEALTH_QUERY_AUTH_TOKEN").hasMessageContaining("query.tls.truststore.location")
                .hasMessageContaining("query.insecure=true").hasMessageContaining("DEVHEALTH_QUERY_INSECURE")
                .hasMessageContaining("DEVHEALTH_QUERY_AUTH_KUBERNETES_ENABLED");
    }

    @Test
    void shouldRefuseBearerTokensOverPlainHttp() {
        ThrowingCallable config = () -> QueryConfig.fromEnvironment(environment("DEVHEALTH_QUERY_AUTH_TOKEN", "tok-1234567890"), Map.of());

        assertThatThrownBy(config).isInstanceOf(ConfigException.class)
                .hasMessageContaining("clear text").hasMessageContaining("DEVHEALTH_QUERY_TLS_KEYSTORE_LOCATION")
                .hasMessageNotContaining("tok-1234567890");
    }

    @Test
    void shouldServeWithoutCredentialsOrTlsOnlyWhenOptedOut() {
        QuerySecurityConfig open = QueryConfig.fromEnvironment(environment("DEVHEALTH_QUERY_INSECURE", "true"), Map.of()).security();
        QuerySecurityConfig tokensOverHttp = QueryConfig.fromEnvironment(environment("DEVHEALTH_QUERY_INSECURE", "true",
                "DEVHEALTH_QUERY_AUTH_TOKEN", "tok-1234567890"), Map.of()).security();

        assertThat(open.authenticates()).isFalse();
        assertThat(open.insecure()).isTrue();
        assertThat(tokensOverHttp.acceptsTokens()).isTrue();
        assertThat(tokensOverHttp.tls()).isFalse();
    }

    @Test
    void shouldTakeKubernetesAuthorizationAsCredentialsThatNeedTls() {
        ThrowingCallable overHttp = () -> QueryConfig.fromEnvironment(environment("DEVHEALTH_QUERY_AUTH_KUBERNETES_ENABLED", "true"), Map.of());
        QuerySecurityConfig opted = QueryConfig.fromEnvironment(environment("DEVHEALTH_QUERY_AUTH_KUBERNETES_ENABLED", "true",
                "DEVHEALTH_QUERY_INSECURE", "true"), Map.of()).security();

        assertThatThrownBy(overHttp).isInstanceOf(ConfigException.class).hasMessageContaining("clear text");
        assertThat(opted.authenticates()).isTrue();
        assertThat(opted.acceptsTokens()).isTrue();
        assertThat(opted.staticTokens()).isFalse();
        assertThat(opted.kubernetes().audiences()).containsExactly("devhealth-query");
        assertThat(opted.kubernetes().cacheTtl()).hasSeconds(10);
    }

    @Test
    void shouldRefuseKubernetesAuthorizationWithoutAnAudience() {
        ThrowingCallable config = () -> QueryConfig.fromEnvironment(environment("DEVHEALTH_QUERY_AUTH_KUBERNETES_ENABLED", "true",
                "DEVHEALTH_QUERY_AUTH_KUBERNETES_AUDIENCES", " ", "DEVHEALTH_QUERY_INSECURE", "true"), Map.of());

        assertThatThrownBy(config).isInstanceOf(ConfigException.class).hasMessageContaining("query.auth.kubernetes.audiences");
    }

    @Test
    void shouldReadPeerPrincipalsAsWholeDistinguishedNamesSeparatedBySemicolons() {
        QuerySecurityConfig security = QueryConfig.fromEnvironment(environment(
                "DEVHEALTH_QUERY_TLS_KEYSTORE_LOCATION", "/etc/devhealth/query-tls/keystore.p12",
                "DEVHEALTH_QUERY_TLS_TRUSTSTORE_LOCATION", "/etc/devhealth/query-tls/truststore.p12",
                "DEVHEALTH_QUERY_TLS_PEER_PRINCIPALS", "CN=stream-processor.devhealth.svc,O=devhealth; CN=a\\;b,O=devhealth;"),
                Map.of()).security();

        assertThat(security.peerPrincipals()).containsExactly("CN=stream-processor.devhealth.svc,O=devhealth", "CN=a\\;b,O=devhealth");
        assertThat(QueryConfig.fromEnvironment(environment("DEVHEALTH_QUERY_TLS_KEYSTORE_LOCATION", "/k.p12",
                "DEVHEALTH_QUERY_TLS_TRUSTSTORE_LOCATION", "/t.p12"), Map.of()).security().peerPrincipals())
                .as("empty: the instance's own certificate, read when the server starts").isEmpty();
    }

    @Test
    void shouldRefusePeerPrincipalsThatAreNoFullDnOrWithoutClientCertificates() {
        ThrowingCallable bareName = () -> QueryConfig.fromEnvironment(environment("DEVHEALTH_QUERY_TLS_KEYSTORE_LOCATION", "/k.p12",
                "DEVHEALTH_QUERY_TLS_TRUSTSTORE_LOCATION", "/t.p12", "DEVHEALTH_QUERY_TLS_PEER_PRINCIPALS", "stream-processor"), Map.of());
        ThrowingCallable noTruststore = () -> QueryConfig.fromEnvironment(environment("DEVHEALTH_QUERY_TLS_KEYSTORE_LOCATION", "/k.p12",
                "DEVHEALTH_QUERY_AUTH_TOKEN", "tok-1234567890", "DEVHEALTH_QUERY_TLS_PEER_PRINCIPALS", "CN=p,O=devhealth"), Map.of());

        assertThatThrownBy(bareName).isInstanceOf(ConfigException.class).hasMessageContaining("query.tls.peer.principals")
                .hasMessageContaining("full subject DN");
        assertThatThrownBy(noTruststore).isInstanceOf(ConfigException.class)
                .hasMessageContaining("query.tls.peer.principals").hasMessageContaining("query.tls.truststore.location");
    }

    @Test
    void shouldReadEachAllowedPrincipalAsOneWholeDistinguishedName() {
        QuerySecurityConfig security = QueryConfig.fromEnvironment(environment(
                "DEVHEALTH_QUERY_TLS_KEYSTORE_LOCATION", "/k.p12", "DEVHEALTH_QUERY_TLS_TRUSTSTORE_LOCATION", "/t.p12",
                "DEVHEALTH_QUERY_TLS_ALLOWED_PRINCIPALS", "CN=sre-cli,O=example;CN=oncall,O=example"), Map.of()).security();

        assertThat(security.allowedPrincipals()).containsExactly("CN=sre-cli,O=example", "CN=oncall,O=example");
    }
}
