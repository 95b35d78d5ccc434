/** An in-memory Kubernetes API (fabric8 mock, CRUD mode) and pod fixtures using DRA claims. */
package io.devhealth.simulators.kube;
