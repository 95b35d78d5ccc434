package io.devhealth.collector.dra;

import static org.assertj.core.api.Assertions.assertThat;

import io.devhealth.collector.dra.RegistrationCheck.Refusal;
import io.devhealth.collector.dra.RegistrationCheck.Verdict;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RegistrationCheckTest {

    private static final String DRIVER = "gpu.example.com";

    @TempDir
    Path tmp;

    private Path plugins;
    private RegistrationCheck check;

    @BeforeEach
    void layout() throws IOException {
        plugins = Files.createDirectories(tmp.resolve("plugins")).toRealPath();
        Files.createDirectories(plugins.resolve(DRIVER));
        Files.createDirectories(plugins.resolve("other.example.com"));
        check = new RegistrationCheck(plugins);
    }

    private String endpoint(String relative) {
        return plugins.resolve(relative).toString();
    }

    @Test
    void shouldAcceptTheKubeletPluginLayout() throws IOException {
        Path socket = Files.createFile(plugins.resolve(DRIVER).resolve("dra.sock"));
        assertThat(check.check(DRIVER, socket.toString())).isEqualTo(new Verdict(socket, null, null));
        // With rolling updates the socket carries the pod's UID; it need not exist yet (the stream reconnects until it does).
        assertThat(check.check(DRIVER, endpoint(DRIVER + "/dra-6f1c.sock")).accepted()).isTrue();
    }

    @Test
    void shouldRefuseAnEndpointInAnotherDriversOrACsiPluginsDirectory() throws IOException {
        Files.createDirectories(plugins.resolve("csi.example.com"));
        assertThat(check.check(DRIVER, endpoint("other.example.com/dra.sock")).refusal()).isEqualTo(Refusal.ENDPOINT_OUTSIDE_DRIVER_DIRECTORY);
        assertThat(check.check(DRIVER, endpoint("csi.example.com/csi.sock")).refusal()).isEqualTo(Refusal.ENDPOINT_OUTSIDE_DRIVER_DIRECTORY);
        assertThat(check.check(DRIVER, "/var/lib/kubelet/pod-resources/kubelet.sock").refusal())
                .isEqualTo(Refusal.ENDPOINT_OUTSIDE_DRIVER_DIRECTORY);
        // A sibling whose name starts with the driver's is another directory.
        Files.createDirectories(plugins.resolve(DRIVER + "-evil"));
        assertThat(check.check(DRIVER, endpoint(DRIVER + "-evil/dra.sock")).refusal()).isEqualTo(Refusal.ENDPOINT_OUTSIDE_DRIVER_DIRECTORY);
        assertThat(check.check(DRIVER, endpoint(DRIVER)).refusal()).as("the directory itself").isEqualTo(Refusal.ENDPOINT_OUTSIDE_DRIVER_DIRECTORY);
    }

    @Test
    void shouldRefuseDotDotAndRelativeEndpointsThatStartInTheDriversDirectory() {
        Verdict dotDot = check.check(DRIVER, endpoint(DRIVER) + "/../other.example.com/dra.sock");
        assertThat(dotDot.refusal()).isEqualTo(Refusal.ENDPOINT_OUTSIDE_DRIVER_DIRECTORY);
        assertThat(dotDot.detail()).contains("'..'");
        assertThat(check.check(DRIVER, endpoint(DRIVER) + "/./dra.sock").refusal()).isEqualTo(Refusal.ENDPOINT_OUTSIDE_DRIVER_DIRECTORY);
        assertThat(check.check(DRIVER, "plugins/" + DRIVER + "/dra.sock").refusal()).isEqualTo(Refusal.ENDPOINT_OUTSIDE_DRIVER_DIRECTORY);
        assertThat(check.check(DRIVER, endpoint(DRIVER) + "/dra\u0000.sock").refusal()).isEqualTo(Refusal.ENDPOINT_OUTSIDE_DRIVER_DIRECTORY);
    }

    @Test
    void shouldRefuseAnEmptyEndpointBecauseTheRegistrationSocketLiesInTheSharedRegistry() {
        Verdict verdict = check.check(DRIVER, "");
        assertThat(verdict.refusal()).isEqualTo(Refusal.ENDPOINT_OUTSIDE_DRIVER_DIRECTORY);
        assertThat(verdict.detail()).contains("registration socket itself");
    }

    @Test
    void shouldRefuseASymlinkThatLeadsOutOfTheDriversDirectory() throws IOException {
        Path victim = Files.createFile(plugins.resolve("other.example.com").resolve("dra.sock"));
        Files.createSymbolicLink(plugins.resolve(DRIVER).resolve("dra.sock"), victim);
        Verdict socketLink = check.check(DRIVER, endpoint(DRIVER + "/dra.sock"));
        assertThat(socketLink.refusal()).isEqualTo(Refusal.ENDPOINT_ESCAPES_BY_SYMLINK);
        assertThat(socketLink.detail()).contains(victim.toString());

        Files.createSymbolicLink(plugins.resolve(DRIVER).resolve("sub"), plugins.resolve("other.example.com"));
        assertThat(check.check(DRIVER, endpoint(DRIVER + "/sub/dra.sock")).refusal()).isEqualTo(Refusal.ENDPOINT_ESCAPES_BY_SYMLINK);
    }

    @Test
    void shouldAcceptASymlinkThatStaysInTheDriversDirectory() throws IOException {
        Path real = Files.createFile(plugins.resolve(DRIVER).resolve("dra-1.sock"));
        Files.createSymbolicLink(plugins.resolve(DRIVER).resolve("dra.sock"), real);
        assertThat(check.check(DRIVER, endpoint(DRIVER + "/dra.sock")).accepted()).isTrue();
    }

    @Test
    void shouldJudgeTheResolvedDirectoryWhenThePluginsDirectoryIsALink() throws IOException {
        Path link = Files.createSymbolicLink(tmp.resolve("kubelet-plugins"), plugins);
        RegistrationCheck viaLink = new RegistrationCheck(link);
        assertThat(viaLink.check(DRIVER, link.resolve(DRIVER).resolve("dra.sock").toString()).accepted()).isTrue();
        assertThat(viaLink.check(DRIVER, plugins.resolve(DRIVER).resolve("dra.sock").toString()).refusal())
                .as("lexically outside the configured directory").isEqualTo(Refusal.ENDPOINT_OUTSIDE_DRIVER_DIRECTORY);
    }

    @Test
    void shouldSayWhenTheDriversDirectoryIsNotMounted() {
        Verdict verdict = check.check("nic.example.com", endpoint("nic.example.com/dra.sock"));
        assertThat(verdict.refusal()).isEqualTo(Refusal.DRIVER_DIRECTORY_NOT_MOUNTED);
        assertThat(verdict.detail()).contains("mount");
        assertThat(check.check(DRIVER, endpoint(DRIVER + "/missing/dra.sock")).refusal()).isEqualTo(Refusal.ENDPOINT_UNRESOLVABLE);
    }

    @Test
    void shouldRefuseDriverNamesThatAreNoDnsSubdomain() {
        for (String name : new String[] {"", "..", "GPU.example.com", "gpu/example", "a".repeat(64)}) {
            assertThat(check.check(name, endpoint(DRIVER + "/dra.sock")).refusal()).as(name).isEqualTo(Refusal.INVALID_DRIVER_NAME);
        }
    }

    @Test
    void shouldLogWhatAPluginSaysOnlyAsOnePrintableLine() {
        assertThat(PluginRegistryWatcher.printable("gpu\nlevel=ERROR forged \"x\"")).isEqualTo("gpu?level=ERROR forged ?x?");
        assertThat(PluginRegistryWatcher.printable("a".repeat(1000))).hasSize(259);
    }
}
