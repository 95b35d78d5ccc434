package io.devhealth.processor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.devhealth.runtime.security.NodeKeyCredential;
import io.devhealth.runtime.security.RecordSigner;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ProcessorConfigPrincipalsTest {

    private static final String SECRET = "current-cluster-secret-0123456789abcdef";
    private static final String PREVIOUS = "previous-cluster-secret-0123456789abcdef";

    @TempDir
    Path tmp;

    private static Map<String, Object> base() {
        return new HashMap<>(Map.of(ProcessorConfig.BOOTSTRAP_SERVERS, "k:9092", ProcessorConfig.SCHEMA_REGISTRY_URL, "mem://p"));
    }

    private static boolean verifies(ProcessorConfig config, String secret) {
        Headers headers = new RecordHeaders();
        new RecordSigner(NodeKeyCredential.issue(secret.getBytes(StandardCharsets.UTF_8), "node-a")).sign("t", new byte[] {1}, headers);
        return config.recordVerifier().orElseThrow().verify("t", headers, new byte[] {1}).valid();
    }

    @Test
    void shouldVerifyOnlyWhenEnforcedAndRequireASecretThen() {
        Map<String, Object> values = base();
        values.put(ProcessorConfig.PRINCIPALS_SECRET, SECRET);
        assertThat(new ProcessorConfig(values).recordVerifier()).as("enforce off").isEmpty();

        Map<String, Object> noSecret = base();
        noSecret.put(ProcessorConfig.PRINCIPALS_ENFORCE, "true");
        assertThatThrownBy(() -> new ProcessorConfig(noSecret)).isInstanceOf(ConfigException.class)
                .hasMessageContaining(ProcessorConfig.PRINCIPALS_SECRET);

        Map<String, Object> tooShort = base();
        tooShort.put(ProcessorConfig.PRINCIPALS_ENFORCE, "true");
        tooShort.put(ProcessorConfig.PRINCIPALS_SECRET, "short-secret");
        assertThatThrownBy(() -> new ProcessorConfig(tooShort)).isInstanceOf(ConfigException.class)
                .hasMessageContaining("at least 32 bytes").hasMessageNotContaining("short-secret");
    }

    @Test
    void shouldReadTheSecretsFromTheEnvironmentAndFilesAndAcceptBothDuringARotation() throws Exception {
        Path previousFile = tmp.resolve("previous");
        Files.writeString(previousFile, PREVIOUS + "\n");
        ProcessorConfig config = ProcessorConfig.fromEnvironment(Map.of(
                "DEVHEALTH_KAFKA_BOOTSTRAP_SERVERS", "k:9092", "DEVHEALTH_SCHEMA_REGISTRY_URL", "mem://p",
                "DEVHEALTH_PRINCIPALS_ENFORCE", "true", "DEVHEALTH_PRINCIPALS_SECRET", SECRET,
                "DEVHEALTH_PRINCIPALS_SECRET_PREVIOUS_FILE", previousFile.toString()), Map.of());

        assertThat(verifies(config, SECRET)).isTrue();
        assertThat(verifies(config, PREVIOUS)).isTrue();
        assertThat(verifies(config, "a-third-secret-nobody-configured-0123456789")).isFalse();
        assertThat(config.toString()).doesNotContain(SECRET);

        Map<String, Object> both = base();
        both.put(ProcessorConfig.PRINCIPALS_ENFORCE, "true");
        both.put(ProcessorConfig.PRINCIPALS_SECRET, SECRET);
        both.put(ProcessorConfig.PRINCIPALS_SECRET_FILE, previousFile.toString());
        assertThatThrownBy(() -> new ProcessorConfig(both)).hasMessageContaining("not both");

        Map<String, Object> same = base();
        same.put(ProcessorConfig.PRINCIPALS_ENFORCE, "true");
        same.put(ProcessorConfig.PRINCIPALS_SECRET, SECRET);
        same.put(ProcessorConfig.PRINCIPALS_SECRET_PREVIOUS, SECRET);
        assertThatThrownBy(() -> new ProcessorConfig(same)).hasMessageContaining("twice").hasMessageNotContaining(SECRET);
    }
}
