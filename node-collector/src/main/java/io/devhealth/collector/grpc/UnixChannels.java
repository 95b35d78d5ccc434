package io.devhealth.collector.grpc;

import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollDomainSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.unix.DomainSocketAddress;
import java.nio.file.Path;

/**
 * gRPC channels to the node's unix sockets (DRA plugins, plugin registration, kubelet PodResources).
 *
 * <p>All channels share one small epoll event loop: a collector talks to a handful of local sockets
 * and must cost the node almost nothing.
 */
public final class UnixChannels {

    private static final EventLoopGroup EVENT_LOOP = new EpollEventLoopGroup(1, runnable -> {
        Thread thread = new Thread(runnable, "devhealth-grpc-uds");
        thread.setDaemon(true);
        return thread;
    });

    private UnixChannels() {}

    /** A plaintext channel to {@code socket}, as the kubelet dials plugins ({@code unix:<endpoint>}, insecure). */
    public static ManagedChannel open(Path socket) {
        return NettyChannelBuilder.forAddress(new DomainSocketAddress(socket.toString()))
                .channelType(EpollDomainSocketChannel.class)
                .eventLoopGroup(EVENT_LOOP)
                .usePlaintext()
                // Bad or hostile local peers must not make the collector allocate without bound.
                .maxInboundMessageSize(16 * 1024 * 1024)
                .build();
    }
}
