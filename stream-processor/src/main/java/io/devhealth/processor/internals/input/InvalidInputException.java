package io.devhealth.processor.internals.input;

/**
 * A record that decoded but makes no sense (no key, no device identity, no time). Thrown before any
 * state changes; the processing exception handler turns it into a dead letter and processing goes on.
 */
public final class InvalidInputException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    public InvalidInputException(String message) {
        super(message);
    }
}
