package io.devhealth.query;

import io.devhealth.processor.ProcessorRun;
import io.devhealth.query.access.QuerySecurityConfig;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

/**
 * Starts the processor with its query API ({@link QueryableProcessor}) in a {@link ProcessorRun}: the query API on a
 * free loopback port, without credentials (the tests that need them set them), advertised as 127.0.0.1.
 */
final class QueryableRun {

    private QueryableRun() {}

    static QueryableProcessor start(ProcessorRun run, Path stateDir, Map<String, String> settings) throws Exception {
        Map<String, String> query = new HashMap<>(Map.of(
                QueryConfig.BIND_ADDRESS, "127.0.0.1",
                QueryConfig.PORT, "0",
                QueryConfig.ADVERTISED_HOST, "127.0.0.1",
                QuerySecurityConfig.INSECURE, "true"));
        query.putAll(settings);
        return run.start(stateDir, query, QueryableProcessor::of, QueryableProcessor::start);
    }
}
