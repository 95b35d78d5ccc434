package io.devhealth.cli;

import io.devhealth.runtime.security.NodeKeyCredential;
import io.devhealth.runtime.security.NodeKeys;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * Issues the signing key of one node (docs/SECURITY.md, "A collector speaks only for its node"):
 * derived from the cluster secret the processor verifies with, so an operator (or an init
 * container) can put each node's key into that node's own Secret without the cluster secret ever
 * reaching a node.
 */
@Command(name = "node-key", mixinStandardHelpOptions = true,
        description = "Prints the signing key of a node for its collector (DEVHEALTH_NODE_KEY or node.key.file), "
                + "derived from the cluster secret (the processor's principals.secret).")
final class NodeKeyCommand implements Callable<Integer> {

    static final String SECRET_ENV = "DEVHEALTH_PRINCIPALS_SECRET";

    @Spec
    CommandSpec spec;

    @Option(names = "--node", required = true, description = "Kubernetes node name.")
    String node;

    @Option(names = "--secret-file", description = "File with the cluster secret; default: the environment variable "
            + SECRET_ENV + ".")
    Path secretFile;

    @Option(names = "--out", paramLabel = "FILE", description = "Write the key to this file (owner-only) instead of printing it.")
    Path out;

    @Override
    public Integer call() throws Exception {
        String secret = secretFile != null ? Files.readString(secretFile, StandardCharsets.UTF_8).strip() : System.getenv(SECRET_ENV);
        PrintWriter err = spec.commandLine().getErr();
        if (secret == null || secret.isBlank()) {
            err.println("no cluster secret: set --secret-file or " + SECRET_ENV);
            return 2;
        }
        byte[] master;
        try {
            master = NodeKeys.masterFromSecret(secret);
        } catch (IllegalArgumentException e) {
            err.println("cluster secret refused: " + e.getMessage());
            return 2;
        }
        String credential = NodeKeyCredential.issue(master, node).format();
        if (out == null) {
            spec.commandLine().getOut().println(credential);
            return 0;
        }
        try {
            SecretFiles.writeOwnerOnly(out, credential);
        } catch (java.io.IOException e) {
            err.println("cannot write --out " + out + " (" + e.getClass().getSimpleName() + ")");
            return 2;
        }
        spec.commandLine().getOut().println("node key of " + node + " written to " + out);
        return 0;
    }
}
