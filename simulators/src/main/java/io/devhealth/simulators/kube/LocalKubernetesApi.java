package io.devhealth.simulators.kube;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMixedDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.fabric8.mockwebserver.ServerRequest;
import io.fabric8.mockwebserver.ServerResponse;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.HashMap;
import java.util.Map;
import java.util.Queue;
import java.util.logging.Level;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An in-memory Kubernetes API (fabric8 {@code kubernetes-server-mock} in CRUD mode) on plain HTTP at
 * {@code http://127.0.0.1:<port>}, usable from code (tests, the {@code devhealth demo}), by the fabric8
 * client and by the real {@code kubectl}:
 *
 * <pre>{@code
 * kubectl --server http://127.0.0.1:<port> get pods -A -o json
 * }</pre>
 *
 * <p>Besides the CRUD store it answers the discovery requests that kubectl makes first ({@code /api},
 * {@code /api/v1}, {@code /apis}, {@code /apis/resource.k8s.io/v1}) with a fixed list of resources: core
 * {@code pods}, {@code namespaces}, {@code nodes}, {@code events}, {@code configmaps}, {@code services},
 * {@code resource.k8s.io/v1} {@code resourceclaims}, {@code resourceclaimtemplates},
 * {@code resourceslices}, {@code deviceclasses}, and devhealth's own {@code devhealth.io/v1alpha1}
 * {@code devicepostmortems} (the CRUD store serves any resource; kubectl needs it listed to find it by name). Other kinds work through the fabric8 client but not by
 * name in kubectl. The mock does not serve server-side tables: a plain {@code kubectl get pods} shows
 * only NAME and AGE, so use {@code -o json}, {@code -o yaml} or {@code -o jsonpath=...} to show status.
 *
 * <p>It stores and serves objects, emulates {@code resourceVersion} conflicts, watches, label and
 * {@code metadata.name} field selectors, and JSON Patch (RFC 6902). It is not an API server; its known
 * deviations from one:
 * <ul>
 *   <li>strategic merge patch: HTTP 415 (fabric8's {@code patch(String)} without context sends it);
 *   <li>JSON merge patch <b>appends</b> to lists instead of replacing them;
 *   <li>status given on create is kept, and a main-resource patch can change status (a real server
 *       drops both): set pod status through the {@code status} subresource, see {@link PodFixtures};
 *   <li>no validation, defaulting, admission, RBAC, server-side apply or garbage collection.
 * </ul>
 * Every request is also recorded in memory by the mock server, so a long-running demo with polling
 * clients grows slowly. Requests are logged at DEBUG; the mock's own per-request {@code java.util.logging}
 * INFO line is turned down to WARNING.
 */
public final class LocalKubernetesApi implements AutoCloseable {

    private static final Logger LOGGER = LoggerFactory.getLogger(LocalKubernetesApi.class);
    private static final String HOST = "127.0.0.1";
    /** Strong reference: java.util.logging keeps loggers weakly, and would forget the level. */
    private static final java.util.logging.Logger MOCK_WEB_SERVER_LOGGER =
            java.util.logging.Logger.getLogger(MockWebServer.class.getName());

    private final KubernetesMockServer server;
    private final KubernetesClient client;
    private final String url;
    private boolean closed;

    private LocalKubernetesApi(KubernetesMockServer server) {
        this.server = server;
        this.url = "http://" + HOST + ":" + server.getPort();
        this.client = server.createClient();
    }

    /**
     * Starts an empty API on a random free port.
     *
     * @return the running API
     */
    public static LocalKubernetesApi start() {
        return start(0);
    }

    /**
     * Starts an empty API on the given port of {@code 127.0.0.1}.
     *
     * @param port the port, or 0 for a random free one
     * @return the running API
     */
    @SuppressWarnings("deprecation") // Serialization.jsonMapper(): what fabric8's own mock extension passes
    public static LocalKubernetesApi start(int port) {
        Map<ServerRequest, Queue<ServerResponse>> responses = new HashMap<>();
        MOCK_WEB_SERVER_LOGGER.setLevel(Level.WARNING);
        DiscoveryDispatcher dispatcher = new DiscoveryDispatcher(responses);
        KubernetesMockServer server = new KubernetesMockServer(new Context(Serialization.jsonMapper()),
                new MockWebServer(), responses, dispatcher, false);
        try {
            server.init(InetAddress.getByName(HOST), port);
        } catch (UnknownHostException e) {
            throw new IllegalStateException("cannot resolve " + HOST, e);
        }
        dispatcher.serverAddress = HOST + ":" + server.getPort();
        LocalKubernetesApi api = new LocalKubernetesApi(server);
        LOGGER.info("local kubernetes api started url={}", api.url);
        return api;
    }

    /** @return {@code http://127.0.0.1:<port>}, for {@code kubectl --server} and client configuration */
    public String url() {
        return url;
    }

    /** @return the port */
    public int port() {
        return server.getPort();
    }

    /**
     * A command line for the real kubectl against this API.
     *
     * @param arguments kubectl arguments, e.g. {@code "get pod -n ml trainer-0 -o yaml"}
     * @return e.g. {@code kubectl --server http://127.0.0.1:40123 get pod -n ml trainer-0 -o yaml}
     */
    public String kubectlCommand(String arguments) {
        return "kubectl --server " + url + " " + arguments;
    }

    /**
     * A fabric8 client for this API, shared and closed with it (default namespace {@code test}). Use
     * {@code inNamespace(..)} or {@code inAnyNamespace()} explicitly.
     *
     * @return the client
     */
    public KubernetesClient client() {
        return client;
    }

    /** @return the underlying mock server, for expectations and recorded requests */
    public KubernetesMockServer mockServer() {
        return server;
    }

    /** Closes the client and stops the server. Idempotent. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            client.close();
        } finally {
            server.destroy();
        }
        LOGGER.info("local kubernetes api stopped url={}", url);
    }

    /** The CRUD dispatcher, plus legacy (non-aggregated) discovery documents for kubectl. */
    private static final class DiscoveryDispatcher extends KubernetesMixedDispatcher {

        private static final String VERBS =
                "\"verbs\":[\"create\",\"delete\",\"deletecollection\",\"get\",\"list\",\"patch\",\"update\",\"watch\"]";
        private static final String STATUS_VERBS = "\"verbs\":[\"get\",\"patch\",\"update\"]";
        private static final String CORE_RESOURCES = "{\"kind\":\"APIResourceList\",\"apiVersion\":\"v1\","
                + "\"groupVersion\":\"v1\",\"resources\":["
                + resource("pods", "pod", true, "Pod", "po", true) + ","
                + subresource("pods/status", true, "Pod") + ","
                + resource("namespaces", "namespace", false, "Namespace", "ns", false) + ","
                + resource("nodes", "node", false, "Node", "no", false) + ","
                + subresource("nodes/status", false, "Node") + ","
                + resource("events", "event", true, "Event", "ev", false) + ","
                + resource("configmaps", "configmap", true, "ConfigMap", "cm", false) + ","
                + resource("services", "service", true, "Service", "svc", true) + "]}";
        private static final String RESOURCE_GROUP_VERSION = "resource.k8s.io/v1";
        private static final String RESOURCE_RESOURCES = "{\"kind\":\"APIResourceList\",\"apiVersion\":\"v1\","
                + "\"groupVersion\":\"" + RESOURCE_GROUP_VERSION + "\",\"resources\":["
                + resource("resourceclaims", "resourceclaim", true, "ResourceClaim", null, false) + ","
                + subresource("resourceclaims/status", true, "ResourceClaim") + ","
                + resource("resourceclaimtemplates", "resourceclaimtemplate", true, "ResourceClaimTemplate", null,
                        false) + ","
                + resource("resourceslices", "resourceslice", false, "ResourceSlice", null, false) + ","
                + resource("deviceclasses", "deviceclass", false, "DeviceClass", null, false) + "]}";
        private static final String DEVHEALTH_GROUP_VERSION = "devhealth.io/v1alpha1";
        private static final String DEVHEALTH_RESOURCES = "{\"kind\":\"APIResourceList\",\"apiVersion\":\"v1\","
                + "\"groupVersion\":\"" + DEVHEALTH_GROUP_VERSION + "\",\"resources\":["
                + resource("devicepostmortems", "devicepostmortem", true, "DevicePostMortem", "dpm", false) + "]}";
        private static final String GROUPS = "{\"kind\":\"APIGroupList\",\"apiVersion\":\"v1\",\"groups\":["
                + "{\"name\":\"resource.k8s.io\",\"versions\":[{\"groupVersion\":\"" + RESOURCE_GROUP_VERSION
                + "\",\"version\":\"v1\"}],\"preferredVersion\":{\"groupVersion\":\"" + RESOURCE_GROUP_VERSION
                + "\",\"version\":\"v1\"}},"
                + "{\"name\":\"devhealth.io\",\"versions\":[{\"groupVersion\":\"" + DEVHEALTH_GROUP_VERSION
                + "\",\"version\":\"v1alpha1\"}],\"preferredVersion\":{\"groupVersion\":\"" + DEVHEALTH_GROUP_VERSION
                + "\",\"version\":\"v1alpha1\"}}]}";

        private volatile String serverAddress = HOST;

        DiscoveryDispatcher(Map<ServerRequest, Queue<ServerResponse>> responses) {
            super(responses);
        }

        @Override
        public MockResponse dispatch(RecordedRequest request) {
            String path = request.getPath();
            int query = path == null ? -1 : path.indexOf('?');
            String bare = query < 0 ? path : path.substring(0, query);
            String body = "GET".equals(request.getMethod()) ? discovery(bare) : null;
            MockResponse response = body != null
                    ? new MockResponse().setResponseCode(200).setHeader("Content-Type", "application/json").setBody(body)
                    : super.dispatch(request);
            LOGGER.debug("kubernetes api request method={} path={} code={}", request.getMethod(), path,
                    response.code());
            return response;
        }

        private String discovery(String path) {
            if (path == null) {
                return null;
            }
            switch (path) {
                case "/api":
                case "/api/":
                    return "{\"kind\":\"APIVersions\",\"versions\":[\"v1\"],\"serverAddressByClientCIDRs\":"
                            + "[{\"clientCIDR\":\"0.0.0.0/0\",\"serverAddress\":\"" + serverAddress + "\"}]}";
                case "/api/v1":
                case "/api/v1/":
                    return CORE_RESOURCES;
                case "/apis":
                case "/apis/":
                    return GROUPS;
                case "/apis/resource.k8s.io/v1":
                case "/apis/resource.k8s.io/v1/":
                    return RESOURCE_RESOURCES;
                case "/apis/devhealth.io/v1alpha1":
                case "/apis/devhealth.io/v1alpha1/":
                    return DEVHEALTH_RESOURCES;
                default:
                    return null;
            }
        }

        private static String resource(String name, String singular, boolean namespaced, String kind, String shortName,
                boolean inCategoryAll) {
            return "{\"name\":\"" + name + "\",\"singularName\":\"" + singular + "\",\"namespaced\":" + namespaced
                    + ",\"kind\":\"" + kind + "\"," + VERBS
                    + (shortName == null ? "" : ",\"shortNames\":[\"" + shortName + "\"]")
                    + (inCategoryAll ? ",\"categories\":[\"all\"]" : "") + "}";
        }

        private static String subresource(String name, boolean namespaced, String kind) {
            return "{\"name\":\"" + name + "\",\"singularName\":\"\",\"namespaced\":" + namespaced
                    + ",\"kind\":\"" + kind + "\"," + STATUS_VERBS + "}";
        }
    }
}
