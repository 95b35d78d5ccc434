package io.devhealth.testkit.assertions;

import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.api.model.PodStatus;
import java.util.List;
import java.util.Objects;
import java.util.stream.Collectors;
import org.assertj.core.api.AbstractAssert;

/**
 * AssertJ assertions on a {@link Pod}'s status.
 *
 * <pre>{@code
 * assertThatPod(pod)
 *         .hasPhase("Running")
 *         .hasCondition("Ready", "True")
 *         .container("main")
 *             .hasResourceHealth("claim:gpu/gpu", "gpu.example.com/node-a/gpu-0", "Unhealthy");
 * }</pre>
 */
public final class PodStatusAssert extends AbstractAssert<PodStatusAssert, Pod> {

    private PodStatusAssert(Pod actual) {
        super(actual, PodStatusAssert.class);
    }

    /**
     * @param pod the pod to check
     * @return the assertion
     */
    public static PodStatusAssert assertThatPod(Pod pod) {
        return new PodStatusAssert(pod);
    }

    /**
     * @param phase the expected {@code status.phase}, e.g. {@code Running}
     * @return this assertion
     */
    public PodStatusAssert hasPhase(String phase) {
        isNotNull();
        String actualPhase = status().getPhase();
        if (!Objects.equals(phase, actualPhase)) {
            failWithMessage("Expected pod %s to have phase <%s> but was <%s>", podName(), phase, actualPhase);
        }
        return this;
    }

    /**
     * @param type the condition type, e.g. {@code Ready} or a devhealth condition
     * @param status the expected condition status: {@code True}, {@code False} or {@code Unknown}
     * @return this assertion
     */
    public PodStatusAssert hasCondition(String type, String status) {
        isNotNull();
        PodCondition condition = findCondition(type);
        if (condition == null) {
            failWithMessage("Expected pod %s to have condition <%s> but it has only %s", podName(), type,
                    conditionSummary());
        } else if (!Objects.equals(status, condition.getStatus())) {
            failWithMessage("Expected pod %s condition <%s> to have status <%s> but was <%s> (reason=%s, message=%s)",
                    podName(), type, status, condition.getStatus(), condition.getReason(), condition.getMessage());
        }
        return this;
    }

    /**
     * @param type the condition type
     * @param status the expected status
     * @param reason the expected reason
     * @return this assertion
     */
    public PodStatusAssert hasCondition(String type, String status, String reason) {
        hasCondition(type, status);
        PodCondition condition = findCondition(type);
        if (!Objects.equals(reason, condition.getReason())) {
            failWithMessage("Expected pod %s condition <%s> to have reason <%s> but was <%s>", podName(), type, reason,
                    condition.getReason());
        }
        return this;
    }

    /**
     * @param type a condition type
     * @return this assertion, if the pod has no such condition
     */
    public PodStatusAssert doesNotHaveCondition(String type) {
        isNotNull();
        if (findCondition(type) != null) {
            failWithMessage("Expected pod %s to have no condition <%s> but it has %s", podName(), type,
                    conditionSummary());
        }
        return this;
    }

    /**
     * Switches to one container's status ({@code status.containerStatuses[name]}).
     *
     * @param name the container name
     * @return assertions on that container status
     */
    public ContainerStatusAssert container(String name) {
        isNotNull();
        List<ContainerStatus> statuses = status().getContainerStatuses();
        for (ContainerStatus cs : statuses) {
            if (name.equals(cs.getName())) {
                return new ContainerStatusAssert(cs, this, podName());
            }
        }
        failWithMessage("Expected pod %s to have a status for container <%s> but it has statuses for %s", podName(),
                name, statuses.stream().map(ContainerStatus::getName).collect(Collectors.toList()));
        throw new IllegalStateException("unreachable");
    }

    private PodCondition findCondition(String type) {
        return status().getConditions().stream().filter(c -> type.equals(c.getType())).findFirst().orElse(null);
    }

    private String conditionSummary() {
        return status().getConditions().stream()
                .map(c -> c.getType() + "=" + c.getStatus())
                .collect(Collectors.joining(", ", "[", "]"));
    }

    private PodStatus status() {
        return actual.getStatus() == null ? new PodStatus() : actual.getStatus();
    }

    private String podName() {
        return actual.getMetadata() == null ? "<no metadata>"
                : actual.getMetadata().getNamespace() + "/" + actual.getMetadata().getName();
    }
}
