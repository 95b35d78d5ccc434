package io.devhealth.bench.pipeline;

import io.devhealth.simulators.kube.FleetKubernetesApi;
import io.devhealth.simulators.realkube.ControlPlane;
import io.devhealth.simulators.realkube.KubeBinaries;
import io.devhealth.simulators.realkube.ShippedManifests;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A real etcd and kube-apiserver (built by {@code scripts/kube}) for a simulated fleet, with the sink's
 * shipped RBAC, CRD, admission policies and API priority level applied, and the sink acting as its
 * ServiceAccount: what a fleet's API server does to devhealth's writes (admission, priority and
 * fairness, etcd) is in every figure taken on it. Requests are counted by the server itself, from its
 * {@code /metrics}.
 */
public final class RealControlPlane implements AutoCloseable {

    private static final Pattern SINK_FLOW = Pattern.compile(
            "^apiserver_flowcontrol_(dispatched|rejected)_requests_total\\{[^}]*flow_schema=\"" + ShippedManifests.SINK_SERVICE_ACCOUNT
                    + "\"[^}]*} (\\S+)$");

    private final ControlPlane plane;

    private RealControlPlane(ControlPlane plane) {
        this.plane = plane;
    }

    /**
     * Starts etcd and kube-apiserver under {@code work} (logs in {@code work/logs}), applies the sink's
     * shipped manifests and creates {@code podNamespace} with the {@code default} ServiceAccount its pods
     * run as.
     */
    public static RealControlPlane start(Path work, String podNamespace) {
        ControlPlane plane = ControlPlane.startApiServer(KubeBinaries.ensureBuilt(), work.resolve("control-plane"), work.resolve("logs"));
        try {
            KubernetesClient admin = plane.adminClient();
            ShippedManifests.applySink(admin);
            plane.createPodNamespace(podNamespace);
            return new RealControlPlane(plane);
        } catch (RuntimeException e) {
            plane.close();
            throw e;
        }
    }

    public String url() {
        return plane.url();
    }

    /** A cluster-admin client: creates the fleet's pods and writes their status as their kubelets would. */
    public KubernetesClient admin() {
        return plane.adminClient();
    }

    /** How the sink reaches the API server: as the shipped ServiceAccount, so its RBAC, policies and priority level apply. */
    public Config sinkApiServer() {
        try {
            return Config.fromKubeconfig(Files.readString(plane.kubeconfigFor(ShippedManifests.NAMESPACE,
                    ShippedManifests.SINK_SERVICE_ACCOUNT)));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A plain client that is the sink's ServiceAccount: same identity, same flow schema, same priority level. */
    public KubernetesClient clientAsSink() {
        return plane.clientFor(ShippedManifests.NAMESPACE, ShippedManifests.SINK_SERVICE_ACCOUNT);
    }

    /** The server's own count of resource requests so far, by what the sink does (watches left out: one per informer). */
    public FleetKubernetesApi.RequestCounts requestCounts() {
        long statusWrites = 0;
        long podReads = 0;
        long eventWrites = 0;
        long other = 0;
        for (ControlPlane.Requests requests : plane.requestTotals()) {
            String verb = requests.verb();
            String resource = requests.resource();
            String subresource = requests.subresource();
            long count = requests.count();
            if (resource.isEmpty() || verb.equals("WATCH")) {
                continue;
            }
            if (resource.equals("pods") && subresource.equals("status") && (verb.equals("PATCH") || verb.equals("PUT"))) {
                statusWrites += count;
            } else if (resource.equals("pods") && subresource.isEmpty() && (verb.equals("GET") || verb.equals("LIST"))) {
                podReads += count;
            } else if (resource.equals("events") && !verb.equals("GET") && !verb.equals("LIST")) {
                eventWrites += count;
            } else {
                other += count;
            }
        }
        return new FleetKubernetesApi.RequestCounts(statusWrites, podReads, eventWrites, other);
    }

    /**
     * The sink's requests as API priority and fairness classified them (its flow schema: pods, their
     * status, Events): {@code [dispatched, rejected]}, rejected being the 429s it was answered.
     */
    public long[] sinkFlow() {
        long dispatched = 0;
        long rejected = 0;
        for (String line : metrics().split("\n")) {
            Matcher sample = SINK_FLOW.matcher(line);
            if (sample.matches()) {
                long count = (long) Double.parseDouble(sample.group(2));
                if (sample.group(1).equals("dispatched")) {
                    dispatched += count;
                } else {
                    rejected += count;
                }
            }
        }
        return new long[] {dispatched, rejected};
    }

    private String metrics() {
        return plane.adminClient().raw(plane.url() + "/metrics");
    }

    /** Whether etcd and the API server still run; a failed phase says so when one died. */
    public void requireRunning() {
        plane.requireRunning();
    }

    @Override
    public void close() {
        plane.close();
    }
}
