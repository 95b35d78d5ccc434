/**
 * Pods. For the node processor: which pods a node's device changes still reach ({@link DepartedPods}), which
 * statuses are to be rebuilt before the commit ({@link StalePods}) and how ({@link PodStatusBuilder}). Processors of
 * their own, after the node processor's output: which node's word about a pod is kept ({@link PodClaims}), and every
 * terminated pod's verdict ({@link VerdictRecorder}).
 */
package io.devhealth.processor.internals.pods;
