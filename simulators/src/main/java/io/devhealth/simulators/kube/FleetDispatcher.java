package io.devhealth.simulators.kube;

import io.fabric8.kubernetes.api.model.APIGroupListBuilder;
import io.fabric8.kubernetes.api.model.APIResource;
import io.fabric8.kubernetes.api.model.APIResourceBuilder;
import io.fabric8.kubernetes.api.model.APIResourceListBuilder;
import io.fabric8.kubernetes.api.model.APIVersionsBuilder;
import io.fabric8.kubernetes.api.model.GroupVersionForDiscovery;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.fabric8.mockwebserver.MockWebServer;
import io.fabric8.mockwebserver.http.Dispatcher;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * Routes the requests of a {@link FleetKubernetesApi} to its {@link ObjectStore}s (one per kind) and its
 * {@link EventLog}, answers discovery, and counts requests by kind. Runs on the mock web server's Vert.x
 * event loop: every path here is a map lookup plus one JSON (de)serialization, except LIST and a watch's
 * start.
 *
 * <p>Paths: {@code /api/v1/...} (core) and {@code /apis/<group>/<version>/...}, then
 * {@code <plural>[/<name>[/status]]} (cluster-scoped kinds, and every namespace for a LIST or WATCH of a
 * namespaced kind) or {@code namespaces/<ns>/<plural>[/<name>[/status]]}.
 */
final class FleetDispatcher extends Dispatcher {

    private static final Logger LOGGER = LoggerFactory.getLogger(FleetDispatcher.class);
    private static final String JSON = "application/json";
    private static final String EVENTS = "/api/v1/events";

    private final Map<String, ObjectStore> stores = new HashMap<>();
    /** The CRDs' store, whose objects give the printer columns of the kinds they define; null where none is served. */
    private final ObjectStore crds;
    private final EventLog events;
    private final ObjectMapper mapper;
    private final Map<String, String> discovery;
    final LongAdder statusWrites = new LongAdder();
    final LongAdder podReads = new LongAdder();
    final LongAdder eventWrites = new LongAdder();
    final LongAdder other = new LongAdder();
    private volatile MockWebServer server;
    private final ServerTables tables;

    /** @param stores one per kind: pods and the generic kinds */
    FleetDispatcher(List<ObjectStore> stores, EventLog events, ObjectMapper mapper, KubernetesSerialization serialization, Clock clock) {
        stores.forEach(store -> this.stores.put(store.type().basePath() + "/" + store.type().plural(), store));
        this.crds = stores.stream().filter(store -> store.type().equals(ResourceType.CRDS)).findFirst().orElse(null);
        this.events = events;
        this.mapper = mapper;
        this.discovery = discovery(stores.stream().map(ObjectStore::type).toList(), serialization, mapper);
        this.tables = new ServerTables(mapper, clock);
    }

    /** The server whose request log is cleared on every request (MockWebServer keeps every request otherwise). */
    void serveFor(MockWebServer server) {
        this.server = server;
    }

    @Override
    public MockResponse dispatch(RecordedRequest request) {
        MockWebServer owner = server;
        if (owner != null) {
            owner.reset();
        }
        String method = request.getMethod();
        String rawPath = request.getPath() == null ? "/" : request.getPath();
        int queryStart = rawPath.indexOf('?');
        String path = queryStart < 0 ? rawPath : rawPath.substring(0, queryStart);
        Map<String, String> query = query(queryStart < 0 ? "" : rawPath.substring(queryStart + 1));
        try {
            MockResponse response = route(method, path, query, request);
            LOGGER.debug("fleet api request method={} path={} code={}", method, rawPath, response.code());
            return response;
        } catch (ApiException e) {
            LOGGER.debug("fleet api request method={} path={} code={} message=\"{}\"", method, rawPath, e.code(), e.getMessage());
            return json(e.code(), mapper.writeValueAsString(status(mapper, e.code(), e.reason(), e.getMessage())));
        } catch (JacksonException e) {
            return json(400, mapper.writeValueAsString(status(mapper, 400, "BadRequest", "malformed JSON: " + e.getOriginalMessage())));
        } catch (RuntimeException e) {
            LOGGER.error("fleet api request failed method={} path={}", method, rawPath, e);
            return json(500, mapper.writeValueAsString(status(mapper, 500, "InternalError", e.toString())));
        }
    }

    /** Where a request goes: a kind's base path and plural, the namespace (null: none in the path), the name and subresource. */
    private record Target(String base, String plural, String namespace, String name, String subresource) {
    }

    private MockResponse route(String method, String path, Map<String, String> query, RecordedRequest request) {
        String trimmed = path.endsWith("/") && path.length() > 1 ? path.substring(0, path.length() - 1) : path;
        String document = discovery.get(trimmed);
        if (document != null && "GET".equals(method)) {
            other.increment();
            return json(200, document);
        }
        Target target = target(trimmed);
        if (target == null) {
            other.increment();
            throw notFound(path);
        }
        if (EVENTS.equals(target.base() + "/" + target.plural())) {
            return event(method, target, query, request);
        }
        ObjectStore store = stores.get(target.base() + "/" + target.plural());
        boolean pods = store != null && store.type() == ResourceType.PODS;
        if (store == null || (!store.type().namespaced() && target.namespace() != null)
                || (store.type().namespaced() && target.namespace() == null && target.name() != null)
                || (target.subresource() != null && !("status".equals(target.subresource()) && store.type().statusSubresource()))) {
            other.increment();
            throw notFound(path);
        }
        if (target.name() == null) {
            other.increment();
            return collection(method, store, target.namespace(), query, request);
        }
        boolean status = target.subresource() != null;
        switch (method) {
            case "GET" -> {
                (pods ? podReads : other).increment();
                StoredObject object = store.get(target.namespace(), target.name());
                if (ServerTables.wanted(request.getHeader("Accept"))) {
                    return json(200, mapper.writeValueAsString(tables.table(store.type(), customColumns(store.type()), List.of(object.json()),
                            String.valueOf(object.resourceVersion()), query.get("includeObject"))));
                }
                return json(200, object.text());
            }
            case "PUT" -> {
                (pods && status ? statusWrites : other).increment();
                return json(200, store.update(target.namespace(), target.name(), object(request), status).text());
            }
            case "PATCH" -> {
                (pods && status ? statusWrites : other).increment();
                String contentType = String.valueOf(request.getHeader("Content-Type"));
                boolean jsonPatch = contentType.startsWith("application/json-patch+json");
                if (!jsonPatch && !contentType.startsWith("application/merge-patch+json")) {
                    throw new ApiException(415, "UnsupportedMediaType",
                            "the body of the request was in an unknown format - accepted media types include: "
                                    + "application/json-patch+json, application/merge-patch+json (not strategic merge or apply patches)");
                }
                return json(200, store.patch(target.namespace(), target.name(), body(request), jsonPatch, status).text());
            }
            case "DELETE" -> {
                other.increment();
                if (status) {
                    throw new ApiException(405, "MethodNotAllowed", "DELETE on " + store.type().plural() + "/status");
                }
                byte[] bytes = bytes(request);
                return json(200, store.delete(target.namespace(), target.name(), bytes.length == 0 ? null : mapper.readTree(bytes)).text());
            }
            default -> {
                other.increment();
                throw new ApiException(405, "MethodNotAllowed", method + " on " + store.type().plural());
            }
        }
    }

    /** Null when the path is no resource path at all. */
    private static Target target(String path) {
        String[] s = path.split("/");
        // s[0] is "" (the path starts with '/').
        int restAt;
        String base;
        if (s.length >= 3 && "api".equals(s[1]) && "v1".equals(s[2])) {
            base = "/api/v1";
            restAt = 3;
        } else if (s.length >= 4 && "apis".equals(s[1])) {
            base = "/apis/" + s[2] + "/" + s[3];
            restAt = 4;
        } else {
            return null;
        }
        String[] rest = java.util.Arrays.copyOfRange(s, restAt, s.length);
        if (rest.length >= 3 && "namespaces".equals(rest[0])) {
            return rest.length > 5 ? null : new Target(base, rest[2], rest[1], at(rest, 3), at(rest, 4));
        }
        if (rest.length == 0 || rest.length > 3) {
            return null;
        }
        return new Target(base, rest[0], null, at(rest, 1), at(rest, 2));
    }

    private static String at(String[] parts, int index) {
        return index < parts.length ? parts[index] : null;
    }

    private MockResponse event(String method, Target target, Map<String, String> query, RecordedRequest request) {
        String namespace = target.namespace();
        if (target.name() != null) {
            other.increment();
            if (namespace != null && target.subresource() == null && "GET".equals(method)) {
                return json(200, mapper.writeValueAsString(events.get(namespace, target.name())));
            }
            throw new ApiException(405, "MethodNotAllowed", method + " on an event is not supported by this server");
        }
        if ("POST".equals(method) && namespace != null) {
            eventWrites.increment();
            return json(201, mapper.writeValueAsString(events.create(namespace, object(request))));
        }
        other.increment();
        if ("GET".equals(method) && ServerTables.wanted(request.getHeader("Accept"))) {
            return json(200, mapper.writeValueAsString(tables.eventTable(List.<JsonNode>copyOf(events.recent(namespace, query.get("fieldSelector"))), query.get("includeObject"))));
        }
        if ("GET".equals(method)) {
            ObjectNode list = mapper.createObjectNode().put("kind", "EventList").put("apiVersion", "v1");
            list.putObject("metadata");
            events.recent(namespace, query.get("fieldSelector")).forEach(list.putArray("items")::add);
            return json(200, mapper.writeValueAsString(list));
        }
        throw new ApiException(405, "MethodNotAllowed", method + " on events is not supported by this server");
    }

    private MockResponse collection(String method, ObjectStore store, String namespace, Map<String, String> query,
                                    RecordedRequest request) {
        ResourceType type = store.type();
        if ("POST".equals(method) && (namespace != null || !type.namespaced())) {
            return json(201, store.create(namespace, object(request)).text());
        }
        if (!"GET".equals(method)) {
            throw new ApiException(405, "MethodNotAllowed", method + " on a " + type.plural() + " collection is not supported by this server");
        }
        Selector selector = Selector.parse(type, namespace, query.get("fieldSelector"), query.get("labelSelector"));
        String watch = query.get("watch");
        if ("true".equals(watch) || "1".equals(watch)) {
            return watch(store, selector, query.get("resourceVersion"), request);
        }
        ObjectStore.Listing listing = store.list(selector);
        if (ServerTables.wanted(request.getHeader("Accept"))) {
            return json(200, mapper.writeValueAsString(tables.table(type, customColumns(type),
                    listing.objects().stream().map(o -> (JsonNode) o.json()).toList(), String.valueOf(listing.resourceVersion()),
                    query.get("includeObject"))));
        }
        // The items are already serialized; only the list envelope is added.
        StringBuilder body = new StringBuilder(64 + listing.objects().size() * 2048)
                .append("{\"kind\":\"").append(type.kind()).append("List\",\"apiVersion\":\"").append(type.apiVersion())
                .append("\",\"metadata\":{\"resourceVersion\":\"").append(listing.resourceVersion()).append("\"},\"items\":[");
        for (int i = 0; i < listing.objects().size(); i++) {
            body.append(i == 0 ? "" : ",").append(listing.objects().get(i).text());
        }
        return json(200, body.append("]}").toString());
    }

    /** The printer columns of {@code type}'s CRD where one was created here; null otherwise. */
    private List<ServerTables.Column> customColumns(ResourceType type) {
        if (crds == null || type.group().isEmpty()) {
            return null;
        }
        try {
            return tables.customColumns(crds.get(null, type.plural() + "." + type.group()), type.version());
        } catch (ApiException e) {
            if (e.code() == 404) {
                return null;
            }
            throw e;
        }
    }

    private MockResponse watch(ObjectStore store, Selector selector, String resourceVersion, RecordedRequest request) {
        String upgrade = request.getHeader("Upgrade");
        if (upgrade == null || !upgrade.toLowerCase(java.util.Locale.ROOT).contains("websocket")) {
            throw ApiException.badRequest("this server serves watches over WebSocket only (as the fabric8 client watches)");
        }
        Long from;
        try {
            from = resourceVersion == null || resourceVersion.isEmpty() || "0".equals(resourceVersion) ? null : Long.parseLong(resourceVersion);
        } catch (NumberFormatException e) {
            throw ApiException.badRequest("invalid resourceVersion: " + resourceVersion);
        }
        return new MockResponse().withWebSocketUpgrade(new ObjectWatch(store, selector, from));
    }

    private static ApiException notFound(String path) {
        return ApiException.notFound("the server could not find the requested resource: " + path + ";");
    }

    private JsonNode body(RecordedRequest request) {
        byte[] bytes = bytes(request);
        if (bytes.length == 0) {
            throw ApiException.badRequest("empty request body");
        }
        return mapper.readTree(bytes);
    }

    private ObjectNode object(RecordedRequest request) {
        if (body(request) instanceof ObjectNode object) {
            return object;
        }
        throw ApiException.badRequest("the request body must be a JSON object");
    }

    private static byte[] bytes(RecordedRequest request) {
        return request.getBody() == null ? new byte[0] : request.getBody().getBytes();
    }

    private static MockResponse json(int code, String body) {
        return new MockResponse().setResponseCode(code).setHeader("Content-Type", JSON).setBody(body);
    }

    /** A Kubernetes {@code Status} object, as the API server answers errors and as a watch's ERROR event carries. */
    static ObjectNode status(ObjectMapper mapper, int code, String reason, String message) {
        ObjectNode status = mapper.createObjectNode().put("kind", "Status").put("apiVersion", "v1");
        status.putObject("metadata");
        return status.put("status", "Failure").put("message", message).put("reason", reason).put("code", code);
    }

    private static Map<String, String> query(String query) {
        Map<String, String> params = new HashMap<>();
        for (String pair : query.split("&")) {
            if (pair.isEmpty()) {
                continue;
            }
            int eq = pair.indexOf('=');
            String key = URLDecoder.decode(eq < 0 ? pair : pair.substring(0, eq), StandardCharsets.UTF_8);
            params.put(key, eq < 0 ? "" : URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8));
        }
        return params;
    }

    /**
     * Legacy (non-aggregated) discovery, enough for kubectl: {@code /api}, {@code /api/v1} (pods, Events and
     * the core kinds among {@code types}), {@code /apis} and a resource list per group version, {@code /version}.
     */
    private static Map<String, String> discovery(List<ResourceType> types, KubernetesSerialization serialization, ObjectMapper mapper) {
        Map<String, List<APIResource>> byGroupVersion = new LinkedHashMap<>();
        byGroupVersion.put("v1", new ArrayList<>(List.of(new APIResourceBuilder().withName("events").withSingularName("event")
                .withNamespaced(true).withKind("Event").withVerbs("create", "get", "list").withShortNames("ev").build())));
        for (ResourceType type : types) {
            List<APIResource> resources = byGroupVersion.computeIfAbsent(type.apiVersion(), gv -> new ArrayList<>());
            APIResourceBuilder resource = new APIResourceBuilder().withName(type.plural()).withSingularName(type.singular())
                    .withNamespaced(type.namespaced()).withKind(type.kind())
                    .withVerbs("create", "delete", "get", "list", "patch", "update", "watch").withShortNames(type.shortNames());
            if (type.inCategoryAll()) {
                resource.withCategories("all");
            }
            resources.add(resource.build());
            if (type.statusSubresource()) {
                resources.add(new APIResourceBuilder().withName(type.plural() + "/status").withSingularName("")
                        .withNamespaced(type.namespaced()).withKind(type.kind()).withVerbs("get", "patch", "update").build());
            }
        }
        Map<String, String> documents = new HashMap<>();
        APIGroupListBuilder groups = new APIGroupListBuilder();
        byGroupVersion.forEach((groupVersion, resources) -> {
            documents.put(groupVersion.equals("v1") ? "/api/v1" : "/apis/" + groupVersion, serialization.asJson(
                    new APIResourceListBuilder().withGroupVersion(groupVersion).withResources(resources).build()));
            if (!groupVersion.equals("v1")) {
                GroupVersionForDiscovery version = new GroupVersionForDiscovery(groupVersion, groupVersion.substring(groupVersion.indexOf('/') + 1));
                groups.addNewGroup().withName(groupVersion.substring(0, groupVersion.indexOf('/'))).withVersions(version)
                        .withPreferredVersion(version).endGroup();
            }
        });
        documents.put("/api", serialization.asJson(new APIVersionsBuilder().withVersions("v1").addNewServerAddressByClientCIDR()
                .withClientCIDR("0.0.0.0/0").withServerAddress("127.0.0.1").endServerAddressByClientCIDR().build()));
        documents.put("/apis", serialization.asJson(groups.build()));
        documents.put("/version", mapper.writeValueAsString(mapper.createObjectNode().put("major", "1").put("minor", "34")
                .put("gitVersion", "v1.34.0-devhealth-fleet").put("platform", "linux/amd64")));
        return Map.copyOf(documents);
    }
}
