package io.devhealth.bench;

import io.devhealth.processor.DeviceHealthTopology;
import io.devhealth.processor.ProcessorConfig;
import io.devhealth.processor.ProcessorSerdes;
import io.devhealth.processor.StreamProcessorApp;
import io.devhealth.schema.Topics;
import io.devhealth.schema.serde.SchemaRegistries;
import io.devhealth.schema.serde.SchemaRegistryClient;
import io.devhealth.testkit.kafka.EmbeddedKafkaCluster;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Produced;

/**
 * The processor's throughput side by side with Kafka's own limits on this machine, in one run, over
 * the same pre-serialized records: produce, consume, a consume→produce loop, a Kafka Streams
 * pass-through with exactly-once, and the devhealth topology with exactly-once. Ratios between them
 * hold on a noisy machine where absolute figures do not.
 *
 * <pre>java -cp 'benchmarks/target/benchmarks.jar:benchmarks/target/lib/*' io.devhealth.bench.ThroughputBenchmark [records] [devices] [runs]</pre>
 */
public final class ThroughputBenchmark {

    record Result(String stage, long records, long nanos) {
        double perSecond() {
            return records * 1e9 / nanos;
        }
    }

    public static void main(String[] args) throws Exception {
        int records = args.length > 0 ? Integer.parseInt(args[0]) : 400_000;
        int devices = args.length > 1 ? Integer.parseInt(args[1]) : 80_000;
        int runs = args.length > 2 ? Integer.parseInt(args[2]) : 3;
        int partitions = 3;
        System.out.printf(Locale.ROOT, "devhealth throughput: %,d reports over %,d devices, %d partitions, %d runs, %d cores, JDK %s%n",
                records, devices, partitions, runs, Runtime.getRuntime().availableProcessors(), Runtime.version());
        Map<String, List<Result>> results = new LinkedHashMap<>();
        try (EmbeddedKafkaCluster kafka = EmbeddedKafkaCluster.start()) {
            for (int run = 1; run <= runs; run++) {
                for (Result result : runOnce(kafka, run, records, devices, partitions)) {
                    results.computeIfAbsent(result.stage(), s -> new ArrayList<>()).add(result);
                    System.out.printf(Locale.ROOT, "  run %d  %-34s %,12.0f rec/s%n", run, result.stage(), result.perSecond());
                }
            }
        }
        System.out.println();
        System.out.println("| stage | median rec/s | vs consume→produce | vs Streams pass-through (EOS) |");
        System.out.println("|---|---:|---:|---:|");
        double loop = median(results.get("consume→produce (at least once)"));
        double streams = median(results.get("Streams pass-through (EOS)"));
        results.forEach((stage, list) -> {
            double m = median(list);
            System.out.printf(Locale.ROOT, "| %s | %,.0f | %.2f× | %.2f× |%n", stage, m, m / loop, m / streams);
        });
    }

    private static double median(List<Result> list) {
        List<Double> rates = list.stream().map(Result::perSecond).sorted(Comparator.naturalOrder()).toList();
        return rates.get(rates.size() / 2);
    }

    private static List<Result> runOnce(EmbeddedKafkaCluster kafka, int run, int count, int devices, int partitions) throws Exception {
        Topics topics = new Topics("bench-" + run + ".");
        String passTopic = topics.prefix() + "pass-through";
        kafka.createTopics(partitions, topics.deviceReports(), topics.nodeAllocations(), topics.deviceInventory(),
                topics.healthTransitions(), passTopic, passTopic + "-streams");
        kafka.createCompactedTopics(partitions, topics.podDeviceStatus());
        SchemaRegistryClient registry = SchemaRegistries.inMemory("bench-" + run);
        FleetSimulation fleet = new FleetSimulation(devices, 8, 0.001);
        List<ProducerRecord<String, byte[]>> allocations = fleet.allocations(topics, registry);
        List<ProducerRecord<String, byte[]>> reports = fleet.reports(topics, registry, count);

        List<Result> results = new ArrayList<>();
        produce(kafka, allocations);
        results.add(timed("produce (idempotent, acks=all)", reports.size(), () -> produce(kafka, reports)));
        results.add(timed("consume", reports.size(), () -> consume(kafka, topics.deviceReports(), reports.size())));
        results.add(timed("consume→produce (at least once)", reports.size(),
                () -> consumeProduce(kafka, topics.deviceReports(), passTopic, reports.size())));
        StreamsBuilder passThroughBuilder = new StreamsBuilder();
        passThroughBuilder.stream(topics.deviceReports(), Consumed.with(Serdes.ByteArray(), Serdes.ByteArray()))
                .to(passTopic + "-streams", Produced.with(Serdes.ByteArray(), Serdes.ByteArray()));
        Topology passThrough = passThroughBuilder.build();
        results.add(runStreams(kafka, "Streams pass-through (EOS)", passThrough, "bench-pass-" + run,
                List.of(topics.deviceReports()), reports.size()));
        ProcessorConfig config = new ProcessorConfig(Map.of(
                ProcessorConfig.BOOTSTRAP_SERVERS, kafka.bootstrapServers(),
                ProcessorConfig.SCHEMA_REGISTRY_URL, "mem://bench-" + run,
                ProcessorConfig.TOPIC_PREFIX, topics.prefix(),
                ProcessorConfig.APPLICATION_ID, "bench-devhealth-" + run,
                ProcessorConfig.STATE_DIR, Files.createTempDirectory("dh-bench").toString()));
        Topology topology = DeviceHealthTopology.build(topics, ProcessorSerdes.over(registry));
        results.add(runStreams(kafka, "devhealth topology (EOS, RocksDB)", topology, StreamProcessorApp.streamsProperties(config),
                List.of(topics.deviceReports(), topics.nodeAllocations()), reports.size() + allocations.size()));
        return results;
    }

    private interface Stage {
        void run() throws Exception;
    }

    private static Result timed(String name, long records, Stage stage) throws Exception {
        long start = System.nanoTime();
        stage.run();
        return new Result(name, records, System.nanoTime() - start);
    }

    private static void produce(EmbeddedKafkaCluster kafka, List<ProducerRecord<String, byte[]>> records) {
        Map<String, Object> props = Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers(),
                ProducerConfig.ACKS_CONFIG, "all",
                ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true,
                ProducerConfig.LINGER_MS_CONFIG, 5,
                ProducerConfig.BATCH_SIZE_CONFIG, 65536,
                ProducerConfig.COMPRESSION_TYPE_CONFIG, "lz4");
        try (KafkaProducer<String, byte[]> producer = new KafkaProducer<>(props, new StringSerializer(), new ByteArraySerializer())) {
            records.forEach(producer::send);
            producer.flush();
        }
    }

    private static Map<String, Object> consumerProps(EmbeddedKafkaCluster kafka, String group) {
        return Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers(),
                ConsumerConfig.GROUP_ID_CONFIG, group,
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest",
                ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 2000,
                ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    }

    private static void consume(EmbeddedKafkaCluster kafka, String topic, int expected) {
        try (KafkaConsumer<String, byte[]> consumer = new KafkaConsumer<>(consumerProps(kafka, "bench-consume-" + topic),
                new StringDeserializer(), new ByteArrayDeserializer())) {
            consumer.subscribe(List.of(topic));
            int seen = 0;
            while (seen < expected) {
                seen += consumer.poll(Duration.ofMillis(200)).count();
            }
        }
    }

    private static void consumeProduce(EmbeddedKafkaCluster kafka, String from, String to, int expected) {
        Map<String, Object> producerProps = Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers(),
                ProducerConfig.ACKS_CONFIG, "all",
                ProducerConfig.LINGER_MS_CONFIG, 5,
                ProducerConfig.COMPRESSION_TYPE_CONFIG, "lz4");
        try (KafkaConsumer<String, byte[]> consumer = new KafkaConsumer<>(consumerProps(kafka, "bench-loop-" + from),
                new StringDeserializer(), new ByteArrayDeserializer());
             KafkaProducer<String, byte[]> producer = new KafkaProducer<>(producerProps, new StringSerializer(), new ByteArraySerializer())) {
            consumer.subscribe(List.of(from));
            int seen = 0;
            while (seen < expected) {
                ConsumerRecords<String, byte[]> batch = consumer.poll(Duration.ofMillis(200));
                batch.forEach(r -> producer.send(new ProducerRecord<>(to, r.key(), r.value())));
                seen += batch.count();
                if (!batch.isEmpty()) {
                    producer.flush();
                    consumer.commitSync();
                }
            }
        }
    }

    private static Result runStreams(EmbeddedKafkaCluster kafka, String name, Topology topology, String applicationId,
                                     List<String> inputs, long records) throws Exception {
        Properties props = new Properties();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, applicationId);
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
        props.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
        props.put(StreamsConfig.STATE_DIR_CONFIG, Files.createTempDirectory("dh-bench").toString());
        props.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, 100);
        return runStreams(kafka, name, topology, props, inputs, records);
    }

    /** Time from RUNNING to the group's committed offsets reaching the end of every input partition. */
    private static Result runStreams(EmbeddedKafkaCluster kafka, String name, Topology topology, Properties props,
                                     List<String> inputs, long records) throws Exception {
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        String group = props.getProperty(StreamsConfig.APPLICATION_ID_CONFIG);
        Admin admin = kafka.admin();
        Map<TopicPartition, Long> ends = new LinkedHashMap<>();
        for (String topic : inputs) {
            int count = admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic).partitions().size();
            for (int p = 0; p < count; p++) {
                TopicPartition tp = new TopicPartition(topic, p);
                ends.put(tp, admin.listOffsets(Map.of(tp, OffsetSpec.latest())).partitionResult(tp).get().offset());
            }
        }
        CountDownLatch running = new CountDownLatch(1);
        try (KafkaStreams streams = new KafkaStreams(topology, props)) {
            streams.setStateListener((now, before) -> {
                if (now == KafkaStreams.State.RUNNING) {
                    running.countDown();
                }
            });
            streams.start();
            if (!running.await(120, TimeUnit.SECONDS)) {
                throw new IllegalStateException(name + " did not reach RUNNING");
            }
            long start = System.nanoTime();
            waitUntil(() -> caughtUp(admin, group, ends), Duration.ofMinutes(10));
            return new Result(name, records, System.nanoTime() - start);
        }
    }

    private static boolean caughtUp(Admin admin, String group, Map<TopicPartition, Long> ends) {
        try {
            Map<TopicPartition, OffsetAndMetadata> committed = admin.listConsumerGroupOffsets(group)
                    .partitionsToOffsetAndMetadata().get();
            // Under exactly-once the last committed offset sits one past the transaction marker.
            return ends.entrySet().stream().allMatch(e -> committed.get(e.getKey()) != null
                    && committed.get(e.getKey()).offset() >= e.getValue());
        } catch (Exception e) {
            return false;
        }
    }

    private static void waitUntil(Supplier<Boolean> condition, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.get()) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("timed out");
            }
            Thread.sleep(20);
        }
    }
}
