//go:build kube137

package main

import (
	"context"

	"k8s.io/dynamic-resource-allocation/kubeletplugin"
)

// healthServiceBase is empty from 1.37 on: the library implements the gRPC service.
type healthServiceBase struct{}

// WatchHealthStatus is how a driver reports health from 1.37 on: the kubeletplugin library serves
// it as DRAResourceHealth v1 and v1alpha1 both.
func (d *driver) WatchHealthStatus(ctx context.Context, reports chan<- kubeletplugin.DeviceHealthReport) error {
	return d.watch(ctx, func(devices []device) error {
		report := kubeletplugin.DeviceHealthReport{}
		for _, dev := range devices {
			report.Devices = append(report.Devices, kubeletplugin.DeviceHealth{
				PoolName: d.node, DeviceName: dev.Name, Health: kubeletplugin.HealthStatus(dev.Health),
				LastUpdated: dev.Updated, HealthCheckTimeout: d.healthTimeout, Message: dev.Message,
			})
		}
		select {
		case <-ctx.Done():
		case reports <- report:
		}
		return nil
	})
}
