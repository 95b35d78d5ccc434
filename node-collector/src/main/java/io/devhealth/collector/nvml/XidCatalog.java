package io.devhealth.collector.nvml;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;

/**
 * NVIDIA's XID catalogue as data ({@value #RESOURCE}): for every XID it lists, the mnemonic, the
 * description and the "Immediate Action" resolution bucket. The file names its source and version
 * in its header. Immutable; {@link #shipped()} is read once per JVM.
 *
 * <p>The catalogue only says what NVIDIA recommends; what an action means for a device's health is
 * the {@link HealthPolicy}'s {@code xidActions}.
 */
public final class XidCatalog {

    public static final String RESOURCE = "/io/devhealth/collector/nvml/xid-catalog.tsv";
    /** What the file holds in the action column where the catalogue's cell is empty. */
    static final String NO_ACTION = "-";
    /** The catalogue's own description of codes that current GPUs no longer raise. */
    private static final String UNUSED = "Unused";

    private static final XidCatalog SHIPPED = load();

    /**
     * One XID of the catalogue.
     *
     * @param action the immediate-action bucket, e.g. {@code RESTART_APP}; null where the catalogue gives none
     */
    public record Entry(long xid, String mnemonic, String description, String action) {
        public Entry {
            Objects.requireNonNull(mnemonic, "mnemonic");
            Objects.requireNonNull(description, "description");
        }

        /**
         * The words a message uses for this XID: the catalogue's description, or for a code the
         * catalogue marks unused (where the description says nothing) its mnemonic.
         */
        public String name() {
            return UNUSED.equalsIgnoreCase(description) ? mnemonic + " (listed as unused on current GPUs)" : description;
        }
    }

    private final TreeMap<Long, Entry> entries;

    private XidCatalog(Map<Long, Entry> entries) {
        this.entries = new TreeMap<>(entries);
    }

    /** The catalogue shipped with the collector. */
    public static XidCatalog shipped() {
        return SHIPPED;
    }

    /**
     * Parses the file format: {@code #} comment lines, then one line per XID with four tab-separated
     * columns (xid, mnemonic, description, action or {@value #NO_ACTION}). Anything else is an error
     * naming the line, so a damaged resource stops the collector at start rather than misclassifying.
     */
    static XidCatalog parse(List<String> lines) {
        Map<Long, Entry> entries = new TreeMap<>();
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i);
            if (line.isBlank() || line.startsWith("#")) {
                continue;
            }
            String[] columns = line.split("\t", -1);
            if (columns.length != 4) {
                throw new IllegalArgumentException("XID catalogue line " + (i + 1) + ": expected 4 tab-separated columns, found "
                        + columns.length);
            }
            long xid;
            try {
                xid = Long.parseLong(columns[0].trim());
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("XID catalogue line " + (i + 1) + ": \"" + columns[0] + "\" is not an XID number");
            }
            String action = columns[3].trim();
            Entry entry = new Entry(xid, columns[1].trim(), columns[2].trim(), action.isEmpty() || action.equals(NO_ACTION) ? null : action);
            if (entries.putIfAbsent(xid, entry) != null) {
                throw new IllegalArgumentException("XID catalogue line " + (i + 1) + ": XID " + xid + " listed twice");
            }
        }
        if (entries.isEmpty()) {
            throw new IllegalArgumentException("XID catalogue lists no XID");
        }
        return new XidCatalog(entries);
    }

    private static XidCatalog load() {
        try (InputStream in = XidCatalog.class.getResourceAsStream(RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException(RESOURCE + " missing from the classpath");
            }
            BufferedReader reader = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
            return parse(reader.lines().collect(Collectors.toList()));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The entry for {@code xid}, or null for an XID the catalogue does not list. */
    public Entry get(long xid) {
        return entries.get(xid);
    }

    /** Every entry, by XID. */
    public Map<Long, Entry> entries() {
        return Collections.unmodifiableMap(entries);
    }

    /** The distinct actions the catalogue uses (without the empty cells). */
    public Set<String> actions() {
        Set<String> actions = new TreeSet<>();
        for (Entry entry : entries.values()) {
            if (entry.action() != null) {
                actions.add(entry.action());
            }
        }
        return actions;
    }

    /** The highest XID listed: anything above it is newer than this catalogue. */
    public long highest() {
        return entries.lastKey();
    }
}
