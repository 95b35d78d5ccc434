package io.devhealth.simulators.kube;

import io.fabric8.mockwebserver.http.Response;
import io.fabric8.mockwebserver.http.WebSocket;
import io.fabric8.mockwebserver.http.WebSocketListener;

/**
 * One open pod watch, served over a WebSocket as fabric8's own mock does (the fabric8 client watches
 * over WebSockets). It registers with the {@link PodStore} once the socket is open; the store sends it
 * the initial or replayed events and then every matching change, in resourceVersion order.
 */
final class PodWatch extends WebSocketListener {

    private final PodStore store;
    private final PodSelector selector;
    /** null: start with the current pods as ADDED; else resume after this resourceVersion. */
    private final Long fromResourceVersion;
    private volatile WebSocket socket;

    PodWatch(PodStore store, PodSelector selector, Long fromResourceVersion) {
        this.store = store;
        this.selector = selector;
        this.fromResourceVersion = fromResourceVersion;
    }

    PodSelector selector() {
        return selector;
    }

    void send(String text) {
        socket.send(text);
    }

    void close(int code, String reason) {
        socket.close(code, reason);
    }

    @Override
    public void onOpen(WebSocket webSocket, Response response) {
        socket = webSocket;
        store.watch(this, fromResourceVersion);
    }

    @Override
    public void onClosing(WebSocket webSocket, int code, String reason) {
        webSocket.close(code, reason);
        store.unwatch(this);
    }

    @Override
    public void onClosed(WebSocket webSocket, int code, String reason) {
        store.unwatch(this);
    }

    @Override
    public void onFailure(WebSocket webSocket, Throwable failure, Response response) {
        store.unwatch(this);
        webSocket.close(1011, String.valueOf(failure.getMessage()));
    }
}
