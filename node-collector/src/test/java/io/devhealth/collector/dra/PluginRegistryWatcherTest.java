package io.devhealth.collector.dra;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;

class PluginRegistryWatcherTest {

    private static final Path REGISTRATION = Path.of("/var/lib/kubelet/plugins_registry/gpu.example.com-reg.sock");

    @Test
    void shouldServeFromTheRegistrationSocketItselfWhenTheEndpointIsEmpty() {
        assertThat(PluginRegistryWatcher.serviceEndpoint(REGISTRATION, "")).isEqualTo(REGISTRATION);
    }

    @Test
    void shouldServeFromTheAdvertisedEndpointWhenThereIsOne() {
        assertThat(PluginRegistryWatcher.serviceEndpoint(REGISTRATION, "/var/lib/kubelet/plugins/gpu.example.com/dra.sock"))
                .isEqualTo(Path.of("/var/lib/kubelet/plugins/gpu.example.com/dra.sock"));
    }
}
