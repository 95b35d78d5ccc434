package io.devhealth.collector.nvml;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;

class XidCatalogTest {

    @Test
    void shouldListEveryXidOfTheShippedCatalogueOnce() {
        XidCatalog catalog = XidCatalog.shipped();
        assertThat(catalog.entries().keySet()).containsExactlyElementsOf(LongStream.rangeClosed(1, 172).boxed().toList());
        assertThat(catalog.highest()).isEqualTo(172);
        // A few rows read off NVIDIA's workbook, so a shifted or truncated extract is caught.
        assertThat(catalog.get(13)).isEqualTo(new XidCatalog.Entry(13, "ROBUST_CHANNEL_GR_EXCEPTION / ROBUST_CHANNEL_GR_ERROR_SW_NOTIFY",
                "Graphics Engine Exception", "RESTART_APP"));
        assertThat(catalog.get(79).action()).isEqualTo("RESTART_BM");
        assertThat(catalog.get(94).action()).isEqualTo("RESTART_APP");
        assertThat(catalog.get(95).action()).isEqualTo("RESET_GPU");
        assertThat(catalog.get(151).action()).isEqualTo("RESTART_VM");
        assertThat(catalog.get(154).action()).isEqualTo("XID_154");
        assertThat(catalog.get(145).action()).isEqualTo("WORKFLOW_NVLINK5_ERR");
        assertThat(catalog.get(162).action()).isNull();
        assertThat(catalog.get(173)).isNull();
        assertThat(catalog.actions()).contains("CONTACT_SUPPORT", "IGNORE", "CHECK_UVM", "UPDATE_SWFW").doesNotContain("-");
    }

    @Test
    void shouldNameCodesTheCatalogueMarksUnusedByTheirMnemonic() {
        assertThat(XidCatalog.shipped().get(1).name()).isEqualTo("ROBUST_CHANNEL_FIFO_ERROR_FIFO_METHOD (listed as unused on current GPUs)");
        assertThat(XidCatalog.shipped().get(79).name()).isEqualTo("GPU has fallen off the bus");
    }

    @Test
    void shouldRejectADamagedCatalogueNamingTheLine() {
        assertThatThrownBy(() -> XidCatalog.parse(List.of("# header", "13\tMNEMONIC\tdescription")))
                .hasMessageContaining("line 2").hasMessageContaining("4 tab-separated columns");
        assertThatThrownBy(() -> XidCatalog.parse(List.of("x13\tM\td\tIGNORE"))).hasMessageContaining("\"x13\" is not an XID number");
        assertThatThrownBy(() -> XidCatalog.parse(List.of("13\tM\td\tIGNORE", "13\tM\td\tRESET_GPU")))
                .hasMessageContaining("line 2").hasMessageContaining("XID 13 listed twice");
        assertThatThrownBy(() -> XidCatalog.parse(List.of("# only comments"))).hasMessageContaining("no XID");
        assertThat(XidCatalog.parse(List.of("7\tM\td\t-")).get(7).action()).isNull();
    }
}
