package io.devhealth.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * The {@code devhealth} command of the production jar: the services, {@code query} and {@code node-key}.
 * The demo artifact's {@code DevhealthDemo} adds {@code demo} and {@code simulate-node} to
 * {@link #commandLine()}; this class knows nothing of them.
 */
@Command(name = "devhealth",
        mixinStandardHelpOptions = true,
        versionProvider = VersionProvider.class,
        description = "Accelerator health for Kubernetes, fleet-wide and after the fact.",
        subcommands = {
                ServiceCommands.Collector.class,
                ServiceCommands.Processor.class,
                ServiceCommands.Sink.class,
                QueryCommand.class,
                NodeKeyCommand.class,
                SchemasCommand.class,
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
