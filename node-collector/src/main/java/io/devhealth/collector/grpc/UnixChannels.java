package io.devhealth.collector.grpc;

import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import java.nio.file.Path;

/** gRPC channels to the node's unix sockets (DRA plugins, plugin registration, kubelet PodResources). */
public final class UnixChannels {

    /**
     * The HTTP/2 {@code :authority} of every call. For a {@code unix://} target grpc-java sends the
     * socket path there, which is no valid URI authority: servers that check it (Node's HTTP/2 layer,
     * under every grpc-js server) reset each stream with {@code PROTOCOL_ERROR}, and the collector would
     * never see a driver or an allocation they serve. grpc-go sends {@code localhost} for {@code unix:}
     * targets, and that is how the kubelet dials DRA plugins ({@code "unix:" + endpoint} in
     * kubernetes/kubernetes pkg/kubelet/cm/dra/plugin/dra_plugin_manager.go), so a plugin that works
     * with the kubelet accepts it.
     */
    private static final String AUTHORITY = "localhost";

    private UnixChannels() {}

    /**
     * A plaintext channel to {@code socket}, as the kubelet dials plugins ({@code unix:<endpoint>}, insecure).
     *
     * @param maxInboundMessageBytes the largest message read: grpc-java checks the length prefix of each
     *                               message against it before buffering the message, and fails the call with
     *                               {@code RESOURCE_EXHAUSTED}, so a hostile peer cannot make the collector
     *                               allocate more ({@code grpc.max.inbound.message.bytes} says why its default)
     */
    public static ManagedChannel open(Path socket, int maxInboundMessageBytes) {
        return Grpc.newChannelBuilder("unix://" + socket.toAbsolutePath(), InsecureChannelCredentials.create())
                .overrideAuthority(AUTHORITY)
                .maxInboundMessageSize(maxInboundMessageBytes)
                .build();
    }
}
