/**
 * TLS material for tests of HTTPS servers and their clients: self-signed certificates, the PKCS12 stores
 * that hold them, and the {@code SSLContext}s and HTTP clients made from those stores
 * ({@link io.devhealth.testkit.tls.TestCertificates}).
 */
package io.devhealth.testkit.tls;
