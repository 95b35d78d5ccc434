package io.devhealth.sink;

import io.devhealth.schema.serde.SchemaRegistries;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.time.Clock;

/** The sink-apiserver service: {@link PodStatusSink} on its own thread, over one Kubernetes client. */
public final class SinkApp implements AutoCloseable {

    private final KubernetesClient client;
    private final PodStatusSink sink;
    private final Thread thread;

    public SinkApp(SinkConfig config) {
        this.client = new KubernetesClientBuilder().withConfig(kubernetesConfig(config)).build();
        PodStatusWriter writer = new PodStatusWriter(client, config.mode(), Clock.systemUTC());
        this.sink = new PodStatusSink(config, SchemaRegistries.fromUrl(config.schemaRegistryUrl(), config.originals()), writer);
        this.thread = new Thread(sink, "devhealth-sink");
    }

    static Config kubernetesConfig(SinkConfig config) {
        // autoConfigure reads the in-cluster service account or ~/.kube/config.
        ConfigBuilder builder = new ConfigBuilder(Config.autoConfigure(null));
        if (!config.kubernetesMaster().isEmpty()) {
            builder.withMasterUrl(config.kubernetesMaster());
        }
        return builder.build();
    }

    public void start() {
        thread.start();
    }

    @Override
    public void close() throws InterruptedException {
        sink.close();
        thread.join(10_000);
        client.close();
    }
}
