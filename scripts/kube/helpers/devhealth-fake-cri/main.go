// Command devhealth-fake-cri serves a container runtime (CRI) for the kubelet of devhealth's test
// node: upstream's in-memory fake runtime (k8s.io/cri-client/pkg/fake, the runtime the kubelet's own
// tests and kubemark's hollow node use), plus a small HTTP control endpoint on loopback that makes a
// running container exit with a given code, the way a batch job's process crashes. Nothing runs:
// containers are records the kubelet creates, starts and inspects through the CRI.
//
// Control endpoint (JSON):
//
//	GET  /containers                     every container: namespace, pod, container, state, exitCode
//	POST /containers/exit                {"namespace","pod","container","exitCode","reason","message"}
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
	"syscall"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/cri-client/pkg/fake"
)

// Labels the kubelet puts on every container it creates (pkg/kubelet/types/labels.go).
const (
	labelNamespace = "io.kubernetes.pod.namespace"
	labelPod       = "io.kubernetes.pod.name"
	labelContainer = "io.kubernetes.container.name"
)

type exitRequest struct {
	Namespace string `json:"namespace"`
	Pod       string `json:"pod"`
	Container string `json:"container"`
	ExitCode  int32  `json:"exitCode"`
	Reason    string `json:"reason"`
	Message   string `json:"message"`
}

type containerView struct {
	ID        string `json:"id"`
	Namespace string `json:"namespace"`
	Pod       string `json:"pod"`
	Container string `json:"container"`
	State     string `json:"state"`
	ExitCode  int32  `json:"exitCode"`
}

func main() {
	endpoint := flag.String("endpoint", "", "CRI endpoint to serve, unix:///path/to/cri.sock")
	controlAddr := flag.String("control-address", "127.0.0.1:0", "loopback address of the control endpoint")
	controlFile := flag.String("control-file", "", "file to write the control endpoint's host:port into once serving")
	imageFs := flag.String("image-fs", "/", "mount point reported as the image and container filesystem")
	flag.Parse()
	if *endpoint == "" {
		fmt.Fprintln(os.Stderr, "devhealth-fake-cri: --endpoint is required")
		os.Exit(2)
	}

	runtime := fake.NewFakeRemoteRuntime()
	// The kubelet's stats and eviction managers ask for the image filesystem; an empty answer makes
	// them log an error every few seconds, which buries what a failing test needs to see.
	usage := []*runtimeapi.FilesystemUsage{{
		Timestamp:  time.Now().UnixNano(),
		FsId:       &runtimeapi.FilesystemIdentifier{Mountpoint: *imageFs},
		UsedBytes:  &runtimeapi.UInt64Value{Value: 0},
		InodesUsed: &runtimeapi.UInt64Value{Value: 0},
	}}
	runtime.ImageService.SetFakeFilesystemUsage(usage)
	// The kubelet refuses an image whose size is 0 ("Id or size of image ... is not set").
	runtime.ImageService.SetFakeImageSize(64 << 20)
	runtime.ImageService.SetFakeContainerFilesystemUsage(usage)
	if err := runtime.Start(*endpoint); err != nil {
		fmt.Fprintf(os.Stderr, "devhealth-fake-cri: %v\n", err)
		os.Exit(1)
	}

	mux := http.NewServeMux()
	mux.HandleFunc("GET /containers", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, list(runtime))
	})
	mux.HandleFunc("POST /containers/exit", func(w http.ResponseWriter, r *http.Request) {
		var req exitRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
			return
		}
		id, err := exit(runtime, req)
		if err != nil {
			writeJSON(w, http.StatusNotFound, map[string]string{"error": err.Error()})
			return
		}
		writeJSON(w, http.StatusOK, map[string]string{"id": id})
	})
	listener, err := net.Listen("tcp", *controlAddr)
	if err != nil {
		fmt.Fprintf(os.Stderr, "devhealth-fake-cri: control endpoint: %v\n", err)
		os.Exit(1)
	}
	server := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go server.Serve(listener)
	if *controlFile != "" {
		if err := writeAtomically(*controlFile, listener.Addr().String()); err != nil {
			fmt.Fprintf(os.Stderr, "devhealth-fake-cri: %v\n", err)
			os.Exit(1)
		}
	}
	fmt.Printf("devhealth-fake-cri: serving CRI on %s, control on %s\n", *endpoint, listener.Addr())

	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)
	<-signals
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = server.Shutdown(ctx)
	runtime.Stop()
}

// exit turns the named running container into an exited one, as a runtime reports a process that
// ended: the kubelet's PLEG sees the state change on its next relist and the status manager writes
// the terminated state with this exit code into the pod.
func exit(runtime *fake.RemoteRuntime, req exitRequest) (string, error) {
	service := runtime.RuntimeService
	service.Lock()
	defer service.Unlock()
	for id, c := range service.Containers {
		if c.Labels[labelNamespace] != req.Namespace || c.Labels[labelPod] != req.Pod || c.Labels[labelContainer] != req.Container {
			continue
		}
		if c.State != runtimeapi.ContainerState_CONTAINER_RUNNING {
			continue
		}
		c.State = runtimeapi.ContainerState_CONTAINER_EXITED
		c.ExitCode = req.ExitCode
		c.FinishedAt = time.Now().UnixNano()
		c.Reason = req.Reason
		if c.Reason == "" {
			c.Reason = "Error"
			if req.ExitCode == 0 {
				c.Reason = "Completed"
			}
		}
		c.Message = req.Message
		return id, nil
	}
	return "", fmt.Errorf("no running container %s/%s/%s", req.Namespace, req.Pod, req.Container)
}

func list(runtime *fake.RemoteRuntime) []containerView {
	service := runtime.RuntimeService
	service.Lock()
	defer service.Unlock()
	views := make([]containerView, 0, len(service.Containers))
	for id, c := range service.Containers {
		views = append(views, containerView{
			ID: id, Namespace: c.Labels[labelNamespace], Pod: c.Labels[labelPod], Container: c.Labels[labelContainer],
			State: c.State.String(), ExitCode: c.ExitCode,
		})
	}
	return views
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// writeAtomically lets a reader that polls for the file never see it half written.
func writeAtomically(path, content string) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
