package io.devhealth.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.devhealth.runtime.security.NodeKeyCredential;
import io.devhealth.runtime.security.NodeKeys;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

class NodeKeyCommandTest {

    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();

    private int run(String... args) {
        CommandLine cli = Devhealth.commandLine();
        cli.setOut(new PrintWriter(out, true));
        cli.setErr(new PrintWriter(err, true));
        return cli.execute(args);
    }

    @Test
    void shouldIssueTheNodesKeyDerivedFromTheClusterSecret(@TempDir Path dir) throws Exception {
        String secret = "a-cluster-secret-of-at-least-32-bytes-0123456789";
        Path file = Files.writeString(dir.resolve("secret"), secret + "\n");

        assertThat(run("node-key", "--node", "gpu-node-7", "--secret-file", file.toString())).isZero();

        NodeKeyCredential credential = NodeKeyCredential.parse(out.toString().strip());
        byte[] master = NodeKeys.masterFromSecret(secret);
        assertThat(credential.node()).isEqualTo("gpu-node-7");
        assertThat(credential.keyId()).isEqualTo(NodeKeys.keyId(master));
        assertThat(credential.key()).isEqualTo(NodeKeys.deriveNodeKey(master, "gpu-node-7"));
        assertThat(out.toString()).doesNotContain(secret);
    }

    @Test
    void shouldWriteTheKeyToAnOwnerOnlyFileAndNotPrintIt(@TempDir Path dir) throws Exception {
        String secret = "a-cluster-secret-of-at-least-32-bytes-0123456789";
        Path file = Files.writeString(dir.resolve("secret"), secret + "\n");
        Path key = dir.resolve("key");

        assertThat(run("node-key", "--node", "gpu-node-7", "--secret-file", file.toString(), "--out", key.toString())).isZero();

        NodeKeyCredential credential = NodeKeyCredential.parse(Files.readString(key).strip());
        assertThat(credential).isEqualTo(NodeKeyCredential.issue(NodeKeys.masterFromSecret(secret), "gpu-node-7"));
        assertThat(java.nio.file.attribute.PosixFilePermissions.toString(Files.getPosixFilePermissions(key))).isEqualTo("rw-------");
        assertThat(out.toString()).contains("written to").doesNotContain(credential.format());
    }

    @Test
    void shouldRefuseAShortSecretWithAClearError(@TempDir Path dir) throws Exception {
        Path file = Files.writeString(dir.resolve("secret"), "too-short");

        assertThat(run("node-key", "--node", "n", "--secret-file", file.toString())).isEqualTo(2);

        assertThat(err.toString()).contains("cluster secret refused");
        assertThat(out.toString()).isEmpty();
    }
}
