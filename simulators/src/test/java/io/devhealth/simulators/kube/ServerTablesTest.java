package io.devhealth.simulators.kube;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Clock;
import java.util.List;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.ObjectMapper;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

class ServerTablesTest {

    private final ObjectMapper mapper = JsonMapper.builder().build();
    private final ServerTables tables = new ServerTables(mapper, Clock.systemUTC());

    /** A CRD serving {@code v1alpha1} with one printer column per path given, at {@code resourceVersion}. */
    private StoredObject crd(long resourceVersion, String... jsonPaths) {
        ObjectNode crd = mapper.createObjectNode();
        crd.putObject("metadata").put("name", "devicepostmortems.devhealth.io").put("resourceVersion", Long.toString(resourceVersion));
        ObjectNode version = crd.putObject("spec").putArray("versions").addObject().put("name", "v1alpha1");
        for (String path : jsonPaths) {
            version.withArray("additionalPrinterColumns").addObject().put("name", path.substring(path.lastIndexOf('.') + 1))
                    .put("type", "string").put("jsonPath", path);
        }
        return StoredObject.of(ResourceType.CRDS, crd, mapper);
    }

    private static List<String> names(List<ServerTables.Column> columns) {
        return columns.stream().map(ServerTables.Column::name).toList();
    }

    @Test
    void shouldReadACrdsPrinterColumns() {
        assertThat(names(tables.customColumns(crd(7, ".spec.node", ".spec.health"), "v1alpha1"))).containsExactly("Name", "node", "health");
        assertThat(names(tables.customColumns(crd(8), "v1alpha1"))).as("no columns: the API server's Age").containsExactly("Name", "Age");
    }

    @Test
    void shouldParseAnUnchangedCrdOnce() {
        List<ServerTables.Column> first = tables.customColumns(crd(7, ".spec.node"), "v1alpha1");

        assertThat(tables.customColumns(crd(7, ".spec.node"), "v1alpha1")).isSameAs(first);
    }

    @Test
    void shouldReadAnUpdatedCrdAgain() {
        tables.customColumns(crd(7, ".spec.node"), "v1alpha1");

        assertThat(names(tables.customColumns(crd(9, ".spec.node", ".spec.health"), "v1alpha1")))
                .as("the CRD's new resourceVersion brings its new columns").containsExactly("Name", "node", "health");
    }
}
