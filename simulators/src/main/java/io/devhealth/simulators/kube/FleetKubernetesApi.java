package io.devhealth.simulators.kube;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.fabric8.mockwebserver.MockWebServer;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.logging.Level;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.databind.ObjectMapper;
import tools.jackson.databind.json.JsonMapper;

/**
 * The in-memory Kubernetes API of devhealth's tests, benchmarks and {@code devhealth demo}: plain HTTP at
 * {@code http://127.0.0.1:<port>}, fabric8's {@code mockwebserver} (Vert.x) with a dispatcher of our own
 * that stays cheap per request at fleet scale (10,000 pods and more), usable from code, by the fabric8
 * client (and its informers) and by the real {@code kubectl}:
 *
 * <pre>{@code
 * kubectl --server http://127.0.0.1:<port> get pods -A -o json
 * kubectl --server http://127.0.0.1:<port> get devicepostmortems -n ml train-0 -o yaml
 * }</pre>
 *
 * <p>Which fake to use: this one, for anything that talks to an API server over HTTP. Fault tests that
 * script failing answers use {@link FaultInjectingKubernetesApi} (fabric8's mock in expectations mode),
 * unit tests may use fabric8's {@code @EnableKubernetesMockClient}; claims about a real API server are
 * proven on the real one ({@code @RealKubernetes}).
 *
 * <p>What it serves:
 * <ul>
 *   <li>pods, and every other kind it knows (core {@code namespaces}, {@code nodes}, {@code configmaps},
 *       {@code services}; {@code resource.k8s.io/v1} {@code resourceclaims}, {@code resourceclaimtemplates},
 *       {@code resourceslices}, {@code deviceclasses}; devhealth's {@code devhealth.io/v1alpha1}
 *       {@code devicepostmortems}): create (POST, with {@code generateName}), get, update (PUT), patch
 *       (JSON Patch RFC 6902, with {@code test} operations answered 422 when they fail, and JSON merge
 *       patch RFC 7386), delete (with preconditions), in a namespace or cluster-wide as the kind is; the
 *       {@code status} subresource of pods, nodes, services and ResourceClaims (status given on create is
 *       dropped, a pod starts {@code Pending}, and the main resource never changes status); one
 *       resourceVersion counter shared by all objects, 409 on a stale resourceVersion; no-op writes keep
 *       the resourceVersion and send no watch event;
 *   <li>LIST and WATCH of any of them in a namespace or in all namespaces, with field selectors on
 *       {@code metadata.name}, {@code metadata.namespace} and, for pods, {@code status.phase} and
 *       {@code spec.nodeName} ({@code =}, {@code !=}), and equality-based label selectors. Watches are
 *       served over WebSocket, as fabric8's client (and its informers) watch; a watch resumes from a LIST's
 *       resourceVersion through a bounded history of changes ({@value #DEFAULT_WATCH_HISTORY} for pods,
 *       {@value #GENERIC_WATCH_HISTORY} for each other kind), and gets {@code 410 Expired} when that history
 *       no longer reaches back (an informer then re-lists). Only watchers whose selector matches are told;
 *   <li>Events (POST, LIST, GET in {@code /api/v1}): all accepted and counted, the latest
 *       {@value #DEFAULT_EVENT_CAPACITY} kept; LIST with field selectors on the API server's Event fields
 *       ({@code involvedObject.*}, {@code reason}, {@code type}, {@code source}, {@code reportingComponent},
 *       {@code metadata.name} and {@code metadata.namespace}), as {@code kubectl describe} asks;
 *   <li>discovery ({@code /api}, {@code /api/v1}, {@code /apis} and each group version, {@code /version})
 *       listing all of the above, so that kubectl finds them by name and short name (e.g. {@code dpm}) and
 *       fabric8's {@code genericKubernetesResources(apiVersion, kind)} finds their plural.
 * </ul>
 * For benchmarks: {@link #requestCounts()} (pod status writes, pod reads, Event writes, other) instead of
 * a request log, and {@link #addPodListener} called on every stored pod change with the pod after it and
 * the {@link System#nanoTime()} it was applied at, so a benchmark can time a status write without a watch.
 *
 * <p>It is not an API server. Deviations, said plainly:
 * <ul>
 *   <li>CustomResourceDefinitions are stored, and give their kind's table its printer columns, but serve
 *       no kind of their own: only the kinds above are served. Other kinds (events.k8s.io/v1, apps, batch,
 *       …): 404. Objects of a
 *       namespace that does not exist are accepted (no namespace lifecycle);
 *   <li>strategic merge patch and server-side apply: 415; delete-collection: 405;
 *   <li>no validation (not even of a custom resource against its CRD's schema: nothing is pruned),
 *       defaulting (beyond a pod's {@code status.phase: Pending}), admission, RBAC or quotas; an object is
 *       deleted at once (no graceful termination, finalizers and owner references are ignored: no garbage
 *       collection);
 *   <li>LIST ignores {@code limit}/{@code continue} (returns everything, no continue token) and
 *       {@code resourceVersionMatch}; set-based label selectors ({@code in}, {@code notin}) are refused;
 *   <li>watches: WebSocket only (no chunked HTTP watch, so {@code kubectl get -w} does not work), no
 *       bookmarks, no {@code timeoutSeconds}, and a slow watcher is buffered, not closed;
 * </ul>
 * Server-side tables ({@link ServerTables}): a plain {@code kubectl get} prints the columns it prints
 * against a cluster — READY, STATUS, RESTARTS for pods, TYPE, REASON, OBJECT, MESSAGE for Events, a
 * CRD's printer columns once the CRD was created here.
 * Thread-safe. Reads are lock-free; writes, LIST and a watch's start take one lock per kind.
 */
public final class FleetKubernetesApi implements AutoCloseable {

    /** Events kept for LIST/GET; all are counted. */
    public static final int DEFAULT_EVENT_CAPACITY = 1_000;
    /** Pod changes a watch can resume across. */
    public static final int DEFAULT_WATCH_HISTORY = 20_000;
    /** Changes of each other kind a watch can resume across. */
    static final int GENERIC_WATCH_HISTORY = 1_000;

    private static final Logger LOGGER = LoggerFactory.getLogger(FleetKubernetesApi.class);
    private static final String HOST = "127.0.0.1";
    /** Strong reference: java.util.logging keeps loggers weakly, and would forget the level. */
    private static final java.util.logging.Logger MOCK_WEB_SERVER_LOGGER =
            java.util.logging.Logger.getLogger(MockWebServer.class.getName());

    /** Requests served since start, by kind. */
    public record RequestCounts(long statusWrites, long podReads, long eventWrites, long other) {
    }

    private final MockWebServer server;
    private final FleetDispatcher dispatcher;
    private final ObjectStore pods;
    private final EventLog events;
    private final KubernetesSerialization serialization;
    private final Map<PodChangeListener, ObjectStore.Listener> podListeners = new ConcurrentHashMap<>();
    private final KubernetesClient client;
    private final String url;
    private boolean closed;

    private FleetKubernetesApi(MockWebServer server, FleetDispatcher dispatcher, ObjectStore pods, EventLog events,
                               KubernetesSerialization serialization) {
        this.server = server;
        this.dispatcher = dispatcher;
        this.pods = pods;
        this.events = events;
        this.serialization = serialization;
        this.url = "http://" + HOST + ":" + server.getPort();
        this.client = new KubernetesClientBuilder()
                .withConfig(new ConfigBuilder(Config.empty()).withMasterUrl(url).withNamespace("test").build())
                .build();
    }

    /** Starts an empty API on a random free port, with the system clock. */
    public static FleetKubernetesApi start() {
        return start(0, Clock.systemUTC());
    }

    /**
     * Starts an empty API.
     *
     * @param port the port on {@code 127.0.0.1}, or 0 for a random free one
     * @param clock for creation timestamps
     * @return the running API
     */
    public static FleetKubernetesApi start(int port, Clock clock) {
        MOCK_WEB_SERVER_LOGGER.setLevel(Level.WARNING);
        ObjectMapper mapper = JsonMapper.builder().build();
        KubernetesSerialization serialization = new KubernetesSerialization();
        AtomicLong resourceVersion = new AtomicLong();
        ObjectStore pods = new ObjectStore(ResourceType.PODS, resourceVersion, DEFAULT_WATCH_HISTORY, mapper, clock);
        List<ObjectStore> stores = new ArrayList<>(List.of(pods));
        for (ResourceType type : ResourceType.GENERIC) {
            stores.add(new ObjectStore(type, resourceVersion, GENERIC_WATCH_HISTORY, mapper, clock));
        }
        EventLog events = new EventLog(DEFAULT_EVENT_CAPACITY, resourceVersion, clock);
        FleetDispatcher dispatcher = new FleetDispatcher(stores, events, mapper, serialization, clock);
        MockWebServer server = new MockWebServer();
        server.setDispatcher(dispatcher);
        dispatcher.serveFor(server);
        try {
            server.start(InetAddress.getByName(HOST), port);
        } catch (UnknownHostException e) {
            throw new IllegalStateException("cannot resolve " + HOST, e);
        }
        FleetKubernetesApi api = new FleetKubernetesApi(server, dispatcher, pods, events, serialization);
        LOGGER.info("fleet kubernetes api started url={}", api.url);
        return api;
    }

    /** @return {@code http://127.0.0.1:<port>}, for {@code kubectl --server} and client configuration */
    public String url() {
        return url;
    }

    public int port() {
        return server.getPort();
    }

    /** @return e.g. {@code kubectl --server http://127.0.0.1:40123 get pods -A -o json} */
    public String kubectlCommand(String arguments) {
        return "kubectl --server " + url + " " + arguments;
    }

    /** A fabric8 client for this API, shared and closed with it (default namespace {@code test}). */
    public KubernetesClient client() {
        return client;
    }

    /** Calls {@code listener} on every stored pod change from now on (see {@link PodChangeListener} for the thread rules). */
    public void addPodListener(PodChangeListener listener) {
        ObjectStore.Listener adapter = (action, pod, appliedAtNanos) ->
                listener.podChanged(new PodChange(action, pod, appliedAtNanos, serialization));
        if (podListeners.putIfAbsent(listener, adapter) == null) {
            pods.addListener(adapter);
        }
    }

    public void removePodListener(PodChangeListener listener) {
        ObjectStore.Listener adapter = podListeners.remove(listener);
        if (adapter != null) {
            pods.removeListener(adapter);
        }
    }

    /** @return requests served since start: status writes (PATCH/PUT on pods/status), pod GETs, Event POSTs, everything else */
    public RequestCounts requestCounts() {
        return new RequestCounts(dispatcher.statusWrites.sum(), dispatcher.podReads.sum(), dispatcher.eventWrites.sum(),
                dispatcher.other.sum());
    }

    /** @return Events accepted since start (all of them, not only those still kept) */
    public long eventsAccepted() {
        return events.accepted();
    }

    /** @return the most recent Events (at most {@value #DEFAULT_EVENT_CAPACITY}), oldest first */
    public List<Event> recentEvents() {
        return events.recent(null).stream().map(e -> serialization.convertValue(e, Event.class)).toList();
    }

    /** @return pods stored now */
    public int podCount() {
        return pods.size();
    }

    /** @return pod watches open now */
    public int openWatches() {
        return pods.watchCount();
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
            server.shutdown();
        }
        LOGGER.info("fleet kubernetes api stopped url={}", url);
    }
}
