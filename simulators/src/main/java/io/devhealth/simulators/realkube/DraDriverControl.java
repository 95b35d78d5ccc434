package io.devhealth.simulators.realkube;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.core.type.TypeReference;
import java.util.List;
import java.util.Map;

/**
 * Scripts the test DRA driver: what a GPU and NVIDIA's driver would do to it — a failure reported over
 * DRAResourceHealth, a taint on the device in the node's ResourceSlice, a driver that stops reporting.
 */
public final class DraDriverControl {

    /** One device as the driver sees it. */
    @JsonIgnoreProperties(ignoreUnknown = true)
    public record Device(String name, String uuid, String health, String message, List<Taint> taints) {}

    /** A device taint as published in the ResourceSlice ({@code effect}: NoSchedule, NoExecute or None). */
    @JsonIgnoreProperties(ignoreUnknown = true)
    public record Taint(String key, String value, String effect) {}

    private final ControlEndpoint endpoint;

    DraDriverControl(String hostPort) {
        this.endpoint = new ControlEndpoint(hostPort);
    }

    public List<Device> devices() {
        return endpoint.get("/devices", new TypeReference<>() {});
    }

    public Device device(String name) {
        return devices().stream().filter(d -> d.name().equals(name)).findFirst()
                .orElseThrow(() -> new IllegalArgumentException("no device " + name));
    }

    /** The next health report (sent at once to every open stream) says {@code health} with {@code message}. */
    public void setHealth(String device, String health, String message) {
        endpoint.send("PUT", "/devices/" + device + "/health", Map.of("health", health, "message", message),
                new TypeReference<Map<String, Object>>() {});
    }

    /** Replaces the device's taints and republishes the ResourceSlice; an empty list removes them. */
    public void setTaints(String device, List<Taint> taints) {
        endpoint.send("PUT", "/devices/" + device + "/taints", taints, new TypeReference<List<Map<String, Object>>>() {});
    }

    /** A silent driver keeps its streams open but sends nothing, as a hung driver does. */
    public void setSilent(boolean silent) {
        endpoint.send("PUT", "/health-stream", Map.of("silent", silent), new TypeReference<Map<String, Object>>() {});
    }
}
