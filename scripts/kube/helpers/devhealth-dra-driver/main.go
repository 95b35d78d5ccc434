// Command devhealth-dra-driver is the DRA driver of devhealth's test node, built on upstream's
// kubeletplugin library (k8s.io/dynamic-resource-allocation/kubeletplugin), the helper real drivers
// use: it registers with the kubelet through the plugin registry, publishes one ResourceSlice for its
// node with GPUs shaped like NVIDIA's driver publishes them (a `uuid` attribute per device, a product
// name, memory capacity), prepares claims with CDI device ids, and serves DRAResourceHealth.
//
// What a real GPU would do — fail, recover, be tainted — the test scripts through a control endpoint
// on loopback (JSON):
//
//	GET /devices                      every device: name, uuid, health, message, taints
//	PUT /devices/{name}/health        {"health":"Healthy|Unhealthy|Unknown","message":"..."}
//	PUT /devices/{name}/taints        [{"key","value","effect":"NoSchedule|NoExecute|None"}]
//	PUT /health-stream                {"silent":true} stops health reports (a hung driver), false resumes
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sort"
	"sync"
	"syscall"
	"time"

	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/dynamic-resource-allocation/kubeletplugin"
	"k8s.io/dynamic-resource-allocation/resourceslice"
	"k8s.io/klog/v2"
)

type device struct {
	Name    string                    `json:"name"`
	UUID    string                    `json:"uuid"`
	Health  string                    `json:"health"`
	Message string                    `json:"message"`
	Updated time.Time                 `json:"updated"`
	Taints  []resourceapi.DeviceTaint `json:"taints"`
}

type driver struct {
	healthServiceBase

	name          string
	node          string
	product       string
	healthTimeout time.Duration
	keepAlive     time.Duration

	mu      sync.Mutex
	devices []*device
	silent  bool
	// Each health stream the kubelet opened waits on its channel; a change closes and replaces it.
	changed chan struct{}
	helper  *kubeletplugin.Helper
}

func main() {
	klog.InitFlags(nil)
	d := &driver{changed: make(chan struct{})}
	flag.StringVar(&d.name, "driver-name", "gpu.devhealth.test", "DRA driver name")
	flag.StringVar(&d.node, "node-name", "", "the node this driver runs on")
	flag.StringVar(&d.product, "product", "NVIDIA H100 80GB HBM3", "productName attribute of every GPU")
	count := flag.Int("devices", 4, "number of GPUs")
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig of the driver's API client")
	registryDir := flag.String("registry-dir", kubeletplugin.KubeletRegistryDir, "the kubelet's plugin registry directory")
	pluginDir := flag.String("plugin-dir", "", "directory of the driver's DRA socket (default <kubelet plugins dir>/<driver name>)")
	flag.DurationVar(&d.healthTimeout, "health-timeout", 30*time.Second, "health_check_timeout_seconds sent with each device")
	flag.DurationVar(&d.keepAlive, "keep-alive", 5*time.Second, "how often unchanged health is re-sent")
	controlAddr := flag.String("control-address", "127.0.0.1:0", "loopback address of the control endpoint")
	controlFile := flag.String("control-file", "", "file to write the control endpoint's host:port into once serving")
	flag.Parse()
	if d.node == "" || *kubeconfig == "" {
		fmt.Fprintln(os.Stderr, "devhealth-dra-driver: --node-name and --kubeconfig are required")
		os.Exit(2)
	}
	for i := 0; i < *count; i++ {
		d.devices = append(d.devices, &device{
			Name:    fmt.Sprintf("gpu-%d", i),
			UUID:    fmt.Sprintf("GPU-%08x-0000-4000-8000-%012d", hash(d.node), i),
			Health:  "Healthy",
			Updated: time.Now(),
		})
	}

	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer cancel()
	config, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		fatal("kubeconfig", err)
	}
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		fatal("client", err)
	}
	node, err := client.CoreV1().Nodes().Get(ctx, d.node, metav1.GetOptions{})
	if err != nil {
		fatal("node "+d.node, err)
	}
	opts := []kubeletplugin.Option{
		kubeletplugin.DriverName(d.name),
		kubeletplugin.NodeName(d.node),
		kubeletplugin.NodeUID(node.UID),
		kubeletplugin.KubeClient(client),
		kubeletplugin.RegistrarDirectoryPath(*registryDir),
	}
	if *pluginDir != "" {
		// A driver's DaemonSet mounts this directory with hostPath type DirectoryOrCreate; here the
		// driver creates it itself.
		if err := os.MkdirAll(*pluginDir, 0o750); err != nil {
			fatal("plugin dir", err)
		}
		opts = append(opts, kubeletplugin.PluginDataDirectoryPath(*pluginDir))
	}
	helper, err := kubeletplugin.Start(ctx, d, opts...)
	if err != nil {
		fatal("start plugin", err)
	}
	d.helper = helper
	defer helper.Stop()
	if err := d.publish(ctx); err != nil {
		fatal("publish ResourceSlice", err)
	}

	listener, err := net.Listen("tcp", *controlAddr)
	if err != nil {
		fatal("control endpoint", err)
	}
	server := &http.Server{Handler: d.controls(ctx), ReadHeaderTimeout: 5 * time.Second}
	go server.Serve(listener)
	if *controlFile != "" {
		tmp := *controlFile + ".tmp"
		if err := os.WriteFile(tmp, []byte(listener.Addr().String()), 0o600); err != nil {
			fatal("control file", err)
		}
		if err := os.Rename(tmp, *controlFile); err != nil {
			fatal("control file", err)
		}
	}
	fmt.Printf("devhealth-dra-driver: driver %s on node %s, %d GPUs, control on %s\n", d.name, d.node, len(d.devices), listener.Addr())
	<-ctx.Done()
	shutdown, done := context.WithTimeout(context.Background(), 2*time.Second)
	defer done()
	_ = server.Shutdown(shutdown)
}

func fatal(what string, err error) {
	fmt.Fprintf(os.Stderr, "devhealth-dra-driver: %s: %v\n", what, err)
	os.Exit(1)
}

func hash(s string) uint32 {
	var h uint32 = 2166136261
	for i := 0; i < len(s); i++ {
		h = (h ^ uint32(s[i])) * 16777619
	}
	return h
}

// publish writes the node's one pool as the kubelet plugin library's ResourceSlice controller keeps
// it: one slice, every device with its current taints.
func (d *driver) publish(ctx context.Context) error {
	d.mu.Lock()
	devices := make([]resourceapi.Device, 0, len(d.devices))
	for i, dev := range d.devices {
		uuid, product := dev.UUID, d.product
		index := int64(i)
		devices = append(devices, resourceapi.Device{
			Name: dev.Name,
			Attributes: map[resourceapi.QualifiedName]resourceapi.DeviceAttribute{
				"type":        {StringValue: ptr("gpu")},
				"uuid":        {StringValue: &uuid},
				"productName": {StringValue: &product},
				"index":       {IntValue: &index},
			},
			Capacity: map[resourceapi.QualifiedName]resourceapi.DeviceCapacity{
				"memory": {Value: resource.MustParse("80Gi")},
			},
			Taints: append([]resourceapi.DeviceTaint(nil), dev.Taints...),
		})
	}
	d.mu.Unlock()
	return d.helper.PublishResources(ctx, resourceslice.DriverResources{
		Pools: map[string]resourceslice.Pool{d.node: {Slices: []resourceslice.Slice{{Devices: devices}}}},
	})
}

func ptr[T any](v T) *T { return &v }

// PrepareResourceClaims hands the kubelet one CDI device id per allocated device, unique per claim so
// that a runtime's CDI cache never serves a stale spec.
func (d *driver) PrepareResourceClaims(_ context.Context, claims []*resourceapi.ResourceClaim) (map[types.UID]kubeletplugin.PrepareResult, error) {
	result := make(map[types.UID]kubeletplugin.PrepareResult, len(claims))
	for _, claim := range claims {
		var prepared []kubeletplugin.Device
		if claim.Status.Allocation != nil {
			for _, r := range claim.Status.Allocation.Devices.Results {
				if r.Driver != d.name {
					continue
				}
				prepared = append(prepared, kubeletplugin.Device{
					Requests:     []string{r.Request},
					PoolName:     r.Pool,
					DeviceName:   r.Device,
					CDIDeviceIDs: []string{fmt.Sprintf("k8s.%s/gpu=%s-%s", d.name, claim.UID, r.Device)},
				})
			}
		}
		result[claim.UID] = kubeletplugin.PrepareResult{Devices: prepared}
	}
	return result, nil
}

func (d *driver) UnprepareResourceClaims(_ context.Context, claims []kubeletplugin.NamespacedObject) (map[types.UID]error, error) {
	result := make(map[types.UID]error, len(claims))
	for _, claim := range claims {
		result[claim.UID] = nil
	}
	return result, nil
}

func (d *driver) HandleError(ctx context.Context, err error, msg string) {
	klog.FromContext(ctx).Error(err, msg)
}

// snapshot is the health of every device and the channel that closes on the next change, or nil
// while the driver is silent.
func (d *driver) snapshot() ([]device, <-chan struct{}) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.silent {
		return nil, d.changed
	}
	out := make([]device, 0, len(d.devices))
	for _, dev := range d.devices {
		out = append(out, *dev)
	}
	return out, d.changed
}

func (d *driver) notifyLocked() {
	close(d.changed)
	d.changed = make(chan struct{})
}

// watch calls send with the health of every device now, on every change and every keep-alive
// period, until ctx ends; the two health API versions differ only in the message they send.
func (d *driver) watch(ctx context.Context, send func([]device) error) error {
	ticker := time.NewTicker(d.keepAlive)
	defer ticker.Stop()
	for {
		devices, changed := d.snapshot()
		if devices != nil {
			if err := send(devices); err != nil {
				return err
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-changed:
		case <-ticker.C:
		}
	}
}

func (d *driver) controls(ctx context.Context) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /devices", func(w http.ResponseWriter, _ *http.Request) {
		devices, _ := d.snapshot()
		if devices == nil {
			d.mu.Lock()
			for _, dev := range d.devices {
				devices = append(devices, *dev)
			}
			d.mu.Unlock()
		}
		sort.Slice(devices, func(i, j int) bool { return devices[i].Name < devices[j].Name })
		writeJSON(w, http.StatusOK, devices)
	})
	mux.HandleFunc("PUT /devices/{name}/health", func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Health  string `json:"health"`
			Message string `json:"message"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
			return
		}
		switch body.Health {
		case "Healthy", "Unhealthy", "Unknown":
		default:
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "health must be Healthy, Unhealthy or Unknown"})
			return
		}
		if !d.update(r.PathValue("name"), func(dev *device) { dev.Health, dev.Message, dev.Updated = body.Health, body.Message, time.Now() }) {
			writeJSON(w, http.StatusNotFound, map[string]string{"error": "no device " + r.PathValue("name")})
			return
		}
		writeJSON(w, http.StatusOK, map[string]string{"health": body.Health})
	})
	mux.HandleFunc("PUT /devices/{name}/taints", func(w http.ResponseWriter, r *http.Request) {
		var taints []resourceapi.DeviceTaint
		if err := json.NewDecoder(r.Body).Decode(&taints); err != nil {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
			return
		}
		now := metav1.Now()
		for i := range taints {
			if taints[i].TimeAdded == nil {
				taints[i].TimeAdded = &now
			}
		}
		if !d.update(r.PathValue("name"), func(dev *device) { dev.Taints = taints }) {
			writeJSON(w, http.StatusNotFound, map[string]string{"error": "no device " + r.PathValue("name")})
			return
		}
		if err := d.publish(ctx); err != nil {
			writeJSON(w, http.StatusInternalServerError, map[string]string{"error": err.Error()})
			return
		}
		writeJSON(w, http.StatusOK, taints)
	})
	mux.HandleFunc("PUT /health-stream", func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Silent bool `json:"silent"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
			return
		}
		d.mu.Lock()
		d.silent = body.Silent
		d.notifyLocked()
		d.mu.Unlock()
		writeJSON(w, http.StatusOK, body)
	})
	return mux
}

func (d *driver) update(name string, change func(*device)) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, dev := range d.devices {
		if dev.Name == name {
			change(dev)
			d.notifyLocked()
			return true
		}
	}
	return false
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
