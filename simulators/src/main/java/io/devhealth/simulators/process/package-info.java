/**
 * Processes started and stopped from Java (the real Kubernetes components, a Prometheus server):
 * {@link io.devhealth.simulators.process.ManagedProcess} (a command with its log kept in a file) and
 * free loopback ports for their command lines ({@link io.devhealth.simulators.process.Ports}).
 */
package io.devhealth.simulators.process;
