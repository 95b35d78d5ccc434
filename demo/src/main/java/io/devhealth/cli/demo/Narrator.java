package io.devhealth.cli.demo;

import java.io.PrintStream;
import java.time.Duration;
import java.time.Instant;

/** Tells a demo's story on one stream, each line stamped with the seconds since the demo started. */
public final class Narrator {

    private final PrintStream out;
    private final Instant started;

    public Narrator(PrintStream out) {
        this.out = out;
        this.started = Instant.now();
    }

    public void step(String format, Object... args) {
        out.printf("[%3ds] %s%n", elapsed().toSeconds(), String.format(format, args));
    }

    /** A line without a stamp (a heading, a blank line, a command's own output). */
    public void plain(String line) {
        out.println(line);
    }

    public PrintStream out() {
        return out;
    }

    public Duration elapsed() {
        return Duration.between(started, Instant.now());
    }
}
