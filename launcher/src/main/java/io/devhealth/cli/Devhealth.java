package io.devhealth.cli;

import io.devhealth.cli.demo.DemoCommand;
import io.devhealth.cli.demo.SimulateNodeCommand;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/** The {@code devhealth} command. */
@Command(name = "devhealth",
        mixinStandardHelpOptions = true,
        versionProvider = VersionProvider.class,
        description = "Accelerator health for Kubernetes, fleet-wide and after the fact.",
        subcommands = {
                ServiceCommands.Collector.class,
                ServiceCommands.Processor.class,
                ServiceCommands.Sink.class,
                DemoCommand.class,
                SimulateNodeCommand.class,
                QueryCommand.class,
                NodeKeyCommand.class,
                CommandLine.HelpCommand.class
        })
public final class Devhealth implements Runnable {

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    public static void main(String[] args) {
        System.exit(commandLine().execute(args));
    }

    public static CommandLine commandLine() {
        return new CommandLine(new Devhealth()).setCaseInsensitiveEnumValuesAllowed(true);
    }

    @Override
    public void run() {
        spec.commandLine().usage(System.out);
    }
}
