package io.devhealth.collector.spool;

/** The spool cannot be opened or written at all (not: a full budget, which is an {@link AppendResult}). */
public final class SpoolException extends RuntimeException {

    public SpoolException(String message, Throwable cause) {
        super(message, cause);
    }
}
