package io.devhealth.cli;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;

/** Writes a credential for another process to read: owner-only from the first byte, replaced atomically. */
final class SecretFiles {

    private SecretFiles() {}

    static void writeOwnerOnly(Path file, String line) throws IOException {
        Path partial = Files.createTempFile(file.toAbsolutePath().getParent(), ".devhealth-secret", ".tmp");
        try {
            try {
                Files.setPosixFilePermissions(partial, PosixFilePermissions.fromString("rw-------"));
            } catch (UnsupportedOperationException e) {
                // Not a POSIX file system: the directory's own protection applies.
            }
            Files.writeString(partial, line + "\n", StandardCharsets.UTF_8);
            Files.move(partial, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } finally {
            Files.deleteIfExists(partial);
        }
    }
}
