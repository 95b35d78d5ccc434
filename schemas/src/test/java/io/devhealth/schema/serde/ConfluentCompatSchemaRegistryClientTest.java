package io.devhealth.schema.serde;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.devhealth.schema.avro.DeviceHealthReport;
import io.devhealth.schema.avro.NodeEvent;
import io.devhealth.schema.avro.NodeHeartbeat;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import org.apache.avro.Schema;
import org.apache.kafka.common.errors.SerializationException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class ConfluentCompatSchemaRegistryClientTest {

    private FakeConfluentRegistry fake;
    private ConfluentCompatSchemaRegistryClient client;

    @BeforeEach
    void startFake() throws Exception {
        fake = new FakeConfluentRegistry();
        client = ConfluentCompatSchemaRegistryClient.of(fake.url());
    }

    @AfterEach
    void stopFake() {
        fake.close();
    }

    @Test
    void shouldPostTheSchemaAsJsonWithTheConfluentContentType() throws Exception {
        int id = client.register("devhealth.node-events-value", NodeEvent.getClassSchema());

        assertThat(id).isEqualTo(1);
        FakeConfluentRegistry.Request request = fake.requests().get(0);
        assertThat(request.method()).isEqualTo("POST");
        assertThat(request.path()).isEqualTo("/subjects/devhealth.node-events-value/versions");
        assertThat(request.header("Content-Type")).isEqualTo("application/vnd.schemaregistry.v1+json");
        JsonNode body = new ObjectMapper().readTree(request.body());
        assertThat(body.fieldNames()).toIterable().containsExactly("schema");
        assertThat(new Schema.Parser().parse(body.get("schema").asText())).isEqualTo(NodeEvent.getClassSchema());
        assertThat(request.header("Authorization")).isNull();
    }

    @Test
    void shouldAnswerASecondRegistrationFromTheCacheWithoutAnHttpCall() {
        int first = client.register("s-value", DeviceHealthReport.getClassSchema());
        int second = client.register("s-value", DeviceHealthReport.getClassSchema());
        Schema fetched = client.getById(first);

        assertThat(second).isEqualTo(first);
        assertThat(fetched).isEqualTo(DeviceHealthReport.getClassSchema());
        assertThat(fake.requests()).hasSize(1);
    }

    @Test
    void shouldFetchASchemaByIdOnceAndThenServeItFromTheCache() {
        int id = ConfluentCompatSchemaRegistryClient.of(fake.url()).register("s-value", NodeHeartbeat.getClassSchema());

        assertThat(client.getById(id)).isEqualTo(NodeHeartbeat.getClassSchema());
        assertThat(client.getById(id)).isEqualTo(NodeHeartbeat.getClassSchema());
        assertThat(fake.requests()).extracting(FakeConfluentRegistry.Request::path)
                .containsExactly("/subjects/s-value/versions", "/schemas/ids/" + id);
    }

    @Test
    void shouldReportAnUnknownIdAs404With40403() {
        assertThatThrownBy(() -> client.getById(77))
                .isInstanceOfSatisfying(SchemaRegistryException.class, e -> {
                    assertThat(e.httpStatus()).isEqualTo(404);
                    assertThat(e.errorCode()).isEqualTo(40403);
                    assertThat(e.isNotFound()).isTrue();
                    assertThat(e.isRetriable()).isFalse();
                })
                .hasMessageContaining("No content with id: 77");
    }

    @Test
    void shouldReportAnIncompatibleSchemaAs409AndAnswerTheCompatibilityQuestion() {
        Schema v1 = DeviceHealthReport.getClassSchema();
        Schema breaking = SchemaEdits.edit(v1, SchemaEdits.addField("rack", "string", null));
        assertThat(client.isCompatible("c-value", breaking)).as("unknown subject (40401)").isTrue();
        client.register("c-value", v1);
        client.setCompatibility("c-value", CompatibilityLevel.BACKWARD);

        assertThat(client.isCompatible("c-value", breaking)).isFalse();
        assertThat(client.isCompatible("c-value", v1)).isTrue();
        assertThatThrownBy(() -> client.register("c-value", breaking))
                .isInstanceOfSatisfying(SchemaRegistryException.class, e -> {
                    assertThat(e.isIncompatible()).isTrue();
                    assertThat(e.errorCode()).isEqualTo(409);
                })
                .hasMessageContaining("Incompatible artifact");
        assertThat(fake.requests()).anySatisfy(r -> {
            assertThat(r.method()).isEqualTo("PUT");
            assertThat(r.path()).isEqualTo("/config/c-value");
            assertThat(r.body()).isEqualTo("{\"compatibility\":\"BACKWARD\"}");
        });
    }

    @Test
    void shouldLookUpAnIdWithoutRegistering() {
        assertThatThrownBy(() -> client.lookupId("l-value", NodeHeartbeat.getClassSchema()))
                .isInstanceOfSatisfying(SchemaRegistryException.class,
                        e -> assertThat(e.errorCode()).isEqualTo(SchemaRegistryException.SUBJECT_NOT_FOUND));
        int id = ConfluentCompatSchemaRegistryClient.of(fake.url()).register("l-value", NodeHeartbeat.getClassSchema());

        assertThat(client.lookupId("l-value", NodeHeartbeat.getClassSchema())).isEqualTo(id);
        assertThat(fake.requests()).extracting(FakeConfluentRegistry.Request::path).contains("/subjects/l-value");
    }

    @Test
    void shouldSendBasicCredentialsButNeverShowThem() {
        String expected = "Basic " + Base64.getEncoder().encodeToString("svc:pa55word".getBytes(StandardCharsets.UTF_8));
        fake.requireAuthorization(expected);
        ConfluentCompatSchemaRegistryClient authenticated = new ConfluentCompatSchemaRegistryClient(
                RegistryClientConfig.builder(fake.url()).credentials(RegistryCredentials.basic("svc", "pa55word")).build());
        ConfluentCompatSchemaRegistryClient wrong = new ConfluentCompatSchemaRegistryClient(
                RegistryClientConfig.builder(fake.url()).credentials(RegistryCredentials.basic("svc", "wr0ng")).build());

        assertThat(authenticated.register("a-value", NodeHeartbeat.getClassSchema())).isEqualTo(1);
        assertThat(fake.requests().get(0).header("Authorization")).isEqualTo(expected);
        assertThat(authenticated.toString()).doesNotContain("pa55word");
        assertThatThrownBy(() -> wrong.register("a-value", NodeHeartbeat.getClassSchema()))
                .isInstanceOfSatisfying(SchemaRegistryException.class, e -> assertThat(e.httpStatus()).isEqualTo(401))
                .hasMessageNotContaining("wr0ng");
    }

    @Test
    void shouldSendABearerToken() {
        fake.requireAuthorization("Bearer tok-1");
        ConfluentCompatSchemaRegistryClient authenticated = new ConfluentCompatSchemaRegistryClient(
                RegistryClientConfig.builder(fake.url()).credentials(RegistryCredentials.bearer("tok-1")).build());

        assertThat(authenticated.register("a-value", NodeHeartbeat.getClassSchema())).isEqualTo(1);
    }

    @Test
    void shouldReportA5xxAsRetriableWithTheRawBody() {
        fake.failNextWith(503);

        assertThatThrownBy(() -> client.register("s-value", NodeHeartbeat.getClassSchema()))
                .isInstanceOfSatisfying(SchemaRegistryException.class, e -> {
                    assertThat(e.httpStatus()).isEqualTo(503);
                    assertThat(e.errorCode()).isEqualTo(SchemaRegistryException.NO_ERROR_CODE);
                    assertThat(e.isRetriable()).isTrue();
                })
                .hasMessageContaining("upstream exploded");
        assertThat(client.register("s-value", NodeHeartbeat.getClassSchema())).as("failures are not cached").isEqualTo(1);
    }

    @Test
    void shouldReportAnUnreachableRegistryAsRetriableWithoutStatus() throws Exception {
        int closedPort;
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            closedPort = socket.getLocalPort();
        }
        ConfluentCompatSchemaRegistryClient unreachable = ConfluentCompatSchemaRegistryClient.of(
                "http://127.0.0.1:" + closedPort + "/apis/ccompat/v7");

        assertThatThrownBy(() -> unreachable.getById(1))
                .isInstanceOfSatisfying(SchemaRegistryException.class, e -> {
                    assertThat(e.httpStatus()).isEqualTo(SchemaRegistryException.NO_HTTP_STATUS);
                    assertThat(e.isRetriable()).isTrue();
                })
                .hasMessageContaining("unreachable");
    }

    @Test
    void shouldGiveUpAfterTheRequestTimeout() {
        // The registry answers only after 10 s: a client that ignored its 200 ms request timeout would wait for it.
        fake.delayAnswers(Duration.ofSeconds(10));
        ConfluentCompatSchemaRegistryClient impatient = new ConfluentCompatSchemaRegistryClient(
                RegistryClientConfig.builder(fake.url()).connectTimeout(Duration.ofSeconds(1)).requestTimeout(Duration.ofMillis(200)).build());
        long start = System.nanoTime();

        assertThatThrownBy(() -> impatient.getById(1)).isInstanceOfSatisfying(SchemaRegistryException.class,
                e -> assertThat(e.httpStatus()).isEqualTo(SchemaRegistryException.NO_HTTP_STATUS));
        // Generous (it was 2 s against a 3 s delay): a loaded machine adds scheduling to the 200 ms, never 10 s.
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(5));
    }

    @Test
    void shouldEncodeSubjectsInThePath() {
        client.register("odd subject/with+chars-value", NodeHeartbeat.getClassSchema());

        assertThat(fake.requests().get(0).path()).isEqualTo("/subjects/odd%20subject%2Fwith%2Bchars-value/versions");
        assertThat(client.lookupId("odd subject/with+chars-value", NodeHeartbeat.getClassSchema())).isEqualTo(1);
    }

    @Test
    void shouldRoundTripThroughTheSerdeOverHttpWithAFreshClientOnTheConsumerSide() {
        AvroSerde<NodeEvent> producer = AvroSerde.of(NodeEvent.class, client);
        AvroSerde<NodeEvent> consumer = AvroSerde.of(NodeEvent.class,
                ConfluentCompatSchemaRegistryClient.of(fake.url()));

        byte[] bytes = producer.serializer().serialize("t", SampleRecords.eventWithReport());

        assertThat(consumer.deserializer().deserialize("t", bytes)).isEqualTo(SampleRecords.eventWithReport());
        assertThatThrownBy(() -> consumer.deserializer().deserialize("t", SchemaEdits.frame(999, new byte[] {2})))
                .isInstanceOf(SerializationException.class).hasMessageContaining("Unknown schema id 999");
    }
}
