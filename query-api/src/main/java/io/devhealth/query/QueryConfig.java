package io.devhealth.query;

import io.devhealth.query.access.QuerySecurityConfig;
import io.devhealth.query.routing.StandbyReads;
import io.devhealth.runtime.config.ServiceConfig;
import java.util.Map;
import org.apache.kafka.common.config.AbstractConfig;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigDef.Importance;
import org.apache.kafka.common.config.ConfigDef.Type;

/**
 * Typed configuration of the query API: where it listens and what it advertises, standby reads, and who may ask
 * ({@link QuerySecurityConfig}). Every option is also an environment variable ({@link ServiceConfig#envName}, e.g.
 * {@code query.port} → {@code DEVHEALTH_QUERY_PORT}). The options are declared once ({@link #define}); the launcher's
 * {@code processor} command adds them to the processor's, since the two run in one process.
 */
public final class QueryConfig extends AbstractConfig {

    public static final String BIND_ADDRESS = "query.bind.address";
    public static final String PORT = "query.port";
    public static final String ADVERTISED_HOST = "query.advertised.host";
    public static final String STANDBY_READS = "query.standby.reads.enabled";
    public static final String STANDBY_MAX_LAG = "query.standby.max.lag.records";
    public static final int DEFAULT_PORT = 8080;

    public static final ConfigDef DEFINITION = define(new ConfigDef());

    public QueryConfig(Map<?, ?> values) {
        // doLog=false: AbstractConfig would log every value, tokens and passwords included.
        super(DEFINITION, values, false);
        security();
    }

    /** From DEVHEALTH_* variables, {@code overrides} winning (as {@code --set} does). */
    public static QueryConfig fromEnvironment(Map<String, String> env, Map<String, ?> overrides) {
        return new QueryConfig(ServiceConfig.resolve(DEFINITION, env, overrides));
    }

    /** Adds every query API option to {@code definition} and returns it. */
    public static ConfigDef define(ConfigDef definition) {
        return QuerySecurityConfig.define(definition)
                .define(BIND_ADDRESS, Type.STRING, "0.0.0.0", Importance.LOW,
                        "Address the query API (/v1, /healthz, /readyz, /metrics) listens on. 0.0.0.0 (every interface) is what "
                                + "Kubernetes needs: other instances forward queries to the pod's address and the kubelet probes it; "
                                + "127.0.0.1 keeps it on the machine (the embedded demo).")
                .define(PORT, Type.INT, DEFAULT_PORT, ConfigDef.Range.between(0, 65535), Importance.MEDIUM,
                        "Port of the query API; 0 picks a free one (tests, embedded demo).")
                .define(ADVERTISED_HOST, Type.STRING, "", Importance.MEDIUM,
                        "Host name other instances use to reach this one's query API (Kafka Streams application.server); "
                                + "empty = this machine's host name. In Kubernetes: the pod's stable DNS name.")
                .define(STANDBY_READS, Type.BOOLEAN, StandbyReads.DEFAULT.enabled(), Importance.MEDIUM,
                        "While the instance holding a node's or pod's partition cannot answer (killed and not yet out of the "
                                + "group, restoring, or the partition moving), answer from a standby copy (num.standby.replicas), "
                                + "marked with the response header " + StandbyReads.STALE_HEADER + ": true; false answers 503, "
                                + "retry shortly, instead. Fleet summaries always come from the active copies.")
                .define(STANDBY_MAX_LAG, Type.LONG, StandbyReads.DEFAULT.maxLagRecords(), ConfigDef.Range.atLeast(0), Importance.LOW,
                        "The most changelog records a standby copy may lack and still answer (" + STANDBY_READS + "); "
                                + "Kafka Streams' acceptable.recovery.lag default. A copy further behind answers 503.");
    }

    public String bindAddress() {
        return getString(BIND_ADDRESS);
    }

    public int port() {
        return getInt(PORT);
    }

    /** Empty: this machine's host name. */
    public String advertisedHost() {
        return getString(ADVERTISED_HOST);
    }

    /** Whether, and how far behind, standby copies answer queries ({@link #STANDBY_READS}). */
    public StandbyReads standbyReads() {
        return new StandbyReads(getBoolean(STANDBY_READS), getLong(STANDBY_MAX_LAG));
    }

    /** Authentication and TLS of the query API (query.auth.*, query.tls.*, node.keys.issue.*). */
    public QuerySecurityConfig security() {
        return QuerySecurityConfig.from(this);
    }
}
