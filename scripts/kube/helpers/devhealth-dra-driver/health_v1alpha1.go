//go:build !kube137

package main

import (
	drahealth "k8s.io/kubelet/pkg/apis/dra-health/v1alpha1"
)

// healthServiceBase completes the generated server interface, which the kubeletplugin library checks
// for before it registers the health service: without it the kubelet's watch gets Unimplemented.
type healthServiceBase = drahealth.UnimplementedDRAResourceHealthServer

// NodeWatchResources serves DRAResourceHealth v1alpha1, the version a 1.36 kubelet watches: the
// kubeletplugin library registers this service when the plugin implements it.
func (d *driver) NodeWatchResources(_ *drahealth.NodeWatchResourcesRequest, stream drahealth.DRAResourceHealth_NodeWatchResourcesServer) error {
	return d.watch(stream.Context(), func(devices []device) error {
		response := &drahealth.NodeWatchResourcesResponse{}
		for _, dev := range devices {
			response.Devices = append(response.Devices, &drahealth.DeviceHealth{
				Device:                    &drahealth.DeviceIdentifier{PoolName: d.node, DeviceName: dev.Name},
				Health:                    healthOf(dev.Health),
				LastUpdatedTime:           dev.Updated.Unix(),
				HealthCheckTimeoutSeconds: int64(d.healthTimeout.Seconds()),
				Message:                   dev.Message,
			})
		}
		return stream.Send(response)
	})
}

func healthOf(health string) drahealth.HealthStatus {
	switch health {
	case "Healthy":
		return drahealth.HealthStatus_HEALTHY
	case "Unhealthy":
		return drahealth.HealthStatus_UNHEALTHY
	}
	return drahealth.HealthStatus_UNKNOWN
}
