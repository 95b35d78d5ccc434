package io.devhealth.simulators.realkube;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.core.type.TypeReference;
import java.util.List;
import java.util.Map;

/** Scripts the fake container runtime: a container's process exits with a code, as a crashing job's does. */
public final class FakeRuntimeControl {

    /** A container as the runtime holds it ({@code state}: CONTAINER_CREATED, _RUNNING, _EXITED). */
    @JsonIgnoreProperties(ignoreUnknown = true)
    public record Container(String id, String namespace, String pod, String container, String state, int exitCode) {}

    private final ControlEndpoint endpoint;

    FakeRuntimeControl(String hostPort) {
        this.endpoint = new ControlEndpoint(hostPort);
    }

    public List<Container> containers() {
        return endpoint.get("/containers", new TypeReference<>() {});
    }

    /**
     * Ends the running container with {@code exitCode}; the kubelet notices on its next PLEG relist
     * (about a second) and reports the container terminated.
     */
    public void exit(String namespace, String pod, String container, int exitCode, String message) {
        endpoint.send("POST", "/containers/exit", Map.of("namespace", namespace, "pod", pod, "container", container,
                "exitCode", exitCode, "message", message), new TypeReference<Map<String, Object>>() {});
    }
}
