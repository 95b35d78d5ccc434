package io.devhealth.simulators.kafka;

import io.devhealth.simulators.UniqueNames;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Stream;
import kafka.server.KafkaConfig;
import kafka.server.KafkaRaftServer;
import kafka.tools.StorageTool;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.utils.Time;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A real single-node Kafka broker (KRaft, combined broker + controller) running in this JVM.
 *
 * <p>Started with {@code kafka.server.KafkaRaftServer} on random free ports of {@code 127.0.0.1}, with
 * its log directory in a temporary directory that {@link #close()} deletes. The configuration suits one
 * node: every replication factor and min ISR is 1, the internal topics have one partition, the group
 * rebalance delay is 0, the log cleaner's dedupe buffer is 2 MiB instead of 128 MiB (heap), topic
 * auto-creation is on. Transactions work, so Kafka Streams {@code exactly_once_v2} runs against it.
 *
 * <p>Cost: format + start is about 5–10 s in a cold JVM on a 2-core machine, 1–2 s in a warm one.
 * In tests, the testkit's {@code KafkaClusterExtension} shares one instance per test JVM (or starts one of a
 * test's own where its parameter says so); give every test its own topics and ids with {@link #uniqueName(String)}.
 *
 * <p>{@link #stopBroker()} and {@link #restartBroker()} stop and restart the same node on the same
 * ports and log directory, for fault tests. Thread-safe; {@link #close()} is idempotent.
 */
public final class EmbeddedKafkaCluster implements AutoCloseable {

    private static final Logger LOGGER = LoggerFactory.getLogger(EmbeddedKafkaCluster.class);

    private static final String HOST = "127.0.0.1";
    private static final int NODE_ID = 1;
    private static final int START_ATTEMPTS = 3;
    private static final Duration ADMIN_TIMEOUT = Duration.ofSeconds(30);

    private final Path baseDir;
    private final int brokerPort;
    private final Map<String, Integer> extraListenerPorts;
    private final Properties brokerProperties;
    private KafkaRaftServer server;
    private Admin admin;
    private boolean closed;

    private EmbeddedKafkaCluster(Path baseDir, int brokerPort, Map<String, Integer> extraListenerPorts,
                                 Properties brokerProperties) {
        this.baseDir = baseDir;
        this.brokerPort = brokerPort;
        this.extraListenerPorts = Map.copyOf(extraListenerPorts);
        this.brokerProperties = brokerProperties;
    }

    /**
     * Formats a fresh log directory and starts a broker with the default single-node configuration.
     *
     * @return the running cluster; close it when done
     */
    public static EmbeddedKafkaCluster start() {
        return start(Map.of());
    }

    /**
     * Formats a fresh log directory and starts a broker.
     *
     * @param brokerOverrides broker properties applied over the defaults (for example
     *     {@code transaction.max.timeout.ms}); listener, port and node settings can be overridden too, at the
     *     caller's risk
     * @return the running cluster; close it when done
     * @throws IllegalStateException if the broker cannot be started
     */
    public static EmbeddedKafkaCluster start(Map<String, String> brokerOverrides) {
        return start(brokerOverrides, List.of());
    }

    /**
     * Formats a fresh log directory and starts a broker with additional client listeners, each on its own
     * free port and named after its security protocol ({@code SSL}, {@code SASL_SSL},
     * {@code SASL_PLAINTEXT}); configure them through {@code brokerOverrides} (see {@link KafkaSecurity}).
     * The PLAINTEXT listener stays: the simulator's own admin client and inter-broker traffic use it.
     *
     * @param extraListeners security protocols of the extra listeners; {@link #bootstrapServers(String)} gives their addresses
     * @return the running cluster; close it when done
     */
    public static EmbeddedKafkaCluster start(Map<String, String> brokerOverrides, List<String> extraListeners) {
        RuntimeException last = null;
        for (int attempt = 1; attempt <= START_ATTEMPTS; attempt++) {
            long startNanos = System.nanoTime();
            Path dir = null;
            EmbeddedKafkaCluster cluster = null;
            try {
                dir = Files.createTempDirectory("devhealth-kafka-");
                int[] ports = freePorts(2 + extraListeners.size());
                Map<String, Integer> extraPorts = new LinkedHashMap<>();
                for (int i = 0; i < extraListeners.size(); i++) {
                    extraPorts.put(extraListeners.get(i), ports[2 + i]);
                }
                Properties props = brokerProperties(dir, ports[0], ports[1], extraPorts, brokerOverrides);
                cluster = new EmbeddedKafkaCluster(dir, ports[0], extraPorts, props);
                cluster.format();
                cluster.startServer();
                cluster.awaitReady();
                LOGGER.info("kafka broker started bootstrap={} logDir={} startupMs={} attempt={}",
                        cluster.bootstrapServers(), dir, (System.nanoTime() - startNanos) / 1_000_000, attempt);
                return cluster;
            } catch (IOException e) {
                last = new UncheckedIOException(e);
            } catch (RuntimeException e) {
                last = e;
            }
            // A port taken between probing and binding is the usual cause; retry with fresh ports.
            LOGGER.warn("kafka broker start failed attempt={} error={}", attempt, last.toString());
            if (cluster != null) {
                cluster.close();
            } else {
                deleteRecursively(dir);
            }
        }
        throw new IllegalStateException("cannot start embedded Kafka broker after " + START_ATTEMPTS + " attempts",
                last);
    }

    /**
     * Delegates to {@link UniqueNames#uniqueName(String)}: a fresh topic, group, application or
     * transactional id for one test.
     *
     * @param prefix what the name is for, lower case
     * @return a unique name such as {@code health-events-3k9x2q}
     */
    public static String uniqueName(String prefix) {
        return UniqueNames.uniqueName(prefix);
    }

    /** @return {@code 127.0.0.1:<port>}, for {@code bootstrap.servers} */
    public String bootstrapServers() {
        return HOST + ":" + brokerPort;
    }

    /**
     * @param listener the security protocol an extra listener was started with
     * @return {@code 127.0.0.1:<port>} of that listener
     * @throws IllegalArgumentException if the cluster has no such listener
     */
    public String bootstrapServers(String listener) {
        Integer port = extraListenerPorts.get(listener);
        if (port == null) {
            throw new IllegalArgumentException("no " + listener + " listener; started with " + extraListenerPorts.keySet());
        }
        return HOST + ":" + port;
    }

    /**
     * @return a new mutable map with {@code bootstrap.servers} set, to start client configurations from
     */
    public Map<String, Object> clientProperties() {
        Map<String, Object> props = new HashMap<>();
        props.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers());
        return props;
    }

    /** @return the temporary directory holding the log directory; deleted by {@link #close()} */
    public Path baseDirectory() {
        return baseDir;
    }

    /**
     * A shared {@link Admin} client for this cluster, created on first use and closed with the cluster.
     * Do not close it yourself.
     *
     * @return the admin client
     */
    public synchronized Admin admin() {
        ensureNotClosed();
        if (admin == null) {
            Map<String, Object> props = clientProperties();
            props.put(AdminClientConfig.CLIENT_ID_CONFIG, "devhealth-simulators-admin");
            props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, (int) ADMIN_TIMEOUT.toMillis());
            admin = Admin.create(props);
        }
        return admin;
    }

    /**
     * Creates topics with replication factor 1 and waits until every partition has a leader. Topics that
     * already exist are left as they are.
     *
     * @param partitions partitions per topic
     * @param topics topic names
     */
    public void createTopics(int partitions, String... topics) {
        createTopics(partitions, Map.of(), topics);
    }

    /**
     * Creates compacted topics ({@code cleanup.policy=compact}) and waits until they are usable.
     *
     * @param partitions partitions per topic
     * @param topics topic names
     */
    public void createCompactedTopics(int partitions, String... topics) {
        createTopics(partitions, Map.of(TopicConfig.CLEANUP_POLICY_CONFIG, TopicConfig.CLEANUP_POLICY_COMPACT), topics);
    }

    /**
     * Creates topics with the given topic configuration and waits until every partition has a leader.
     * Topics that already exist are left as they are (their configuration is not changed).
     *
     * @param partitions partitions per topic
     * @param topicConfig topic-level configuration, e.g. {@code retention.ms}
     * @param topics topic names
     */
    public void createTopics(int partitions, Map<String, String> topicConfig, String... topics) {
        List<NewTopic> newTopics = new ArrayList<>();
        for (String topic : topics) {
            newTopics.add(new NewTopic(topic, partitions, (short) 1).configs(topicConfig));
        }
        Map<String, KafkaFuture<Void>> results = admin().createTopics(newTopics).values();
        for (Map.Entry<String, KafkaFuture<Void>> result : results.entrySet()) {
            try {
                result.getValue().get(ADMIN_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
                LOGGER.info("kafka topic created topic={} partitions={} config={}", result.getKey(), partitions,
                        topicConfig);
            } catch (ExecutionException e) {
                if (!(e.getCause() instanceof TopicExistsException)) {
                    throw new IllegalStateException("cannot create topic " + result.getKey(), e.getCause());
                }
                LOGGER.debug("kafka topic exists topic={}", result.getKey());
            } catch (TimeoutException e) {
                throw new IllegalStateException("timed out creating topic " + result.getKey(), e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted creating topic " + result.getKey(), e);
            }
        }
        awaitTopicsReady(List.of(topics));
    }

    /** @return whether the broker is currently running (false after {@link #stopBroker()} and close) */
    public synchronized boolean isRunning() {
        return server != null;
    }

    /**
     * Stops the broker (controlled shutdown), keeping its ports and log directory so that
     * {@link #restartBroker()} brings back the same node with its data. Clients see the broker vanish.
     * No-op if already stopped.
     */
    public synchronized void stopBroker() {
        ensureNotClosed();
        if (server == null) {
            return;
        }
        long startNanos = System.nanoTime();
        shutdownServer();
        LOGGER.info("kafka broker stopped bootstrap={} shutdownMs={}", bootstrapServers(),
                (System.nanoTime() - startNanos) / 1_000_000);
    }

    /**
     * Starts the broker again on the same ports and log directory, stopping it first if it runs. Returns
     * once the broker answers metadata requests.
     *
     * @throws IllegalStateException if it does not come back
     */
    public synchronized void restartBroker() {
        ensureNotClosed();
        if (server != null) {
            shutdownServer();
        }
        long startNanos = System.nanoTime();
        startServer();
        awaitReady();
        LOGGER.info("kafka broker restarted bootstrap={} startupMs={}", bootstrapServers(),
                (System.nanoTime() - startNanos) / 1_000_000);
    }

    /** Closes the shared admin client, stops the broker and deletes the log directory. Idempotent. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        long startNanos = System.nanoTime();
        if (admin != null) {
            try {
                admin.close(Duration.ofSeconds(5));
            } catch (RuntimeException e) {
                LOGGER.warn("kafka admin close failed error={}", e.toString());
            }
            admin = null;
        }
        if (server != null) {
            shutdownServer();
        }
        deleteRecursively(baseDir);
        LOGGER.info("kafka broker closed bootstrap={} closeMs={}", bootstrapServers(),
                (System.nanoTime() - startNanos) / 1_000_000);
    }

    @Override
    public String toString() {
        return "EmbeddedKafkaCluster[" + bootstrapServers() + (closed ? ", closed" : "") + "]";
    }

    static Properties brokerProperties(Path dir, int brokerPort, int controllerPort, Map<String, String> overrides) {
        return brokerProperties(dir, brokerPort, controllerPort, Map.of(), overrides);
    }

    static Properties brokerProperties(Path dir, int brokerPort, int controllerPort, Map<String, Integer> extraListeners,
                                       Map<String, String> overrides) {
        StringBuilder listeners = new StringBuilder("PLAINTEXT://" + HOST + ":" + brokerPort + ",CONTROLLER://" + HOST + ":" + controllerPort);
        StringBuilder advertised = new StringBuilder("PLAINTEXT://" + HOST + ":" + brokerPort);
        StringBuilder protocols = new StringBuilder("PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT");
        extraListeners.forEach((name, port) -> {
            listeners.append(',').append(name).append("://").append(HOST).append(':').append(port);
            advertised.append(',').append(name).append("://").append(HOST).append(':').append(port);
            protocols.append(',').append(name).append(':').append(name);
        });
        Map<String, String> p = new LinkedHashMap<>();
        p.put("process.roles", "broker,controller");
        p.put("node.id", Integer.toString(NODE_ID));
        p.put("controller.quorum.voters", NODE_ID + "@" + HOST + ":" + controllerPort);
        p.put("listeners", listeners.toString());
        p.put("advertised.listeners", advertised.toString());
        p.put("controller.listener.names", "CONTROLLER");
        p.put("inter.broker.listener.name", "PLAINTEXT");
        p.put("listener.security.protocol.map", protocols.toString());
        p.put("log.dirs", dir.resolve("data").toString());
        // One node: nothing can be replicated.
        p.put("default.replication.factor", "1");
        p.put("min.insync.replicas", "1");
        p.put("offsets.topic.replication.factor", "1");
        p.put("offsets.topic.num.partitions", "1");
        p.put("transaction.state.log.replication.factor", "1");
        p.put("transaction.state.log.min.isr", "1");
        p.put("transaction.state.log.num.partitions", "1");
        p.put("share.coordinator.state.topic.replication.factor", "1");
        p.put("share.coordinator.state.topic.min.isr", "1");
        p.put("share.coordinator.state.topic.num.partitions", "1");
        p.put("num.partitions", "1");
        p.put("auto.create.topics.enable", "true");
        // Fast and small for tests on small machines.
        p.put("group.initial.rebalance.delay.ms", "0");
        p.put("log.cleaner.dedupe.buffer.size", "2097152");
        p.put("num.network.threads", "2");
        p.put("num.io.threads", "2");
        p.put("num.recovery.threads.per.data.dir", "1");
        p.putAll(overrides);
        Properties props = new Properties();
        props.putAll(p);
        return props;
    }

    private void format() {
        Path config = baseDir.resolve("server.properties");
        try (Writer writer = Files.newBufferedWriter(config, StandardCharsets.UTF_8)) {
            brokerProperties.store(writer, "devhealth embedded Kafka broker");
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + config, e);
        }
        String clusterId = Uuid.randomUuid().toString();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int rc;
        try (PrintStream print = new PrintStream(out, true, StandardCharsets.UTF_8)) {
            rc = StorageTool.execute(new String[] {"format", "-t", clusterId, "-c", config.toString()}, print);
        } catch (Exception e) {
            throw new IllegalStateException("kafka storage format failed: " + out.toString(StandardCharsets.UTF_8), e);
        }
        String output = out.toString(StandardCharsets.UTF_8).trim();
        if (rc != 0) {
            throw new IllegalStateException("kafka storage format failed rc=" + rc + ": " + output);
        }
        LOGGER.debug("kafka storage formatted clusterId={} output={}", clusterId, output);
    }

    private void startServer() {
        KafkaRaftServer candidate = new KafkaRaftServer(KafkaConfig.fromProps(brokerProperties, false), Time.SYSTEM);
        try {
            candidate.startup();
        } catch (RuntimeException e) {
            try {
                candidate.shutdown();
                candidate.awaitShutdown();
            } catch (RuntimeException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
        server = candidate;
    }

    private void shutdownServer() {
        KafkaRaftServer stopping = server;
        server = null;
        try {
            stopping.shutdown();
            stopping.awaitShutdown();
        } catch (RuntimeException e) {
            LOGGER.warn("kafka broker shutdown failed error={}", e.toString());
        }
    }

    /** Waits until the broker answers a metadata request with itself as the only node. */
    private void awaitReady() {
        long deadline = System.nanoTime() + ADMIN_TIMEOUT.toNanos();
        RuntimeException last = null;
        while (System.nanoTime() < deadline) {
            try {
                if (admin().describeCluster().nodes().get(5, TimeUnit.SECONDS).size() == 1) {
                    return;
                }
            } catch (ExecutionException | TimeoutException e) {
                last = new IllegalStateException(e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted waiting for the broker", e);
            }
            sleepQuietly(50);
        }
        throw new IllegalStateException("broker " + bootstrapServers() + " not ready after " + ADMIN_TIMEOUT, last);
    }

    private void awaitTopicsReady(List<String> topics) {
        long deadline = System.nanoTime() + ADMIN_TIMEOUT.toNanos();
        Exception last = null;
        while (System.nanoTime() < deadline) {
            try {
                Map<String, TopicDescription> descriptions =
                        admin().describeTopics(topics).allTopicNames().get(5, TimeUnit.SECONDS);
                boolean ready = descriptions.values().stream()
                        .flatMap(d -> d.partitions().stream())
                        .map(TopicPartitionInfo::leader)
                        .allMatch(leader -> leader != null && !leader.isEmpty());
                if (ready) {
                    return;
                }
            } catch (ExecutionException | TimeoutException e) {
                last = e;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted waiting for topics " + topics, e);
            }
            sleepQuietly(20);
        }
        throw new IllegalStateException("topics " + topics + " not ready after " + ADMIN_TIMEOUT, last);
    }

    private void ensureNotClosed() {
        if (closed) {
            throw new IllegalStateException(this + " is closed");
        }
    }

    private static int[] freePorts(int count) throws IOException {
        List<ServerSocket> sockets = new ArrayList<>();
        try {
            int[] ports = new int[count];
            for (int i = 0; i < count; i++) {
                ServerSocket socket = new ServerSocket();
                sockets.add(socket);
                socket.setReuseAddress(true);
                socket.bind(new InetSocketAddress(InetAddress.getByName(HOST), 0));
                ports[i] = socket.getLocalPort();
            }
            return ports;
        } finally {
            for (ServerSocket socket : sockets) {
                socket.close();
            }
        }
    }

    private static void sleepQuietly(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    private static void deleteRecursively(Path dir) {
        if (dir == null || !Files.exists(dir)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(dir)) {
            paths.sorted(Comparator.reverseOrder()).forEach(path -> {
                try {
                    Files.deleteIfExists(path);
                } catch (IOException e) {
                    LOGGER.warn("cannot delete path={} error={}", path, e.toString());
                }
            });
        } catch (IOException | UncheckedIOException e) {
            LOGGER.warn("cannot delete dir={} error={}", dir, e.toString());
        }
    }
}
