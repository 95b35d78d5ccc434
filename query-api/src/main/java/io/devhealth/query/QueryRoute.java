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
import java.util.List;

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
            return new FleetSummary(QueryServer.window(request.allowOnly("window").value("window").orElse(null)));
        }
        throw QueryException.notFound("no such endpoint " + Excerpt.of(rawPath));
    }
}
