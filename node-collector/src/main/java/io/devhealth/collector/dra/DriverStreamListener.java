package io.devhealth.collector.dra;

import java.util.List;

/** What a {@link DraHealthStream} tells the collector. Called from gRPC threads. */
public interface DriverStreamListener {

    /** The stream is open. */
    void onStreamUp(String driver, HealthApiVersion version);

    /** One full snapshot of the driver's devices. */
    void onSnapshot(String driver, List<ObservedDevice> devices);

    /**
     * A message of the stream was refused (too large, or a snapshot of too many devices); the stream is
     * then lost ({@link #onStreamDown}) and reconnects. For counting: the state change is onStreamDown's.
     */
    void onSnapshotRefused(String driver, DraHealthStream.Refusal refusal, String detail);

    /** The stream ended or failed; a reconnect is scheduled. Devices must not be treated as healthy meanwhile. */
    void onStreamDown(String driver, String reason);

    /** The driver does not serve the health API; it is not retried until it registers again. */
    void onUnsupported(String driver, String reason);
}
