/** AssertJ-style domain assertions: pod status, container {@code allocatedResourcesStatus}. */
package io.devhealth.testkit.assertions;
