package io.devhealth.simulators.grpc;

import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Collects the messages of a server stream and how it ended.
 *
 * @param <T> the message type
 */
public final class RecordingObserver<T> implements StreamObserver<T> {

    private final BlockingQueue<T> messages = new LinkedBlockingQueue<>();
    private final CompletableFuture<Status> end = new CompletableFuture<>();

    @Override
    public void onNext(T value) {
        messages.add(value);
    }

    @Override
    public void onError(Throwable t) {
        end.complete(Status.fromThrowable(t));
    }

    @Override
    public void onCompleted() {
        end.complete(Status.OK);
    }

    /**
     * @param timeout how long to wait
     * @return the next message
     * @throws AssertionError if none arrives in time
     */
    public T next(Duration timeout) throws InterruptedException {
        T message = messages.poll(timeout.toMillis(), TimeUnit.MILLISECONDS);
        if (message == null) {
            throw new AssertionError("no message within " + timeout + "; stream end: " + end.getNow(null));
        }
        return message;
    }

    /** @return the messages received and not yet taken */
    public int pending() {
        return messages.size();
    }

    /**
     * @param timeout how long to wait
     * @return the status the stream ended with (OK for a normal end)
     */
    public Status awaitEnd(Duration timeout) throws InterruptedException, ExecutionException, TimeoutException {
        return end.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    }
}
