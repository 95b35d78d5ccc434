package io.devhealth.collector.dra;

import io.devhealth.schema.DriverNames;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Optional;

/**
 * Whether a plugin registration may speak for the driver it names: a valid driver name, and a service
 * endpoint inside that driver's own plugin directory.
 *
 * <p>Every plugin that can write into the kubelet's plugin registry can put a {@code *-reg.sock}
 * there, and its {@code GetInfo} may claim any driver name and any endpoint. The kubelet checks
 * neither: its DRA handler validates only the advertised services and that one endpoint is not
 * registered twice for a driver ({@code DRAPluginManager.ValidatePlugin}, {@code RegisterPlugin} and
 * {@code add} in kubernetes/kubernetes pkg/kubelet/cm/dra/plugin/dra_plugin_manager.go), then dials
 * {@code "unix:" + endpoint}. Unchecked, a rogue registration could have the collector stream another
 * driver's health under its name, or call any socket the collector can reach (another driver's or a
 * CSI plugin's). The separation that exists on a node is the plugin directory: the kubeletplugin
 * library serves a driver's DRA socket at {@code <plugins dir>/<driver>/dra.sock} (or
 * {@code dra-<pod uid>.sock} with rolling updates) and says that directory "must not be shared with
 * other kubelet plugins" ({@code PluginDataDirectoryPath}, {@code KubeletPluginsDir} and the
 * {@code pluginSocket} default in {@code Start}, k8s.io/dynamic-resource-allocation
 * kubeletplugin/draplugin.go). So a registration of driver {@code d} is accepted only when its
 * endpoint lies below {@code <plugins dir>/d/}.
 *
 * <p>How the path is judged:
 * <ul>
 *   <li>It must be absolute and already normal: no {@code .} or {@code ..} segment, because
 *       {@code <plugins>/d/../other/dra.sock} names another driver's socket while starting with
 *       {@code d}'s directory. The kubeletplugin library joins its paths with Go's {@code path.Join},
 *       which cleans them, so a genuine driver never sends one.</li>
 *   <li>Symbolic links are resolved ({@code toRealPath}) for the directory and, when it exists, the
 *       socket, and the resolved endpoint must still lie below the resolved driver directory: a link
 *       in {@code d}'s directory to another driver's socket is refused. A link swapped in after this
 *       check (the stream reconnects to the same path later) can only lead to what the collector's
 *       container mounts, which is why the DaemonSet mounts only the watched drivers' directories.</li>
 *   <li>An empty endpoint means the registration socket itself (as the kubelet reads it), which lies
 *       in the shared registry, not in the driver's directory: refused.</li>
 * </ul>
 * A driver that keeps its socket elsewhere can still be watched, as a static driver
 * ({@code dra.drivers}), which the operator configures and this check does not judge.
 */
public final class RegistrationCheck {

    /** Why a registration was refused; the label of the refusal counter. */
    public enum Refusal {
        INVALID_DRIVER_NAME,
        ENDPOINT_OUTSIDE_DRIVER_DIRECTORY,
        ENDPOINT_ESCAPES_BY_SYMLINK,
        ENDPOINT_UNRESOLVABLE,
        DRIVER_DIRECTORY_NOT_MOUNTED;

        public String label() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /** The endpoint to dial, or why there is none. */
    public record Verdict(Path endpoint, Refusal refusal, String detail) {

        static Verdict accepted(Path endpoint) {
            return new Verdict(endpoint, null, null);
        }

        static Verdict refused(Refusal refusal, String detail) {
            return new Verdict(null, refusal, detail);
        }

        public boolean accepted() {
            return refusal == null;
        }
    }

    private final Path pluginsDirectory;

    /** @param pluginsDirectory the kubelet's plugins directory as the collector sees it, e.g. {@code /var/lib/kubelet/plugins} */
    public RegistrationCheck(Path pluginsDirectory) {
        this.pluginsDirectory = pluginsDirectory.toAbsolutePath().normalize();
    }

    public Path pluginsDirectory() {
        return pluginsDirectory;
    }

    /** The directory a driver's endpoint must lie in. Only for valid driver names. */
    public Path driverDirectory(String driver) {
        return pluginsDirectory.resolve(driver);
    }

    /** Judges what {@code GetInfo} said: the driver name and the endpoint (empty: the registration socket itself). */
    public Verdict check(String driver, String endpoint) {
        Optional<String> badName = DriverNames.violation(driver);
        if (badName.isPresent()) {
            return Verdict.refused(Refusal.INVALID_DRIVER_NAME, badName.get());
        }
        Path directory = driverDirectory(driver);
        if (endpoint.isEmpty()) {
            return Verdict.refused(Refusal.ENDPOINT_OUTSIDE_DRIVER_DIRECTORY,
                    "an empty endpoint means the registration socket itself, which lies outside " + directory);
        }
        Path path;
        try {
            path = Path.of(endpoint);
        } catch (InvalidPathException e) {
            return Verdict.refused(Refusal.ENDPOINT_OUTSIDE_DRIVER_DIRECTORY, "the endpoint is no path: " + e.getReason());
        }
        if (!path.isAbsolute() || !path.normalize().equals(path)) {
            return Verdict.refused(Refusal.ENDPOINT_OUTSIDE_DRIVER_DIRECTORY,
                    "the endpoint must be an absolute path without '.' or '..' segments");
        }
        if (!path.startsWith(directory) || path.equals(directory)) {
            return Verdict.refused(Refusal.ENDPOINT_OUTSIDE_DRIVER_DIRECTORY, "the endpoint must lie below " + directory);
        }
        Path realDirectory;
        try {
            realDirectory = directory.toRealPath();
        } catch (IOException e) {
            return Verdict.refused(Refusal.DRIVER_DIRECTORY_NOT_MOUNTED, directory
                    + " is not present in the collector's file system (mount the driver's plugin directory to watch it)");
        }
        Path realEndpoint;
        try {
            realEndpoint = Files.exists(path, LinkOption.NOFOLLOW_LINKS)
                    ? path.toRealPath()
                    : path.getParent().toRealPath().resolve(path.getFileName());
        } catch (NoSuchFileException e) {
            // A dangling link, or a directory below the driver's that is not there (yet): nothing to dial now.
            return Verdict.refused(Refusal.ENDPOINT_UNRESOLVABLE, "the endpoint does not resolve: " + e.getFile() + " is missing");
        } catch (IOException e) {
            return Verdict.refused(Refusal.ENDPOINT_UNRESOLVABLE, "the endpoint does not resolve: " + e);
        }
        if (!realEndpoint.startsWith(realDirectory) || realEndpoint.equals(realDirectory)) {
            return Verdict.refused(Refusal.ENDPOINT_ESCAPES_BY_SYMLINK,
                    "the endpoint resolves to " + realEndpoint + ", outside " + realDirectory);
        }
        return Verdict.accepted(path);
    }
}
