package io.devhealth.simulators.grpc;

import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/** A plain gRPC client channel to a unix socket, as the kubelet or the node collector dials it. */
public final class UnixChannels {

    private UnixChannels() {
    }

    /**
     * @param socket the socket path
     * @return a channel using grpc-netty-shaded's unix name resolver ({@code unix://<path>})
     */
    public static ManagedChannel open(Path socket) {
        return Grpc.newChannelBuilder("unix://" + socket.toAbsolutePath(), InsecureChannelCredentials.create())
                .build();
    }

    /**
     * @param channel the channel to close
     */
    public static void close(ManagedChannel channel) {
        channel.shutdownNow();
        try {
            channel.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
