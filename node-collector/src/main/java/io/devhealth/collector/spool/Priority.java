package io.devhealth.collector.spool;

/**
 * What the spool gives up first when its disk budget is full. The code is stored with the record:
 * never renumber.
 */
public enum Priority {
    /**
     * Keep-alives: they only refresh a timeout, and a later keep-alive or change of the same device
     * supersedes them. Evicted (oldest first) to make room, and rejected when nothing else can go.
     */
    KEEPALIVE((byte) 1),
    /** Changes, absences, heartbeats, allocations, inventory: dropped only when the spool holds nothing else to evict. */
    ESSENTIAL((byte) 2);

    private final byte code;

    Priority(byte code) {
        this.code = code;
    }

    byte code() {
        return code;
    }

    static Priority fromCode(byte code) {
        for (Priority priority : values()) {
            if (priority.code == code) {
                return priority;
            }
        }
        throw new IllegalArgumentException("unknown spooled record priority " + code);
    }
}
