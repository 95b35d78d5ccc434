package io.devhealth.faults;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The command line that runs a service's {@code main} in a JVM of its own, on this test JVM's classpath:
 * what the fault tests start, kill and restart as a separate process ({@link ProcessorProcessMain},
 * {@link SinkProcessMain}). A small heap and the C1 compiler only, so that several such JVMs start
 * quickly side by side on a small machine; the Avro trusted packages of this JVM are passed on.
 */
final class ChildJvm {

    private ChildJvm() {}

    /**
     * @param main the class whose {@code main} runs
     * @param options JVM options before the class (e.g. {@code -Dname=value})
     * @param arguments the arguments of {@code main}
     */
    static List<String> command(Class<?> main, List<String> options, List<String> arguments) {
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx256m", "-XX:TieredStopAtLevel=1"));
        String trusted = System.getProperty("org.apache.avro.SERIALIZABLE_PACKAGES");
        if (trusted != null) {
            command.add("-Dorg.apache.avro.SERIALIZABLE_PACKAGES=" + trusted);
        }
        command.addAll(options);
        String classpath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        command.addAll(List.of("-cp", classpath, main.getName()));
        command.addAll(arguments);
        return command;
    }
}
