package io.devhealth.simulators.kube;

import io.fabric8.kubernetes.api.model.APIGroupListBuilder;
import io.fabric8.kubernetes.api.model.APIResource;
import io.fabric8.kubernetes.api.model.APIResourceBuilder;
import io.fabric8.kubernetes.api.model.APIResourceListBuilder;
import io.fabric8.kubernetes.api.model.APIVersionsBuilder;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.fabric8.mockwebserver.MockWebServer;
import io.fabric8.mockwebserver.http.Dispatcher;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
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
 * Routes the requests of a {@link FleetKubernetesApi} to its {@link PodStore} and {@link EventLog},
 * answers discovery, and counts requests by kind. Runs on the mock web server's Vert.x event loop:
 * every path here is a map lookup plus one JSON (de)serialization, except LIST and a watch's start.
 */
final class FleetDispatcher extends Dispatcher {

    private static final Logger LOGGER = LoggerFactory.getLogger(FleetDispatcher.class);
    private static final String JSON = "application/json";

    private final PodStore pods;
    private final EventLog events;
    private final ObjectMapper mapper;
    private final Map<String, String> discovery;
    final LongAdder statusWrites = new LongAdder();
    final LongAdder podReads = new LongAdder();
    final LongAdder eventWrites = new LongAdder();
    final LongAdder other = new LongAdder();
    private volatile MockWebServer server;

    FleetDispatcher(PodStore pods, EventLog events, ObjectMapper mapper, KubernetesSerialization serialization) {
        this.pods = pods;
        this.events = events;
        this.mapper = mapper;
        this.discovery = discovery(serialization, mapper);
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

    private MockResponse route(String method, String path, Map<String, String> query, RecordedRequest request) {
        String trimmed = path.endsWith("/") && path.length() > 1 ? path.substring(0, path.length() - 1) : path;
        String document = discovery.get(trimmed);
        if (document != null && "GET".equals(method)) {
            other.increment();
            return json(200, document);
        }
        String[] s = trimmed.split("/");
        // s[0] is "" (the path starts with '/'); core v1 only.
        if (s.length < 4 || !"api".equals(s[1]) || !"v1".equals(s[2])) {
            other.increment();
            throw ApiException.notFound("the server could not find the requested resource: " + path + "; ");
        }
        if (s.length == 4) {
            // /api/v1/pods, /api/v1/events: every namespace
            return collection(method, null, s[3], query, request);
        }
        if (!"namespaces".equals(s[3]) || s.length < 6) {
            other.increment();
            throw ApiException.notFound("the server could not find the requested resource: " + path + "; ");
        }
        String namespace = s[4];
        if (s.length == 6) {
            return collection(method, namespace, s[5], query, request);
        }
        String name = s[6];
        if ("pods".equals(s[5]) && s.length <= 8) {
            boolean status = s.length == 8;
            if (status && !"status".equals(s[7])) {
                other.increment();
                throw ApiException.notFound("pods/" + s[7]);
            }
            return pod(method, namespace, name, status, request);
        }
        if ("events".equals(s[5]) && s.length == 7 && "GET".equals(method)) {
            other.increment();
            return json(200, mapper.writeValueAsString(events.get(namespace, name)));
        }
        other.increment();
        throw ApiException.notFound("the server could not find the requested resource: " + path + "; ");
    }

    private MockResponse collection(String method, String namespace, String resource, Map<String, String> query, RecordedRequest request) {
        if ("events".equals(resource)) {
            if ("POST".equals(method) && namespace != null) {
                eventWrites.increment();
                return json(201, mapper.writeValueAsString(events.create(namespace, object(request))));
            }
            other.increment();
            if ("GET".equals(method)) {
                ObjectNode list = mapper.createObjectNode().put("kind", "EventList").put("apiVersion", "v1");
                list.putObject("metadata");
                events.recent(namespace).forEach(list.putArray("items")::add);
                return json(200, mapper.writeValueAsString(list));
            }
            throw new ApiException(405, "MethodNotAllowed", method + " on events is not supported by this server");
        }
        other.increment();
        if (!"pods".equals(resource)) {
            throw ApiException.notFound("the server could not find the requested resource: " + resource + "; ");
        }
        if ("POST".equals(method) && namespace != null) {
            return json(201, pods.create(namespace, object(request)).text());
        }
        if (!"GET".equals(method)) {
            throw new ApiException(405, "MethodNotAllowed", method + " on a pod collection is not supported by this server");
        }
        PodSelector selector = PodSelector.parse(namespace, query.get("fieldSelector"), query.get("labelSelector"));
        String watch = query.get("watch");
        if ("true".equals(watch) || "1".equals(watch)) {
            return watch(selector, query.get("resourceVersion"), request);
        }
        PodStore.Listing listing = pods.list(selector);
        // The items are already serialized; only the list envelope is added.
        StringBuilder body = new StringBuilder(64 + listing.pods().size() * 2048)
                .append("{\"kind\":\"PodList\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":\"")
                .append(listing.resourceVersion()).append("\"},\"items\":[");
        for (int i = 0; i < listing.pods().size(); i++) {
            body.append(i == 0 ? "" : ",").append(listing.pods().get(i).text());
        }
        return json(200, body.append("]}").toString());
    }

    private MockResponse watch(PodSelector selector, String resourceVersion, RecordedRequest request) {
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
        return new MockResponse().withWebSocketUpgrade(new PodWatch(pods, selector, from));
    }

    private MockResponse pod(String method, String namespace, String name, boolean status, RecordedRequest request) {
        switch (method) {
            case "GET" -> {
                podReads.increment();
                return json(200, pods.get(namespace, name).text());
            }
            case "PUT" -> {
                count(status);
                return json(200, pods.update(namespace, name, object(request), status).text());
            }
            case "PATCH" -> {
                count(status);
                String contentType = String.valueOf(request.getHeader("Content-Type"));
                boolean jsonPatch = contentType.startsWith("application/json-patch+json");
                if (!jsonPatch && !contentType.startsWith("application/merge-patch+json")) {
                    throw new ApiException(415, "UnsupportedMediaType",
                            "the body of the request was in an unknown format - accepted media types include: "
                                    + "application/json-patch+json, application/merge-patch+json (not strategic merge or apply patches)");
                }
                return json(200, pods.patch(namespace, name, body(request), jsonPatch, status).text());
            }
            case "DELETE" -> {
                other.increment();
                if (status) {
                    throw new ApiException(405, "MethodNotAllowed", "DELETE on pods/status");
                }
                byte[] bytes = bytes(request);
                return json(200, pods.delete(namespace, name, bytes.length == 0 ? null : mapper.readTree(bytes)).text());
            }
            default -> {
                other.increment();
                throw new ApiException(405, "MethodNotAllowed", method + " on a pod");
            }
        }
    }

    private void count(boolean status) {
        (status ? statusWrites : other).increment();
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

    /** Legacy (non-aggregated) discovery, enough for kubectl: core v1 pods, pods/status and events; no API groups. */
    private static Map<String, String> discovery(KubernetesSerialization serialization, ObjectMapper mapper) {
        List<String> verbs = List.of("create", "delete", "get", "list", "patch", "update", "watch");
        APIResource pods = new APIResourceBuilder().withName("pods").withSingularName("pod").withNamespaced(true).withKind("Pod")
                .withVerbs(verbs).withShortNames("po").withCategories("all").build();
        APIResource podStatus = new APIResourceBuilder().withName("pods/status").withSingularName("").withNamespaced(true)
                .withKind("Pod").withVerbs("get", "patch", "update").build();
        APIResource events = new APIResourceBuilder().withName("events").withSingularName("event").withNamespaced(true)
                .withKind("Event").withVerbs("create", "get", "list").withShortNames("ev").build();
        String versions = serialization.asJson(new APIVersionsBuilder().withVersions("v1").addNewServerAddressByClientCIDR()
                .withClientCIDR("0.0.0.0/0").withServerAddress("127.0.0.1").endServerAddressByClientCIDR().build());
        String core = serialization.asJson(new APIResourceListBuilder().withGroupVersion("v1").withResources(pods, podStatus, events).build());
        String groups = serialization.asJson(new APIGroupListBuilder().build());
        String version = mapper.writeValueAsString(mapper.createObjectNode().put("major", "1").put("minor", "34")
                .put("gitVersion", "v1.34.0-devhealth-fleet").put("platform", "linux/amd64"));
        return Map.of("/api", versions, "/api/v1", core, "/apis", groups, "/version", version);
    }
}
