package io.devhealth.collector.dra;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.devhealth.schema.proto.drahealth.v1.DeviceHealth;
import io.devhealth.schema.proto.drahealth.v1.DeviceIdentifier;
import io.devhealth.schema.proto.drahealth.v1.NodeWatchResourcesResponse;
import io.grpc.Status;
import java.io.ByteArrayInputStream;
import org.junit.jupiter.api.Test;

class SnapshotSizeLimitTest {

    private static NodeWatchResourcesResponse snapshot(int devices) {
        NodeWatchResourcesResponse.Builder response = NodeWatchResourcesResponse.newBuilder();
        for (int i = 0; i < devices; i++) {
            response.addDevices(DeviceHealth.newBuilder().setDevice(DeviceIdentifier.newBuilder().setPoolName("p").setDeviceName("gpu-" + i))
                    .setHealthValue(1).setMessage("m"));
        }
        return response.build();
    }

    @Test
    void shouldParseASnapshotUpToTheCap() {
        SnapshotSizeLimit<NodeWatchResourcesResponse> limit = new SnapshotSizeLimit<>(NodeWatchResourcesResponse.getDefaultInstance(), 3);
        NodeWatchResourcesResponse three = snapshot(3);
        assertThat(limit.parse(new ByteArrayInputStream(three.toByteArray()))).isEqualTo(three);
        assertThat(limit.parse(limit.stream(three))).isEqualTo(three);
    }

    @Test
    void shouldRefuseASnapshotOverTheCapBeforeParsingIt() {
        SnapshotSizeLimit<NodeWatchResourcesResponse> limit = new SnapshotSizeLimit<>(NodeWatchResourcesResponse.getDefaultInstance(), 3);
        assertThatThrownBy(() -> limit.parse(new ByteArrayInputStream(snapshot(4).toByteArray())))
                .isInstanceOf(SnapshotSizeLimit.TooManyDevicesException.class).hasMessageContaining("more than 3 devices");
    }

    @Test
    void shouldCountTwoByteEmptyDevicesWithoutBuildingThem() {
        // 0x0a 0x00: field 1, length 0 — the cheapest device there is, and the one that would blow up the heap when parsed.
        byte[] million = new byte[2_000_000];
        for (int i = 0; i < million.length; i += 2) {
            million[i] = 0x0a;
        }
        assertThat(SnapshotSizeLimit.countDevices(million, Integer.MAX_VALUE)).isEqualTo(1_000_000);
        assertThatThrownBy(() -> SnapshotSizeLimit.countDevices(million, 1024))
                .isInstanceOfSatisfying(SnapshotSizeLimit.TooManyDevicesException.class, e -> assertThat(e.devices()).isEqualTo(1025));
    }

    @Test
    void shouldNotCountOtherFieldsAndLeaveMalformedInputToTheParser() {
        // Field 2 (unknown to the schema), length-delimited: kept as an unknown field, not a device.
        byte[] unknown = {0x12, 0x00, 0x12, 0x00, 0x0a, 0x00};
        assertThat(SnapshotSizeLimit.countDevices(unknown, 1)).isEqualTo(1);
        SnapshotSizeLimit<NodeWatchResourcesResponse> limit = new SnapshotSizeLimit<>(NodeWatchResourcesResponse.getDefaultInstance(), 1);
        byte[] truncated = {0x0a, 0x05, 0x0a};
        assertThatThrownBy(() -> limit.parse(new ByteArrayInputStream(truncated))).isInstanceOfSatisfying(RuntimeException.class,
                e -> assertThat(Status.fromThrowable(e).getCode()).isEqualTo(Status.Code.INTERNAL));
    }

    @Test
    void shouldTellOurRefusalsFromOtherFailures() {
        assertThat(DraHealthStream.refusal(Status.RESOURCE_EXHAUSTED.withDescription("gRPC message exceeds maximum size 4194304: 16777300")))
                .isEqualTo(DraHealthStream.Refusal.MESSAGE_TOO_LARGE);
        assertThat(DraHealthStream.refusal(Status.CANCELLED.withDescription("Failed to read message.")
                .withCause(new SnapshotSizeLimit.TooManyDevicesException(9, 8)))).isEqualTo(DraHealthStream.Refusal.TOO_MANY_DEVICES);
        assertThat(DraHealthStream.refusal(Status.RESOURCE_EXHAUSTED.withDescription("driver is busy"))).isNull();
        assertThat(DraHealthStream.refusal(Status.UNAVAILABLE)).isNull();
    }
}
