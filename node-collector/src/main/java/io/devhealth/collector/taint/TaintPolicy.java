package io.devhealth.collector.taint;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import io.devhealth.schema.avro.HealthStatus;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * How device taints turn into health: data (the shipped {@code default-taint-policy.json}, with an
 * operator's rules tried first), not code, so that a driver's new taint key is a configuration change.
 */
public final class TaintPolicy {

    /** One taint as the API server holds it, from a ResourceSlice device or a DeviceTaintRule. */
    public record Taint(String key, String value, String effect) {
        public Taint {
            Objects.requireNonNull(key, "key");
            value = value == null ? "" : value;
            effect = effect == null ? "" : effect;
        }
    }

    /** What a device's taints say about it. */
    public record Verdict(HealthStatus health, String message) {}

    @JsonIgnoreProperties(ignoreUnknown = true)
    record Rule(String key, String value, String effect, HealthStatus health, String message) {
        Rule {
            Objects.requireNonNull(health, "every rule needs a health");
            message = message == null ? "tainted {key}={value}:{effect}" : message;
        }

        boolean matches(Taint taint) {
            boolean keyMatches = key == null
                    || (key.endsWith("/*") ? taint.key().startsWith(key.substring(0, key.length() - 1)) : key.equals(taint.key()));
            return keyMatches && (value == null || value.equals(taint.value())) && (effect == null || effect.equals(taint.effect()));
        }

        String render(Taint taint) {
            return message.replace("{key}", taint.key()).replace("{value}", taint.value()).replace("{effect}", taint.effect());
        }
    }

    @JsonIgnoreProperties(ignoreUnknown = true)
    record Document(List<Rule> rules) {}

    private static final ObjectMapper MAPPER = JsonMapper.builder()
            .enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES).build();
    private static final String DEFAULTS = "default-taint-policy.json";
    /** A taint no rule matches: unknown effects are new to this collector, so they are reported, not judged. */
    private static final Rule FALLBACK = new Rule(null, null, null, HealthStatus.UNKNOWN, "tainted {key}={value}:{effect} (effect unknown to this policy)");

    private final List<Rule> rules;

    private TaintPolicy(List<Rule> rules) {
        this.rules = List.copyOf(rules);
    }

    /** The shipped rules. */
    public static TaintPolicy defaults() {
        try (InputStream in = TaintPolicy.class.getResourceAsStream(DEFAULTS)) {
            return new TaintPolicy(read(in.readAllBytes(), DEFAULTS));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The operator's rules from {@code file}, tried before the shipped ones. */
    public static TaintPolicy withOverrides(Optional<Path> file) {
        TaintPolicy defaults = defaults();
        if (file.isEmpty()) {
            return defaults;
        }
        List<Rule> all = new ArrayList<>();
        try {
            all.addAll(read(Files.readAllBytes(file.get()), file.get().toString()));
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot read taint policy " + file.get() + ": " + e.getMessage(), e);
        }
        all.addAll(defaults.rules);
        return new TaintPolicy(all);
    }

    private static List<Rule> read(byte[] json, String source) {
        try {
            Document document = MAPPER.readValue(json, Document.class);
            if (document.rules() == null) {
                throw new IllegalArgumentException("taint policy " + source + " has no \"rules\"");
            }
            return document.rules();
        } catch (IOException e) {
            throw new IllegalArgumentException("invalid taint policy " + source + ": " + e.getMessage(), e);
        }
    }

    /**
     * The health a device with {@code taints} has by this policy: Healthy without taints (a removed
     * taint is a recovery), else the worst health any taint maps to, with the messages of the taints
     * of that health.
     */
    public Verdict judge(Collection<Taint> taints) {
        if (taints.isEmpty()) {
            return new Verdict(HealthStatus.HEALTHY, null);
        }
        HealthStatus worst = HealthStatus.HEALTHY;
        List<String> messages = new ArrayList<>();
        for (Taint taint : taints.stream().sorted(java.util.Comparator.comparing(Taint::key).thenComparing(Taint::value)).toList()) {
            Rule rule = rules.stream().filter(r -> r.matches(taint)).findFirst().orElse(FALLBACK);
            if (rank(rule.health()) > rank(worst)) {
                worst = rule.health();
                messages.clear();
            }
            if (rule.health() == worst) {
                messages.add(rule.render(taint));
            }
        }
        return new Verdict(worst, String.join("; ", messages));
    }

    private static int rank(HealthStatus health) {
        return switch (health) {
            case UNHEALTHY -> 2;
            case UNKNOWN -> 1;
            default -> 0;
        };
    }
}
