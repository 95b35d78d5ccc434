/**
 * In-memory Kubernetes APIs and pod fixtures using DRA claims: {@link io.devhealth.simulators.kube.FleetKubernetesApi},
 * the one in-memory API server (pods, Events, DRA kinds, devhealth's DevicePostMortems), and
 * {@link io.devhealth.simulators.kube.FaultInjectingKubernetesApi} for scripted failures.
 */
package io.devhealth.simulators.kube;
