package io.devhealth.processor;

import static io.devhealth.processor.TopologyFixture.DRIVER;
import static io.devhealth.processor.TopologyFixture.EPOCH;
import static io.devhealth.processor.TopologyFixture.NODE;
import static io.devhealth.processor.TopologyFixture.T0;
import static io.devhealth.processor.TopologyFixture.inventoryWith;
import static io.devhealth.processor.TopologyFixture.nvml;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.groups.Tuple.tuple;

import io.devhealth.processor.internals.node.StoredNode;
import io.devhealth.processor.internals.rules.DeviceState;
import io.devhealth.processor.internals.rules.NodeState;
import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.HealthTransition;
import io.devhealth.schema.avro.InventoryDevice;
import io.devhealth.schema.avro.NodeDevices;
import io.micrometer.core.instrument.Counter;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.streams.state.KeyValueStore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Inventories are de-duplicated by (collector epoch, sequence) like the other node inputs: a replayed
 * or stale inventory (spool replay after an outage, an old record sent again) must not overwrite a
 * newer one and re-map GPU UUIDs onto devices the node no longer has them on.
 */
class InventoryReplayTest {

    /** gpu-0's UUID before the node's GPU was swapped, and after. */
    private static final String OLD_UUID = "GPU-old";
    private static final String NEW_UUID = "GPU-new";
    private static final String GPU0_KEY = NODE + "/" + DRIVER + "/" + NODE + "/gpu-0";

    private final TopologyFixture fixture = new TopologyFixture();

    @AfterEach
    void tearDown() {
        fixture.close();
    }

    private static NodeDevices gpu0(String uuid, long epoch, long sequence) {
        return inventoryWith(List.of(InventoryDevice.newBuilder().setDriver(DRIVER).setPool(NODE).setDevice("gpu-0").setUuid(uuid)
                .build())).setCollectorEpoch(epoch).setSequence(sequence).build();
    }

    private void pipe(NodeDevices inventory) {
        fixture.pipe(NODE, inventory, fixture.wall());
    }

    private List<String> deviceKeys() {
        KeyValueStore<String, DeviceState> store = fixture.driver.getKeyValueStore(DeviceHealthTopology.DEVICE_STATE_STORE);
        List<String> keys = new ArrayList<>();
        try (var all = store.all()) {
            all.forEachRemaining(kv -> keys.add(kv.key));
        }
        return keys;
    }

    private NodeDevices storedInventory() {
        KeyValueStore<String, NodeDevices> store = fixture.driver.getKeyValueStore(DeviceHealthTopology.NODE_INVENTORY_STORE);
        return store.get(NODE);
    }

    private NodeState.Watermark inventoryWatermark() {
        KeyValueStore<String, StoredNode> store = fixture.driver.getKeyValueStore(DeviceHealthTopology.NODE_STATE_STORE);
        return store.get(NODE).state().inventory();
    }

    private double inventoryDuplicates() {
        Counter counter = fixture.meters.find("devhealth.processor.duplicates").tag("kind", "inventory").counter();
        assertThat(counter).as("duplicates counter for inventories registered").isNotNull();
        return counter.count();
    }

    @Test
    void shouldDropAStaleInventoryAndNotReMapItsUuids() {
        pipe(gpu0(NEW_UUID, EPOCH, 10));
        // NVML still reports the old GPU's UUID (say, a report the node queued): no device has it now.
        fixture.send(nvml(OLD_UUID, HealthStatus.UNHEALTHY, T0.plusSeconds(1)).setMessage("XID 79"));
        assertThat(deviceKeys()).containsExactly(NODE + "/uuid:" + OLD_UUID);

        // The collector's spool replays an inventory from before the swap, then one is sent again unchanged.
        pipe(gpu0(OLD_UUID, EPOCH, 5));
        pipe(gpu0(NEW_UUID, EPOCH, 10));

        assertThat(deviceKeys()).as("the old UUID's report is not moved onto gpu-0").containsExactly(NODE + "/uuid:" + OLD_UUID);
        assertThat(storedInventory().getDevices()).extracting(InventoryDevice::getUuid).containsExactly(NEW_UUID);
        assertThat(storedInventory().getSequence()).isEqualTo(10L);
        assertThat(fixture.transitions.readValuesToList()).extracting(t -> t.getDevice().getDevice()).doesNotContain("gpu-0");
        assertThat(inventoryDuplicates()).isEqualTo(2.0);
        assertThat(inventoryWatermark()).isEqualTo(new NodeState.Watermark(EPOCH, 10));
    }

    @Test
    void shouldApplyANewerInventoryOfTheSameRun() {
        pipe(gpu0(OLD_UUID, EPOCH, 5));
        fixture.send(nvml(NEW_UUID, HealthStatus.UNHEALTHY, T0.plusSeconds(1)).setMessage("XID 79"));

        pipe(gpu0(NEW_UUID, EPOCH, 10));

        assertThat(deviceKeys()).containsExactly(GPU0_KEY);
        assertThat(fixture.transitions.readValuesToList()).extracting(t -> t.getDevice().getDevice(), HealthTransition::getTo)
                .contains(tuple("gpu-0", HealthStatus.UNHEALTHY));
        assertThat(inventoryDuplicates()).isZero();
        assertThat(inventoryWatermark()).isEqualTo(new NodeState.Watermark(EPOCH, 10));
    }

    @Test
    void shouldAcceptTheInventoryOfANewCollectorEpochAndDropTheOldRunsAfterIt() {
        pipe(gpu0(OLD_UUID, EPOCH, 900));
        fixture.send(nvml(NEW_UUID, HealthStatus.UNHEALTHY, T0.plusSeconds(1)).setMessage("XID 79"));

        // The spool was lost: a new epoch whose sequences start again at 1.
        long newEpoch = EPOCH + 5_000;
        pipe(gpu0(NEW_UUID, newEpoch, 1));
        // A late record of the old run, with a higher sequence, must not undo it.
        pipe(gpu0(OLD_UUID, EPOCH, 901));

        assertThat(deviceKeys()).as("the new UUID's report moved onto gpu-0").containsExactly(GPU0_KEY);
        assertThat(storedInventory().getDevices()).extracting(InventoryDevice::getUuid).containsExactly(NEW_UUID);
        assertThat(inventoryDuplicates()).isEqualTo(1.0);
        assertThat(inventoryWatermark()).isEqualTo(new NodeState.Watermark(newEpoch, 1));
    }

    @Test
    void shouldRefuseAnInventoryWithoutACollectorEpochWithTheReason() {
        pipe(gpu0(NEW_UUID, EPOCH, 10));

        // No collector sends (0, 0): its spool's epoch is at least 1 and its sequences start at 1. Such a record
        // is not after any watermark, so it could only be dropped; it is refused, with the reason, instead.
        pipe(gpu0(OLD_UUID, 0, 0));

        assertThat(storedInventory().getDevices()).extracting(InventoryDevice::getUuid).containsExactly(NEW_UUID);
        assertThat(inventoryWatermark()).isEqualTo(new NodeState.Watermark(EPOCH, 10));
        assertThat(inventoryDuplicates()).as("not a duplicate").isZero();
        assertThat(fixture.deadLetters.readValuesToList()).singleElement()
                .satisfies(letter -> assertThat(letter.getReason()).contains("without a collector epoch"));
    }

    @Test
    void shouldKeepInventoryAndReportWatermarksApart() {
        // One collector numbers all its records from one counter: a report's higher sequence says nothing about inventories.
        fixture.send(nvml(NEW_UUID, HealthStatus.HEALTHY, T0.plusSeconds(1))); // sequence 1
        pipe(gpu0(NEW_UUID, EPOCH, 1));

        KeyValueStore<String, StoredNode> store = fixture.driver.getKeyValueStore(DeviceHealthTopology.NODE_STATE_STORE);
        assertThat(store.get(NODE).state().reports()).isEqualTo(new NodeState.Watermark(EPOCH, 1));
        assertThat(store.get(NODE).state().inventory()).isEqualTo(new NodeState.Watermark(EPOCH, 1));
        assertThat(deviceKeys()).containsExactly(GPU0_KEY);
    }
}
