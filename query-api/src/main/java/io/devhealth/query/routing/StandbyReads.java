package io.devhealth.query.routing;

/**
 * Whether a key whose active copy cannot answer (its instance gone, restoring, rebalancing, or the partition
 * moving) is answered from a copy read as it stands, a standby copy or the active copy itself while its stream
 * thread rebalances, and how far behind its changelog such a copy may be. Kafka Streams keeps standbys for a fast
 * takeover ({@code num.standby.replicas}); reading them too (KIP-535) is what keeps queries answered through the
 * session timeout of a killed instance and the rebalance of a restarted one. Such an answer carries
 * {@value #STALE_HEADER}{@code : true}.
 *
 * @param maxLagRecords the most changelog records a copy may lack to answer: Kafka Streams' own
 *        {@code acceptable.recovery.lag} default, the lag it calls caught up
 */
public record StandbyReads(boolean enabled, long maxLagRecords) {

    /** On an answer from a standby copy: it may lack up to {@code maxLagRecords} of the latest changes. */
    public static final String STALE_HEADER = "X-Devhealth-Stale";
    public static final long DEFAULT_MAX_LAG_RECORDS = 10_000L;
    public static final StandbyReads DEFAULT = new StandbyReads(true, DEFAULT_MAX_LAG_RECORDS);
    public static final StandbyReads OFF = new StandbyReads(false, 0L);

    public StandbyReads {
        if (maxLagRecords < 0) {
            throw new IllegalArgumentException("maxLagRecords must be >= 0, got " + maxLagRecords);
        }
    }
}
