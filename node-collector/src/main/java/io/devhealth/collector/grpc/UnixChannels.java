package io.devhealth.collector.grpc;

import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import java.nio.file.Path;

/** gRPC channels to the node's unix sockets (DRA plugins, plugin registration, kubelet PodResources). */
public final class UnixChannels {

    /** Bad or hostile local peers must not make the collector allocate without bound. */
    private static final int MAX_INBOUND_MESSAGE_BYTES = 16 * 1024 * 1024;

    private UnixChannels() {}

    /** A plaintext channel to {@code socket}, as the kubelet dials plugins ({@code unix:<endpoint>}, insecure). */
    public static ManagedChannel open(Path socket) {
        return Grpc.newChannelBuilder("unix://" + socket.toAbsolutePath(), InsecureChannelCredentials.create())
                .maxInboundMessageSize(MAX_INBOUND_MESSAGE_BYTES)
                .build();
    }
}
