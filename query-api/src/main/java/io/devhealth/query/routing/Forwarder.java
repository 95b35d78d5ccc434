package io.devhealth.query.routing;

import io.devhealth.query.access.AccessPolicy;
import io.devhealth.query.access.TlsContexts;
import io.devhealth.query.http.QueryException;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import org.apache.kafka.streams.state.HostInfo;

/**
 * Asks the instance that owns a key, on behalf of the caller. The owner authenticates and authorizes
 * the forwarded request as the caller's: a token caller's {@code Authorization} header goes along; for
 * a caller its client certificate authenticated, which this instance cannot present, the certificate's
 * subject goes in {@value AccessPolicy#CALLER_SUBJECT_HEADER}. Over mTLS this instance presents its own
 * certificate (from the shared {@link SSLContext}), which is what lets the owner believe that header
 * ({@link AccessPolicy}).
 */
public final class Forwarder {

    public static final String FORWARDED_HEADER = "X-Devhealth-Forwarded";
    /**
     * With {@link #FORWARDED_HEADER}: the receiver may answer from its standby copy of the key's partition
     * ({@link StandbyReads}), as it does otherwise from its active copy only.
     */
    public static final String STANDBY_READ_HEADER = "X-Devhealth-Standby-Read";
    /** With {@link #FORWARDED_HEADER} on a fleet summary: the partitions to count ({@link FleetPartitions}). */
    public static final String FLEET_PARTITIONS_HEADER = "X-Devhealth-Fleet-Partitions";

    private final HttpClient client;
    private final String scheme;

    public Forwarder(SSLContext tls) {
        HttpClient.Builder builder = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2));
        if (tls != null) {
            SSLParameters parameters = tls.getDefaultSSLParameters();
            parameters.setProtocols(TlsContexts.PROTOCOLS);
            builder.sslContext(tls).sslParameters(parameters);
        }
        this.client = builder.build();
        this.scheme = tls == null ? "http" : "https";
    }

    /**
     * @param caller who asked: the subject of the certificate that authenticated it goes along, or, for anyone else,
     *        the {@code Authorization} header it sent (a token, or nothing)
     * @param authorization the caller's {@code Authorization} header; null when it sent none
     * @param headers more of this instance's own headers ({@link #STANDBY_READ_HEADER}, {@link #FLEET_PARTITIONS_HEADER})
     */
    public HttpResponse<String> forward(HostInfo host, URI uri, AccessPolicy.Allowed caller, String authorization, Map<String, String> headers) {
        URI target = URI.create(scheme + "://" + host.host() + ":" + host.port() + uri.getRawPath()
                + (uri.getRawQuery() == null ? "" : "?" + uri.getRawQuery()));
        HttpRequest.Builder request = HttpRequest.newBuilder(target).timeout(Duration.ofSeconds(10)).header(FORWARDED_HEADER, "1").GET();
        headers.forEach(request::header);
        if (caller.callerSubject() != null) {
            request.header(AccessPolicy.CALLER_SUBJECT_HEADER, caller.callerSubject());
        } else if (authorization != null) {
            request.header("Authorization", authorization);
        }
        try {
            return client.send(request.build(), HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw QueryException.unreachable("instance " + host.host() + ":" + host.port() + " did not answer (" + e.getClass().getSimpleName()
                    + "), retry shortly");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw QueryException.unavailable("interrupted while asking " + host.host() + ":" + host.port());
        }
    }
}
