/** What tests observe of Kubernetes objects over time, through the API server's watches. */
package io.devhealth.testkit.kube;
