package io.devhealth.query;

import io.devhealth.query.access.AccessPolicy;
import io.devhealth.query.access.ApiServerReviews;
import io.devhealth.query.access.QuerySecurityConfig;
import io.devhealth.query.routing.Forwarder;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.devhealth.simulators.process.Ports;
import io.devhealth.simulators.realkube.ControlPlane;
import io.devhealth.simulators.realkube.ShippedManifests;
import io.devhealth.testkit.realkube.RealKubernetes;
import io.devhealth.testkit.time.MutableClock;
import io.devhealth.testkit.tls.TestCertificates;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.ServiceAccountBuilder;
import io.fabric8.kubernetes.api.model.authorization.v1.SubjectAccessReview;
import io.fabric8.kubernetes.api.model.authorization.v1.SubjectAccessReviewBuilder;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBindingBuilder;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBuilder;
import io.fabric8.kubernetes.api.model.rbac.RoleBindingBuilder;
import io.fabric8.kubernetes.api.model.rbac.RoleBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.apache.kafka.streams.state.HostInfo;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Query authorization decided by the real API server (kube-apiserver 1.36.3, RBAC on): two
 * {@link QueryServer}s over HTTPS (a {@link FakeCluster}: node-a is instance 1's, node-b and every pod
 * instance 2's) authenticate callers with TokenReview and authorize each query with a
 * SubjectAccessReview, as the processor's ServiceAccount bound by the shipped
 * {@code k8s/base/stream-processor/rbac.yaml}. Callers are ServiceAccounts with the RBAC each test names.
 */
@RealKubernetes
class KubernetesQueryAuthorizationIT {

    private static final String TEAM_A = "queryauthz-a";
    private static final String TEAM_B = "queryauthz-b";
    private static final String NODE_READER_ROLE = "queryauthz-node-reader";
    private static final String POD_READER_CN = "queryauthz-certificate-pod-reader";
    private static final List<String> AUDIENCE = List.of(QuerySecurityConfig.DEFAULT_AUDIENCE);
    private static final Duration WAIT = Duration.ofSeconds(60);

    @TempDir
    static Path tlsDir;
    private static TestCertificates tls;
    /** Every instance's own certificate, as the shipped StatefulSet has it. */
    private static Path serverKeystore;
    private static ControlPlane plane;
    private static Path processorKubeconfig;
    private static HttpClient http;
    private static HttpClient withCertificate;
    /** A certificate caller with a Role of its own on pods in namespace A, bound to its CN. */
    private static HttpClient podReaderCertificate;
    /** Presents the instances' own certificate, as one instance does when it forwards to another. */
    private static HttpClient asPeer;

    private final ObjectMapper json = new ObjectMapper();
    private final MutableClock clock = MutableClock.at("2026-11-29T10:00:00Z");
    private final List<QueryServer> servers = new ArrayList<>();
    private final SimpleMeterRegistry metersA = new SimpleMeterRegistry();
    private final SimpleMeterRegistry metersB = new SimpleMeterRegistry();
    private QueryServer a;
    private QueryServer b;

    @BeforeAll
    static void grantRbac(ControlPlane controlPlane) throws Exception {
        plane = controlPlane;
        tls = TestCertificates.create(tlsDir);
        serverKeystore = tls.keyPair("server", "CN=localhost");
        Path clientKeystore = tls.keyPair("client", "CN=devhealth-client");
        Path podReaderKeystore = tls.keyPair("pod-reader", "CN=" + POD_READER_CN + ",O=queryauthz-team");
        KubernetesClient admin = plane.adminClient();
        for (String namespace : List.of("devhealth", TEAM_A, TEAM_B)) {
            admin.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(namespace).endMetadata().build())
                    .serverSideApply();
        }
        ShippedManifests.apply(admin, "k8s/base/stream-processor/serviceaccount.yaml");
        ShippedManifests.apply(admin, "k8s/base/stream-processor/rbac.yaml");
        for (String account : List.of("investigator", "viewer", "nobody", "node-reader")) {
            admin.serviceAccounts().inNamespace(TEAM_A).resource(new ServiceAccountBuilder().withNewMetadata().withName(account)
                    .endMetadata().build()).serverSideApply();
        }
        // investigator: a Role of its own that lets it get pods in its namespace.
        admin.rbac().roles().inNamespace(TEAM_A).resource(new RoleBuilder().withNewMetadata().withName("pod-reader").endMetadata()
                .addNewRule().withApiGroups("").withResources("pods").withVerbs("get").endRule().build()).serverSideApply();
        admin.rbac().roleBindings().inNamespace(TEAM_A).resource(new RoleBindingBuilder().withNewMetadata().withName("investigator")
                .endMetadata().withNewRoleRef().withApiGroup("rbac.authorization.k8s.io").withKind("Role").withName("pod-reader")
                .endRoleRef().addNewSubject().withKind("ServiceAccount").withName("investigator").withNamespace(TEAM_A).endSubject()
                .build()).serverSideApply();
        // The same Role for a client certificate's CN, as the API server names a certificate's user.
        admin.rbac().roleBindings().inNamespace(TEAM_A).resource(new RoleBindingBuilder().withNewMetadata().withName(POD_READER_CN)
                .endMetadata().withNewRoleRef().withApiGroup("rbac.authorization.k8s.io").withKind("Role").withName("pod-reader")
                .endRoleRef().addNewSubject().withApiGroup("rbac.authorization.k8s.io").withKind("User").withName(POD_READER_CN)
                .endSubject().build()).serverSideApply();
        // viewer: the built-in view role in its namespace, what a team member typically holds.
        admin.rbac().roleBindings().inNamespace(TEAM_A).resource(new RoleBindingBuilder().withNewMetadata().withName("viewer")
                .endMetadata().withNewRoleRef().withApiGroup("rbac.authorization.k8s.io").withKind("ClusterRole").withName("view")
                .endRoleRef().addNewSubject().withKind("ServiceAccount").withName("viewer").withNamespace(TEAM_A).endSubject()
                .build()).serverSideApply();
        admin.rbac().clusterRoles().resource(new ClusterRoleBuilder().withNewMetadata().withName(NODE_READER_ROLE).endMetadata()
                .addNewRule().withApiGroups("").withResources("nodes").withVerbs("get").endRule().build()).serverSideApply();
        admin.rbac().clusterRoleBindings().resource(new ClusterRoleBindingBuilder().withNewMetadata().withName(NODE_READER_ROLE)
                .endMetadata().withNewRoleRef().withApiGroup("rbac.authorization.k8s.io").withKind("ClusterRole")
                .withName(NODE_READER_ROLE).endRoleRef().addNewSubject().withKind("ServiceAccount").withName("node-reader")
                .withNamespace(TEAM_A).endSubject().build()).serverSideApply();
        // The RBAC authorizer learns of new bindings from its informers: wait until each is in force.
        awaitAllowed("system:serviceaccount:devhealth:stream-processor", "create", "authentication.k8s.io", "tokenreviews", null);
        awaitAllowed("system:serviceaccount:devhealth:stream-processor", "create", "authorization.k8s.io", "subjectaccessreviews", null);
        awaitAllowed("system:serviceaccount:" + TEAM_A + ":investigator", "get", "", "pods", TEAM_A);
        awaitAllowed("system:serviceaccount:" + TEAM_A + ":viewer", "get", "", "pods", TEAM_A);
        awaitAllowed("system:serviceaccount:" + TEAM_A + ":node-reader", "get", "", "nodes", null);
        awaitAllowed(POD_READER_CN, "get", "", "pods", TEAM_A);
        processorKubeconfig = plane.kubeconfigFor("devhealth", "stream-processor");
        http = tls.httpClient(null);
        withCertificate = tls.httpClient(clientKeystore);
        podReaderCertificate = tls.httpClient(podReaderKeystore);
        asPeer = tls.httpClient(serverKeystore);
    }

    private static void awaitAllowed(String user, String verb, String group, String resource, String namespace) {
        await(user + " may " + verb + " " + resource).atMost(WAIT).pollInterval(Duration.ofMillis(200)).until(() ->
                Boolean.TRUE.equals(plane.adminClient().authorization().v1().subjectAccessReview().create(new SubjectAccessReviewBuilder()
                        .withNewSpec().withUser(user).withNewResourceAttributes().withVerb(verb).withGroup(group).withResource(resource)
                        .withNamespace(namespace).endResourceAttributes().endSpec().build()).getStatus().getAllowed()));
    }

    @AfterEach
    void stop() {
        servers.forEach(QueryServer::close);
    }

    private Map<String, Object> settings(Path kubeconfig) {
        Map<String, Object> settings = new HashMap<>();
        settings.put(QuerySecurityConfig.KUBERNETES_ENABLED, "true");
        settings.put(QuerySecurityConfig.KUBERNETES_KUBECONFIG, kubeconfig.toString());
        // Longer than the default so that a burst on a loaded machine stays inside one cache lifetime.
        settings.put(QuerySecurityConfig.KUBERNETES_CACHE_TTL, "60000");
        settings.put(QuerySecurityConfig.KEYSTORE, serverKeystore.toString());
        settings.put(QuerySecurityConfig.KEYSTORE_PASSWORD, tls.password());
        // Instances trust each other through it, and the forwarding one presents its own certificate as well as the
        // caller's token: what the owner must authorize is the token's user.
        settings.put(QuerySecurityConfig.TRUSTSTORE, tls.truststore().toString());
        settings.put(QuerySecurityConfig.TRUSTSTORE_PASSWORD, tls.password());
        return settings;
    }

    private void startPair() {
        QuerySecurityConfig security = QuerySecurityConfig.from(settings(processorKubeconfig));
        a = QueryServer.bind("127.0.0.1", 0, clock, security);
        b = QueryServer.bind("127.0.0.1", 0, clock, security);
        servers.add(a);
        servers.add(b);
        HostInfo hostA = new HostInfo("127.0.0.1", a.port());
        HostInfo hostB = new HostInfo("127.0.0.1", b.port());
        Map<String, HostInfo> owners = Map.of("node-a", hostA, "node-b", hostB);
        a.serve(new FakeCluster(hostA, owners, List.of(hostB), Set.of()), () -> "", metersA);
        b.serve(new FakeCluster(hostB, owners, List.of(hostA), Set.of(TEAM_A + "/train-0", TEAM_B + "/train-0")), () -> "", metersB);
    }

    private static String token(String account) {
        return plane.serviceAccountToken(TEAM_A, account, AUDIENCE);
    }

    private static HttpResponse<String> get(QueryServer server, String path, String token, String... headers) throws Exception {
        return get(http, server, path, token, headers);
    }

    private static HttpResponse<String> get(HttpClient client, QueryServer server, String path, String token, String... headers)
            throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("https://127.0.0.1:" + server.port() + path))
                .timeout(Duration.ofSeconds(30)).GET();
        if (token != null) {
            request.header("Authorization", "Bearer " + token);
        }
        for (int i = 0; i < headers.length; i += 2) {
            request.header(headers[i], headers[i + 1]);
        }
        return client.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    private JsonNode body(HttpResponse<String> response, int status) throws Exception {
        assertThat(response.statusCode()).as(response.body()).isEqualTo(status);
        return json.readTree(response.body());
    }

    private static String podPath(String namespace) {
        return "/v1/pods/" + namespace + "/train-0/devices";
    }

    /** API calls a server made of {@code review} ({@code tokenreview} or {@code subjectaccessreview}), whatever their outcome. */
    private static double reviews(SimpleMeterRegistry meters, String review) {
        return meters.find(ApiServerReviews.COUNTER).tag("review", review).counters().stream().mapToDouble(Counter::count).sum();
    }

    @Test
    void shouldLetARoleOnPodsOfNamespaceAReadThemAndRefuseNamespaceB() throws Exception {
        startPair();
        String investigator = token("investigator");

        JsonNode pod = body(get(a, podPath(TEAM_A), investigator), 200);
        assertThat(pod.get("node").asText()).as("answered by the owner").isEqualTo("served-by-" + b.port());

        HttpResponse<String> refused = get(a, podPath(TEAM_B), investigator);
        JsonNode error = body(refused, 403);
        assertThat(error.get("message").asText()).contains("system:serviceaccount:" + TEAM_A + ":investigator")
                .contains("get pods \"train-0\" in namespace \"" + TEAM_B + "\"");
        assertThat(error.get("missing").get("verb").asText()).isEqualTo("get");
        assertThat(error.get("missing").get("resource").asText()).isEqualTo("pods");
        assertThat(error.get("missing").get("namespace").asText()).isEqualTo(TEAM_B);
        assertThat(error.get("missing").get("name").asText()).isEqualTo("train-0");
        assertThat(refused.body()).doesNotContain(investigator);

        body(get(a, podPath(TEAM_A), token("viewer")), 200);
        body(get(a, podPath(TEAM_B), token("viewer")), 403);
    }

    @Test
    void shouldRefusePodsAndNodesToACallerWithoutRbac() throws Exception {
        startPair();
        String nobody = token("nobody");

        assertThat(body(get(a, podPath(TEAM_A), nobody), 403).get("missing").get("namespace").asText()).isEqualTo(TEAM_A);
        JsonNode node = body(get(a, "/v1/nodes/node-a/devices", nobody), 403).get("missing");
        assertThat(node.get("resource").asText()).isEqualTo("nodes");
        assertThat(node.get("name").asText()).isEqualTo("node-a");
        assertThat(node.has("namespace")).as("nodes are cluster-scoped").isFalse();
        body(get(a, "/v1/nodes/node-b/devices", nobody), 403);
        body(get(a, "/v1/devices/node-a/gpu.example.com/pool-1/gpu-0/history", nobody), 403);
        assertThat(body(get(a, "/v1/fleet/summary", nobody), 403).get("missing").has("name")).as("every node").isFalse();
        body(get(a, "/v1/nodes/node-a/devices", token("investigator")), 403);
    }

    @Test
    void shouldLetAClusterRoleOnNodesReadNodeDeviceAndFleetQueries() throws Exception {
        startPair();
        String nodeReader = token("node-reader");

        assertThat(body(get(a, "/v1/nodes/node-a/devices", nodeReader), 200).get("node").asText()).isEqualTo("node-a");
        assertThat(body(get(a, "/v1/nodes/node-b/devices", nodeReader), 200).get("node").asText()).as("forwarded to the owner")
                .isEqualTo("node-b");
        // Authorized, then answered by the fake cluster: no such device, no instance with fleet counts.
        body(get(a, "/v1/devices/node-a/gpu.example.com/pool-1/gpu-0/history", nodeReader), 404);
        body(get(a, "/v1/fleet/summary", nodeReader), 503);
        body(get(a, podPath(TEAM_A), nodeReader), 403);
    }

    @Test
    void shouldRefuseATokenForAnotherAudienceAndAnUnknownToken() throws Exception {
        startPair();
        String apiServerToken = plane.serviceAccountToken(TEAM_A, "investigator");
        String unknown = "not-a-token-" + UUID.randomUUID();

        for (String token : List.of(apiServerToken, unknown)) {
            HttpResponse<String> refused = get(a, podPath(TEAM_A), token);
            body(refused, 401);
            assertThat(refused.headers().firstValue("WWW-Authenticate")).get().asString().contains("invalid_token");
            assertThat(refused.body()).doesNotContain(token);
        }
        body(get(a, podPath(TEAM_A), null), 401);
    }

    @Test
    void shouldAuthorizeAForwardedQueryAsItsCallerOnTheOwner() throws Exception {
        startPair();
        String investigator = token("investigator");

        body(get(a, podPath(TEAM_A), investigator), 200);
        assertThat(reviews(metersB, "tokenreview")).as("the owner authenticated the caller's token").isEqualTo(1);
        assertThat(reviews(metersB, "subjectaccessreview")).as("the owner authorized the caller").isEqualTo(1);

        // A request that says it was forwarded is authorized all the same.
        body(get(b, podPath(TEAM_B), investigator, Forwarder.FORWARDED_HEADER, "1"), 403);
        body(get(b, podPath(TEAM_A), null, Forwarder.FORWARDED_HEADER, "1"), 401);
        body(get(b, podPath(TEAM_A), investigator, Forwarder.FORWARDED_HEADER, "1"), 200);
    }

    @Test
    void shouldAskTheApiServerOnceForABurstOfIdenticalQueries() throws Exception {
        startPair();
        String investigator = token("investigator");
        int burst = 100;

        List<Integer> statuses = new ArrayList<>();
        ExecutorService callers = Executors.newFixedThreadPool(16);
        try {
            List<Future<Integer>> answers = new ArrayList<>();
            for (int i = 0; i < burst; i++) {
                answers.add(callers.submit(() -> get(a, podPath(TEAM_A), investigator).statusCode()));
            }
            for (Future<Integer> answer : answers) {
                statuses.add(answer.get());
            }
        } finally {
            callers.shutdownNow();
        }

        assertThat(statuses).hasSize(burst).containsOnly(200);
        System.out.printf("burst of %d identical pod queries (each forwarded to the owner): instance 1 asked tokenreviews=%.0f "
                + "subjectaccessreviews=%.0f, instance 2 (owner) asked tokenreviews=%.0f subjectaccessreviews=%.0f%n", burst,
                reviews(metersA, "tokenreview"), reviews(metersA, "subjectaccessreview"), reviews(metersB, "tokenreview"),
                reviews(metersB, "subjectaccessreview"));
        assertThat(reviews(metersA, "tokenreview")).isEqualTo(1);
        assertThat(reviews(metersA, "subjectaccessreview")).isEqualTo(1);
        assertThat(reviews(metersB, "tokenreview")).isEqualTo(1);
        assertThat(reviews(metersB, "subjectaccessreview")).isEqualTo(1);
    }

    @Test
    void shouldAnswer503WithoutTheApiServer(@TempDir Path dir) throws Exception {
        String unreachable = Files.readString(processorKubeconfig).replace(plane.url(), "https://127.0.0.1:" + Ports.free());
        Path kubeconfig = Files.writeString(dir.resolve("kubeconfig"), unreachable);
        QueryServer alone = QueryServer.bind("127.0.0.1", 0, clock, QuerySecurityConfig.from(settings(kubeconfig)));
        servers.add(alone);
        HostInfo self = new HostInfo("127.0.0.1", alone.port());
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        alone.serve(new FakeCluster(self, Map.of("node-a", self), List.of(), Set.of(TEAM_A + "/train-0")), () -> "", meters);

        HttpResponse<String> answer = get(alone, podPath(TEAM_A), token("investigator"));
        assertThat(body(answer, 503).get("message").asText()).contains("Kubernetes API server");
        assertThat(answer.body()).doesNotContain("served-by");
        assertThat(meters.find(ApiServerReviews.COUNTER).tag("outcome", "error").counter()).isNotNull();
    }

    @Test
    void shouldAuthorizeAClientCertificateAsItsCommonName() throws Exception {
        startPair();

        JsonNode refused = body(get(withCertificate, a, "/v1/nodes/node-a/devices", null), 403);
        assertThat(refused.get("message").asText()).contains("user \"devhealth-client\"");
        plane.adminClient().rbac().clusterRoleBindings().resource(new ClusterRoleBindingBuilder().withNewMetadata()
                .withName("queryauthz-certificate").endMetadata().withNewRoleRef().withApiGroup("rbac.authorization.k8s.io")
                .withKind("ClusterRole").withName(NODE_READER_ROLE).endRoleRef().addNewSubject().withApiGroup("rbac.authorization.k8s.io")
                .withKind("User").withName("devhealth-client").endSubject().build()).serverSideApply();
        awaitAllowed("devhealth-client", "get", "", "nodes", null);
        // The refusal above is cached for the TTL: a fresh pair asks again.
        servers.forEach(QueryServer::close);
        servers.clear();
        startPair();

        assertThat(body(get(withCertificate, a, "/v1/nodes/node-a/devices", null), 200).get("node").asText()).isEqualTo("node-a");
        body(get(withCertificate, a, podPath(TEAM_A), null), 403);
    }

    @Test
    void shouldAuthorizeAForwardedCertificateCallerAsItsCommonNameOnTheOwner() throws Exception {
        startPair();
        String caller = "CN=" + POD_READER_CN + ",O=queryauthz-team";

        JsonNode pod = body(get(podReaderCertificate, a, podPath(TEAM_A), null), 200);
        assertThat(pod.get("node").asText()).as("answered by the owner").isEqualTo("served-by-" + b.port());
        assertThat(reviews(metersB, "subjectaccessreview")).as("the owner authorized the caller itself").isEqualTo(1);
        assertThat(body(get(podReaderCertificate, a, podPath(TEAM_B), null), 403).get("message").asText())
                .contains("user \"" + POD_READER_CN + "\"");

        // The owner's decisions for what a forwarding instance sends: the caller's CN, not the instance's, is reviewed.
        body(get(asPeer, b, podPath(TEAM_A), null, AccessPolicy.CALLER_SUBJECT_HEADER, caller), 200);
        JsonNode refused = body(get(asPeer, b, podPath(TEAM_B), null, AccessPolicy.CALLER_SUBJECT_HEADER, caller), 403);
        assertThat(refused.get("message").asText()).contains("user \"" + POD_READER_CN + "\"")
                .contains("get pods \"train-0\" in namespace \"" + TEAM_B + "\"");
        assertThat(body(get(asPeer, b, podPath(TEAM_A), null), 403).get("message").asText()).as("the instance as itself")
                .contains("user \"localhost\"");
        body(get(podReaderCertificate, b, podPath(TEAM_A), null, AccessPolicy.CALLER_SUBJECT_HEADER, caller), 403);
    }

    @Test
    void shouldRefuseACertificateCallerInSystemMastersWhomRbacWouldLetReadEverything() throws Exception {
        startPair();
        // What a holder of the CA's key would mint: the API server grants system:masters everything.
        SubjectAccessReview asAdministrator = plane.adminClient().authorization().v1().subjectAccessReview().create(
                new SubjectAccessReviewBuilder().withNewSpec().withUser("intruder").withGroups("system:masters")
                        .withNewResourceAttributes().withVerb("get").withResource("pods").withNamespace(TEAM_B).endResourceAttributes()
                        .endSpec().build());
        assertThat(asAdministrator.getStatus().getAllowed()).as("RBAC would allow it").isTrue();

        JsonNode refused = body(get(asPeer, b, podPath(TEAM_B), null, AccessPolicy.CALLER_SUBJECT_HEADER, "CN=intruder,O=system:masters"), 403);
        assertThat(refused.get("message").asText()).contains("system:");
        assertThat(reviews(metersB, "subjectaccessreview")).as("refused before the API server is asked").isZero();
    }
}
