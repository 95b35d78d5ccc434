package io.devhealth.query.http;

import java.net.URI;
import java.security.cert.X509Certificate;
import javax.security.auth.x500.X500Principal;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/**
 * One query API request and its answer on Jetty's core API: what the guard, the access check and the
 * endpoints read of a request, and where {@link Responses} writes. The callback completes the exchange.
 */
public record Exchange(Request request, Response response, Callback callback) {

    String method() {
        return request.getMethod();
    }

    /** The path as sent, still percent-encoded. */
    public String rawPath() {
        return request.getHttpURI().getPath();
    }

    /** The request target (path and query, as sent) as a {@link URI}; 400 when it is not one. */
    public URI target() {
        String path = rawPath();
        String query = request.getHttpURI().getQuery();
        try {
            return new URI(path + (query == null ? "" : "?" + query));
        } catch (java.net.URISyntaxException e) {
            throw QueryException.badRequest("request target is not a URI: " + Excerpt.of(path));
        }
    }

    /** The whole request target as sent, for its length. */
    int targetLength() {
        String query = request.getHttpURI().getQuery();
        return rawPath().length() + (query == null ? 0 : query.length() + 1);
    }

    public String header(String name) {
        return request.getHeaders().get(name);
    }

    public void setHeader(String name, String value) {
        response.getHeaders().put(name, value);
    }

    public String remote() {
        return Request.getRemoteAddr(request) + ":" + Request.getRemotePort(request);
    }

    /** The client certificate's subject, if the TLS layer asked for one and verified it against the truststore. */
    public X500Principal verifiedClient() {
        if (!(request.getAttribute(EndPoint.SslSessionData.ATTRIBUTE) instanceof EndPoint.SslSessionData tls)) {
            return null;
        }
        X509Certificate[] chain = tls.peerCertificates();
        return chain != null && chain.length > 0 ? chain[0].getSubjectX500Principal() : null;
    }
}
