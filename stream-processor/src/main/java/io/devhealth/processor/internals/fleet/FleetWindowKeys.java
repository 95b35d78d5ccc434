package io.devhealth.processor.internals.fleet;

/**
 * Keys of the {@code fleet-stats} store: {@code <window start, 16 hex digits>|<DIMENSION:value>}.
 *
 * <p>Time first, so that the fleet summary of the last hour reads the last hour's windows with one
 * range scan. Kafka Streams' window stores order by key first and segment by half the retention
 * (15 days): a one-hour summary scanned days of windows and cost 25 ms at p50 with a week of
 * history (docs/PERFORMANCE.md, query latency), growing with the fleet. Fixed-width lowercase hex
 * sorts as the number does, byte by byte, which is the order RocksDB keeps.
 */
public final class FleetWindowKeys {

    private static final char SEPARATOR = '|';
    private static final int TIME_DIGITS = 16;
    private static final char[] HEX = "0123456789abcdef".toCharArray();

    private FleetWindowKeys() {}

    public static String key(long windowStartMs, String dimensionKey) {
        return time(windowStartMs) + SEPARATOR + dimensionKey;
    }

    /** The lowest key of windows starting at or after {@code windowStartMs}. */
    public static String from(long windowStartMs) {
        return time(windowStartMs);
    }

    /** A bound above every key of windows starting at or before {@code windowStartMs} and below all later ones. */
    public static String through(long windowStartMs) {
        return time(windowStartMs + 1);
    }

    public static long windowStart(String key) {
        return Long.parseUnsignedLong(key, 0, TIME_DIGITS, 16);
    }

    public static String dimensionKey(String key) {
        return key.substring(TIME_DIGITS + 1);
    }

    private static String time(long ms) {
        if (ms < 0) {
            throw new IllegalArgumentException("window start before 1970: " + ms);
        }
        // By hand: String.format was a twentieth of a transition's cost (it runs for every dimension of every transition).
        char[] digits = new char[TIME_DIGITS];
        long rest = ms;
        for (int i = TIME_DIGITS - 1; i >= 0; i--) {
            digits[i] = HEX[(int) (rest & 0xf)];
            rest >>>= 4;
        }
        return new String(digits);
    }
}
