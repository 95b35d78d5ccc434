package io.devhealth.sink.postmortem;

import io.devhealth.sink.ApiCallPolicy;
import io.devhealth.sink.ApiErrorClass;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Which request of a ResourceClaim each allocated device serves, read from the claim's
 * {@code status.allocation.devices.results} (PodResources names the claim and its devices, not the
 * requests). The kubelet lists a claim's devices per request the same way. Results are kept per pod UID
 * and claim, bounded: a claim's allocation does not change while a pod uses it, and a pod re-created
 * under the same name has another UID, so it never sees the previous pod's allocation. A claim that can
 * no longer be read (deleted with its pod) gives an empty answer, and the devices are listed without
 * their request.
 */
public class ClaimAllocations {

    private static final Logger LOGGER = LoggerFactory.getLogger(ClaimAllocations.class);
    private static final int MAX_CLAIMS = 10_000;

    /** Nothing known: every device is listed without its request (tests, tools). */
    public static final ClaimAllocations NONE = new ClaimAllocations(null, null) {
        @Override
        public Map<String, String> requestsByDevice(String namespace, String claimName, String podUid) {
            return Map.of();
        }
    };

    private final KubernetesClient client;
    private final ApiCallPolicy api;
    private final Map<String, Map<String, String>> cache = new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Map<String, String>> eldest) {
            return size() > MAX_CLAIMS;
        }
    };

    public ClaimAllocations(KubernetesClient client, ApiCallPolicy api) {
        this.client = client;
        this.api = api;
    }

    static String deviceKey(String driver, String pool, String device) {
        return driver + "/" + pool + "/" + device;
    }

    /** {@code driver/pool/device} → the request name as the allocation result gives it (may be {@code request/subrequest}). */
    public Map<String, String> requestsByDevice(String namespace, String claimName, String podUid) {
        String key = podUid + "/" + namespace + "/" + claimName;
        synchronized (cache) {
            Map<String, String> known = cache.get(key);
            if (known != null) {
                return known;
            }
        }
        Map<String, String> requests = read(namespace, claimName);
        if (requests != null) {
            synchronized (cache) {
                cache.put(key, requests);
            }
        }
        return requests == null ? Map.of() : requests;
    }

    /** Null when the claim is not allocated yet (ask again later); empty when it is gone. */
    private Map<String, String> read(String namespace, String claimName) {
        ResourceClaim claim;
        try {
            claim = api.call(() -> client.resources(ResourceClaim.class).inNamespace(namespace).withName(claimName).get());
        } catch (KubernetesClientException e) {
            if (ApiErrorClass.of(e) != ApiErrorClass.NOT_FOUND) {
                throw e;
            }
            claim = null;
        }
        if (claim == null) {
            LOGGER.debug("resource claim gone, devices listed without request claim={}/{}", namespace, claimName);
            return Map.of();
        }
        if (claim.getStatus() == null || claim.getStatus().getAllocation() == null
                || claim.getStatus().getAllocation().getDevices() == null) {
            return null;
        }
        Map<String, String> requests = new HashMap<>();
        for (DeviceRequestAllocationResult result : claim.getStatus().getAllocation().getDevices().getResults()) {
            requests.put(deviceKey(result.getDriver(), result.getPool(), result.getDevice()), result.getRequest());
        }
        return Map.copyOf(requests);
    }
}
