package io.devhealth.query.state;

/**
 * How far one of this instance's store copies is from its changelog's end.
 *
 * @param position the offset after the last changelog record the copy holds, as Kafka Streams reports it
 * @param end the changelog's end as a read_committed reader sees it ({@link CommittedEnds}): its last stable
 *        offset, short of the records of a transaction still open
 */
public record CopyLag(long position, long end) {

    /** Changelog records the copy lacks; 0 for a copy at or past the end (a running active copy is reported at the log's end). */
    long lag() {
        return Math.max(0L, end - position);
    }
}
