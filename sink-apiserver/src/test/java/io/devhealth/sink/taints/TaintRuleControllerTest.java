package io.devhealth.sink.taints;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.devhealth.schema.OwnTaintRules;
import io.devhealth.schema.avro.DeviceRef;
import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.HealthTransition;
import io.devhealth.schema.avro.SourceKind;
import io.devhealth.sink.ApiCallPolicy;
import io.devhealth.sink.SinkMetrics;
import io.devhealth.testkit.time.MutableClock;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSliceBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSliceListBuilder;
import io.fabric8.kubernetes.api.model.resource.v1beta2.DeviceTaintRule;
import io.fabric8.kubernetes.api.model.resource.v1beta2.DeviceTaintRuleBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The retry-elsewhere state machine against a mock API server (CRUD): what rules exist after each transition. */
@EnableKubernetesMockClient(crud = true)
class TaintRuleControllerTest {

    static final String DRIVER = "gpu.example.com";
    private static final TopicPartition PARTITION = new TopicPartition("devhealth.health-transitions", 0);
    private static final Duration HOLD = Duration.ofMinutes(10);
    private static final Duration WINDOW = Duration.ofMinutes(5);

    KubernetesMockServer server;
    KubernetesClient client;

    private final MutableClock clock = MutableClock.at("2026-12-02T10:00:00Z");
    private SimpleMeterRegistry registry;
    private SinkMetrics metrics;
    private long offset;

    @BeforeEach
    void setUp() {
        registry = new SimpleMeterRegistry();
        metrics = new SinkMetrics(registry);
        for (String node : List.of("node-a", "node-b", "node-c", "node-d")) {
            client.nodes().resource(new NodeBuilder().withNewMetadata().withName(node).endMetadata().build()).create();
            // node-d's driver tainted its gpu-0 itself, as NVIDIA's does on a fatal XID.
            slice(node, node.equals("node-d"));
        }
    }

    /**
     * The node's slice of {@link #DRIVER}, with gpu-0 tainted {@code NoSchedule} where asked. The mock's CRUD
     * mode matches nothing on a field selector over {@code spec} fields, so the sink's query with
     * {@code spec.nodeName} and {@code spec.driver} is answered here as the API server would answer it.
     */
    private void slice(String node, boolean gpu0Tainted) {
        var device0 = new DeviceBuilder().withName("gpu-0");
        if (gpu0Tainted) {
            device0.addNewTaint().withKey("gpu.nvidia.com/xid").withValue("79").withEffect("NoSchedule").endTaint();
        }
        ResourceSlice slice = new ResourceSliceBuilder()
                .withNewMetadata().withName(node + "-" + DRIVER).endMetadata()
                .withNewSpec().withNodeName(node).withDriver(DRIVER)
                        .withNewPool().withName(node).withGeneration(1L).withResourceSliceCount(1L).endPool()
                        .withDevices(device0.build(), new DeviceBuilder().withName("gpu-1").build(), new DeviceBuilder().withName("gpu-2").build())
                .endSpec().build();
        server.expect().get()
                .withPath("/apis/resource.k8s.io/v1/resourceslices?fieldSelector=spec.nodeName%3D" + node + "%2Cspec.driver%3D" + DRIVER)
                .andReturn(200, new ResourceSliceListBuilder().withItems(slice).build()).always();
    }

    private TaintRuleSettings settings(boolean dryRun, int maxPerNode, double fraction) {
        return new TaintRuleSettings(true, dryRun, "devhealth-sink-taints", HOLD, maxPerNode, fraction, WINDOW);
    }

    private TaintRuleController controller(TaintRuleSettings settings) {
        TaintRuleStore kubernetes = new KubernetesTaintRules(client,
                new ApiCallPolicy(ApiCallPolicy.Settings.singleAttempt(1_000), metrics), clock);
        TaintRuleController controller = new TaintRuleController(settings.dryRun() ? new DryRunTaintRules(kubernetes) : kubernetes,
                settings, metrics, Duration.ofSeconds(30));
        controller.recover();
        return controller;
    }

    static HealthTransition transition(String node, String device, HealthStatus to, SourceKind source) {
        return HealthTransition.newBuilder()
                .setId(UUID.randomUUID().toString())
                .setNode(node)
                .setDevice(DeviceRef.newBuilder().setDriver(DRIVER).setPool(node).setDevice(device).build())
                .setFrom(to == HealthStatus.HEALTHY ? HealthStatus.UNHEALTHY : HealthStatus.HEALTHY)
                .setTo(to)
                .setSource(source)
                .setMessage(to == HealthStatus.UNHEALTHY ? "XID 79: GPU has fallen off the bus" : null)
                .setAt(Instant.parse("2026-12-02T10:00:00Z"))
                .build();
    }

    private TaintRuleController.Outcome apply(TaintRuleController controller, String node, String device, HealthStatus to) {
        return controller.apply(transition(node, device, to, SourceKind.DRA), PARTITION, offset++, clock.instant());
    }

    private List<DeviceTaintRule> rules() {
        return client.resources(DeviceTaintRule.class).list().getItems();
    }

    private double count(String name, String tag, String value) {
        return registry.get("devhealth.sink." + name).tag(tag, value).counter().count();
    }

    private double breakerGauge() {
        return registry.get("devhealth.sink.taint.breaker.open").gauge().value();
    }

    @Test
    void shouldCreateExactlyOneRuleSelectingTheUnhealthyDevice() {
        TaintRuleController controller = controller(settings(false, 2, 0.5));

        apply(controller, "node-a", "gpu-1", HealthStatus.UNHEALTHY);
        apply(controller, "node-a", "gpu-1", HealthStatus.UNHEALTHY);

        assertThat(rules()).singleElement().satisfies(rule -> {
            assertThat(rule.getMetadata().getName()).isEqualTo(new TaintedDevice("node-a", DRIVER, "node-a", "gpu-1").ruleName());
            assertThat(rule.getMetadata().getLabels()).containsEntry(OwnTaintRules.MANAGED_BY_LABEL, OwnTaintRules.MANAGED_BY);
            assertThat(rule.getSpec().getDeviceSelector().getDriver()).isEqualTo(DRIVER);
            assertThat(rule.getSpec().getDeviceSelector().getPool()).isEqualTo("node-a");
            assertThat(rule.getSpec().getDeviceSelector().getDevice()).isEqualTo("gpu-1");
            assertThat(rule.getSpec().getTaint().getEffect()).isEqualTo("NoSchedule");
            assertThat(rule.getSpec().getTaint().getKey()).isEqualTo(OwnTaintRules.TAINT_KEY);
            assertThat(rule.getMetadata().getAnnotations()).containsEntry(KubernetesTaintRules.REASON, "XID 79: GPU has fallen off the bus");
        });
        assertThat(count("taint.rules", "action", "created")).isEqualTo(1);
    }

    @Test
    void shouldCreateNoRuleWhenTheDriverTaintedTheDevice() {
        TaintRuleController controller = controller(settings(false, 2, 0.5));

        controller.apply(transition("node-a", "gpu-1", HealthStatus.UNHEALTHY, SourceKind.TAINT), PARTITION, offset++, clock.instant());
        apply(controller, "node-d", "gpu-0", HealthStatus.UNHEALTHY);

        assertThat(rules()).isEmpty();
        assertThat(count("taint.rules.skipped", "reason", "taint_source")).isEqualTo(1);
        assertThat(count("taint.rules.skipped", "reason", "slice_tainted")).isEqualTo(1);
    }

    @Test
    void shouldCreateNoRuleForADeviceThatIsNotADraDevice() {
        TaintRuleController controller = controller(settings(false, 2, 0.5));
        HealthTransition nvmlOnly = HealthTransition.newBuilder(transition("node-a", "gpu-1", HealthStatus.UNHEALTHY, SourceKind.NVML))
                .setDevice(DeviceRef.newBuilder().setUuid("GPU-1234").build()).build();

        controller.apply(nvmlOnly, PARTITION, offset++, clock.instant());

        assertThat(rules()).isEmpty();
        assertThat(count("taint.rules.skipped", "reason", "not_dra")).isEqualTo(1);
    }

    @Test
    void shouldWriteNothingInDryRunButCountWhatItWouldDo() {
        TaintRuleController controller = controller(settings(true, 2, 0.5));

        apply(controller, "node-a", "gpu-1", HealthStatus.UNHEALTHY);
        clock.advance(HOLD);
        apply(controller, "node-a", "gpu-1", HealthStatus.HEALTHY);

        assertThat(rules()).isEmpty();
        assertThat(count("taint.rules", "action", "would_create")).isEqualTo(1);
        assertThat(count("taint.rules", "action", "would_delete")).isEqualTo(1);
        assertThat(count("taint.rules", "action", "created")).isZero();
    }

    @Test
    void shouldTaintAtMostTheCapOfDevicesPerNode() {
        TaintRuleController controller = controller(settings(false, 2, 1.0));

        apply(controller, "node-a", "gpu-0", HealthStatus.UNHEALTHY);
        apply(controller, "node-a", "gpu-1", HealthStatus.UNHEALTHY);
        apply(controller, "node-a", "gpu-2", HealthStatus.UNHEALTHY);
        apply(controller, "node-b", "gpu-2", HealthStatus.UNHEALTHY);

        assertThat(rules()).extracting(r -> r.getMetadata().getAnnotations().get(KubernetesTaintRules.NODE) + "/"
                + r.getSpec().getDeviceSelector().getDevice())
                .containsExactlyInAnyOrder("node-a/gpu-0", "node-a/gpu-1", "node-b/gpu-2");
        assertThat(count("taint.rules.refused", "reason", "node_cap")).isEqualTo(1);
    }

    @Test
    void shouldOpenTheBreakerAboveTheFleetFractionAndCloseItAfterTheWindow() {
        TaintRuleController controller = controller(settings(false, 2, 0.5));

        apply(controller, "node-a", "gpu-1", HealthStatus.UNHEALTHY);
        apply(controller, "node-b", "gpu-1", HealthStatus.UNHEALTHY);
        assertThat(controller.breakerOpen()).as("2 of 4 nodes: not more than half").isFalse();
        apply(controller, "node-c", "gpu-1", HealthStatus.UNHEALTHY);
        apply(controller, "node-a", "gpu-2", HealthStatus.UNHEALTHY);

        assertThat(controller.breakerOpen()).as("3 of 4 nodes: more than half").isTrue();
        assertThat(breakerGauge()).isEqualTo(1);
        assertThat(rules()).hasSize(2);
        assertThat(count("taint.rules.refused", "reason", "breaker")).isEqualTo(2);

        // Recovery still removes rules while it is open.
        clock.advance(HOLD);
        apply(controller, "node-a", "gpu-1", HealthStatus.HEALTHY);
        assertThat(rules()).hasSize(1);

        controller.tick(clock.instant());
        assertThat(controller.breakerOpen()).as("the window has passed: nothing demanded within it").isFalse();
        assertThat(breakerGauge()).isZero();
        apply(controller, "node-c", "gpu-1", HealthStatus.UNHEALTHY);
        assertThat(rules()).hasSize(2);
    }

    @Test
    void shouldRemoveTheRuleOnlyAfterTheHold() {
        TaintRuleController controller = controller(settings(false, 2, 0.5));
        apply(controller, "node-a", "gpu-1", HealthStatus.UNHEALTHY);

        clock.advance(Duration.ofMinutes(1));
        assertThat(apply(controller, "node-a", "gpu-1", HealthStatus.HEALTHY)).isEqualTo(TaintRuleController.Outcome.HELD);
        assertThat(controller.heldFrom(PARTITION)).hasValue(offset - 1);
        controller.tick(clock.instant().plus(HOLD).minus(Duration.ofMinutes(2)));
        assertThat(rules()).as("healthy, but within the hold").hasSize(1);

        clock.advance(HOLD);
        controller.tick(clock.instant());
        assertThat(rules()).isEmpty();
        assertThat(controller.heldFrom(PARTITION)).isEmpty();
        assertThat(count("taint.rules", "action", "deleted")).isEqualTo(1);
    }

    @Test
    void shouldKeepTheRuleOfADeviceThatFailsAgainWithinTheHold() {
        TaintRuleController controller = controller(settings(false, 2, 0.5));
        apply(controller, "node-a", "gpu-1", HealthStatus.UNHEALTHY);
        apply(controller, "node-a", "gpu-1", HealthStatus.HEALTHY);
        apply(controller, "node-a", "gpu-1", HealthStatus.UNHEALTHY);

        clock.advance(HOLD.multipliedBy(2));
        controller.tick(clock.instant());

        assertThat(rules()).hasSize(1);
        assertThat(controller.heldFrom(PARTITION)).isEmpty();
    }

    @Test
    void shouldRebuildItsStateFromItsRulesAfterARestart() {
        TaintRuleController before = controller(settings(false, 2, 0.5));
        apply(before, "node-a", "gpu-1", HealthStatus.UNHEALTHY);
        apply(before, "node-a", "gpu-2", HealthStatus.UNHEALTHY);
        String created = rules().get(0).getMetadata().getAnnotations().get(OwnTaintRules.CREATED_AT);

        clock.advance(Duration.ofMinutes(3));
        TaintRuleController after = controller(settings(false, 2, 0.5));
        apply(after, "node-a", "gpu-1", HealthStatus.UNHEALTHY);
        apply(after, "node-a", "gpu-0", HealthStatus.UNHEALTHY);

        assertThat(rules()).as("no duplicate, and the node's cap counts the rules from before").hasSize(2);
        assertThat(rules()).allSatisfy(r -> assertThat(r.getMetadata().getAnnotations()).containsEntry(OwnTaintRules.CREATED_AT, created));
        assertThat(count("taint.rules.refused", "reason", "node_cap")).isEqualTo(1);

        apply(after, "node-a", "gpu-1", HealthStatus.HEALTHY);
        clock.advance(HOLD.minus(Duration.ofMinutes(3)));
        after.tick(clock.instant());
        assertThat(rules()).as("the hold counts from the rule's creation before the restart").hasSize(1);
        assertThat(after.phase(new TaintedDevice("node-a", DRIVER, "node-a", "gpu-2"))).isEqualTo(TaintRuleController.Phase.TAINTED);
    }

    @Test
    void shouldTakeAnExistingRuleOfTheSameDeviceAsItsOwn() {
        TaintRuleController one = controller(settings(false, 2, 0.5));
        TaintRuleController other = controller(settings(false, 2, 0.5));
        apply(one, "node-a", "gpu-1", HealthStatus.UNHEALTHY);

        apply(other, "node-a", "gpu-1", HealthStatus.UNHEALTHY);

        assertThat(rules()).hasSize(1);
        assertThat(other.phase(new TaintedDevice("node-a", DRIVER, "node-a", "gpu-1"))).isEqualTo(TaintRuleController.Phase.TAINTED);
    }

    @Test
    void shouldNeitherTakeOverNorLaterDeleteSomeoneElsesRuleUnderItsName() {
        TaintedDevice device = new TaintedDevice("node-a", DRIVER, "node-a", "gpu-1");
        client.resource(new DeviceTaintRuleBuilder().withNewMetadata().withName(device.ruleName()).endMetadata()
                .withNewSpec().withNewTaint().withKey("example.com/other").withEffect("None").endTaint().endSpec().build()).create();
        TaintRuleController controller = controller(settings(false, 2, 0.5));

        assertThatThrownBy(() -> apply(controller, "node-a", "gpu-1", HealthStatus.UNHEALTHY))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("is not devhealth's");
        assertThat(controller.phase(device)).isNull();
        assertThat(rules()).singleElement().satisfies(r -> assertThat(r.getSpec().getTaint().getKey()).isEqualTo("example.com/other"));
    }
}
