/** A fake kubelet PodResources v1 server and a builder for its messages. */
package io.devhealth.simulators.kubelet;
