package io.devhealth.schema.serde;

/**
 * A schema registry call failed: the registry answered with an error, or could not be reached.
 *
 * <p>Carries the HTTP status and the registry's Confluent {@code error_code} so that callers can
 * tell a missing schema (404 / 40403, permanent for that record) from an incompatible one (409, a
 * deployment error) and from an outage (5xx or no answer, worth retrying). Unchecked because Kafka's
 * {@code Serializer} and {@code Deserializer} cannot declare checked exceptions.
 */
public class SchemaRegistryException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /** {@link #httpStatus()} when no HTTP answer came back (connection refused, timeout, interrupt). */
    public static final int NO_HTTP_STATUS = -1;

    /** {@link #errorCode()} when the registry sent no {@code error_code}. */
    public static final int NO_ERROR_CODE = -1;

    /** Confluent error code: subject not found. */
    public static final int SUBJECT_NOT_FOUND = 40401;

    /** Confluent error code: version not found. */
    public static final int VERSION_NOT_FOUND = 40402;

    /** Confluent error code: schema (id) not found. */
    public static final int SCHEMA_NOT_FOUND = 40403;

    private final int httpStatus;
    private final int errorCode;

    public SchemaRegistryException(String message, int httpStatus, int errorCode) {
        this(message, httpStatus, errorCode, null);
    }

    public SchemaRegistryException(String message, int httpStatus, int errorCode, Throwable cause) {
        super(message + " (httpStatus=" + httpStatus + " errorCode=" + errorCode + ")", cause);
        this.httpStatus = httpStatus;
        this.errorCode = errorCode;
    }

    /** The HTTP status, or {@link #NO_HTTP_STATUS} when the registry did not answer. */
    public int httpStatus() {
        return httpStatus;
    }

    /** The registry's {@code error_code}, or {@link #NO_ERROR_CODE}. */
    public int errorCode() {
        return errorCode;
    }

    /** The subject, version or schema id does not exist: permanent for the record that referred to it. */
    public boolean isNotFound() {
        return httpStatus == 404;
    }

    /** The subject's compatibility rule rejected the schema (HTTP 409). */
    public boolean isIncompatible() {
        return httpStatus == 409;
    }

    /** The registry failed or could not be reached; the same call may succeed later. */
    public boolean isRetriable() {
        return httpStatus == NO_HTTP_STATUS || httpStatus >= 500;
    }
}
