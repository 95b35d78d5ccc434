package io.devhealth.simulators.kube;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * Server-side tables ({@code meta.k8s.io/v1} {@code Table}), as an API server answers a client that
 * asks for {@code Accept: application/json;as=Table;v=v1;g=meta.k8s.io} — what {@code kubectl get}
 * does, so that it prints READY, STATUS, RESTARTS for pods, TYPE, REASON, OBJECT, MESSAGE for Events and
 * a CRD's printer columns for custom resources, instead of NAME and AGE alone.
 *
 * <p>The columns and cells follow the API server's printers: pods and Events as
 * {@code pkg/printers/internalversion/printers.go} ({@code AddHandlers}, {@code printPod},
 * {@code printEvent}) prints them, with every cell, wide ones included (the server always generates the
 * wide table; kubectl hides priority-1 columns unless {@code -o wide}); custom resources as
 * apiextensions-apiserver's {@code tableconvertor} does: Name, then the CRD's
 * {@code additionalPrinterColumns} (simple JSONPath), {@code date} cells as ages. Any other kind gets the
 * API server's default table (Name, Created At): a real API server has printers of its own for nodes,
 * services, configmaps and the DRA kinds, which this server does not restate. {@code ServerTablesParityIT} compares kubectl's output
 * against this server with its output against a real kube-apiserver for the same objects.
 */
final class ServerTables {

    /** One column of a table; {@code path} reads the cell of custom resources (null for built-in printers). */
    record Column(String name, String type, String format, int priority, List<String> path) {
    }

    private static final List<Column> POD = List.of(
            column("Name", "string", "name", 0), column("Ready", "string", "", 0), column("Status", "string", "", 0),
            column("Restarts", "string", "", 0), column("Age", "string", "", 0), column("IP", "string", "", 1),
            column("Node", "string", "", 1), column("Nominated Node", "string", "", 1), column("Readiness Gates", "string", "", 1));
    private static final List<Column> EVENT = List.of(
            column("Last Seen", "string", "", 0), column("Type", "string", "", 0), column("Reason", "string", "", 0),
            column("Object", "string", "", 0), column("Subobject", "string", "", 1), column("Source", "string", "", 1),
            column("Message", "string", "", 0), column("First Seen", "string", "", 1), column("Count", "string", "", 1),
            column("Name", "string", "name", 1));
    private static final List<Column> DEFAULT = List.of(column("Name", "string", "name", 0), column("Created At", "date", "", 0));

    /** The columns parsed from one version of a CRD. */
    private record ParsedColumns(long resourceVersion, List<Column> columns) {
    }

    private final ObjectMapper mapper;
    private final Clock clock;
    /** By CRD name and served version: the columns of the CRD's resourceVersion last seen. */
    private final Map<String, ParsedColumns> parsedColumns = new ConcurrentHashMap<>();

    ServerTables(ObjectMapper mapper, Clock clock) {
        this.mapper = mapper;
        this.clock = clock;
    }

    /** Whether a request's {@code Accept} header asks for a table. */
    static boolean wanted(String accept) {
        return accept != null && accept.contains("as=Table");
    }

    private static Column column(String name, String type, String format, int priority) {
        return new Column(name, type, format, priority, null);
    }

    /**
     * The columns of a CRD's version: Name, then its {@code additionalPrinterColumns}. Only simple paths
     * ({@code .spec.node}) are read; a table of a kind whose CRD has any other column is answered 400.
     * Parsed once per version of the CRD: every table of its kind asks, and a CRD rarely changes.
     */
    List<Column> customColumns(StoredObject crd, String version) {
        String key = crd.name() + "/" + version;
        ParsedColumns parsed = parsedColumns.get(key);
        // A stale entry is replaced, never used: an updated CRD has a new resourceVersion. Two requests
        // racing on a change may both parse; either result is right for the version it read.
        if (parsed == null || parsed.resourceVersion() != crd.resourceVersion()) {
            parsed = new ParsedColumns(crd.resourceVersion(), parseColumns(crd.json(), version));
            parsedColumns.put(key, parsed);
        }
        return parsed.columns();
    }

    private static List<Column> parseColumns(JsonNode crd, String version) {
        List<Column> columns = new ArrayList<>(List.of(column("Name", "string", "name", 0)));
        for (JsonNode v : crd.path("spec").path("versions")) {
            if (!version.equals(v.path("name").asString(""))) {
                continue;
            }
            JsonNode printer = v.path("additionalPrinterColumns");
            if (printer.isEmpty()) {
                // The API server's default for a CRD that names no columns.
                columns.add(new Column("Age", "date", "", 0, List.of("metadata", "creationTimestamp")));
            }
            for (JsonNode c : printer) {
                String jsonPath = c.path("jsonPath").asString("");
                if (!jsonPath.matches("(\\.[A-Za-z0-9_-]+)+")) {
                    throw ApiException.badRequest("additionalPrinterColumns " + c.path("name").asString("") + ": jsonPath " + jsonPath
                            + " is not a simple path (.a.b.c), the only kind this server evaluates");
                }
                columns.add(new Column(c.path("name").asString(""), c.path("type").asString("string"), c.path("format").asString(""),
                        c.path("priority").asInt(0), List.of(jsonPath.substring(1).split("\\."))));
            }
        }
        return List.copyOf(columns);
    }

    /** The table of {@code objects} of {@code type}; {@code custom}: the CRD's columns where the kind has a CRD, else null. */
    ObjectNode table(ResourceType type, List<Column> custom, List<JsonNode> objects, String resourceVersion, String includeObject) {
        List<Column> columns = custom != null ? custom : type == ResourceType.PODS ? POD : DEFAULT;
        return table(columns, objects, resourceVersion, includeObject, object -> custom != null
                ? customCells(custom, object) : type == ResourceType.PODS ? podCells(object) : defaultCells(object));
    }

    /** The table of Events. */
    ObjectNode eventTable(List<JsonNode> events, String includeObject) {
        return table(EVENT, events, null, includeObject, this::eventCells);
    }

    private ObjectNode table(List<Column> columns, List<JsonNode> objects, String resourceVersion, String includeObject,
                             java.util.function.Function<JsonNode, List<Object>> cells) {
        ObjectNode table = mapper.createObjectNode().put("kind", "Table").put("apiVersion", "meta.k8s.io/v1");
        ObjectNode metadata = table.putObject("metadata");
        if (resourceVersion != null) {
            metadata.put("resourceVersion", resourceVersion);
        }
        ArrayNode definitions = table.putArray("columnDefinitions");
        for (Column c : columns) {
            definitions.addObject().put("name", c.name()).put("type", c.type()).put("format", c.format()).put("description", "")
                    .put("priority", c.priority());
        }
        ArrayNode rows = table.putArray("rows");
        for (JsonNode object : objects) {
            ObjectNode row = rows.addObject();
            ArrayNode out = row.putArray("cells");
            for (Object cell : cells.apply(object)) {
                out.addPOJO(cell);
            }
            if ("Object".equals(includeObject)) {
                row.set("object", object);
            } else if (!"None".equals(includeObject)) {
                row.putObject("object").put("kind", "PartialObjectMetadata").put("apiVersion", "meta.k8s.io/v1")
                        .set("metadata", object.path("metadata"));
            }
        }
        return table;
    }

    private List<Object> defaultCells(JsonNode object) {
        return List.of(text(object, "metadata", "name"), text(object, "metadata", "creationTimestamp"));
    }

    private List<Object> customCells(List<Column> columns, JsonNode object) {
        List<Object> cells = new ArrayList<>(columns.size());
        cells.add(text(object, "metadata", "name"));
        for (Column c : columns.subList(1, columns.size())) {
            JsonNode value = object;
            for (String step : c.path()) {
                value = value.path(step);
            }
            cells.add(switch (c.type()) {
                case "date" -> value.isString() ? age(value.asString()) : null;
                case "boolean" -> value.isBoolean() ? value.asBoolean() : null;
                case "integer" -> value.isNumber() ? value.asLong() : null;
                case "number" -> value.isNumber() ? value.asDouble() : null;
                default -> value.isMissingNode() || value.isNull() ? null : value.isString() ? value.asString() : value.toString();
            });
        }
        return cells;
    }

    /** A pod's cells as the API server's {@code printPod} computes them (init containers included). */
    private List<Object> podCells(JsonNode pod) {
        JsonNode spec = pod.path("spec");
        JsonNode status = pod.path("status");
        String phase = status.path("phase").asString("");
        String reason = status.path("reason").asString("").isEmpty() ? phase : status.path("reason").asString();
        for (JsonNode condition : status.path("conditions")) {
            if ("PodScheduled".equals(condition.path("type").asString("")) && "SchedulingGated".equals(condition.path("reason").asString(""))) {
                reason = "SchedulingGated";
            }
        }
        int restarts = 0;
        int sidecarRestarts = 0;
        int total = spec.path("containers").size();
        int ready = 0;
        Instant lastRestart = null;
        Instant lastSidecarRestart = null;
        List<String> sidecars = new ArrayList<>();
        for (JsonNode init : spec.path("initContainers")) {
            if ("Always".equals(init.path("restartPolicy").asString(""))) {
                sidecars.add(init.path("name").asString(""));
                total++;
            }
        }
        boolean initializing = false;
        JsonNode initStatuses = status.path("initContainerStatuses");
        for (int i = 0; i < initStatuses.size(); i++) {
            JsonNode container = initStatuses.get(i);
            restarts += container.path("restartCount").asInt(0);
            Instant finished = instant(container.path("lastState").path("terminated").path("finishedAt"));
            lastRestart = later(lastRestart, finished);
            boolean sidecar = sidecars.contains(container.path("name").asString(""));
            if (sidecar) {
                sidecarRestarts += container.path("restartCount").asInt(0);
                lastSidecarRestart = later(lastSidecarRestart, finished);
            }
            JsonNode terminated = container.path("state").path("terminated");
            JsonNode waiting = container.path("state").path("waiting");
            if (terminated.isObject() && terminated.path("exitCode").asInt(0) == 0) {
                continue;
            }
            if (sidecar && container.path("started").asBoolean(false)) {
                if (container.path("ready").asBoolean(false)) {
                    ready++;
                }
                continue;
            }
            if (terminated.isObject()) {
                String why = terminated.path("reason").asString("");
                reason = !why.isEmpty() ? "Init:" + why : terminated.path("signal").asInt(0) != 0
                        ? "Init:Signal:" + terminated.path("signal").asInt() : "Init:ExitCode:" + terminated.path("exitCode").asInt();
            } else if (waiting.isObject() && !waiting.path("reason").asString("").isEmpty()
                    && !"PodInitializing".equals(waiting.path("reason").asString())) {
                reason = "Init:" + waiting.path("reason").asString();
            } else {
                reason = "Init:" + i + "/" + spec.path("initContainers").size();
            }
            initializing = true;
            break;
        }
        if (!initializing || conditionTrue(status, "Initialized")) {
            restarts = sidecarRestarts;
            lastRestart = lastSidecarRestart;
            boolean hasRunning = false;
            JsonNode statuses = status.path("containerStatuses");
            for (int i = statuses.size() - 1; i >= 0; i--) {
                JsonNode container = statuses.get(i);
                restarts += container.path("restartCount").asInt(0);
                lastRestart = later(lastRestart, instant(container.path("lastState").path("terminated").path("finishedAt")));
                JsonNode waiting = container.path("state").path("waiting");
                JsonNode terminated = container.path("state").path("terminated");
                if (waiting.isObject() && !waiting.path("reason").asString("").isEmpty()) {
                    reason = waiting.path("reason").asString();
                } else if (terminated.isObject() && !terminated.path("reason").asString("").isEmpty()) {
                    reason = terminated.path("reason").asString();
                } else if (terminated.isObject()) {
                    reason = terminated.path("signal").asInt(0) != 0 ? "Signal:" + terminated.path("signal").asInt()
                            : "ExitCode:" + terminated.path("exitCode").asInt();
                } else if (container.path("ready").asBoolean(false) && container.path("state").path("running").isObject()) {
                    hasRunning = true;
                    ready++;
                }
            }
            if ("Completed".equals(reason) && hasRunning) {
                reason = conditionTrue(status, "Ready") ? "Running" : "NotReady";
            }
        }
        boolean deleting = pod.path("metadata").has("deletionTimestamp");
        if (deleting && "NodeLost".equals(status.path("reason").asString(""))) {
            reason = "Unknown";
        } else if (deleting && !"Succeeded".equals(phase) && !"Failed".equals(phase)) {
            reason = "Terminating";
        }
        String restartCell = restarts != 0 && lastRestart != null ? restarts + " (" + since(lastRestart) + " ago)" : String.valueOf(restarts);
        JsonNode podIps = status.path("podIPs");
        String ip = podIps.isEmpty() ? "" : podIps.get(0).path("ip").asString("");
        String node = spec.path("nodeName").asString("");
        String nominated = status.path("nominatedNodeName").asString("");
        String gates = "<none>";
        if (!spec.path("readinessGates").isEmpty()) {
            int met = 0;
            for (JsonNode gate : spec.path("readinessGates")) {
                met += conditionTrue(status, gate.path("conditionType").asString("")) ? 1 : 0;
            }
            gates = met + "/" + spec.path("readinessGates").size();
        }
        return List.of(text(pod, "metadata", "name"), ready + "/" + total, reason, restartCell,
                age(pod.path("metadata").path("creationTimestamp").asString("")),
                ip.isEmpty() ? "<none>" : ip, node.isEmpty() ? "<none>" : node, nominated.isEmpty() ? "<none>" : nominated, gates);
    }

    /** An Event's cells as the API server's {@code printEvent} computes them (wide). */
    private List<Object> eventCells(JsonNode event) {
        String first = event.path("firstTimestamp").isString() ? age(event.path("firstTimestamp").asString())
                : age(event.path("eventTime").asString(""));
        String last = event.path("lastTimestamp").isString() ? age(event.path("lastTimestamp").asString()) : first;
        long count = event.path("count").asLong(0);
        if (event.path("series").isObject()) {
            last = age(event.path("series").path("lastObservedTime").asString(""));
            count = event.path("series").path("count").asLong(0);
        } else if (count == 0) {
            count = 1;
        }
        JsonNode involved = event.path("involvedObject");
        String kind = involved.path("kind").asString("").toLowerCase(Locale.ROOT);
        String name = involved.path("name").asString("");
        String source = event.path("source").path("component").asString("");
        if (source.isEmpty()) {
            source = event.path("reportingComponent").asString("");
        }
        String host = event.path("source").path("host").asString("");
        if (host.isEmpty()) {
            host = event.path("reportingInstance").asString("");
        }
        return List.of(last, event.path("type").asString(""), event.path("reason").asString(""), name.isEmpty() ? kind : kind + "/" + name,
                involved.path("fieldPath").asString(""), host.isEmpty() ? source : source + ", " + host,
                event.path("message").asString("").strip(), first, count, text(event, "metadata", "name"));
    }

    private static boolean conditionTrue(JsonNode status, String type) {
        for (JsonNode condition : status.path("conditions")) {
            if (type.equals(condition.path("type").asString("")) && "True".equals(condition.path("status").asString(""))) {
                return true;
            }
        }
        return false;
    }

    private static String text(JsonNode object, String... path) {
        JsonNode value = object;
        for (String step : path) {
            value = value.path(step);
        }
        return value.asString("");
    }

    private static Instant instant(JsonNode value) {
        if (!value.isString()) {
            return null;
        }
        try {
            return Instant.parse(value.asString());
        } catch (DateTimeParseException e) {
            return null;
        }
    }

    private static Instant later(Instant a, Instant b) {
        return a == null || (b != null && b.isAfter(a)) ? b : a;
    }

    /** {@code translateTimestampSince}: the age of an RFC 3339 time, {@code <unknown>} for none. */
    private String age(String timestamp) {
        if (timestamp == null || timestamp.isEmpty()) {
            return "<unknown>";
        }
        try {
            return since(Instant.parse(timestamp));
        } catch (DateTimeParseException e) {
            return "<invalid>";
        }
    }

    private String since(Instant time) {
        return humanDuration(Duration.between(time, clock.instant()));
    }

    /** apimachinery's {@code duration.HumanDuration}: two significant units while they matter, one after. */
    static String humanDuration(Duration d) {
        long seconds = d.toSeconds();
        if (seconds < -1) {
            return "<invalid>";
        } else if (seconds < 0) {
            return "0s";
        } else if (seconds < 60 * 2) {
            return seconds + "s";
        }
        long minutes = d.toMinutes();
        if (minutes < 10) {
            long s = seconds % 60;
            return s == 0 ? minutes + "m" : minutes + "m" + s + "s";
        } else if (minutes < 60 * 3) {
            return minutes + "m";
        }
        long hours = d.toHours();
        if (hours < 8) {
            long m = minutes % 60;
            return m == 0 ? hours + "h" : hours + "h" + m + "m";
        } else if (hours < 48) {
            return hours + "h";
        } else if (hours < 24 * 8) {
            long h = hours % 24;
            return h == 0 ? hours / 24 + "d" : hours / 24 + "d" + h + "h";
        } else if (hours < 24 * 365 * 2) {
            return hours / 24 + "d";
        } else if (hours < 24 * 365 * 8) {
            long days = (hours / 24) % 365;
            return days == 0 ? hours / 24 / 365 + "y" : hours / 24 / 365 + "y" + days + "d";
        }
        return hours / 24 / 365 + "y";
    }
}
