package io.devhealth.sink.postmortem;

/**
 * The life of one pod's {@link DevicePostMortem} record, and the only changes of it the sink makes:
 * <pre>
 *   ABSENT   --created--------------------------------------------&gt; RECORDED
 *   ABSENT   --created final (a pod frozen before it was recorded)--&gt; FROZEN
 *   RECORDED --updated (a report within the termination window)-----&gt; RECORDED
 *   RECORDED --frozen (the window has passed)-----------------------&gt; FROZEN
 *   RECORDED, FROZEN --deleted (retention passed, the pod gone)-----&gt; DELETED
 * </pre>
 * A final record is never written again: its verdict has been published, and the pod's condition says
 * what it says. {@link PostMortemStore} checks every write and deletion against these transitions.
 *
 * <p>The state is not kept in the sink: it is read from the record in the API server at each write
 * ({@link #of}), so that a restarted sink or another replica finds it as it was left. A record left by an
 * earlier pod of the same name (another UID) is {@link #ABSENT} for the pod that has the name now, whose
 * record replaces it.
 */
public enum PostMortemState {
    /** No record of this pod. */
    ABSENT,
    /** Made, and brought up to date by Unhealthy reports within the termination window. */
    RECORDED,
    /** Final: written no more. */
    FROZEN,
    /** Deleted by the retention sweep. */
    DELETED;

    /** The state of the record that {@code recorded} is the spec of; null: there is none. */
    public static PostMortemState of(DevicePostMortem.Spec recorded) {
        if (recorded == null) {
            return ABSENT;
        }
        return recorded.isFrozen() ? FROZEN : RECORDED;
    }

    /** The state of {@code record} (null: none) for the pod with {@code podUid}. */
    static PostMortemState of(DevicePostMortem record, String podUid) {
        DevicePostMortem.Spec spec = record == null ? null : record.getSpec();
        boolean samePod = spec != null && spec.pod() != null && podUid != null && podUid.equals(spec.pod().uid());
        return samePod ? of(spec) : ABSENT;
    }

    /** The state of {@code record} (null: none) whatever pod it names, as the retention sweep finds it. */
    static PostMortemState of(DevicePostMortem record) {
        if (record == null) {
            return ABSENT;
        }
        return record.getSpec() != null && record.getSpec().isFrozen() ? FROZEN : RECORDED;
    }

    /** The state a record is in once {@code spec} is written. */
    static PostMortemState afterWriting(DevicePostMortem.Spec spec) {
        return spec.isFrozen() ? FROZEN : RECORDED;
    }

    /** Whether a record in this state may become {@code next}. */
    boolean isValidTransition(PostMortemState next) {
        return switch (this) {
            case ABSENT -> next == RECORDED || next == FROZEN;
            case RECORDED -> next == RECORDED || next == FROZEN || next == DELETED;
            case FROZEN -> next == DELETED;
            case DELETED -> false;
        };
    }

    /**
     * {@code next}, when this state may become it.
     *
     * @param pod the record's {@code namespace/name}, for the message
     * @throws IllegalStateException when the record's life does not allow it: the write would be a bug
     */
    PostMortemState transitionTo(PostMortemState next, String pod) {
        if (!isValidTransition(next)) {
            throw new IllegalStateException("post-mortem record of " + pod + " cannot go from " + this + " to " + next);
        }
        return next;
    }
}
