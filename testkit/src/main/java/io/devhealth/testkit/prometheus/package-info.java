/**
 * Prometheus for tests: {@link io.devhealth.testkit.prometheus.PrometheusServer} (a real server a test
 * starts, scraping the services it runs and evaluating the alert rules), {@link io.devhealth.testkit.prometheus.Promtool}
 * (the rules' own checks and unit tests) and {@link io.devhealth.testkit.prometheus.PrometheusBinaries}
 * (where both come from, and whether a machine without them skips or fails).
 */
package io.devhealth.testkit.prometheus;
