package io.devhealth.sink.condition;

import io.fabric8.kubernetes.client.KubernetesClientException;

/** The API server rejected a status write as invalid (422 with the pod unchanged): retrying cannot help. */
public final class InvalidPodStatusException extends RuntimeException {

    private final String patch;

    InvalidPodStatusException(String pod, KubernetesClientException cause, String patch) {
        super("api server rejected the status of pod " + pod + ": " + describe(cause), cause);
        this.patch = patch;
    }

    /** The JSON Patch that was rejected. */
    public String patch() {
        return patch;
    }

    /** The server's answer: code, reason, message and field causes, as one line. */
    static String describe(KubernetesClientException e) {
        if (e.getStatus() == null) {
            return "code=" + e.getCode() + " message=" + e.getMessage();
        }
        StringBuilder out = new StringBuilder("code=").append(e.getCode())
                .append(" reason=").append(e.getStatus().getReason())
                .append(" message=").append(e.getStatus().getMessage());
        if (e.getStatus().getDetails() != null && e.getStatus().getDetails().getCauses() != null) {
            e.getStatus().getDetails().getCauses().forEach(c -> out.append(" cause=").append(c.getField()).append(':')
                    .append(c.getReason()).append(':').append(c.getMessage()));
        }
        return out.toString();
    }
}
