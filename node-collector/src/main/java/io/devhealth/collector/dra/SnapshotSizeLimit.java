package io.devhealth.collector.dra;

import com.google.protobuf.CodedInputStream;
import com.google.protobuf.Message;
import com.google.protobuf.WireFormat;
import io.grpc.MethodDescriptor;
import io.grpc.protobuf.ProtoUtils;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;

/**
 * The response marshaller of {@code NodeWatchResources}: a snapshot of more than {@code maxDevices}
 * devices is refused before it is parsed.
 *
 * <p>Counting after parsing would come too late. An empty {@code DeviceHealth} is two bytes on the
 * wire and some 60 bytes as a Java object, so a message within any inbound size limit of a few MiB can
 * hold a million devices and expand to more heap than the collector has. Here the message's bytes
 * (already bounded by the channel's inbound limit) are scanned field by field, without building a
 * single device, and parsed only when the count of field {@value #DEVICES_FIELD} (the repeated
 * {@code devices} of both v1 and v1alpha1 {@code NodeWatchResourcesResponse}) is within the cap.
 * A refusal throws {@link TooManyDevicesException}; grpc-java then cancels the call with that cause
 * ({@code ClientCallImpl} closes the stream when the response marshaller throws).
 */
final class SnapshotSizeLimit<T extends Message> implements MethodDescriptor.Marshaller<T> {

    static final int DEVICES_FIELD = 1;

    private final MethodDescriptor.Marshaller<T> proto;
    private final int maxDevices;

    SnapshotSizeLimit(T prototype, int maxDevices) {
        this.proto = ProtoUtils.marshaller(prototype);
        this.maxDevices = maxDevices;
    }

    /** A snapshot refused for its number of devices. */
    static final class TooManyDevicesException extends RuntimeException {
        private final int devices;

        TooManyDevicesException(int devices, int maxDevices) {
            super("snapshot of more than " + maxDevices + " devices (" + devices + " counted so far) refused");
            this.devices = devices;
        }

        int devices() {
            return devices;
        }
    }

    @Override
    public InputStream stream(T value) {
        return proto.stream(value);
    }

    @Override
    public T parse(InputStream stream) {
        byte[] bytes;
        try {
            bytes = stream.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        countDevices(bytes, maxDevices);
        return proto.parse(new ByteArrayInputStream(bytes));
    }

    /**
     * The number of top-level {@code devices} entries in {@code bytes}, reading only tags and lengths;
     * throws {@link TooManyDevicesException} as soon as it passes {@code maxDevices}. Malformed input is
     * left to the parser to reject.
     */
    static int countDevices(byte[] bytes, int maxDevices) {
        CodedInputStream input = CodedInputStream.newInstance(bytes);
        int devices = 0;
        try {
            for (int tag = input.readTag(); tag != 0; tag = input.readTag()) {
                if (WireFormat.getTagFieldNumber(tag) == DEVICES_FIELD
                        && WireFormat.getTagWireType(tag) == WireFormat.WIRETYPE_LENGTH_DELIMITED
                        && ++devices > maxDevices) {
                    throw new TooManyDevicesException(devices, maxDevices);
                }
                if (!input.skipField(tag)) {
                    break;
                }
            }
        } catch (IOException malformed) {
            // The parser reports it with its own message.
        }
        return devices;
    }
}
