package io.devhealth.sink;

/** The pod kept changing under every attempt; the write is repeated later like a transient failure. */
public final class WriteConflictsExhaustedException extends RuntimeException {

    WriteConflictsExhaustedException(String pod, int attempts) {
        super("pod " + pod + " changed under " + attempts + " consecutive write attempts");
    }
}
