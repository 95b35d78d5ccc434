/** Implementation details of the testkit; not API, may change without notice. */
package io.devhealth.testkit.internal;
