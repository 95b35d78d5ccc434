package io.devhealth.simulators.kube;

/** A request the fleet API refuses, with the HTTP code and the Kubernetes {@code Status} reason it answers with. */
final class ApiException extends RuntimeException {

    private final int code;
    private final String reason;

    ApiException(int code, String reason, String message) {
        super(message);
        this.code = code;
        this.reason = reason;
    }

    static ApiException badRequest(String message) {
        return new ApiException(400, "BadRequest", message);
    }

    static ApiException notFound(String what) {
        return new ApiException(404, "NotFound", what + " not found");
    }

    static ApiException conflict(String message) {
        return new ApiException(409, "Conflict", message);
    }

    static ApiException invalid(String message) {
        return new ApiException(422, "Invalid", message);
    }

    int code() {
        return code;
    }

    String reason() {
        return reason;
    }
}
