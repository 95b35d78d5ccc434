package io.devhealth.cli.demo;

import io.devhealth.simulators.realkube.KubeBinaries;
import io.devhealth.simulators.realkube.Waits;
import io.devhealth.sink.condition.PodStatusWriter;
import io.fabric8.kubernetes.api.model.DeletionPropagation;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.batch.v1.JobBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.JobCondition;
import io.fabric8.kubernetes.api.model.batch.v1.UncountedTerminatedPods;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The Job that docs/JOBS.md tells users to copy (its first {@code yaml} block: a {@code podFailurePolicy}
 * that ignores a pod that died while devhealth's {@code devhealth.io/DevicesHealthy} condition was
 * {@code False}), run on a real control plane in one namespace, and what the real Job controller and
 * scheduler made of it. {@code devhealth demo --real-kubernetes} and the Job integration tests both run it
 * through this class, so the demo shows what the tests prove.
 */
public final class DocumentedJobs {

    /** The ResourceClaimTemplate the documented Job names; the namespace must hold one of that name. */
    public static final String CLAIM_TEMPLATE = "one-gpu";
    /** The Job controller's finalizer on each of a Job's pods, removed in the sync that counted the pod. */
    private static final String TRACKING_FINALIZER = "batch.kubernetes.io/job-tracking";
    /** The container of the documented Job's pod template. */
    public static final String CONTAINER = "main";

    private final KubernetesClient admin;
    private final String namespace;
    private final Duration wait;
    private final Job documented;

    /** Reads the documented Job from the checkout's docs/JOBS.md; fails when it is not the one-claim Job this class runs. */
    public DocumentedJobs(KubernetesClient admin, String namespace, Duration wait) {
        this.admin = admin;
        this.namespace = namespace;
        this.wait = wait;
        this.documented = read(admin);
    }

    private static Job read(KubernetesClient admin) {
        Path doc = KubeBinaries.repositoryRoot().resolve("docs/JOBS.md");
        try {
            Matcher block = Pattern.compile("```yaml\\n(.*?)```", Pattern.DOTALL).matcher(Files.readString(doc));
            if (!block.find()) {
                throw new IllegalStateException("no yaml block in " + doc);
            }
            Job job = admin.batch().v1().jobs().load(new ByteArrayInputStream(block.group(1).getBytes(StandardCharsets.UTF_8))).item();
            boolean oneClaimOfTheTemplate = job.getSpec().getTemplate().getSpec().getResourceClaims().size() == 1
                    && CLAIM_TEMPLATE.equals(job.getSpec().getTemplate().getSpec().getResourceClaims().get(0).getResourceClaimTemplateName());
            if (!oneClaimOfTheTemplate) {
                throw new IllegalStateException("the Job in " + doc + " must claim one GPU through template " + CLAIM_TEMPLATE);
            }
            return job;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The documented Job as it was read, before {@link #create} named it. */
    public Job documented() {
        return documented;
    }

    /**
     * Creates the documented Job under {@code name} with {@code backoffLimit} (null: the documented one),
     * and with what the simulated runtime needs: no token mounted (no process runs to read it) and a
     * killed pod that goes at once.
     */
    public Job create(String name, Integer backoffLimit) {
        Job job = new JobBuilder(documented)
                .editMetadata().withName(name).withNamespace(namespace).endMetadata()
                .editSpec().withBackoffLimit(backoffLimit == null ? documented.getSpec().getBackoffLimit() : backoffLimit)
                        .editTemplate().editSpec()
                                .withAutomountServiceAccountToken(false)
                                .withTerminationGracePeriodSeconds(1L)
                        .endSpec().endTemplate()
                .endSpec().build();
        return admin.resource(job).create();
    }

    /**
     * The Job's pod that is not {@code previousUid}, once it runs (and, where {@code healthy}, devhealth's
     * condition on it says True: the pipeline knows the pod's GPU).
     */
    public Pod awaitRunningPod(String jobName, String previousUid, boolean healthy) {
        return Waits.value("a running pod of " + jobName + (healthy ? " with devhealth's condition True" : ""), wait, () ->
                admin.pods().inNamespace(namespace).withLabel("job-name", jobName).list().getItems().stream()
                        .filter(p -> !p.getMetadata().getUid().equals(previousUid))
                        .filter(p -> "Running".equals(p.getStatus().getPhase()))
                        .filter(p -> !healthy || condition(p).map(c -> "True".equals(c.getStatus())).orElse(false))
                        .findFirst());
    }

    /**
     * The Job once its controller has decided about {@code pod}: the pod's tracking finalizer is gone and
     * no UID waits in {@code uncountedTerminatedPods}, so {@code status.failed} holds the verdict.
     */
    public Job awaitDecision(String jobName, Pod pod) {
        Waits.until("the Job controller decided about " + name(pod), wait, null, () -> {
            Pod current = current(pod);
            if (current == null || !"Failed".equals(current.getStatus().getPhase())
                    || current.getMetadata().getFinalizers().contains(TRACKING_FINALIZER)) {
                return false;
            }
            UncountedTerminatedPods uncounted = job(jobName).getStatus().getUncountedTerminatedPods();
            return uncounted == null || uncounted.getFailed() == null || uncounted.getFailed().isEmpty();
        });
        return job(jobName);
    }

    /** Whether the Job controller has removed its finalizer from {@code pod}, which it does in the sync that counted it. */
    public static boolean decided(Pod pod) {
        return !pod.getMetadata().getFinalizers().contains(TRACKING_FINALIZER);
    }

    /** What the scheduler allocated to the pod's own claim (the one its ResourceClaimTemplate made). */
    public DeviceRequestAllocationResult allocationOf(Pod pod) {
        String uid = pod.getMetadata().getUid();
        return admin.resources(ResourceClaim.class).inNamespace(namespace).list().getItems().stream()
                .filter(c -> c.getMetadata().getOwnerReferences().stream().anyMatch(o -> o.getUid().equals(uid)))
                .findFirst().orElseThrow(() -> new IllegalStateException("no claim of pod " + name(pod)))
                .getStatus().getAllocation().getDevices().getResults().get(0);
    }

    /** Deletes every Job of the namespace and waits until they, their pods and their claims are gone. */
    public void deleteAllAndWait() {
        admin.batch().v1().jobs().inNamespace(namespace).withPropagationPolicy(DeletionPropagation.BACKGROUND).delete();
        Waits.until("the Jobs, their pods and claims are gone", wait, null, () -> {
            admin.pods().inNamespace(namespace).withGracePeriod(0).delete();
            return admin.batch().v1().jobs().inNamespace(namespace).list().getItems().isEmpty()
                    && admin.pods().inNamespace(namespace).list().getItems().isEmpty()
                    && admin.resources(ResourceClaim.class).inNamespace(namespace).list().getItems().isEmpty();
        });
    }

    public Job job(String name) {
        return admin.batch().v1().jobs().inNamespace(namespace).withName(name).get();
    }

    /** {@code pod} as it is now, or null once a pod of another UID took its name or it is gone. */
    public Pod current(Pod pod) {
        Pod current = admin.pods().inNamespace(namespace).withName(name(pod)).get();
        return current != null && current.getMetadata().getUid().equals(pod.getMetadata().getUid()) ? current : null;
    }

    /** devhealth's condition on the pod, if written. */
    public static Optional<PodCondition> condition(Pod pod) {
        return pod == null || pod.getStatus().getConditions() == null ? Optional.empty() : pod.getStatus().getConditions().stream()
                .filter(c -> PodStatusWriter.CONDITION_TYPE.equals(c.getType())).findFirst();
    }

    /** Whether the Job has condition {@code type} True ({@code Failed}, {@code FailureTarget}, {@code Complete}). */
    public static boolean hasCondition(Job job, String type) {
        List<JobCondition> conditions = job.getStatus().getConditions();
        return conditions != null && conditions.stream().anyMatch(c -> type.equals(c.getType()) && "True".equals(c.getStatus()));
    }

    /** {@code status.failed}: the pods counted against {@code backoffLimit}. */
    public static int failed(Job job) {
        return Objects.requireNonNullElse(job.getStatus().getFailed(), 0);
    }

    public static String name(Pod pod) {
        return pod.getMetadata().getName();
    }
}
