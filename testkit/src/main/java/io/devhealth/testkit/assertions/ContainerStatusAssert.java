package io.devhealth.testkit.assertions;

import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.ResourceHealth;
import io.fabric8.kubernetes.api.model.ResourceStatus;
import java.util.List;
import java.util.Objects;
import java.util.stream.Collectors;
import org.assertj.core.api.AbstractAssert;

/**
 * AssertJ assertions on one {@link ContainerStatus}, in particular its
 * {@code allocatedResourcesStatus} (KEP-4680): entries named {@code claim:<podClaimRef>/<request>} (DRA) or
 * after a device-plugin resource, each with {@code resources[{resourceID, health, message}]}.
 * Obtained from {@link PodStatusAssert#container(String)}.
 */
public final class ContainerStatusAssert extends AbstractAssert<ContainerStatusAssert, ContainerStatus> {

    private final PodStatusAssert pod;
    private final String podName;

    ContainerStatusAssert(ContainerStatus actual, PodStatusAssert pod, String podName) {
        super(actual, ContainerStatusAssert.class);
        this.pod = pod;
        this.podName = podName;
    }

    /**
     * Checks that entry {@code entryName} has a resource {@code resourceId} with the given health.
     *
     * @param entryName the {@code allocatedResourcesStatus[].name}, e.g. {@code claim:gpu/gpu}
     * @param resourceId the {@code resourceID}, e.g. {@code gpu.example.com/node-a/gpu-0}
     * @param health {@code Healthy}, {@code Unhealthy} or {@code Unknown}
     * @return this assertion
     */
    public ContainerStatusAssert hasResourceHealth(String entryName, String resourceId, String health) {
        ResourceHealth resource = resource(entryName, resourceId);
        if (!Objects.equals(health, resource.getHealth())) {
            failWithMessage("Expected %s resource <%s> in <%s> to have health <%s> but was <%s>; "
                    + "allocatedResourcesStatus=%s", where(), resourceId, entryName, health, resource.getHealth(),
                    summary());
        }
        return this;
    }

    /**
     * Like {@link #hasResourceHealth(String, String, String)}, and also checks the message.
     *
     * @param entryName the entry name
     * @param resourceId the resource id
     * @param health the expected health
     * @param message the expected message; {@code null} for no message
     * @return this assertion
     */
    public ContainerStatusAssert hasResourceHealth(String entryName, String resourceId, String health,
            String message) {
        hasResourceHealth(entryName, resourceId, health);
        ResourceHealth resource = resource(entryName, resourceId);
        if (!Objects.equals(message, resource.getMessage())) {
            failWithMessage("Expected %s resource <%s> in <%s> to have message <%s> but was <%s>", where(),
                    resourceId, entryName, message, resource.getMessage());
        }
        return this;
    }

    /**
     * @param entryName an {@code allocatedResourcesStatus} entry name
     * @return this assertion, if there is no entry of that name
     */
    public ContainerStatusAssert hasNoResourceHealth(String entryName) {
        isNotNull();
        if (entry(entryName) != null) {
            failWithMessage("Expected %s to have no allocatedResourcesStatus entry <%s> but has %s", where(), entryName,
                    summary());
        }
        return this;
    }

    /**
     * @param entryName an entry name
     * @param count how many resources that entry must list
     * @return this assertion
     */
    public ContainerStatusAssert hasResourceCount(String entryName, int count) {
        ResourceStatus entry = requireEntry(entryName);
        if (entry.getResources().size() != count) {
            failWithMessage("Expected %s entry <%s> to list %s resources but lists %s: %s", where(), entryName, count,
                    entry.getResources().size(), summary());
        }
        return this;
    }

    /** @return this assertion, if the container is ready */
    public ContainerStatusAssert isReady() {
        isNotNull();
        if (!Boolean.TRUE.equals(actual.getReady())) {
            failWithMessage("Expected %s to be ready but ready=%s", where(), actual.getReady());
        }
        return this;
    }

    /** @return this assertion, if the container state is {@code running} */
    public ContainerStatusAssert isRunning() {
        isNotNull();
        if (actual.getState() == null || actual.getState().getRunning() == null) {
            failWithMessage("Expected %s to be running but state was %s", where(), actual.getState());
        }
        return this;
    }

    /**
     * @param exitCode the expected exit code
     * @return this assertion, if the container state is {@code terminated} with that exit code
     */
    public ContainerStatusAssert isTerminatedWithExitCode(int exitCode) {
        isNotNull();
        if (actual.getState() == null || actual.getState().getTerminated() == null) {
            failWithMessage("Expected %s to be terminated but state was %s", where(), actual.getState());
        } else if (!Objects.equals(exitCode, actual.getState().getTerminated().getExitCode())) {
            failWithMessage("Expected %s to have exit code %s but was %s", where(), exitCode,
                    actual.getState().getTerminated().getExitCode());
        }
        return this;
    }

    /**
     * @param restartCount the expected restart count
     * @return this assertion
     */
    public ContainerStatusAssert hasRestartCount(int restartCount) {
        isNotNull();
        if (!Objects.equals(restartCount, actual.getRestartCount())) {
            failWithMessage("Expected %s to have restartCount %s but was %s", where(), restartCount,
                    actual.getRestartCount());
        }
        return this;
    }

    /** @return the pod assertion this container came from, to continue with another container */
    public PodStatusAssert and() {
        return pod;
    }

    private ResourceHealth resource(String entryName, String resourceId) {
        ResourceStatus entry = requireEntry(entryName);
        for (ResourceHealth resource : entry.getResources()) {
            if (Objects.equals(resourceId, resource.getResourceID())) {
                return resource;
            }
        }
        failWithMessage("Expected %s entry <%s> to list resource <%s>; allocatedResourcesStatus=%s", where(),
                entryName, resourceId, summary());
        throw new IllegalStateException("unreachable");
    }

    private ResourceStatus requireEntry(String entryName) {
        isNotNull();
        ResourceStatus entry = entry(entryName);
        if (entry == null) {
            failWithMessage("Expected %s to have allocatedResourcesStatus entry <%s>; allocatedResourcesStatus=%s",
                    where(), entryName, summary());
        }
        return entry;
    }

    private ResourceStatus entry(String entryName) {
        return entries().stream().filter(e -> entryName.equals(e.getName())).findFirst().orElse(null);
    }

    private List<ResourceStatus> entries() {
        List<ResourceStatus> entries = actual.getAllocatedResourcesStatus();
        return entries == null ? List.of() : entries;
    }

    private String summary() {
        return entries().stream()
                .map(e -> e.getName() + e.getResources().stream()
                        .map(r -> r.getResourceID() + "=" + r.getHealth()
                                + (r.getMessage() == null ? "" : "(" + r.getMessage() + ")"))
                        .collect(Collectors.joining(", ", "[", "]")))
                .collect(Collectors.joining(", ", "[", "]"));
    }

    private String where() {
        return "container " + podName + "/" + actual.getName();
    }
}
