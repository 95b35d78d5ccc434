package io.devhealth.processor.query;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import org.apache.kafka.streams.state.HostInfo;

/**
 * Asks the instance that owns a key. The owner authenticates the forwarded request like any other:
 * the caller's {@code Authorization} header goes along, and over mTLS this instance presents its own
 * certificate (from the shared {@link SSLContext}).
 */
final class Forwarder {

    static final String FORWARDED_HEADER = "X-Devhealth-Forwarded";

    private final HttpClient client;
    private final String scheme;

    Forwarder(SSLContext tls) {
        HttpClient.Builder builder = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2));
        if (tls != null) {
            SSLParameters parameters = tls.getDefaultSSLParameters();
            parameters.setProtocols(TlsContexts.PROTOCOLS);
            builder.sslContext(tls).sslParameters(parameters);
        }
        this.client = builder.build();
        this.scheme = tls == null ? "http" : "https";
    }

    HttpResponse<String> forward(HostInfo host, URI uri, String authorization) {
        URI target = URI.create(scheme + "://" + host.host() + ":" + host.port() + uri.getRawPath()
                + (uri.getRawQuery() == null ? "" : "?" + uri.getRawQuery()));
        HttpRequest.Builder request = HttpRequest.newBuilder(target).timeout(Duration.ofSeconds(10)).header(FORWARDED_HEADER, "1").GET();
        if (authorization != null) {
            request.header("Authorization", authorization);
        }
        try {
            return client.send(request.build(), HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw QueryException.unavailable("instance " + host.host() + ":" + host.port() + " did not answer (" + e.getClass().getSimpleName()
                    + "), retry shortly");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw QueryException.unavailable("interrupted while asking " + host.host() + ":" + host.port());
        }
    }
}
