package io.devhealth.query.http;

/**
 * A short, quoted, printable-ASCII excerpt of caller input for error messages and logs: the API
 * never reflects raw input (which a terminal or a log viewer might interpret) beyond this.
 */
public final class Excerpt {

    static final int MAX_CHARS = 64;

    private Excerpt() {}

    public static String of(String raw) {
        if (raw == null) {
            return "''";
        }
        StringBuilder out = new StringBuilder(Math.min(raw.length(), MAX_CHARS) + 3).append('\'');
        int shown = Math.min(raw.length(), MAX_CHARS);
        for (int i = 0; i < shown; i++) {
            char c = raw.charAt(i);
            out.append(c >= 0x20 && c < 0x7f && c != '\'' && c != '\\' ? c : '?');
        }
        out.append('\'');
        if (raw.length() > MAX_CHARS) {
            out.append("…(").append(raw.length()).append(" chars)");
        }
        return out.toString();
    }
}
