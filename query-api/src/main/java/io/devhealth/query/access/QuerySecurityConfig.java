package io.devhealth.query.access;

import io.devhealth.runtime.config.ServiceConfig;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.apache.kafka.common.config.AbstractConfig;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigDef.Importance;
import org.apache.kafka.common.config.ConfigDef.Type;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.config.types.Password;

/**
 * Who may ask the query API, and over what. Declared once in {@link #define(ConfigDef)} so that the
 * processor's {@code ConfigDef} carries the options (environment variables via
 * {@link ServiceConfig#envName}, e.g. {@code query.auth.token.file} → {@code DEVHEALTH_QUERY_AUTH_TOKEN_FILE});
 * {@link #from(AbstractConfig)} reads them back.
 *
 * <p>Closed by default: without Kubernetes authentication ({@value #KUBERNETES_ENABLED}), a token, a token
 * file or a truststore (mTLS) there is no way in, and
 * bearer tokens need TLS; either is a configuration error naming the settings, unless {@value #INSECURE}
 * ({@code DEVHEALTH_QUERY_INSECURE}) opts out, which the embedded demo does and the server logs as a
 * warning. Secrets are held as Kafka {@link Password}s so that {@code toString} never shows them.
 *
 * @param tokenFile bearer tokens, one per line ('#' starts a comment), re-read when the file changes (a mounted Secret)
 * @param token one more bearer token (from the environment); null for none
 * @param tokenReloadInterval how often the token file is checked for changes
 * @param authenticateMetrics whether {@code /metrics} needs credentials too (off: Prometheus scrapes it without)
 * @param keystore PKCS12 keystore with this instance's key and certificate; null = plain HTTP
 * @param keystorePassword its password
 * @param truststore PKCS12 truststore of the CAs whose client certificates authenticate (mTLS); null = no client certificates
 * @param truststorePassword its password
 * @param allowedPrincipals full subject DNs of client certificates that may query; empty = any the truststore accepts
 * @param peerPrincipals full subject DNs of the certificates of other instances of this processor, which may name the
 *        certificate caller of a query they forward; empty = the subjects of this instance's own keystore certificates
 * @param continueSecret key that signs continue tokens; null = a random key per process
 * @param insecure whether the API may serve without credentials, or take bearer tokens over plain HTTP
 * @param kubernetes whether and how the Kubernetes API server authenticates tokens and authorizes each query
 * @param nodeKeys whether collectors may fetch their node's signing key here ({@code GET /v1/node-key})
 */
public record QuerySecurityConfig(Path tokenFile, Password token, Duration tokenReloadInterval, boolean authenticateMetrics,
        Path keystore, Password keystorePassword, Path truststore, Password truststorePassword, List<String> allowedPrincipals,
        List<String> peerPrincipals, Password continueSecret, boolean insecure, Kubernetes kubernetes, NodeKeys nodeKeys) {

    public static final String TOKEN_FILE = "query.auth.token.file";
    public static final String TOKEN = "query.auth.token";
    public static final String TOKEN_RELOAD_INTERVAL = "query.auth.token.reload.interval.ms";
    public static final String AUTHENTICATE_METRICS = "query.auth.metrics";
    public static final String KEYSTORE = "query.tls.keystore.location";
    public static final String KEYSTORE_PASSWORD = "query.tls.keystore.password";
    public static final String TRUSTSTORE = "query.tls.truststore.location";
    public static final String TRUSTSTORE_PASSWORD = "query.tls.truststore.password";
    public static final String ALLOWED_PRINCIPALS = "query.tls.allowed.principals";
    public static final String PEER_PRINCIPALS = "query.tls.peer.principals";
    public static final String CONTINUE_SECRET = "query.continue.secret";
    public static final String INSECURE = "query.insecure";
    public static final String KUBERNETES_ENABLED = "query.auth.kubernetes.enabled";
    public static final String KUBERNETES_AUDIENCES = "query.auth.kubernetes.audiences";
    public static final String KUBERNETES_KUBECONFIG = "query.auth.kubernetes.kubeconfig";
    public static final String KUBERNETES_CACHE_TTL = "query.auth.kubernetes.cache.ttl.ms";
    public static final String KUBERNETES_CACHE_SIZE = "query.auth.kubernetes.cache.size";
    public static final String KUBERNETES_TIMEOUT = "query.auth.kubernetes.timeout.ms";
    public static final String NODE_KEYS_ENABLED = "node.keys.issue.enabled";
    public static final String NODE_KEYS_AUDIENCE = "node.keys.issue.audience";
    public static final String NODE_KEYS_SERVICE_ACCOUNTS = "node.keys.issue.service.accounts";
    /** The audience a token for the query API is requested for: {@code kubectl create token <sa> --audience devhealth-query}. */
    public static final String DEFAULT_AUDIENCE = "devhealth-query";
    /** The audience of the collector's projected ServiceAccount token for fetching its node key. */
    public static final String DEFAULT_NODE_KEYS_AUDIENCE = "devhealth-node-key";
    /** The collector's ServiceAccount as k8s/ ships it. */
    public static final String DEFAULT_NODE_KEYS_SERVICE_ACCOUNT = "system:serviceaccount:devhealth-node:node-collector";

    /**
     * Issuing node keys to collectors against their ServiceAccount token ({@link NodeKeyIssuer}): the
     * token is checked with a TokenReview, which names the node the token's pod is bound to; that node's
     * key, and no other, is the answer. The cluster secret never leaves the processor.
     *
     * @param enabled whether {@code GET /v1/node-key} is served (needs the cluster secret and the API server)
     * @param audience the audience the collector's projected token is issued for
     * @param serviceAccounts the users (ServiceAccounts) that may fetch a key
     */
    public record NodeKeys(boolean enabled, String audience, List<String> serviceAccounts) {
        public NodeKeys {
            serviceAccounts = List.copyOf(serviceAccounts);
            if (enabled && (audience == null || audience.isBlank())) {
                throw new ConfigException(NODE_KEYS_AUDIENCE, audience, "name the audience of the collectors' projected tokens");
            }
            if (enabled && serviceAccounts.isEmpty()) {
                throw new ConfigException(NODE_KEYS_SERVICE_ACCOUNTS, "", "name the collectors' ServiceAccount "
                        + "(system:serviceaccount:<namespace>:<name>)");
            }
        }
    }

    /**
     * Authentication by {@code TokenReview} and authorization of every /v1 query by
     * {@code SubjectAccessReview}, both asked of the API server with the processor's own ServiceAccount.
     *
     * @param enabled whether the API server decides (off: static tokens and certificates read everything)
     * @param audiences a token must have been issued for one of these (a token for the API server itself is refused)
     * @param kubeconfig where the API server and the processor's credentials are; null = fabric8's automatic
     *        configuration (in-cluster ServiceAccount, {@code KUBECONFIG}, {@code ~/.kube/config})
     * @param cacheTtl how long an answer, positive or negative, is reused
     * @param cacheSize how many answers of each kind are kept at most
     * @param timeout how long one review may take before the query is answered 503
     */
    public record Kubernetes(boolean enabled, List<String> audiences, Path kubeconfig, Duration cacheTtl, int cacheSize,
            Duration timeout) {
        public Kubernetes {
            audiences = List.copyOf(audiences);
            Objects.requireNonNull(cacheTtl);
            Objects.requireNonNull(timeout);
            if (enabled && audiences.isEmpty()) {
                throw new ConfigException(KUBERNETES_AUDIENCES, "", "name at least one audience (e.g. " + DEFAULT_AUDIENCE
                        + "): without, a token issued for the API server itself, which any pod holds, would be accepted");
            }
        }
    }

    public QuerySecurityConfig {
        Objects.requireNonNull(tokenReloadInterval);
        allowedPrincipals = List.copyOf(allowedPrincipals);
        peerPrincipals = List.copyOf(peerPrincipals);
        if (truststore != null && keystore == null) {
            throw new ConfigException(TRUSTSTORE, truststore.toString(), "client certificates need TLS: set " + KEYSTORE + " too");
        }
        requireSubjects(ALLOWED_PRINCIPALS, allowedPrincipals, truststore);
        requireSubjects(PEER_PRINCIPALS, peerPrincipals, truststore);
        Objects.requireNonNull(kubernetes);
        if (!insecure && tokenFile == null && token == null && truststore == null && !kubernetes.enabled()) {
            throw new ConfigException("the query API has no credentials configured and would be open to anyone who reaches it: set "
                    + KUBERNETES_ENABLED + "=true (" + ServiceConfig.envName(KUBERNETES_ENABLED) + "), "
                    + TOKEN_FILE + " (" + ServiceConfig.envName(TOKEN_FILE) + "), " + TOKEN + " (" + ServiceConfig.envName(TOKEN)
                    + ") or " + TRUSTSTORE + " (" + ServiceConfig.envName(TRUSTSTORE) + ", mTLS), or " + INSECURE + "=true ("
                    + ServiceConfig.envName(INSECURE) + ") to serve it without (the embedded demo only)");
        }
        Objects.requireNonNull(nodeKeys);
        if (!insecure && (tokenFile != null || token != null || kubernetes.enabled() || nodeKeys.enabled()) && keystore == null) {
            throw new ConfigException("bearer tokens would travel in clear text over plain HTTP: set " + KEYSTORE + " ("
                    + ServiceConfig.envName(KEYSTORE) + ") so that the query API speaks HTTPS, or " + INSECURE + "=true ("
                    + ServiceConfig.envName(INSECURE) + ")");
        }
    }

    /** Adds the query API security options to {@code definition} and returns it. */
    public static ConfigDef define(ConfigDef definition) {
        return definition
                .define(TOKEN_FILE, Type.STRING, "", Importance.HIGH,
                        "File of bearer tokens that may query /v1 (one per line, '#' comments), e.g. a mounted Secret; "
                                + "re-read when it changes. An existing but empty file rejects every token.")
                .define(TOKEN, Type.PASSWORD, null, Importance.HIGH,
                        "One more bearer token that may query /v1 (set it from a Secret through the environment).")
                .define(TOKEN_RELOAD_INTERVAL, Type.LONG, 10_000L, ConfigDef.Range.atLeast(100), Importance.LOW,
                        "How often " + TOKEN_FILE + " is checked for changes; a rotated token works at most this late.")
                .define(AUTHENTICATE_METRICS, Type.BOOLEAN, false, Importance.MEDIUM,
                        "Whether /metrics needs the same credentials as /v1. Off by default: Prometheus scrapes it, and it holds "
                                + "counters only. /healthz and /readyz are always open (kubelet probes).")
                .define(KEYSTORE, Type.STRING, "", Importance.HIGH,
                        "PKCS12 keystore with this instance's key and certificate; set = the query API speaks HTTPS only. "
                                + "The certificate must name the advertised host (instances forward to each other).")
                .define(KEYSTORE_PASSWORD, Type.PASSWORD, null, Importance.HIGH, "Password of " + KEYSTORE + " and of its key.")
                .define(TRUSTSTORE, Type.STRING, "", Importance.HIGH,
                        "PKCS12 truststore of the CAs whose client certificates authenticate (mTLS). Without bearer tokens a "
                                + "client certificate is then required; with them either one authenticates. Forwarding between "
                                + "instances presents this instance's own certificate and trusts peers through this store.")
                .define(TRUSTSTORE_PASSWORD, Type.PASSWORD, null, Importance.HIGH, "Password of " + TRUSTSTORE + ".")
                .define(ALLOWED_PRINCIPALS, Type.STRING, "", Importance.MEDIUM,
                        "Client certificate subjects that may query, each a full DN, separated by ';' since a DN holds commas "
                                + "(CN=sre-cli,O=example;CN=oncall,O=example). A bare CN is refused: another CA could issue it. "
                                + "Empty = any certificate the truststore accepts. Others get 403. The processor's own certificate "
                                + "need not be listed: a query it forwards for a certificate caller names that caller ("
                                + PEER_PRINCIPALS + "), who is authorized here.")
                .define(PEER_PRINCIPALS, Type.STRING, "", Importance.LOW,
                        "Client certificate subjects of the other instances of this processor, each a full DN, separated by ';' "
                                + "(a DN holds commas: CN=a,O=x;CN=b,O=x). A query one of "
                                + "them forwards for a caller its certificate authenticated names that caller in the "
                                + AccessPolicy.CALLER_SUBJECT_HEADER + " header, and this instance authorizes that caller as if it "
                                + "had connected itself (" + ALLOWED_PRINCIPALS + ", Kubernetes RBAC); the header from any other "
                                + "client is refused with 403. Empty = the subject of this instance's own certificate ("
                                + KEYSTORE + "): k8s/ gives every instance of the StatefulSet the same certificate (the Secret "
                                + "devhealth-query-tls). Set it when instances have certificates of their own.")
                .define(CONTINUE_SECRET, Type.PASSWORD, null, Importance.LOW,
                        "Key that signs continue tokens, so they cannot be forged; empty = random per process (a page "
                                + "token then stops working after the owning instance restarts).")
                .define(INSECURE, Type.BOOLEAN, false, Importance.HIGH,
                        "Let the query API start without credentials (anyone who reaches it reads every pod, device and "
                                + "node) or with bearer tokens over plain HTTP. Off: the processor refuses to start unless "
                                + TOKEN_FILE + ", " + TOKEN + " or " + TRUSTSTORE + " is set, and, with tokens, " + KEYSTORE
                                + ". For the embedded demo and tests on loopback only.")
                .define(KUBERNETES_ENABLED, Type.BOOLEAN, false, Importance.HIGH,
                        "Let the Kubernetes API server decide who may query what: bearer tokens are checked with a TokenReview "
                                + "and every /v1 query with a SubjectAccessReview (a pod's needs get on that pod, a node's, a "
                                + "device's and the fleet summary get on nodes). Needs create on tokenreviews and "
                                + "subjectaccessreviews for the processor (k8s/ binds system:auth-delegator) and TLS.")
                .define(KUBERNETES_AUDIENCES, Type.LIST, DEFAULT_AUDIENCE, Importance.HIGH,
                        "Audiences a token must have been issued for (kubectl create token <sa> --audience " + DEFAULT_AUDIENCE
                                + "); a token for another audience, the API server's own included, gets 401.")
                .define(KUBERNETES_KUBECONFIG, Type.STRING, "", Importance.LOW,
                        "Kubeconfig with the API server and the processor's credentials; empty = the in-cluster ServiceAccount "
                                + "(or KUBECONFIG, ~/.kube/config).")
                .define(KUBERNETES_CACHE_TTL, Type.LONG, 10_000L, ConfigDef.Range.between(0, 300_000), Importance.LOW,
                        "How long a TokenReview or SubjectAccessReview answer, allowed or not, is reused (the API server's "
                                + "own delegated authentication and authorization cache 10 s); a revoked binding or token "
                                + "works at most this long after. 0 = ask every time.")
                .define(KUBERNETES_CACHE_SIZE, Type.INT, 4096, ConfigDef.Range.between(1, 1_000_000), Importance.LOW,
                        "Answers kept at most per kind of review (tokens and decisions); the least recently used go first.")
                .define(KUBERNETES_TIMEOUT, Type.INT, 5_000, ConfigDef.Range.between(100, 60_000), Importance.LOW,
                        "How long one review may take; a query whose review fails or times out gets 503, never the data.")
                .define(NODE_KEYS_ENABLED, Type.BOOLEAN, false, Importance.HIGH,
                        "Serve GET /v1/node-key: a collector presents its projected ServiceAccount token, a TokenReview names "
                                + "the node its pod is bound to, and it gets that node's signing key (principals.secret stays "
                                + "here). Needs principals.secret, create on tokenreviews, and TLS.")
                .define(NODE_KEYS_AUDIENCE, Type.STRING, DEFAULT_NODE_KEYS_AUDIENCE, Importance.MEDIUM,
                        "Audience of the collectors' projected tokens (serviceAccountToken.audience in the DaemonSet).")
                .define(NODE_KEYS_SERVICE_ACCOUNTS, Type.LIST, DEFAULT_NODE_KEYS_SERVICE_ACCOUNT, Importance.MEDIUM,
                        "ServiceAccounts (system:serviceaccount:<namespace>:<name>) that may fetch node keys.");
    }

    /** The query API security settings of a config whose definition went through {@link #define(ConfigDef)}. */
    public static QuerySecurityConfig from(AbstractConfig config) {
        return new QuerySecurityConfig(
                optionalPath(config.getString(TOKEN_FILE)),
                optionalSecret(config.getPassword(TOKEN)),
                Duration.ofMillis(config.getLong(TOKEN_RELOAD_INTERVAL)),
                config.getBoolean(AUTHENTICATE_METRICS),
                optionalPath(config.getString(KEYSTORE)),
                config.getPassword(KEYSTORE_PASSWORD),
                optionalPath(config.getString(TRUSTSTORE)),
                config.getPassword(TRUSTSTORE_PASSWORD),
                subjects(config.getString(ALLOWED_PRINCIPALS)),
                subjects(config.getString(PEER_PRINCIPALS)),
                optionalSecret(config.getPassword(CONTINUE_SECRET)),
                config.getBoolean(INSECURE),
                new Kubernetes(config.getBoolean(KUBERNETES_ENABLED),
                        config.getList(KUBERNETES_AUDIENCES).stream().map(String::trim).filter(s -> !s.isEmpty()).toList(),
                        optionalPath(config.getString(KUBERNETES_KUBECONFIG)),
                        Duration.ofMillis(config.getLong(KUBERNETES_CACHE_TTL)),
                        config.getInt(KUBERNETES_CACHE_SIZE),
                        Duration.ofMillis(config.getInt(KUBERNETES_TIMEOUT))),
                new NodeKeys(config.getBoolean(NODE_KEYS_ENABLED), config.getString(NODE_KEYS_AUDIENCE).trim(),
                        config.getList(NODE_KEYS_SERVICE_ACCOUNTS).stream().map(String::trim).filter(v -> !v.isEmpty()).toList()));
    }

    /** Settings from plain key/values (tests, embedding). */
    public static QuerySecurityConfig from(Map<String, ?> values) {
        return from(new AbstractConfig(define(new ConfigDef()), values, false) {});
    }

    /** No authentication, plain HTTP: the explicit opt-out ({@value #INSECURE}) of the embedded demo and tests. */
    public static QuerySecurityConfig withoutAuthentication() {
        return from(Map.of(INSECURE, true));
    }

    /** Whether callers of /v1 must authenticate at all. */
    public boolean authenticates() {
        return tokenFile != null || token != null || truststore != null || kubernetes.enabled();
    }

    public boolean tls() {
        return keystore != null;
    }

    /** Whether bearer tokens are one way in (so that a client certificate is optional). */
    public boolean acceptsTokens() {
        return tokenFile != null || token != null || kubernetes.enabled();
    }

    /** Whether tokens and certificates are listed here (static tokens, the DN allow-list), as opposed to only by the API server. */
    public boolean staticTokens() {
        return tokenFile != null || token != null;
    }

    /**
     * The DNs of a setting that lists certificate subjects, split at each ';' that is not escaped: a DN is written
     * with commas between its RDNs, and a ';' inside a value is escaped ({@code \;}, RFC 2253).
     */
    static List<String> subjects(String value) {
        List<String> subjects = new ArrayList<>();
        StringBuilder current = new StringBuilder();
        boolean escaped = false;
        for (char c : (value == null ? "" : value).toCharArray()) {
            if (c == ';' && !escaped) {
                subjects.add(current.toString().trim());
                current.setLength(0);
            } else {
                current.append(c);
            }
            escaped = c == '\\' && !escaped;
        }
        subjects.add(current.toString().trim());
        return subjects.stream().filter(subject -> !subject.isEmpty()).toList();
    }

    /** Each of {@code subjects} a certificate's full subject DN, and certificates asked for at all. */
    private static void requireSubjects(String setting, List<String> subjects, Path truststore) {
        if (!subjects.isEmpty() && truststore == null) {
            throw new ConfigException(setting, subjects, "needs " + TRUSTSTORE);
        }
        for (String subject : subjects) {
            try {
                AccessPolicy.distinguishedName(subject);
            } catch (IllegalArgumentException e) {
                throw new ConfigException(setting, subjects, "each entry is a certificate's full subject DN: " + e.getMessage());
            }
        }
    }

    private static Path optionalPath(String value) {
        return value == null || value.isBlank() ? null : Path.of(value.trim());
    }

    private static Password optionalSecret(Password value) {
        return value == null || value.value().isEmpty() ? null : value;
    }
}
