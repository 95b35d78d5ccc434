/** Implementation details of the simulators; not API, may change without notice. */
package io.devhealth.simulators.internal;
