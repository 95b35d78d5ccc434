package io.devhealth.processor.query;

/** An answer other than 200, with the HTTP status and a message for the caller. */
final class QueryException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final int status;
    private final boolean notHeld;

    QueryException(int status, String message) {
        this(status, message, false);
    }

    private QueryException(int status, String message, boolean notHeld) {
        super(message);
        this.status = status;
        this.notHeld = notHeld;
    }

    int status() {
        return status;
    }

    /** A 404 that means "not on this instance" (another one holds the key now), not "no such thing". */
    boolean notHeld() {
        return notHeld;
    }

    /** "Ask again shortly" (503), or "not on this instance": another copy of the key may answer now. */
    boolean retryable() {
        return status == 503 || notHeld;
    }

    static QueryException notHeld(String message) {
        return new QueryException(404, message, true);
    }

    static QueryException badRequest(String message) {
        return new QueryException(400, message);
    }

    static QueryException notFound(String message) {
        return new QueryException(404, message);
    }

    static QueryException unavailable(String message) {
        return new QueryException(503, message);
    }
}
