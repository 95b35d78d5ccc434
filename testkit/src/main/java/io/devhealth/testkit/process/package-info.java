/**
 * Processes tests start and stop: {@link io.devhealth.testkit.process.ManagedProcess} (a command with its
 * log kept under {@code target/}) and free loopback ports for their command lines
 * ({@link io.devhealth.testkit.process.Ports}).
 */
package io.devhealth.testkit.process;
