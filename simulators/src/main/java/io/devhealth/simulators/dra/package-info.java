/** A fake DRA kubelet plugin: {@code DRAResourceHealth} (v1alpha1, v1) and plugin registration over unix sockets. */
package io.devhealth.simulators.dra;
