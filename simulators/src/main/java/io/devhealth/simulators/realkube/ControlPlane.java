package io.devhealth.simulators.realkube;

import io.devhealth.simulators.process.ManagedProcess;
import io.devhealth.simulators.process.Ports;
import io.fabric8.kubernetes.api.model.ConfigBuilder;
import io.fabric8.kubernetes.api.model.NamedContextBuilder;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.ServiceAccountBuilder;
import io.fabric8.kubernetes.api.model.authentication.TokenRequest;
import io.fabric8.kubernetes.api.model.authentication.TokenRequestBuilder;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBindingBuilder;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * etcd, kube-apiserver, kube-scheduler and kube-controller-manager on 127.0.0.1, as a cluster's control
 * plane runs them: token authentication, Node and RBAC authorization, service-account tokens signed by
 * the API server, and the DRA feature gates devhealth depends on.
 */
public final class ControlPlane implements AutoCloseable {

    /** Feature gates every component gets: device health in pod status, device taints and taint rules. */
    public static final String FEATURE_GATES =
            "ResourceHealthStatus=true,ResourceHealthStatusMessage=true,DRADeviceTaints=true,DRADeviceTaintRules=true";
    /** Node names the API server has credentials for (its token file is read once, at start). */
    public static final List<String> NODE_NAMES = List.of("devhealth-node-1", "devhealth-node-2", "devhealth-node-3");
    /** The user the test DRA driver authenticates as; bound to {@link #DRA_DRIVER_ROLE}. */
    static final String DRA_DRIVER_USER = "devhealth-test-dra-driver";
    static final String DRA_DRIVER_ROLE = "devhealth-test-dra-driver";
    private static final Logger LOGGER = LoggerFactory.getLogger(ControlPlane.class);
    private static final Duration START_TIMEOUT = Duration.ofSeconds(120);
    /** One sample of {@code apiserver_request_total} in the API server's {@code /metrics}. */
    private static final Pattern REQUEST_TOTAL = Pattern.compile("^apiserver_request_total\\{(.*)} (\\S+)$");
    private static final Pattern LABEL = Pattern.compile("(\\w+)=\"([^\"]*)\"");

    private final KubeBinaries binaries;
    private final Path work;
    private final Path logs;
    private final boolean controllers;
    private final Map<String, String> tokens = new LinkedHashMap<>();
    private final List<ManagedProcess> processes = new ArrayList<>();
    private final List<KubernetesClient> clients = new ArrayList<>();
    private String url;
    private KubernetesClient admin;

    private ControlPlane(KubeBinaries binaries, Path work, Path logs, boolean controllers) {
        this.binaries = binaries;
        this.work = work;
        this.logs = logs;
        this.controllers = controllers;
    }

    /**
     * Starts the control plane.
     *
     * @param binaries what {@code scripts/kube/build.sh} built
     * @param work a directory for data, keys and kubeconfigs
     * @param logs where each component's log goes
     */
    public static ControlPlane start(KubeBinaries binaries, Path work, Path logs) {
        return start(binaries, work, logs, true);
    }

    /**
     * etcd and kube-apiserver only, for a fleet of simulated nodes: with no kubelet behind its pods, the
     * controller manager's pod garbage collector would delete every pod bound to a node that has no Node
     * object, and its node lifecycle controller would mark pods of silent nodes not ready and evict them,
     * writes that are not the workload under measurement. Nothing creates a namespace's {@code default}
     * ServiceAccount either: whoever creates pods creates it.
     */
    public static ControlPlane startApiServer(KubeBinaries binaries, Path work, Path logs) {
        return start(binaries, work, logs, false);
    }

    private static ControlPlane start(KubeBinaries binaries, Path work, Path logs, boolean controllers) {
        ControlPlane plane = new ControlPlane(binaries, work, logs, controllers);
        try {
            plane.startAll();
            return plane;
        } catch (RuntimeException e) {
            plane.close();
            throw e;
        }
    }

    private void startAll() {
        long start = System.nanoTime();
        try {
            Files.createDirectories(work);
            Files.createDirectories(logs);
            tokens.put("admin", UUID.randomUUID().toString());
            tokens.put("system:kube-scheduler", UUID.randomUUID().toString());
            tokens.put("system:kube-controller-manager", UUID.randomUUID().toString());
            tokens.put(DRA_DRIVER_USER, UUID.randomUUID().toString());
            for (String node : NODE_NAMES) {
                tokens.put("system:node:" + node, UUID.randomUUID().toString());
            }
            writeTokenFile(work.resolve("tokens.csv"));
            writeServiceAccountKeys();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }

        int etcdPort = Ports.free();
        int peerPort = Ports.free();
        String etcdUrl = "http://127.0.0.1:" + etcdPort;
        ManagedProcess etcd = launch("etcd", List.of(binaries.binary("etcd").toString(),
                "--name=devhealth", "--data-dir=" + work.resolve("etcd"),
                "--listen-client-urls=" + etcdUrl, "--advertise-client-urls=" + etcdUrl,
                "--listen-peer-urls=http://127.0.0.1:" + peerPort,
                "--initial-advertise-peer-urls=http://127.0.0.1:" + peerPort,
                "--initial-cluster=devhealth=http://127.0.0.1:" + peerPort,
                // A test cluster's data need not survive a power loss; fsync on every write would
                // make the API server's latency the disk's.
                "--unsafe-no-fsync", "--log-level=warn"));

        int apiPort = Ports.free();
        url = "https://127.0.0.1:" + apiPort;
        Path certs = work.resolve("apiserver-certs");
        ManagedProcess apiServer = launch("kube-apiserver", List.of(binaries.binary("kube-apiserver").toString(),
                "--etcd-servers=" + etcdUrl,
                "--bind-address=127.0.0.1", "--advertise-address=127.0.0.1", "--secure-port=" + apiPort,
                "--cert-dir=" + certs,
                "--token-auth-file=" + work.resolve("tokens.csv"),
                "--authorization-mode=Node,RBAC",
                "--anonymous-auth=false",
                "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
                "--service-account-key-file=" + work.resolve("sa.pub"),
                "--service-account-signing-key-file=" + work.resolve("sa.key"),
                "--service-cluster-ip-range=10.0.0.0/24",
                // The kubernetes Service's endpoints would be 127.0.0.1, which Endpoints validation
                // refuses; nothing in the tests resolves the in-cluster Service.
                "--endpoint-reconciler-type=none",
                "--allow-privileged=true",
                "--feature-gates=" + FEATURE_GATES,
                // DeviceTaintRule is served by resource.k8s.io/v1beta2 in 1.36, off by default.
                "--runtime-config=resource.k8s.io/v1beta2=true",
                "--v=1"));
        admin = client(tokens.get("admin"));
        Waits.until("kube-apiserver " + url + " answers", START_TIMEOUT, apiServer, () -> {
            etcd.requireAlive();
            return admin.namespaces().withName("default").get() != null;
        });
        grantDraDriverRole();
        if (!controllers) {
            LOGGER.info("API server ready url={} version={} seconds={}", url, binaries.version(),
                    (System.nanoTime() - start) / 1_000_000_000L);
            return;
        }

        // Neither gets --authentication-kubeconfig: that delegation only guards their own metrics and
        // health ports, and would make them exit when they start before bootstrap RBAC is in place.
        Path schedulerConfig = kubeconfig("system:kube-scheduler");
        launch("kube-scheduler", List.of(binaries.binary("kube-scheduler").toString(),
                "--kubeconfig=" + schedulerConfig,
                "--bind-address=127.0.0.1", "--secure-port=" + Ports.free(),
                "--leader-elect=false", "--feature-gates=" + FEATURE_GATES, "--v=1"));
        Path managerConfig = kubeconfig("system:kube-controller-manager");
        launch("kube-controller-manager", List.of(binaries.binary("kube-controller-manager").toString(),
                "--kubeconfig=" + managerConfig,
                "--bind-address=127.0.0.1", "--secure-port=" + Ports.free(),
                "--leader-elect=false",
                "--service-account-private-key-file=" + work.resolve("sa.key"),
                "--root-ca-file=" + certs.resolve("apiserver.crt"),
                // Each controller acts as its own ServiceAccount (system:controller:*), which bootstrap
                // RBAC grants exactly that controller's rights, as kubeadm runs it.
                "--use-service-account-credentials=true",
                "--feature-gates=" + FEATURE_GATES, "--v=1"));
        // The ServiceAccount admission plugin refuses pods until the namespace's default account
        // exists, which the controller manager's service-account controller creates.
        Waits.until("default ServiceAccount created by kube-controller-manager", START_TIMEOUT, null, () -> {
            processes.forEach(ManagedProcess::requireAlive);
            return admin.serviceAccounts().inNamespace("default").withName("default").get() != null;
        });
        LOGGER.info("control plane ready url={} version={} seconds={}", url, binaries.version(),
                (System.nanoTime() - start) / 1_000_000_000L);
    }

    private ManagedProcess launch(String name, List<String> command) {
        ManagedProcess process = ManagedProcess.start(name, command, logs.resolve(name + ".log"), work.resolve("cwd-" + name));
        processes.add(process);
        return process;
    }

    private void writeTokenFile(Path file) throws IOException {
        StringBuilder csv = new StringBuilder();
        tokens.forEach((user, token) -> {
            String groups = user.equals("admin") ? "system:masters" : user.startsWith("system:node:") ? "system:nodes" : "";
            csv.append(token).append(',').append(user).append(',').append(user).append(",\"").append(groups).append("\"\n");
        });
        Files.writeString(file, csv, StandardCharsets.UTF_8);
    }

    private void writeServiceAccountKeys() throws IOException {
        KeyPair pair;
        try {
            KeyPairGenerator generator = KeyPairGenerator.getInstance("RSA");
            generator.initialize(2048);
            pair = generator.generateKeyPair();
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
        Files.writeString(work.resolve("sa.key"), pem("PRIVATE KEY", pair.getPrivate().getEncoded()));
        Files.writeString(work.resolve("sa.pub"), pem("PUBLIC KEY", pair.getPublic().getEncoded()));
    }

    private static String pem(String type, byte[] der) {
        return "-----BEGIN " + type + "-----\n"
                + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII)).encodeToString(der)
                + "\n-----END " + type + "-----\n";
    }

    /** What the kubeletplugin library needs: read claims, write the node's ResourceSlices. */
    private void grantDraDriverRole() {
        admin.rbac().clusterRoles().resource(new ClusterRoleBuilder()
                .withNewMetadata().withName(DRA_DRIVER_ROLE).endMetadata()
                .addNewRule().withApiGroups("resource.k8s.io").withResources("resourceclaims")
                        .withVerbs("get", "list", "watch").endRule()
                .addNewRule().withApiGroups("resource.k8s.io").withResources("resourceslices")
                        .withVerbs("get", "list", "watch", "create", "update", "patch", "delete", "deletecollection").endRule()
                .addNewRule().withApiGroups("").withResources("nodes").withVerbs("get").endRule()
                .build()).serverSideApply();
        admin.rbac().clusterRoleBindings().resource(new ClusterRoleBindingBuilder()
                .withNewMetadata().withName(DRA_DRIVER_ROLE).endMetadata()
                .withNewRoleRef().withApiGroup("rbac.authorization.k8s.io").withKind("ClusterRole")
                        .withName(DRA_DRIVER_ROLE).endRoleRef()
                .addNewSubject().withApiGroup("rbac.authorization.k8s.io").withKind("User")
                        .withName(DRA_DRIVER_USER).endSubject()
                .build()).serverSideApply();
    }

    /** The API server's URL, {@code https://127.0.0.1:<port>} (a self-signed serving certificate). */
    public String url() {
        return url;
    }

    public KubeBinaries binaries() {
        return binaries;
    }

    /** A client with cluster-admin rights (group {@code system:masters}). */
    public KubernetesClient adminClient() {
        return admin;
    }

    /** A kubeconfig for the admin user, for {@code kubectl} and for services under test. */
    public Path adminKubeconfig() {
        return kubeconfig("admin");
    }

    /**
     * A token for a ServiceAccount, issued by the API server's TokenRequest API as the kubelet asks
     * for a pod's projected token: RBAC bound to that account decides what its holder may do.
     */
    public String serviceAccountToken(String namespace, String serviceAccount) {
        return serviceAccountToken(namespace, serviceAccount, List.of());
    }

    /**
     * A token for a ServiceAccount issued for {@code audiences}, as {@code kubectl create token <sa> --audience …}
     * asks for one; empty = the API server's own audience.
     */
    public String serviceAccountToken(String namespace, String serviceAccount, List<String> audiences) {
        TokenRequest request = new TokenRequestBuilder().withNewSpec().withExpirationSeconds(3600L).withAudiences(audiences)
                .endSpec().build();
        return admin.serviceAccounts().inNamespace(namespace).withName(serviceAccount).tokenRequest(request)
                .getStatus().getToken();
    }

    /**
     * A token for a ServiceAccount bound to one of its pods, as the kubelet requests it for a projected
     * {@code serviceAccountToken} volume: the API server embeds the pod and, once the pod is bound to a
     * node, that node's name and UID (a TokenReview returns them as {@code authentication.kubernetes.io/*}
     * extra values).
     */
    public String podBoundToken(String namespace, String serviceAccount, String pod, List<String> audiences) {
        io.fabric8.kubernetes.api.model.Pod bound = admin.pods().inNamespace(namespace).withName(pod).get();
        TokenRequest request = new TokenRequestBuilder().withNewSpec().withExpirationSeconds(3600L).withAudiences(audiences)
                .withNewBoundObjectRef().withApiVersion("v1").withKind("Pod").withName(pod).withUid(bound.getMetadata().getUid())
                .endBoundObjectRef().endSpec().build();
        return admin.serviceAccounts().inNamespace(namespace).withName(serviceAccount).tokenRequest(request).getStatus().getToken();
    }

    /** A client that acts as the ServiceAccount, for proving what a shipped Role lets it do. */
    public KubernetesClient clientFor(String namespace, String serviceAccount) {
        return client(serviceAccountToken(namespace, serviceAccount));
    }

    /** A kubeconfig that authenticates as the ServiceAccount. */
    public Path kubeconfigFor(String namespace, String serviceAccount) {
        return writeKubeconfig("sa-" + namespace + "-" + serviceAccount, serviceAccountToken(namespace, serviceAccount));
    }

    Path kubeconfig(String user) {
        String token = tokens.get(user);
        if (token == null) {
            throw new IllegalArgumentException("no static token for user " + user + " (nodes: " + NODE_NAMES + ")");
        }
        return writeKubeconfig(user.replace(':', '-'), token);
    }

    private Path writeKubeconfig(String name, String token) {
        io.fabric8.kubernetes.api.model.Config config = new ConfigBuilder()
                .addNewCluster().withName("devhealth-test").withNewCluster().withServer(url)
                        .withInsecureSkipTlsVerify(true).endCluster().endCluster()
                .addNewUser().withName(name).withNewUser().withToken(token).endUser().endUser()
                .addToContexts(new NamedContextBuilder().withName("devhealth-test").withNewContext()
                        .withCluster("devhealth-test").withUser(name).withNamespace("default").endContext().build())
                .withCurrentContext("devhealth-test")
                .build();
        Path file = work.resolve("kubeconfig-" + name);
        try {
            Files.writeString(file, Serialization.asYaml(config), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return file;
    }

    private KubernetesClient client(String token) {
        KubernetesClient client = new KubernetesClientBuilder().withConfig(new io.fabric8.kubernetes.client.ConfigBuilder()
                .withMasterUrl(url).withOauthToken(token).withTrustCerts(true).withNamespace("default")
                .withRequestTimeout(30_000).build()).build();
        synchronized (clients) {
            clients.add(client);
        }
        return client;
    }

    /**
     * Creates {@code namespace} for pods, with its {@code default} ServiceAccount: the ServiceAccount admission
     * plugin refuses a pod until that account exists, and on an API server alone ({@link #startApiServer}) no
     * controller creates it.
     */
    public void createPodNamespace(String namespace) {
        admin.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(namespace).endMetadata().build())
                .serverSideApply();
        admin.serviceAccounts().inNamespace(namespace).resource(new ServiceAccountBuilder().withNewMetadata()
                .withName("default").endMetadata().build()).serverSideApply();
    }

    /** One sample of the API server's {@code apiserver_request_total}: requests it answered, by these labels ("" where absent). */
    public record Requests(String verb, String resource, String subresource, String code, long count) {}

    /**
     * The API server's own count of the requests it answered so far, one entry per sample: several may share a verb,
     * resource, subresource and code (the metric has more labels, such as the API version), so sum what you select.
     */
    public List<Requests> requestTotals() {
        List<Requests> totals = new ArrayList<>();
        for (String line : admin.raw(url + "/metrics").split("\n")) {
            Matcher sample = REQUEST_TOTAL.matcher(line);
            if (!sample.matches()) {
                continue;
            }
            Map<String, String> labels = new HashMap<>();
            Matcher label = LABEL.matcher(sample.group(1));
            while (label.find()) {
                labels.put(label.group(1), label.group(2));
            }
            totals.add(new Requests(labels.getOrDefault("verb", ""), labels.getOrDefault("resource", ""),
                    labels.getOrDefault("subresource", ""), labels.getOrDefault("code", ""), (long) Double.parseDouble(sample.group(2))));
        }
        return totals;
    }

    /** Whether every control-plane process still runs; a test that lost one says which. */
    public void requireRunning() {
        processes.forEach(ManagedProcess::requireAlive);
    }

    @Override
    public void close() {
        synchronized (clients) {
            clients.forEach(KubernetesClient::close);
        }
        for (int i = processes.size() - 1; i >= 0; i--) {
            processes.get(i).stop();
        }
    }
}
