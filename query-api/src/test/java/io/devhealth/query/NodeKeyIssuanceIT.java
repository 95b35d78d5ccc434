package io.devhealth.query;

import io.devhealth.query.access.NodeKeyIssuer;
import io.devhealth.query.access.QuerySecurityConfig;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.devhealth.runtime.security.NodeKeyCredential;
import io.devhealth.runtime.security.NodeKeys;
import io.devhealth.simulators.realkube.ControlPlane;
import io.devhealth.simulators.realkube.ShippedManifests;
import io.devhealth.testkit.realkube.RealKubernetes;
import io.devhealth.testkit.time.MutableClock;
import io.devhealth.testkit.tls.TestCertificates;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.ServiceAccountBuilder;
import io.fabric8.kubernetes.api.model.authorization.v1.SubjectAccessReviewBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.apache.kafka.streams.state.HostInfo;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Node keys issued against the collector's own pod-bound ServiceAccount token, decided by the real API
 * server (kube-apiserver 1.36.3): the TokenReview of a token bound to a pod names the node the pod is
 * bound to, and that node's key is the answer; an unbound token, another ServiceAccount's, a token for
 * another audience get none. The processor's ServiceAccount is bound by the shipped rbac.yaml, the
 * collector's is the shipped one.
 */
@RealKubernetes
class NodeKeyIssuanceIT {

    private static final String COLLECTOR_NAMESPACE = "devhealth-node";
    private static final List<String> AUDIENCE = List.of(QuerySecurityConfig.DEFAULT_NODE_KEYS_AUDIENCE);
    private static final String SECRET = "node-key-issuance-test-secret-of-32-bytes-or-more";
    private static final Duration WAIT = Duration.ofSeconds(60);

    @TempDir
    static Path tlsDir;
    private static ControlPlane plane;
    private static HttpClient http;
    private static QueryServer server;
    private static final SimpleMeterRegistry METERS = new SimpleMeterRegistry();
    private final ObjectMapper json = new ObjectMapper();

    @BeforeAll
    static void start(ControlPlane controlPlane) throws Exception {
        plane = controlPlane;
        KubernetesClient admin = plane.adminClient();
        for (String namespace : List.of("devhealth", COLLECTOR_NAMESPACE)) {
            admin.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(namespace).endMetadata().build())
                    .serverSideApply();
        }
        ShippedManifests.apply(admin, "k8s/base/stream-processor/serviceaccount.yaml");
        ShippedManifests.apply(admin, "k8s/base/stream-processor/rbac.yaml");
        ShippedManifests.apply(admin, "k8s/base/node-collector/serviceaccount.yaml", COLLECTOR_NAMESPACE);
        admin.serviceAccounts().inNamespace(COLLECTOR_NAMESPACE).resource(new ServiceAccountBuilder().withNewMetadata()
                .withName("impostor").endMetadata().build()).serverSideApply();
        // Node objects are all a pod-bound token needs of a node (no kubelet has to run on them).
        for (String node : List.of("nk-node-1", "nk-node-2")) {
            admin.nodes().resource(new NodeBuilder().withNewMetadata().withName(node).endMetadata().build()).serverSideApply();
        }
        pod(admin, "collector-1", "node-collector", "nk-node-1");
        pod(admin, "collector-2", "node-collector", "nk-node-2");
        pod(admin, "impostor-1", "impostor", "nk-node-1");
        await("the processor may create tokenreviews").atMost(WAIT).pollInterval(Duration.ofMillis(200)).until(() ->
                Boolean.TRUE.equals(admin.authorization().v1().subjectAccessReview().create(new SubjectAccessReviewBuilder()
                        .withNewSpec().withUser("system:serviceaccount:devhealth:stream-processor").withNewResourceAttributes()
                        .withVerb("create").withGroup("authentication.k8s.io").withResource("tokenreviews").endResourceAttributes()
                        .endSpec().build()).getStatus().getAllowed()));

        TestCertificates tls = TestCertificates.create(tlsDir);
        Path serverKeystore = tls.keyPair("server", "CN=localhost");
        Map<String, Object> settings = new HashMap<>();
        settings.put(QuerySecurityConfig.KUBERNETES_ENABLED, "true");
        settings.put(QuerySecurityConfig.KUBERNETES_KUBECONFIG, plane.kubeconfigFor("devhealth", "stream-processor").toString());
        settings.put(QuerySecurityConfig.NODE_KEYS_ENABLED, "true");
        settings.put(QuerySecurityConfig.KEYSTORE, serverKeystore.toString());
        settings.put(QuerySecurityConfig.KEYSTORE_PASSWORD, tls.password());
        server = QueryServer.bind("127.0.0.1", 0, MutableClock.at("2026-11-29T10:00:00Z"), QuerySecurityConfig.from(settings));
        server.issueNodeKeysFrom(Optional.of(NodeKeys.masterFromSecret(SECRET)));
        HostInfo self = new HostInfo("127.0.0.1", server.port());
        server.serve(new FakeCluster(self, Map.of(), List.of(), Set.of()), () -> "", METERS);
        http = tls.httpClient(null);
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
        if (plane != null) {
            plane.adminClient().pods().inNamespace(COLLECTOR_NAMESPACE).withGracePeriod(0).delete();
        }
    }

    private static void pod(KubernetesClient admin, String name, String serviceAccount, String node) {
        admin.pods().inNamespace(COLLECTOR_NAMESPACE).resource(new PodBuilder().withNewMetadata().withName(name).endMetadata()
                .withNewSpec().withServiceAccountName(serviceAccount).withNodeName(node).addNewContainer().withName("collector")
                .withImage("devhealth").endContainer().endSpec().build()).create();
    }

    private static HttpResponse<String> fetch(String token) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("https://127.0.0.1:" + server.port() + NodeKeyIssuer.PATH))
                .timeout(Duration.ofSeconds(30)).GET();
        if (token != null) {
            request.header("Authorization", "Bearer " + token);
        }
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    private JsonNode body(HttpResponse<String> response, int status) throws Exception {
        assertThat(response.statusCode()).as(response.body()).isEqualTo(status);
        return json.readTree(response.body());
    }

    @Test
    void shouldGiveACollectorTheKeyOfTheNodeItsPodIsBoundToAndNoOther() throws Exception {
        byte[] master = NodeKeys.masterFromSecret(SECRET);
        for (String[] collector : List.of(new String[] {"collector-1", "nk-node-1"}, new String[] {"collector-2", "nk-node-2"})) {
            String token = plane.podBoundToken(COLLECTOR_NAMESPACE, "node-collector", collector[0], AUDIENCE);
            HttpResponse<String> answer = fetch(token);
            JsonNode issued = body(answer, 200);
            assertThat(issued.get("node").asText()).isEqualTo(collector[1]);
            NodeKeyCredential credential = NodeKeyCredential.parse(issued.get("credential").asText());
            assertThat(credential).as("the key an operator would issue for that node").isEqualTo(NodeKeyCredential.issue(master, collector[1]));
            assertThat(answer.headers().firstValue("Cache-Control")).hasValue("no-store");
        }
    }

    @Test
    void shouldRefuseTokensThatAreUnboundOfAnotherAccountOrForAnotherAudience() throws Exception {
        String unbound = plane.serviceAccountToken(COLLECTOR_NAMESPACE, "node-collector", AUDIENCE);
        assertThat(body(fetch(unbound), 403).get("message").asText()).contains("bound to no pod on a node");

        String impostor = plane.podBoundToken(COLLECTOR_NAMESPACE, "impostor", "impostor-1", AUDIENCE);
        assertThat(body(fetch(impostor), 403).get("message").asText())
                .contains("system:serviceaccount:" + COLLECTOR_NAMESPACE + ":impostor").contains("may not fetch node keys");

        String queryAudience = plane.podBoundToken(COLLECTOR_NAMESPACE, "node-collector", "collector-1",
                List.of(QuerySecurityConfig.DEFAULT_AUDIENCE));
        HttpResponse<String> otherAudience = fetch(queryAudience);
        assertThat(otherAudience.statusCode()).isEqualTo(401);
        assertThat(otherAudience.headers().firstValue("WWW-Authenticate")).isPresent();

        assertThat(fetch(null).statusCode()).isEqualTo(401);
        assertThat(body(fetch("not-a-token"), 401).get("message").asText()).doesNotContain("not-a-token");
        assertThat(METERS.find("devhealth.query.node.keys").tag("outcome", "unbound").counter().count()).isPositive();
    }
}
