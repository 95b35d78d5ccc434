package io.devhealth.bench.pipeline;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import io.devhealth.schema.HealthWords;
import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.sink.condition.PodStatusWriter;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * Whether the processor's query API and the API server tell the same story about every pod: the
 * pod's latest summary from {@code /v1/pods/{ns}/{name}/devices} against the devhealth condition the
 * pod shows (the sink's own mapping, {@link PodStatusWriter#conditionStatus}).
 */
public final class QueryAgreement {

    private static final ObjectMapper JSON = JsonMapper.builder().build();
    private static final Map<String, String> CONDITION_BY_SUMMARY = Arrays.stream(HealthStatus.values())
            .collect(Collectors.toUnmodifiableMap(HealthWords::of, PodStatusWriter::conditionStatus));

    private QueryAgreement() {
    }

    /**
     * @param queryPort the processor's query server on 127.0.0.1 (plain HTTP, as the benchmark runs it)
     * @param conditionByPod each pod's devhealth condition as the API server shows it
     * @return the pods on which the two disagree, as {@code pod: query says …, API server …}
     */
    public static List<String> disagreements(int queryPort, String namespace, Map<String, String> conditionByPod) throws Exception {
        List<String> disagreeing = new ArrayList<>();
        // Its selector thread ends when the client is collected (JDK 17 has no close).
        HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        for (Map.Entry<String, String> pod : conditionByPod.entrySet()) {
            HttpResponse<String> response = client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + queryPort + "/v1/pods/"
                    + namespace + "/" + pod.getKey() + "/devices")).timeout(Duration.ofSeconds(10)).build(),
                    HttpResponse.BodyHandlers.ofString());
            String said = response.statusCode() == 200
                    ? CONDITION_BY_SUMMARY.get(JSON.readTree(response.body()).path("summary").asText())
                    : "HTTP " + response.statusCode();
            if (!pod.getValue().equals(said)) {
                disagreeing.add(pod.getKey() + ": query API " + said + ", API server " + pod.getValue());
            }
        }
        return disagreeing;
    }
}
