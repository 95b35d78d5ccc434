package io.devhealth.cli;

import picocli.CommandLine;

/** The version from the jar manifest (Implementation-Version), "dev" when run from classes. */
final class VersionProvider implements CommandLine.IVersionProvider {
    @Override
    public String[] getVersion() {
        String version = Devhealth.class.getPackage().getImplementationVersion();
        return new String[] {"devhealth " + (version == null ? "dev" : version)};
    }
}
