package io.devhealth.query;

import io.devhealth.query.http.Excerpt;
import io.devhealth.query.http.KubernetesNames;
import io.devhealth.query.http.Permission;
import io.devhealth.query.http.QueryException;
import io.devhealth.query.http.QueryParameters;
import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The /v1 endpoints: what a request asks for, its parameters checked, and the {@link Permission} it
 * needs. The one place that maps a path to an endpoint, so that what is authorized is what is served.
 * Sealed, and answered through {@link Endpoints}: a new endpoint is a new record here and a new method
 * there, and the server does not compile until it answers it.
 */
public sealed interface QueryRoute permits QueryRoute.Pod, QueryRoute.PodVerdict, QueryRoute.DeviceHistory, QueryRoute.NodeDevices,
        QueryRoute.FleetSummary {

    Permission permission();

    /** Hands this route to the {@code endpoints} method that answers it. */
    void answer(Endpoints endpoints) throws IOException;

    /** What answers each route: one method per endpoint. */
    interface Endpoints {
        void pod(Pod route) throws IOException;

        void podVerdict(PodVerdict route) throws IOException;

        void deviceHistory(DeviceHistory route) throws IOException;

        void nodeDevices(NodeDevices route) throws IOException;

        void fleetSummary(FleetSummary route) throws IOException;
    }

    /** {@code /v1/pods/{ns}/{name}/devices?at=}. */
    record Pod(String namespace, String name, Instant at) implements QueryRoute {
        @Override
        public void answer(Endpoints endpoints) throws IOException {
            endpoints.pod(this);
        }

        @Override
        public Permission permission() {
            return Permission.pod(namespace, name);
        }
    }

    /** {@code /v1/pods/{ns}/{name}/verdict?at=}: a terminated pod's verdict (the pod answer carries it too). */
    record PodVerdict(String namespace, String name, Instant at) implements QueryRoute {
        @Override
        public void answer(Endpoints endpoints) throws IOException {
            endpoints.podVerdict(this);
        }

        @Override
        public Permission permission() {
            return Permission.pod(namespace, name);
        }
    }

    /** {@code /v1/devices/{node}/{driver}/{pool…}/{device}/history?from=&to=&limit=&continue=}. */
    record DeviceHistory(String node, String driver, String pool, String device, Instant from, Instant to, int limit,
            String continueToken) implements QueryRoute {
        @Override
        public void answer(Endpoints endpoints) throws IOException {
            endpoints.deviceHistory(this);
        }

        @Override
        public Permission permission() {
            return Permission.node(node);
        }
    }

    /** {@code /v1/nodes/{node}/devices?limit=&continue=}. */
    record NodeDevices(String node, int limit, String continueToken) implements QueryRoute {
        @Override
        public void answer(Endpoints endpoints) throws IOException {
            endpoints.nodeDevices(this);
        }

        @Override
        public Permission permission() {
            return Permission.node(node);
        }
    }

    /** {@code /v1/fleet/summary?window=}. */
    record FleetSummary(Duration window) implements QueryRoute {
        @Override
        public void answer(Endpoints endpoints) throws IOException {
            endpoints.fleetSummary(this);
        }

        @Override
        public Permission permission() {
            return Permission.allNodes();
        }
    }

    /**
     * The endpoint {@code request} asks for; a {@link QueryException} 400 for bad names or parameters,
     * 404 for no endpoint. {@code clock} supplies a device history's default end.
     */
    static QueryRoute of(QueryParameters request, String rawPath, Clock clock) {
        List<String> path = request.segments();
        if (path.size() == 4 && path.get(0).equals("pods") && path.get(3).equals("devices")) {
            String namespace = KubernetesNames.namespace(path.get(1));
            String name = KubernetesNames.podName(path.get(2));
            return new Pod(namespace, name, request.allowOnly("at").instant("at").orElse(null));
        }
        if (path.size() == 4 && path.get(0).equals("pods") && path.get(3).equals("verdict")) {
            String namespace = KubernetesNames.namespace(path.get(1));
            String name = KubernetesNames.podName(path.get(2));
            return new PodVerdict(namespace, name, request.allowOnly("at").instant("at").orElse(null));
        }
        if (path.size() >= 6 && path.get(0).equals("devices") && path.get(path.size() - 1).equals("history")) {
            String node = KubernetesNames.nodeName(path.get(1));
            String driver = KubernetesNames.driver(path.get(2));
            String device = KubernetesNames.device(path.get(path.size() - 2));
            String pool = KubernetesNames.pool(String.join("/", path.subList(3, path.size() - 2)));
            request.allowOnly("from", "to", "limit", "continue");
            Instant to = request.instant("to").orElseGet(clock::instant);
            Instant from = request.instant("from").orElse(Instant.EPOCH);
            if (from.isAfter(to)) {
                throw QueryException.badRequest("from (" + from + ") is after to (" + to + ")");
            }
            return new DeviceHistory(node, driver, pool, device, from, to, request.limit(), request.continueToken().orElse(null));
        }
        if (path.size() == 3 && path.get(0).equals("nodes") && path.get(2).equals("devices")) {
            String node = KubernetesNames.nodeName(path.get(1));
            request.allowOnly("limit", "continue");
            return new NodeDevices(node, request.limit(), request.continueToken().orElse(null));
        }
        if (path.size() == 2 && path.get(0).equals("fleet") && path.get(1).equals("summary")) {
            return new FleetSummary(window(request.allowOnly("window").value("window").orElse(null)));
        }
        throw QueryException.notFound("no such endpoint " + Excerpt.of(rawPath));
    }

    /** The fleet summary's window when a request names none. */
    Duration DEFAULT_FLEET_WINDOW = Duration.ofHours(1);

    /** {@code 30s}, {@code 15m}, {@code 6h}, {@code 7d}, or ISO-8601 ({@code PT90M}); positive. */
    static Duration window(String value) {
        if (value == null || value.isEmpty()) {
            return DEFAULT_FLEET_WINDOW;
        }
        Duration window = null;
        // A positive count and a unit: 30s, 15m, 6h, 7d (compiled per call: a fleet summary is rare).
        Matcher shortForm = Pattern.compile("(\\d{1,9})([smhd])").matcher(value);
        if (shortForm.matches()) {
            long amount = Long.parseLong(shortForm.group(1));
            window = switch (shortForm.group(2)) {
                case "s" -> Duration.ofSeconds(amount);
                case "m" -> Duration.ofMinutes(amount);
                case "h" -> Duration.ofHours(amount);
                default -> Duration.ofDays(amount);
            };
        } else {
            try {
                window = Duration.parse(value);
            } catch (DateTimeParseException e) {
                // reported below
            }
        }
        if (window == null || window.isZero() || window.isNegative()) {
            throw QueryException.badRequest("window must be a positive duration such as 30s, 15m, 6h, 7d or PT90M, got '" + value + "'");
        }
        return window;
    }
}
