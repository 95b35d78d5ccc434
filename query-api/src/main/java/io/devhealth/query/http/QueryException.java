package io.devhealth.query.http;

/** An answer other than 200, with the HTTP status and a message for the caller. */
public final class QueryException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final int status;
    private final boolean notHeld;
    private final boolean unreachable;

    public QueryException(int status, String message) {
        this(status, message, false, false);
    }

    private QueryException(int status, String message, boolean notHeld, boolean unreachable) {
        super(message);
        this.status = status;
        this.notHeld = notHeld;
        this.unreachable = unreachable;
    }

    public int status() {
        return status;
    }

    /** A 404 that means "not on this instance" (another one holds the key now), not "no such thing". */
    public boolean notHeld() {
        return notHeld;
    }

    /** A 503 because the instance asked gave no answer at all (gone, or not listening), not one it sent. */
    public boolean unreachable() {
        return unreachable;
    }

    /** "Ask again shortly" (503), or "not on this instance": another copy of the key may answer now. */
    public boolean retryable() {
        return status == 503 || notHeld;
    }

    public static QueryException notHeld(String message) {
        return new QueryException(404, message, true, false);
    }

    public static QueryException badRequest(String message) {
        return new QueryException(400, message);
    }

    public static QueryException notFound(String message) {
        return new QueryException(404, message);
    }

    public static QueryException unavailable(String message) {
        return new QueryException(503, message);
    }

    public static QueryException unreachable(String message) {
        return new QueryException(503, message, false, true);
    }
}
