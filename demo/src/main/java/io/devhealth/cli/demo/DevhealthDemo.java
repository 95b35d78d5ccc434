package io.devhealth.cli.demo;

import io.devhealth.cli.Devhealth;
import picocli.CommandLine;

/**
 * The {@code devhealth} command of the demo artifact ({@code demo/target/devhealth-demo.jar}, which
 * {@code ./devhealth} runs): every command of the production {@link Devhealth}, plus {@code demo} and
 * {@code simulate-node}, which run the simulators. The production jar does not know these two, so it
 * needs neither the simulators nor this class; the dependency points one way, demo → launcher.
 */
public final class DevhealthDemo {

    private DevhealthDemo() {
    }

    public static void main(String[] args) {
        System.exit(commandLine().execute(args));
    }

    public static CommandLine commandLine() {
        return Devhealth.commandLine()
                .addSubcommand(new DemoCommand())
                .addSubcommand(new SimulateNodeCommand());
    }
}
