package io.devhealth.simulators.realkube;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

class MountsTest {

    /** As a kubelet with one pod leaves /proc/self/mountinfo, plus a neighbour whose name extends the root's. */
    private static final List<String> MOUNTINFO = List.of(
            "27 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw",
            "45 27 254:0 /tmp/dh-kube-1/n1/kubelet /tmp/dh-kube-1/n1/kubelet rw,relatime shared:2 - ext4 /dev/vda rw",
            "49 45 0:40 / /tmp/dh-kube-1/n1/kubelet/pods/00fc/volumes/kubernetes.io~secret/kafka-ca rw,relatime shared:5 - tmpfs tmpfs rw",
            "53 45 0:44 / /tmp/dh-kube-1/n1/kubelet/pods/00fc/volumes/kubernetes.io~projected/kube-api-access-7wszb rw - tmpfs tmpfs rw",
            "58 27 254:0 /tmp/dh-kube-1/n1/kubelet2 /tmp/dh-kube-1/n1/kubelet2 rw,relatime shared:14 - ext4 /dev/vda rw",
            "60 45 0:46 / /tmp/dh-kube-1/n1/kubelet/pods/with\\040space rw - tmpfs tmpfs rw");

    @Test
    void shouldListTheMountsBelowTheDirectoryDeepestFirstAndNoNeighbours() {
        List<Path> found = Mounts.under(Path.of("/tmp/dh-kube-1/n1/kubelet"), MOUNTINFO);

        assertThat(found).containsExactlyInAnyOrder(
                Path.of("/tmp/dh-kube-1/n1/kubelet"),
                Path.of("/tmp/dh-kube-1/n1/kubelet/pods/00fc/volumes/kubernetes.io~secret/kafka-ca"),
                Path.of("/tmp/dh-kube-1/n1/kubelet/pods/00fc/volumes/kubernetes.io~projected/kube-api-access-7wszb"),
                Path.of("/tmp/dh-kube-1/n1/kubelet/pods/with space"));
        assertThat(found.get(found.size() - 1)).as("the root's own bind mount goes last, after what it holds")
                .isEqualTo(Path.of("/tmp/dh-kube-1/n1/kubelet"));
        assertThat(found.get(0).getNameCount()).isEqualTo(9);
    }

    @Test
    void shouldDecodeMountinfosOctalEscapes() {
        assertThat(Mounts.unescape("/a\\040b\\011c\\134d")).isEqualTo("/a b\tc\\d");
        assertThat(Mounts.unescape("/plain\\")).isEqualTo("/plain\\");
    }
}
