package io.devhealth.processor.query;

/** An answer other than 200, with the HTTP status and a message for the caller. */
final class QueryException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final int status;
    private final boolean notHeld;
    private final boolean unreachable;

    QueryException(int status, String message) {
        this(status, message, false, false);
    }

    private QueryException(int status, String message, boolean notHeld, boolean unreachable) {
        super(message);
        this.status = status;
        this.notHeld = notHeld;
        this.unreachable = unreachable;
    }

    int status() {
        return status;
    }

    /** A 404 that means "not on this instance" (another one holds the key now), not "no such thing". */
    boolean notHeld() {
        return notHeld;
    }

    /** A 503 because the instance asked gave no answer at all (gone, or not listening), not one it sent. */
    boolean unreachable() {
        return unreachable;
    }

    /** "Ask again shortly" (503), or "not on this instance": another copy of the key may answer now. */
    boolean retryable() {
        return status == 503 || notHeld;
    }

    static QueryException notHeld(String message) {
        return new QueryException(404, message, true, false);
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

    static QueryException unreachable(String message) {
        return new QueryException(503, message, false, true);
    }
}
