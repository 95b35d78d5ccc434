package io.devhealth.faults;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.devhealth.processor.DeviceHealthTopology;
import io.devhealth.query.QueryableProcessor;
import io.devhealth.query.routing.StandbyReads;
import io.devhealth.schema.HealthWords;
import io.devhealth.schema.Topics;
import io.devhealth.schema.avro.HealthTransition;
import io.devhealth.schema.serde.AvroSerde;
import io.devhealth.schema.serde.SchemaRegistries;
import io.devhealth.simulators.kafka.EmbeddedKafkaCluster;
import io.devhealth.simulators.process.ManagedProcess;
import io.devhealth.simulators.process.Ports;
import io.devhealth.testkit.kafka.KafkaClusterExtension;
import io.devhealth.testkit.kafka.OwnBroker;
import io.devhealth.testkit.kafka.TopicReader;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The processor scaled out as deployed: {@value #INSTANCES} instances, each the real
 * {@link io.devhealth.processor.QueryableProcessor} in its own JVM ({@link ProcessorProcessMain}) with its
 * own state directory, query port and {@code application.server}, {@code num.standby.replicas=1}, over
 * node-events with {@value #PARTITIONS} partitions on the in-process broker.
 *
 * <p>First, with the load paused and processed, every instance is asked about every node, every pod and
 * the fleet summary: each must answer 200 with what the node's owner answers from its own stores, and
 * the owner's answer must match what the load said last. Then, under load and with a client asking
 * every instance all the time, the instances are restarted one at a time on their state directories,
 * one is SIGKILLed and a fourth starts: health-transitions must hold exactly the oracle's transitions,
 * and the client's error rate, the longest time a key went unanswered and the longest time each partition went
 * unprocessed ({@link ProcessingStalls}) are printed.
 *
 * <p>{@code -Ddevhealth.scaleout.dynamic=true} runs dynamic group membership (no {@code group.instance.id},
 * as the StatefulSet in k8s/ runs today) instead of static membership; {@code -Ddevhealth.scaleout.long=true}
 * lets the load run longer between steps (15 s instead of 3 s). The load's size is set by
 * {@code devhealth.scaleout.rate} (reports/s), {@code .nodes}, {@code .devices.per.node} and {@code .change.percent};
 * e.g. {@code -Ddevhealth.scaleout.rate=5000 -Ddevhealth.scaleout.nodes=100 -Ddevhealth.scaleout.devices.per.node=8
 * -Ddevhealth.scaleout.change.percent=5} for a fleet's keep-alives with one report in twenty a change.
 */
@Tag("fault")
@ExtendWith(KafkaClusterExtension.class)
class ProcessorScaleOutIT {

    private static final boolean LONG = Boolean.getBoolean("devhealth.scaleout.long");
    private static final boolean DYNAMIC = Boolean.getBoolean("devhealth.scaleout.dynamic");
    private static final int INSTANCES = 3;
    private static final int PARTITIONS = 6;
    private static final int STANDBYS = 1;
    private static final int NODES = Integer.getInteger("devhealth.scaleout.nodes", 12);
    private static final int DEVICES_PER_NODE = Integer.getInteger("devhealth.scaleout.devices.per.node", 4);
    /**
     * Reports per second ({@code devhealth.scaleout.rate}): 240 by default, enough that every partition has work
     * in flight at every restart, little enough for 2 shared cores.
     */
    private static final int RATE = Integer.getInteger("devhealth.scaleout.rate", 240);
    /** The load sends a round every 50 ms. */
    private static final int REPORTS_PER_ROUND = Math.max(1, RATE / 20);
    /**
     * {@code devhealth.scaleout.change.percent}: the share of reports that change a device's health, the rest
     * keep-alives of its current health (a fleet's mix); unset, the random mix ({@link NodeEventLoad#RANDOM_MIX}).
     */
    private static final int CHANGE_PERCENT = Integer.getInteger("devhealth.scaleout.change.percent", NodeEventLoad.RANDOM_MIX);
    /** Every instance is restarted once, one at a time, as a rolling restart of the StatefulSet does. */
    private static final int RESTARTS = INSTANCES;
    private static final Duration LOAD_BETWEEN_STEPS = Duration.ofSeconds(LONG ? 15 : 3);
    /** The keys the background client asks about during the moves: half the nodes (and so about half the partitions). */
    private static final int QUERIED_NODES = NODES / 2;
    /** The header one instance sets when it forwards a query: the receiver answers from its own stores only. */
    private static final String FORWARDED = "X-Devhealth-Forwarded";
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path tmp;

    private final Topics topics = Topics.withDefaultPrefix();
    private final String registryName = "scaleout-" + UUID.randomUUID();
    private final String applicationId = "devhealth-scaleout-" + UUID.randomUUID().toString().substring(0, 8);
    private final long seed = Long.getLong("devhealth.fault.seed", System.nanoTime());
    private final Random random = new Random(seed);
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    private final List<Instance> instances = new CopyOnWriteArrayList<>();
    private EmbeddedKafkaCluster kafka;
    private NodeEventLoad load;
    private Querier querier;
    private ProcessingStalls stalls;

    @BeforeEach
    void startBroker(@OwnBroker EmbeddedKafkaCluster own) {
        kafka = own;
        // pod-device-status is compacted, as deployed; created first, the loop below leaves it as it is.
        kafka.createCompactedTopics(3, topics.podDeviceStatus());
        // Every topic the processor reads (a new input topic joins here by itself), as many partitions as
        // node-events, in case the topology co-partitions it with node-events.
        for (String input : DeviceHealthTopology.inputTopics(topics)) {
            kafka.createTopics(PARTITIONS, input);
        }
        kafka.createTopics(3, topics.deadLetters(), topics.fleetStats());
        SharedSchemaIds.registerAll(registryName, topics);
    }

    @AfterEach
    void stop() throws InterruptedException {
        if (querier != null) {
            querier.stop();
        }
        if (stalls != null) {
            stalls.stop();
        }
        if (load != null) {
            load.stop();
        }
        for (Instance instance : instances) {
            if (instance.process.isAlive()) {
                instance.process.kill();
            }
        }
    }

    @Test
    void shouldAnswerFromEveryInstanceAndLoseNoTransitionThroughRestartsAndAKill() throws Exception {
        long started = System.nanoTime();
        TransitionOracle oracle = new TransitionOracle();
        load = new NodeEventLoad(kafka, topics, registryName, oracle, random, NODES, DEVICES_PER_NODE, REPORTS_PER_ROUND,
                CHANGE_PERCENT);
        Thread producer = new Thread(load, "node-events-producer");
        // A daemon: a failed run must not leave the fork producing.
        producer.setDaemon(true);
        producer.start();
        try (TopicReader<String, HealthTransition> transitions = TopicReader.of(kafka, topics.healthTransitions())
                .deserializers(new StringDeserializer(), AvroSerde.of(HealthTransition.class, SchemaRegistries.inMemory(registryName))
                        .deserializer()).open()) {
            for (int i = 0; i < INSTANCES; i++) {
                instances.add(new Instance("p" + i));
            }
            // Started together, as a StatefulSet with podManagementPolicy Parallel starts them.
            instances.forEach(Instance::start);
            for (Instance instance : instances) {
                instance.awaitReady();
            }
            Thread.sleep(LOAD_BETWEEN_STEPS.toMillis());

            // 1. Routing: the load paused and processed, so that every instance can be held to one answer.
            load.pause();
            awaitUpTo(() -> transitions.poll().size() >= oracle.total(), Duration.ofSeconds(60));
            long routingStarted = System.nanoTime();
            Routing routing = awaitRouting(oracle, Duration.ofSeconds(60));
            System.out.printf("processor-scaleout routing instances=%d nodes=%d pods=%d requests=%d owners=%s settledMs=%d%n",
                    INSTANCES, NODES, NODES, routing.requests, routing.ownersByInstance(),
                    TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - routingStarted));
            assertThat(routing.problems).as("every instance answers every node, pod and the fleet as the owner does").isEmpty();
            assertThat(routing.ownersByInstance().keySet()).as("with %d partitions every instance owns some nodes", PARTITIONS)
                    .hasSize(INSTANCES);

            // 2. Rolling restart, a SIGKILL and a new instance, under load and queries.
            load.resume();
            querier = new Querier();
            Thread client = new Thread(querier, "query-client");
            client.setDaemon(true);
            client.start();
            stalls = new ProcessingStalls();
            Thread stallWatch = new Thread(stalls, "processing-stalls");
            stallWatch.setDaemon(true);
            stallWatch.start();
            List<Long> restartMs = new ArrayList<>();
            List<Integer> stopExitCodes = new ArrayList<>();
            for (Instance instance : List.copyOf(instances).subList(0, RESTARTS)) {
                Thread.sleep(LOAD_BETWEEN_STEPS.toMillis());
                phase("restart-" + instance.member);
                long t0 = System.nanoTime();
                instance.down();
                stopExitCodes.add(instance.process.stop());
                instance.start();
                instance.awaitReady();
                restartMs.add(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0));
            }
            Thread.sleep(LOAD_BETWEEN_STEPS.toMillis());
            Instance killed = instances.get(random.nextInt(INSTANCES));
            phase("kill-" + killed.member);
            killed.down();
            int exitCode = killed.process.kill();
            assertThat(exitCode).as("killed with SIGKILL").isEqualTo(137);
            instances.remove(killed);
            Instance fourth = new Instance("p" + INSTANCES);
            instances.add(fourth);
            long t0 = System.nanoTime();
            fourth.start();
            fourth.awaitReady();
            long fourthReadyMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            // Long enough for the killed member's session to end and its partitions to move.
            Thread.sleep(Math.max(LOAD_BETWEEN_STEPS.toMillis(), 12_000));
            phase("settled");
            Thread.sleep(LOAD_BETWEEN_STEPS.toMillis());
            load.stop();
            producer.join();
            querier.stop();
            client.join(10_000);
            stalls.stop();
            stallWatch.join(10_000);

            int expectedTotal = oracle.total();
            // On a timeout the figures below still say what is missing or duplicated: no failing wait here.
            awaitUpTo(() -> transitions.poll().size() >= expectedTotal, Duration.ofSeconds(90));
            // Anything emitted twice would show up now.
            List<ConsumerRecord<String, HealthTransition>> received = transitions.readFor(Duration.ofSeconds(3));
            TransitionOracle.Check check = oracle.check(received);
            System.out.printf("processor-scaleout load nodes=%d devicesPerNode=%d targetRate=%d sentPerSecond=%d changePercent=%s%n",
                    NODES, DEVICES_PER_NODE, RATE, load.sentPerSecond(),
                    CHANGE_PERCENT == NodeEventLoad.RANDOM_MIX ? "random-mix" : Integer.toString(CHANGE_PERCENT));
            System.out.printf("processor-scaleout moves seed=%d membership=%s reports=%d expectedTransitions=%d receivedTransitions=%d "
                            + "duplicateIds=%d duplicateContents=%d missing=%d devicesWithWrongSequence=%d restarts=%d stopExitCodes=%s "
                            + "restartToReadyMs=%s fourthToReadyMs=%d elapsedS=%d%n",
                    seed, DYNAMIC ? "dynamic" : "static", load.sent(), expectedTotal, received.size(), check.duplicateIds(),
                    check.duplicateContents(), check.missing(), check.devicesWithWrongSequence(), RESTARTS, stopExitCodes, restartMs,
                    fourthReadyMs,
                    TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - started));
            querier.print();
            stalls.print();
            printWhereTransitionsAreMissing(check);
            // Input dropped as already applied (collector epoch and sequence): after a move, replayed input that the
            // state already holds; with transitions missing, the sign of state kept where its transaction was not.
            for (Instance instance : instances) {
                Answer metrics = instance.get("/metrics", false);
                System.out.printf("processor-scaleout duplicates instance=%s %s%n", instance.member, metrics.text().lines()
                        .filter(line -> line.startsWith("devhealth_processor_duplicates")).toList());
            }

            assertThat(check.duplicateIds()).as("transitions with the same id").isZero();
            assertThat(check.duplicateContents()).as("transitions with the same device, from, to and time").isZero();
            assertThat(check.missing()).as("expected transitions not emitted").isZero();
            assertThat(check.actual()).as("per device, the exact sequence of from->to").isEqualTo(check.expected());
            assertThat(querier.requests()).as("queries asked during the moves").isGreaterThan(100);
            assertThat(querier.serverErrors()).as("answers that are 5xx but 503 (retry shortly)").isEmpty();
            // 0.992-0.997 measured on a loaded 2-core machine with every copy answering; 0.86-0.96 while only standbys did.
            // The bound leaves a loaded CI machine room and still fails a query API that stops answering through moves.
            assertThat(querier.availability()).as("share of queries answered 200 through the moves").isGreaterThanOrEqualTo(0.97);
            assertThat(querier.wrongAnswers()).as("200 answers that are not a node's, pod's or fleet's document").isEmpty();
            assertThat(querier.notFound()).as("404 for nodes and pods that exist (moving partitions are 503, retry)").isEmpty();
            assertThat(querier.regressionsAfterGracefulMoves())
                    .as("node answers older than one answered before, while instances only closed gracefully").isEmpty();
        }
    }

    /**
     * Where expected transitions did not arrive: per device whose sequence is wrong, how many were expected and
     * received; and per node-events partition, what the processor's group has not committed (input left unprocessed,
     * as against transitions lost).
     */
    private void printWhereTransitionsAreMissing(TransitionOracle.Check check) throws Exception {
        Map<String, String> wrong = new TreeMap<>();
        check.expected().forEach((device, steps) -> {
            List<String> got = check.actual().getOrDefault(device, List.of());
            if (!steps.equals(got)) {
                int same = 0;
                while (same < Math.min(steps.size(), got.size()) && steps.get(same).equals(got.get(same))) {
                    same++;
                }
                wrong.put(device, "expected=" + steps.size() + " received=" + got.size() + " firstDifferenceAt=" + same);
            }
        });
        Map<Integer, Long> uncommitted = new TreeMap<>();
        var committed = kafka.admin().listConsumerGroupOffsets(applicationId).partitionsToOffsetAndMetadata().get();
        for (int p = 0; p < PARTITIONS; p++) {
            var partition = new org.apache.kafka.common.TopicPartition(topics.nodeEvents(), p);
            long end = kafka.admin().listOffsets(Map.of(partition, org.apache.kafka.clients.admin.OffsetSpec.latest()))
                    .partitionResult(partition).get().offset();
            var at = committed.get(partition);
            uncommitted.put(p, end - (at == null ? 0 : at.offset()));
        }
        System.out.printf("processor-scaleout missing devices=%s uncommittedNodeEventsByPartition=%s%n", wrong, uncommitted);
    }

    private void phase(String name) {
        querier.phase(name);
        stalls.phase(name);
    }

    /** A watch the test runs beside the moves until it stops it, filing what it sees under the step under way. */
    private abstract static class PhasedWatch implements Runnable {
        volatile boolean running = true;
        volatile String phase = "start";

        void phase(String name) {
            phase = name;
        }

        void stop() {
            running = false;
        }
    }

    /**
     * How long each node-events partition went without processing while the instances moved: the group's committed
     * offsets, polled every 200 ms, advance with every commit (exactly-once commits every 100 ms) as long as the load
     * sends, which it does to every partition throughout. The longest time between two advances of a partition, per
     * phase, is how long its task was away: stopped with its instance, waiting for the session to time out, restoring
     * on the instance that took it over.
     */
    private final class ProcessingStalls extends PhasedWatch {
        private final Map<Integer, Long> committed = new TreeMap<>();
        private final Map<Integer, Long> advancedAt = new TreeMap<>();
        /** By phase (where the stall ended), by partition: the longest stall in ms. */
        private final Map<String, Map<Integer, Long>> longestMs = new TreeMap<>();


        @Override
        public void run() {
            while (running) {
                long now = System.nanoTime();
                try {
                    kafka.admin().listConsumerGroupOffsets(applicationId).partitionsToOffsetAndMetadata().get(5, TimeUnit.SECONDS)
                            .forEach((partition, offset) -> {
                                if (offset == null || !partition.topic().equals(topics.nodeEvents())) {
                                    return;
                                }
                                Long before = committed.put(partition.partition(), offset.offset());
                                Long since = advancedAt.get(partition.partition());
                                if (before == null || since == null) {
                                    advancedAt.put(partition.partition(), now);
                                } else if (offset.offset() > before) {
                                    long stallMs = TimeUnit.NANOSECONDS.toMillis(now - since);
                                    synchronized (longestMs) {
                                        longestMs.computeIfAbsent(phase, k -> new TreeMap<>()).merge(partition.partition(), stallMs, Math::max);
                                    }
                                    advancedAt.put(partition.partition(), now);
                                }
                            });
                    Thread.sleep(200);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                } catch (Exception e) {
                    // The broker is busy; the next poll measures the same stall, only later.
                }
            }
        }

        void print() {
            synchronized (longestMs) {
                List<Long> all = new ArrayList<>();
                Map<Integer, Long> overall = new TreeMap<>();
                longestMs.values().forEach(byPartition -> byPartition.forEach((partition, ms) -> overall.merge(partition, ms, Math::max)));
                all.addAll(overall.values());
                all.sort(null);
                System.out.printf("processor-scaleout processing longestStallMsByPartition=%s p50=%d max=%d byPhase=%s%n", overall,
                        all.isEmpty() ? 0 : all.get(all.size() / 2), all.isEmpty() ? 0 : all.get(all.size() - 1), longestMs);
            }
        }
    }

    /** Keeps asking until every instance routes every query, then asks once more and keeps what was wrong. */
    private Routing awaitRouting(TransitionOracle oracle, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        Routing routing = routing(oracle);
        while (!routing.problems.isEmpty() && System.nanoTime() < deadline) {
            Thread.sleep(500);
            routing = routing(oracle);
        }
        return routing;
    }

    private Routing routing(TransitionOracle oracle) {
        Routing routing = new Routing();
        for (int i = 0; i < NODES; i++) {
            String node = NodeEventLoad.node(i);
            JsonNode owned = routing.owned(node, "/v1/nodes/" + node + "/devices");
            if (owned != null) {
                for (JsonNode device : owned.path("items")) {
                    String key = NodeEventLoad.deviceKey(node, device.path("device").asText());
                    String expected = HealthWords.of(oracle.current(key));
                    if (!device.path("health").asText().equals(expected)) {
                        routing.problems.add(key + ": the owner says " + device.path("health").asText() + ", the load said " + expected);
                    }
                }
            }
            JsonNode pod = routing.owned(node, "/v1/pods/" + NodeEventLoad.POD_NAMESPACE + "/" + NodeEventLoad.pod(node) + "/devices");
            if (pod != null && !pod.path("node").asText().equals(node)) {
                routing.problems.add("pod " + NodeEventLoad.pod(node) + " is said to be on " + pod.path("node").asText());
            }
        }
        routing.fleet(oracle.total());
        return routing;
    }

    /** What one pass of routing queries found. */
    private final class Routing {
        final List<String> problems = new ArrayList<>();
        final Map<String, List<String>> owners = new TreeMap<>();
        int requests;

        /**
         * Asks every instance for {@code path} as a client does and as a forwarded request (its own stores only):
         * one instance must hold it, and every instance must answer what that one holds. Returns that answer.
         */
        JsonNode owned(String node, String path) {
            JsonNode owner = null;
            String ownerMember = null;
            for (Instance instance : instances) {
                Answer local = instance.get(path, true);
                requests++;
                if (local.status == 200) {
                    if (owner != null) {
                        problems.add(path + ": held by " + ownerMember + " and " + instance.member + " (a standby answering?)");
                    }
                    owner = local.body;
                    ownerMember = instance.member;
                } else if (local.status != 404) {
                    problems.add(path + " at " + instance.member + " (own stores): " + local);
                }
            }
            if (owner == null) {
                problems.add(path + ": no instance holds it");
                return null;
            }
            if (path.startsWith("/v1/nodes/")) {
                owners.computeIfAbsent(ownerMember, m -> new ArrayList<>()).add(node);
            }
            for (Instance instance : instances) {
                Answer routed = instance.get(path, false);
                requests++;
                if (routed.status != 200 || !owner.equals(routed.body)) {
                    problems.add(path + " at " + instance.member + ": " + routed + ", the owner " + ownerMember + " holds " + owner);
                }
            }
            return owner;
        }

        /** Every instance answers the sum of every instance's part, and the parts add up to every transition. */
        void fleet(int transitions) {
            String path = "/v1/fleet/summary";
            long parts = 0;
            JsonNode first = null;
            for (Instance instance : instances) {
                Answer local = instance.get(path, true);
                Answer routed = instance.get(path, false);
                requests += 2;
                if (local.status != 200 || routed.status != 200) {
                    problems.add(path + " at " + instance.member + ": own part " + local + ", whole " + routed);
                    continue;
                }
                parts += local.body.path("totals").path("total").asLong();
                // from and to are the time of the request: only the counts must agree.
                JsonNode counts = JSON.createObjectNode().setAll(Map.of("totals", routed.body.path("totals"),
                        "dimensions", routed.body.path("dimensions")));
                if (first == null) {
                    first = counts;
                } else if (!first.equals(counts)) {
                    problems.add(path + " at " + instance.member + ": " + counts + ", another instance " + first);
                }
                if (routed.body.path("totals").path("total").asLong() != transitions) {
                    problems.add(path + " at " + instance.member + ": total " + routed.body.path("totals").path("total")
                            + ", transitions emitted " + transitions);
                }
            }
            if (parts != transitions) {
                problems.add(path + ": the instances' own parts add up to " + parts + ", transitions emitted " + transitions);
            }
        }

        Map<String, Integer> ownersByInstance() {
            Map<String, Integer> counts = new TreeMap<>();
            owners.forEach((member, nodes) -> counts.put(member, nodes.size()));
            return counts;
        }
    }

    /**
     * A client asking every instance that is up, in turn and without pause, about a fixed set of nodes, their
     * pods and the fleet summary, while instances restart: counts answers by status, the longest time each key
     * went unanswered (by any instance, and by one instance a client kept asking), node answers older than one
     * answered before, and any answer that is not a 200 document or a 503 (retry shortly).
     */
    private final class Querier extends PhasedWatch {
        private final Map<Integer, Integer> byStatus = new TreeMap<>();
        private final Map<String, Integer> failuresByPhase = new TreeMap<>();
        /** 200 answers from a standby copy ({@link StandbyReads#STALE_HEADER}). */
        private final Map<String, Integer> staleByPhase = new TreeMap<>();
        private final Map<String, Integer> failureReasons = new TreeMap<>();
        /** How much older than an answer before a standby's node answer was (report time), where it was. */
        private final List<Long> staleBehindMs = new ArrayList<>();
        private final Map<String, Long> failingSince = new TreeMap<>();
        private final Map<String, Long> longestGapMs = new TreeMap<>();
        private final Map<String, Long> failingSinceAtInstance = new TreeMap<>();
        private final Map<String, Long> longestGapAtInstanceMs = new TreeMap<>();
        private final Map<String, Instant> freshest = new TreeMap<>();
        private final List<String> serverErrors = new CopyOnWriteArrayList<>();
        private final List<String> wrongAnswers = new CopyOnWriteArrayList<>();
        private final List<String> regressions = new CopyOnWriteArrayList<>();
        /** Every key asked about exists from the first phase on: a 404 for one says "no such thing" where "retry" is true. */
        private final List<String> notFound = new CopyOnWriteArrayList<>();
        private final List<Long> latenciesMs = new ArrayList<>();
        private volatile int requests;


        @Override
        public void run() {
            List<String> paths = new ArrayList<>();
            for (int i = 0; i < QUERIED_NODES; i++) {
                String node = NodeEventLoad.node(i);
                paths.add("/v1/nodes/" + node + "/devices");
                paths.add("/v1/pods/" + NodeEventLoad.POD_NAMESPACE + "/" + NodeEventLoad.pod(node) + "/devices");
            }
            paths.add("/v1/fleet/summary");
            while (running) {
                for (Instance instance : instances) {
                    for (String path : paths) {
                        if (!running || !instance.up) {
                            break;
                        }
                        ask(instance, path);
                    }
                }
            }
        }

        private void ask(Instance instance, String path) {
            long t0 = System.nanoTime();
            Answer answer = instance.get(path, false);
            long now = System.nanoTime();
            String at = phase;
            synchronized (this) {
                requests++;
                latenciesMs.add(TimeUnit.NANOSECONDS.toMillis(now - t0));
                if (!instance.up) {
                    // Closed while this request was in flight: what it answered says nothing about routing.
                    byStatus.merge(-1, 1, Integer::sum);
                    return;
                }
                byStatus.merge(answer.status, 1, Integer::sum);
                boolean ok = answer.status == 200;
                if (ok && answer.stale) {
                    staleByPhase.merge(at, 1, Integer::sum);
                }
                if (!ok) {
                    failuresByPhase.merge(at, 1, Integer::sum);
                    // What the 503s said, numbers and addresses left out, so that alike reasons count together.
                    String reason = answer.body == null ? answer.text : answer.body.path("message").asText();
                    failureReasons.merge(reason.replaceAll("[0-9.:]+", "#").replaceAll("(node|pod) [^ ]+", "$1 #"), 1, Integer::sum);
                }
                if (answer.status == 404) {
                    notFound.add(at + " " + instance.member + " " + path + ": " + answer);
                }
                if (answer.status >= 500 && answer.status != 503 || answer.status == 0) {
                    serverErrors.add(at + " " + instance.member + " " + path + ": " + answer);
                }
                gap(failingSince, longestGapMs, path, ok, now);
                gap(failingSinceAtInstance, longestGapAtInstanceMs, instance.member + " " + path, ok, now);
                if (ok) {
                    checkDocument(instance, path, answer, at);
                }
            }
        }

        private void gap(Map<String, Long> since, Map<String, Long> longest, String key, boolean ok, long now) {
            Long start = since.get(key);
            if (!ok && start == null) {
                since.put(key, now);
            } else if (ok && start != null) {
                longest.merge(key, TimeUnit.NANOSECONDS.toMillis(now - start), Math::max);
                since.remove(key);
            }
        }

        private void checkDocument(Instance instance, String path, Answer answer, String at) {
            JsonNode body = answer.body;
            if (path.startsWith("/v1/nodes/")) {
                if (body.path("items").size() != DEVICES_PER_NODE) {
                    wrongAnswers.add(at + " " + instance.member + " " + path + ": " + body);
                    return;
                }
                // Reports carry ever later observedAt per node: an older answer is one from state that went back.
                Instant newest = Instant.EPOCH;
                for (JsonNode device : body.path("items")) {
                    for (JsonNode source : device.path("sources")) {
                        Instant refreshed = Instant.parse(source.path("refreshedAt").asText());
                        newest = refreshed.isAfter(newest) ? refreshed : newest;
                    }
                }
                Instant before = freshest.get(path);
                if (answer.stale) {
                    // A standby copy may lag its active one by a few records: older than before is what it may say.
                    if (before != null && newest.isBefore(before)) {
                        staleBehindMs.add(Duration.between(newest, before).toMillis());
                    }
                } else if (before != null && newest.isBefore(before)) {
                    regressions.add(at + " " + instance.member + " " + path + ": newest report " + newest + " after " + before);
                } else {
                    freshest.put(path, newest);
                }
            } else if (path.startsWith("/v1/pods/")) {
                if (!path.contains("/" + body.path("name").asText() + "/") || body.path("containers").isEmpty()) {
                    wrongAnswers.add(at + " " + instance.member + " " + path + ": " + body);
                }
            } else if (!body.path("totals").has("total")) {
                wrongAnswers.add(at + " " + instance.member + " " + path + ": " + body);
            }
        }

        /** The share of answers that were 200: every answer but "retry shortly" (503) and the like. */
        synchronized double availability() {
            int answered = byStatus.entrySet().stream().filter(e -> e.getKey() >= 0).mapToInt(Map.Entry::getValue).sum();
            int failed = failuresByPhase.values().stream().mapToInt(Integer::intValue).sum();
            return answered == 0 ? 0.0 : 1.0 - (double) failed / answered;
        }

        synchronized int requests() {
            return requests;
        }

        List<String> serverErrors() {
            return serverErrors;
        }

        List<String> notFound() {
            return notFound;
        }

        List<String> wrongAnswers() {
            return wrongAnswers;
        }

        List<String> regressionsAfterGracefulMoves() {
            return regressions.stream().filter(r -> r.startsWith("restart-")).toList();
        }

        synchronized void print() {
            int answered = byStatus.entrySet().stream().filter(e -> e.getKey() >= 0).mapToInt(Map.Entry::getValue).sum();
            int failed = failuresByPhase.values().stream().mapToInt(Integer::intValue).sum();
            List<Long> sorted = latenciesMs.stream().sorted().toList();
            Map<String, Long> nodeGaps = new TreeMap<>();
            longestGapMs.forEach((path, ms) -> {
                if (path.startsWith("/v1/nodes/")) {
                    nodeGaps.put(path.split("/")[3], ms);
                }
            });
            // A key still failing when the client stopped counts until then.
            long end = System.nanoTime();
            failingSince.forEach((path, since) -> longestGapMs.merge(path, TimeUnit.NANOSECONDS.toMillis(end - since), Math::max));
            System.out.printf("processor-scaleout queries requests=%d answered=%d failed=%d errorRate=%.4f availability=%.4f byStatus=%s "
                            + "failuresByPhase=%s staleByPhase=%s staleOlderThanBefore=%d staleBehindMsMax=%d latencyMsP50=%d p99=%d max=%d%n",
                    requests, answered, failed, answered == 0 ? 0.0 : (double) failed / answered, availability(), byStatus,
                    failuresByPhase, staleByPhase,
                    staleBehindMs.size(), staleBehindMs.stream().mapToLong(Long::longValue).max().orElse(0),
                    percentile(sorted, 50), percentile(sorted, 99), sorted.isEmpty() ? 0 : sorted.get(sorted.size() - 1));
            System.out.printf("processor-scaleout unanswerable longestMsByNode(any instance)=%s longestMsByKey(any instance)=%s "
                            + "longestMsAtOneInstance=%d%n",
                    nodeGaps, longestGapMs, longestGapAtInstanceMs.values().stream().mapToLong(Long::longValue).max().orElse(0));
            System.out.printf("processor-scaleout anomalies serverErrors=%d wrongAnswers=%d olderAnswers=%d notFound=%d %s%n",
                    serverErrors.size(), wrongAnswers.size(), regressions.size(), notFound.size(),
                    concat(serverErrors, wrongAnswers, regressions).stream().limit(20).toList());
            System.out.printf("processor-scaleout notFound first=%s%n", notFound.stream().limit(10).toList());
            System.out.printf("processor-scaleout failureReasons %s%n", failureReasons);
        }
    }

    private static List<String> concat(List<String> a, List<String> b, List<String> c) {
        List<String> all = new ArrayList<>(a);
        all.addAll(b);
        all.addAll(c);
        return all;
    }

    private static long percentile(List<Long> sorted, int p) {
        return sorted.isEmpty() ? 0 : sorted.get(Math.min(sorted.size() - 1, sorted.size() * p / 100));
    }

    /** One processor instance: a member of the group with its own state directory and query port, kept across restarts. */
    private final class Instance {
        final String member;
        final int port = Ports.free();
        final ManagedProcess process;
        /** Whether the client may ask it: from ready until the test starts closing it. */
        volatile boolean up;

        Instance(String member) {
            this.member = member;
            List<String> command = ChildJvm.command(ProcessorProcessMain.class, List.of(), List.of(kafka.bootstrapServers(),
                    registryName, tmp.resolve(member).resolve("state").toString(), applicationId,
                    DYNAMIC ? ProcessorProcessMain.DYNAMIC_MEMBER : member, Integer.toString(port), Integer.toString(STANDBYS)));
            this.process = ManagedProcess.unstarted("processor-" + member, command,
                    Path.of("target", "scaleout-logs", applicationId, member + ".log"), tmp.resolve(member).resolve("work"));
        }

        void start() {
            process.start();
        }

        void down() {
            up = false;
        }

        /** Until {@code /readyz} says 200 (Kafka Streams RUNNING), failing with the log's end if the JVM exits. */
        void awaitReady() throws InterruptedException {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
            while (get("/readyz", false).status != 200) {
                process.requireAlive();
                if (System.nanoTime() > deadline) {
                    throw new AssertionError("processor " + member + " not ready after 90 s; log " + process.log() + ":\n"
                            + process.tail(40));
                }
                Thread.sleep(100);
            }
            up = true;
        }

        Answer get(String path, boolean ownStoresOnly) {
            HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                    .timeout(Duration.ofSeconds(15)).GET();
            if (ownStoresOnly) {
                request.header(FORWARDED, "1");
            }
            try {
                HttpResponse<String> response = http.send(request.build(), HttpResponse.BodyHandlers.ofString());
                JsonNode body = null;
                if (response.headers().firstValue("Content-Type").orElse("").startsWith("application/json")) {
                    body = JSON.readTree(response.body());
                }
                return new Answer(response.statusCode(), body, response.body(),
                        response.headers().firstValue(StandbyReads.STALE_HEADER).isPresent());
            } catch (IOException e) {
                return new Answer(0, null, e.toString(), false);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return new Answer(0, null, e.toString(), false);
            }
        }
    }

    /** Status 0: no HTTP answer at all (connection refused, reset, timed out); stale: from a standby copy. */
    private record Answer(int status, JsonNode body, String text, boolean stale) {
        @Override
        public String toString() {
            return status + " " + (text.length() > 300 ? text.substring(0, 300) + "…" : text);
        }
    }

    private static boolean awaitUpTo(BooleanSupplier condition, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                return false;
            }
            Thread.sleep(50);
        }
        return true;
    }
}
