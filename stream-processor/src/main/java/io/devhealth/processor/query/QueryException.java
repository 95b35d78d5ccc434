package io.devhealth.processor.query;

/** An answer other than 200, with the HTTP status and a message for the caller. */
final class QueryException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final int status;

    QueryException(int status, String message) {
        super(message);
        this.status = status;
    }

    int status() {
        return status;
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
