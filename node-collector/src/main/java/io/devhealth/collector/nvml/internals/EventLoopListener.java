package io.devhealth.collector.nvml.internals;

/** What the event thread tells the source. Called on the event thread: implementations must be quick. */
public interface EventLoopListener {

    /** An event of a key not seen since the last drain was counted: worth evaluating at once. */
    void onNewEventKey();

    /** The wait returned GPU_IS_LOST. */
    void onGpuLost();
}
