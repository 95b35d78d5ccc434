package io.devhealth.collector.spool;

/**
 * The keep-alives that may still be evicted, oldest first: a growable ring of (sequence, size)
 * in primitive arrays, because a full spool can hold hundreds of thousands of them and boxed
 * collections would cost more heap than the collector's whole budget. Not thread-safe.
 */
final class EvictionQueue {

    private long[] sequences = new long[256];
    private int[] sizes = new int[256];
    private int head;
    private int size;

    void add(long sequence, int bytes) {
        if (size == sequences.length) {
            grow();
        }
        int tail = (head + size) % sequences.length;
        sequences[tail] = sequence;
        sizes[tail] = bytes;
        size++;
    }

    boolean isEmpty() {
        return size == 0;
    }

    long peekSequence() {
        return sequences[head];
    }

    int peekSize() {
        return sizes[head];
    }

    long sequenceAt(int index) {
        return sequences[(head + index) % sequences.length];
    }

    int sizeAt(int index) {
        return sizes[(head + index) % sizes.length];
    }

    void poll() {
        head = (head + 1) % sequences.length;
        size--;
        if (size == 0) {
            head = 0;
        }
    }

    int size() {
        return size;
    }

    void clear() {
        head = 0;
        size = 0;
    }

    private void grow() {
        long[] newSequences = new long[sequences.length * 2];
        int[] newSizes = new int[sizes.length * 2];
        for (int i = 0; i < size; i++) {
            newSequences[i] = sequences[(head + i) % sequences.length];
            newSizes[i] = sizes[(head + i) % sizes.length];
        }
        sequences = newSequences;
        sizes = newSizes;
        head = 0;
    }
}
