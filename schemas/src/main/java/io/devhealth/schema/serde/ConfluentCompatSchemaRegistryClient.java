package io.devhealth.schema.serde;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.NullNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import javax.net.ssl.SSLException;
import org.apache.avro.Schema;
import org.apache.avro.SchemaParseException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A {@link SchemaRegistryClient} speaking the Confluent Schema Registry REST API, which Confluent's
 * registry, Apicurio ({@code /apis/ccompat/v7}), Karapace and Redpanda all serve.
 *
 * <p>Why it caches: a Kafka serializer asks for the id of the same schema for every record, and a
 * deserializer asks for the same writer schema for every record. Ids are immutable in every
 * registry, so schema → id (per subject) and id → schema are cached for the life of the client and
 * the second call never reaches the network. Failures are not cached.
 *
 * <p>Uses the JDK's {@link HttpClient} (HTTP/1.1, which every registry speaks) and Jackson, so the
 * schemas module needs no HTTP library. Requests carry
 * {@code Content-Type: application/vnd.schemaregistry.v1+json}. Credentials go only into the
 * {@code Authorization} header and never into a log line or exception.
 *
 * <p>Over {@code https://} the server's certificate and host name are verified against
 * {@link RegistryClientConfig#tls()} (Kafka-style trust and key stores, so mutual TLS too) or, without
 * it, the JVM's default trust. A failed handshake is reported as such, naming the URL and what to check.
 *
 * <p>Errors become {@link SchemaRegistryException} with the HTTP status and the registry's
 * {@code error_code}: 404 / 40403 for an unknown id, 409 for an incompatible schema, 5xx or
 * {@link SchemaRegistryException#NO_HTTP_STATUS} for outages. No call is retried here; the caller
 * knows whether a retry is safe.
 *
 * <p>Thread-safe.
 */
public final class ConfluentCompatSchemaRegistryClient implements SchemaRegistryClient {

    private static final Logger LOGGER = LoggerFactory.getLogger(ConfluentCompatSchemaRegistryClient.class);

    /** The media type of the Confluent REST API, sent as Content-Type and Accept. */
    public static final String CONTENT_TYPE = "application/vnd.schemaregistry.v1+json";

    private static final int MAX_ERROR_BODY_CHARS = 500;

    private final RegistryClientConfig config;
    private final String base;
    private final HttpClient http;
    private final ObjectMapper json = new ObjectMapper();
    private final Map<String, Map<String, Integer>> idsBySubject = new ConcurrentHashMap<>();
    private final Map<Integer, Schema> schemasById = new ConcurrentHashMap<>();

    public ConfluentCompatSchemaRegistryClient(RegistryClientConfig config) {
        this.config = Objects.requireNonNull(config, "config");
        String url = config.baseUrl().toString();
        this.base = url.endsWith("/") ? url.substring(0, url.length() - 1) : url;
        HttpClient.Builder builder = HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(config.connectTimeout())
                .followRedirects(HttpClient.Redirect.NEVER);
        if (config.tls().isConfigured()) {
            // Loaded once here, so that a wrong path or password fails the service at start-up.
            builder.sslContext(config.tls().sslContext());
        }
        this.http = builder.build();
        boolean https = "https".equals(config.baseUrl().getScheme());
        if (!https && config.credentials().authorizationHeader().isPresent()) {
            LOGGER.warn("Schema registry credentials are sent over plain HTTP url={} credentials={}", base,
                    config.credentials());
        }
        LOGGER.debug("Schema registry client url={} credentials={} tls={}", base, config.credentials(),
                https ? config.tls() : "off");
    }

    /** A client for {@code baseUrl} with default timeouts and no authentication. */
    public static ConfluentCompatSchemaRegistryClient of(String baseUrl) {
        return new ConfluentCompatSchemaRegistryClient(RegistryClientConfig.of(baseUrl));
    }

    /** The settings this client was built with (secrets redacted in {@code toString()}). */
    public RegistryClientConfig config() {
        return config;
    }

    @Override
    public int register(String subject, Schema schema) {
        return cachedId(subject, schema, "register", "/subjects/" + encode(subject) + "/versions");
    }

    @Override
    public int lookupId(String subject, Schema schema) {
        return cachedId(subject, schema, "lookup", "/subjects/" + encode(subject));
    }

    @Override
    public Schema getById(int id) {
        Schema cached = schemasById.get(id);
        if (cached != null) {
            return cached;
        }
        JsonNode answer = send("GET", "/schemas/ids/" + id, null, "getById");
        String type = answer.path("schemaType").asText("AVRO");
        if (!"AVRO".equals(type)) {
            throw new SchemaRegistryException("Schema id " + id + " is of type " + type + ", not AVRO", 200,
                    SchemaRegistryException.NO_ERROR_CODE);
        }
        JsonNode text = answer.get("schema");
        if (text == null || !text.isTextual()) {
            throw new SchemaRegistryException("Answer for schema id " + id + " has no schema", 200,
                    SchemaRegistryException.NO_ERROR_CODE);
        }
        Schema schema;
        try {
            schema = new Schema.Parser().parse(text.asText());
        } catch (SchemaParseException e) {
            throw new SchemaRegistryException("Schema id " + id + " is not a valid Avro schema: " + e.getMessage(), 200,
                    SchemaRegistryException.NO_ERROR_CODE, e);
        }
        Schema winner = schemasById.putIfAbsent(id, schema);
        LOGGER.debug("Fetched schema id={} name={}", id, schema.getFullName());
        return winner != null ? winner : schema;
    }

    @Override
    public boolean isCompatible(String subject, Schema schema) {
        try {
            JsonNode answer = send("POST", "/compatibility/subjects/" + encode(subject) + "/versions/latest",
                    schemaBody(schema), "isCompatible");
            return answer.path("is_compatible").asBoolean(false);
        } catch (SchemaRegistryException e) {
            if (e.errorCode() == SchemaRegistryException.SUBJECT_NOT_FOUND
                    || e.errorCode() == SchemaRegistryException.VERSION_NOT_FOUND) {
                return true; // nothing registered yet, so nothing to be incompatible with
            }
            throw e;
        }
    }

    @Override
    public void setCompatibility(String subject, CompatibilityLevel level) {
        ObjectNode body = json.createObjectNode().put("compatibility", level.name());
        send("PUT", "/config/" + encode(subject), body, "setCompatibility");
        LOGGER.info("Set compatibility subject={} level={}", subject, level);
    }

    private int cachedId(String subject, Schema schema, String operation, String path) {
        Objects.requireNonNull(subject, "subject");
        Objects.requireNonNull(schema, "schema");
        Map<String, Integer> ids = idsBySubject.computeIfAbsent(subject, s -> new ConcurrentHashMap<>());
        String content = schema.toString();
        Integer cached = ids.get(content);
        if (cached != null) {
            return cached;
        }
        JsonNode answer = send("POST", path, schemaBody(schema), operation);
        JsonNode idNode = answer.get("id");
        if (idNode == null || !idNode.canConvertToInt()) {
            throw new SchemaRegistryException("Answer to " + operation + " for subject " + subject + " has no id", 200,
                    SchemaRegistryException.NO_ERROR_CODE);
        }
        int id = idNode.asInt();
        ids.put(content, id);
        schemasById.putIfAbsent(id, schema);
        LOGGER.info("Schema id resolved operation={} subject={} id={} name={}", operation, subject, id,
                schema.getFullName());
        return id;
    }

    /** Avro is the API's default schemaType, so it is left out, as Confluent's own client does. */
    private ObjectNode schemaBody(Schema schema) {
        return json.createObjectNode().put("schema", schema.toString());
    }

    private JsonNode send(String method, String path, JsonNode body, String operation) {
        URI uri = URI.create(base + path);
        HttpRequest.Builder request = HttpRequest.newBuilder(uri)
                .timeout(config.requestTimeout())
                .header("Accept", CONTENT_TYPE + ", application/json");
        config.credentials().authorizationHeader().ifPresent(value -> request.header("Authorization", value));
        if (body == null) {
            request.method(method, HttpRequest.BodyPublishers.noBody());
        } else {
            request.header("Content-Type", CONTENT_TYPE);
            request.method(method, HttpRequest.BodyPublishers.ofByteArray(toBytes(body)));
        }
        long start = System.nanoTime();
        HttpResponse<String> response;
        try {
            response = http.send(request.build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
        } catch (IOException e) {
            SSLException tls = tlsFailure(e);
            if (tls != null) {
                throw new SchemaRegistryException("TLS handshake with the schema registry failed: " + operation + " "
                        + method + " " + uri + ": " + tls.getMessage() + " (check that schema.registry.ssl.truststore.* "
                        + "trusts the registry's certificate authority, that the URL's host is in its certificate, "
                        + "and, if the registry requires client certificates, schema.registry.ssl.keystore.*)",
                        SchemaRegistryException.NO_HTTP_STATUS, SchemaRegistryException.NO_ERROR_CODE, e);
            }
            throw new SchemaRegistryException("Schema registry unreachable: " + operation + " " + method + " " + uri
                    + ": " + e, SchemaRegistryException.NO_HTTP_STATUS, SchemaRegistryException.NO_ERROR_CODE, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SchemaRegistryException("Interrupted during " + operation + " " + method + " " + uri,
                    SchemaRegistryException.NO_HTTP_STATUS, SchemaRegistryException.NO_ERROR_CODE, e);
        }
        int status = response.statusCode();
        LOGGER.debug("Registry call operation={} method={} path={} status={} durationMs={}", operation, method, path,
                status, (System.nanoTime() - start) / 1_000_000);
        if (status / 100 != 2) {
            throw error(operation, method, uri, status, response.body());
        }
        return parse(response.body(), operation, status);
    }

    private SchemaRegistryException error(String operation, String method, URI uri, int status, String body) {
        int errorCode = SchemaRegistryException.NO_ERROR_CODE;
        String message = truncate(body);
        try {
            JsonNode node = json.readTree(body == null ? "" : body);
            if (node != null && node.isObject()) {
                errorCode = node.path("error_code").asInt(SchemaRegistryException.NO_ERROR_CODE);
                message = node.path("message").asText(message);
            }
        } catch (JsonProcessingException e) {
            // Not JSON (a proxy's HTML page, say): keep the raw text.
        }
        String reason = switch (status) {
            case 401 -> " (HTTP 401: no or wrong credentials, sent " + config.credentials()
                    + "; set schema.registry.basic.auth.user.info or schema.registry.bearer.auth.token)";
            case 403 -> " (HTTP 403: the credentials " + config.credentials() + " are not allowed to " + operation + ")";
            default -> "";
        };
        return new SchemaRegistryException("Schema registry refused " + operation + " " + method + " " + uri + ": "
                + message + reason, status, errorCode);
    }

    /** The TLS failure behind {@code e}, if any: the JDK client wraps some of them in a plain IOException. */
    private static SSLException tlsFailure(Throwable e) {
        for (Throwable cause = e; cause != null; cause = cause.getCause()) {
            if (cause instanceof SSLException ssl) {
                return ssl;
            }
        }
        return null;
    }

    private JsonNode parse(String body, String operation, int status) {
        if (body == null || body.isBlank()) {
            return NullNode.getInstance();
        }
        try {
            return json.readTree(body);
        } catch (JsonProcessingException e) {
            throw new SchemaRegistryException("Unparseable answer to " + operation + ": " + truncate(body), status,
                    SchemaRegistryException.NO_ERROR_CODE, e);
        }
    }

    private byte[] toBytes(JsonNode body) {
        try {
            return json.writeValueAsBytes(body);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("Cannot write JSON", e);
        }
    }

    private static String encode(String segment) {
        return URLEncoder.encode(segment, StandardCharsets.UTF_8).replace("+", "%20");
    }

    private static String truncate(String text) {
        if (text == null) {
            return "";
        }
        return text.length() <= MAX_ERROR_BODY_CHARS ? text : text.substring(0, MAX_ERROR_BODY_CHARS) + "...";
    }

    @Override
    public String toString() {
        return "ConfluentCompatSchemaRegistryClient[" + base + ", credentials=" + config.credentials() + ", tls="
                + config.tls() + "]";
    }
}
