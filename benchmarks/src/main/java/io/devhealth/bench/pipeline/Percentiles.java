package io.devhealth.bench.pipeline;

import java.util.Arrays;
import java.util.Locale;

/** Nearest-rank percentiles of a set of samples (HdrHistogram is not on the classpath; runs are small enough to sort). */
public final class Percentiles {

    private final double[] sorted;

    public Percentiles(double[] samples) {
        this.sorted = samples.clone();
        Arrays.sort(this.sorted);
    }

    public int count() {
        return sorted.length;
    }

    /** The nearest-rank percentile {@code p} (0–100), NaN without samples. */
    public double at(double p) {
        if (sorted.length == 0) {
            return Double.NaN;
        }
        int rank = (int) Math.ceil(p / 100.0 * sorted.length);
        return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))];
    }

    public double max() {
        return sorted.length == 0 ? Double.NaN : sorted[sorted.length - 1];
    }

    /** {@code n=… p50=… p99=… p99.9=… max=…} in milliseconds. */
    public String summary() {
        return String.format(Locale.ROOT, "n=%d p50=%.0fms p99=%.0fms p99.9=%.0fms max=%.0fms", count(), at(50), at(99), at(99.9), max());
    }
}
