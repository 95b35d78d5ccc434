package io.devhealth.testkit.realkube;

import io.devhealth.simulators.realkube.KubeBinaries;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * {@code kubectl kustomize}, as an operator renders {@code k8s/}, with the kubectl of the Kubernetes
 * build the real-cluster tests run ({@link KubeBinaries}): the same version on every machine, and no
 * test that passes by skipping where the machine has no kubectl. Tests get the binaries as a
 * {@link KubeBinaries} parameter from {@link RealKubernetesExtension}, which skips them only where
 * the real-cluster tests are skipped too.
 */
public final class Kustomize {

    private static final long TIMEOUT_SECONDS = 60;

    private Kustomize() {}

    /** The objects {@code kubectl kustomize directory} renders; fails with kubectl's error output unless it exits 0. */
    public static List<HasMetadata> render(KubeBinaries binaries, Path directory) {
        try {
            Process process = new ProcessBuilder(binaries.binary("kubectl").toString(), "kustomize", directory.toString())
                    .redirectError(ProcessBuilder.Redirect.PIPE).start();
            // stderr is read on the side: a full pipe would block kubectl before it ends its output.
            CompletableFuture<byte[]> errors = CompletableFuture.supplyAsync(() -> {
                try {
                    return process.getErrorStream().readAllBytes();
                } catch (IOException e) {
                    return e.toString().getBytes(StandardCharsets.UTF_8);
                }
            });
            byte[] rendered = process.getInputStream().readAllBytes();
            if (!process.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                throw new AssertionError("kubectl kustomize " + directory + " did not finish within " + TIMEOUT_SECONDS + " s");
            }
            if (process.exitValue() != 0) {
                throw new AssertionError("kubectl kustomize " + directory + " exited " + process.exitValue() + ":\n"
                        + new String(errors.join(), StandardCharsets.UTF_8));
            }
            Object parsed = new KubernetesSerialization().unmarshal(new ByteArrayInputStream(rendered));
            return parsed instanceof List<?> list ? list.stream().map(HasMetadata.class::cast).toList() : List.of((HasMetadata) parsed);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted running kubectl kustomize " + directory, e);
        }
    }
}
