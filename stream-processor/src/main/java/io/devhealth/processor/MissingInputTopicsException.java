package io.devhealth.processor;

import java.util.List;

/**
 * The Kafka cluster lacks topics the processor's topology reads ({@link InputTopicsCheck}): it cannot
 * run there, and the launcher's {@code processor} command exits with its own code for it.
 */
public final class MissingInputTopicsException extends RuntimeException {

    private static final long serialVersionUID = 1L;
    /** Where the deployment declares every topic of the pipeline, for the operator who must create the missing ones. */
    public static final String TOPICS_FILE = "k8s/components/strimzi/topics.yaml";

    private final List<String> topics;

    public MissingInputTopicsException(List<String> topics) {
        super("input topics missing from the Kafka cluster: " + String.join(", ", topics)
                + "; the processor reads them and cannot run without them. Create them as " + TOPICS_FILE
                + " declares (a topic the processor's principal may not Describe is not listed either: see its ACLs)");
        this.topics = List.copyOf(topics);
    }

    /** The missing topics, in the order the topology's input topics are listed. */
    public List<String> topics() {
        return topics;
    }
}
