package io.devhealth.simulators.kube;

import io.fabric8.mockwebserver.http.Response;
import io.fabric8.mockwebserver.http.WebSocket;
import io.fabric8.mockwebserver.http.WebSocketListener;

/**
 * One open watch, served over a WebSocket as fabric8's own mock does (the fabric8 client watches over
 * WebSockets). It registers with its {@link ObjectStore} once the socket is open; the store sends it the
 * initial or replayed events and then every matching change, in resourceVersion order.
 */
final class ObjectWatch extends WebSocketListener {

    private final ObjectStore store;
    private final Selector selector;
    /** null: start with the current objects as ADDED; else resume after this resourceVersion. */
    private final Long fromResourceVersion;
    private volatile WebSocket socket;

    ObjectWatch(ObjectStore store, Selector selector, Long fromResourceVersion) {
        this.store = store;
        this.selector = selector;
        this.fromResourceVersion = fromResourceVersion;
    }

    Selector selector() {
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
