package io.devhealth.query.http;

/**
 * The JSON body of every error answer: the status again, a message for people, and for a 403 the permission the
 * caller lacks (what to grant).
 */
public record ErrorView(int status, String message, Permission missing) {

    public ErrorView(int status, String message) {
        this(status, message, null);
    }
}
