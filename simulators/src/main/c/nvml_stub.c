/*
 * A stand-in for the NVIDIA Management Library (libnvidia-ml.so.1) for tests and the demo.
 *
 * It exports the NVML functions devhealth's node-collector binds (same names, signatures, struct
 * layouts and return codes as nvml.h, CUDA 13.3 header; see shared/reference/gpu-health-signals.md
 * section 5), backed by simulated GPUs that a test controls through the stub_* functions below
 * (io.devhealth.simulators.nvml.NvmlStub is their Java side).
 *
 * Behaviour copied from the real library where the collector depends on it:
 *  - calls before nvmlInit_v2 (or after the matching nvmlShutdown) return NVML_ERROR_UNINITIALIZED;
 *  - events are delivered only for types registered on the device, in FIFO order, one per
 *    nvmlEventSetWait_v2, which blocks up to its timeout and then returns NVML_ERROR_TIMEOUT;
 *  - a lost GPU answers every device call with NVML_ERROR_GPU_IS_LOST, and the next wait returns
 *    NVML_ERROR_GPU_IS_LOST once;
 *  - a simulated GPU reset clears volatile ECC counters, pending row remaps / page retirements,
 *    the recovery action and the energy counter, and drops the device's queued events.
 * Every state change is guarded by one mutex, so tests may drive it from any thread.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <errno.h>

#define EXPORT __attribute__((visibility("default")))

enum {
    NVML_SUCCESS = 0, NVML_ERROR_UNINITIALIZED = 1, NVML_ERROR_INVALID_ARGUMENT = 2, NVML_ERROR_NOT_SUPPORTED = 3,
    NVML_ERROR_NOT_FOUND = 6, NVML_ERROR_INSUFFICIENT_SIZE = 7, NVML_ERROR_DRIVER_NOT_LOADED = 9,
    NVML_ERROR_TIMEOUT = 10, NVML_ERROR_GPU_IS_LOST = 15, NVML_ERROR_ARGUMENT_VERSION_MISMATCH = 25, NVML_ERROR_UNKNOWN = 999
};

#define MAX_GPUS 16
#define MAX_MIG 7
#define MAX_LINKS 36
#define MAX_OVERRIDES 64
#define FIELD_GPU_RECOVERY_ACTION 230

typedef struct stub_device stub_device;
struct stub_device {
    int index;
    int is_mig;
    stub_device *parent;
    unsigned int gi, ci;
    char uuid[96], name[96], bus_id[32];
    unsigned int pci_bus;
    unsigned int temperature, slowdown;
    unsigned int corr_rows, unc_rows, remap_pending, remap_failure;
    unsigned int retired_pending;
    unsigned long long volatile_unc_ecc;
    unsigned int link_count;
    unsigned int link_active[MAX_LINKS];
    unsigned long long clocks_reasons;
    unsigned int power_mw, power_limit_mw;
    unsigned long long energy_mj;
    unsigned int recovery_action;
    unsigned long long supported_events;
    unsigned long long registered;
    int lost;
    unsigned int mig_enabled;
    int mig_count;
    stub_device *mig[MAX_MIG];
};

typedef struct {
    stub_device *device;
    unsigned long long type, data;
    unsigned int gi, ci;
    long long remaining;
} queued_event;

/* nvmlEventData_t: 32 bytes, see reference section 5.2. */
typedef struct {
    void *device;
    unsigned long long eventType;
    unsigned long long eventData;
    unsigned int gpuInstanceId;
    unsigned int computeInstanceId;
} nvmlEventData_t;

typedef struct {
    char busIdLegacy[16];
    unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
    char busId[32];
} nvmlPciInfo_t;

typedef union { double dVal; unsigned int uiVal; unsigned long ulVal; unsigned long long ullVal; long long sllVal; int siVal; unsigned short usVal; } nvmlValue_t;
typedef struct {
    unsigned int fieldId, scopeId;
    long long timestamp, latencyUsec;
    int valueType;
    int nvmlReturn;
    nvmlValue_t value;
} nvmlFieldValue_t;

typedef struct { int device; char function[64]; int rc; } override_entry;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t queued = PTHREAD_COND_INITIALIZER;
static stub_device gpus[MAX_GPUS];
static stub_device migs[MAX_GPUS][MAX_MIG];
static int gpu_count = 0;
static int init_count = 0;
static int init_result = NVML_SUCCESS;
static int init_calls = 0;
static int event_sets = 0;
static int lost_signal = 0;
static queued_event *queue = NULL;
static size_t queue_head = 0, queue_tail = 0, queue_capacity = 0;
static long long delivered = 0;
static override_entry overrides[MAX_OVERRIDES];
static int override_count = 0;

static void default_device(int i) {
    stub_device *d = &gpus[i];
    memset(d, 0, sizeof(*d));
    d->index = i;
    snprintf(d->uuid, sizeof d->uuid, "GPU-5a1d0000-0000-4000-8000-%012d", i);
    snprintf(d->name, sizeof d->name, "NVIDIA Stub H100 80GB HBM3");
    d->pci_bus = 0x18 + i;
    snprintf(d->bus_id, sizeof d->bus_id, "00000000:%02X:00.0", d->pci_bus);
    d->temperature = 45;
    d->slowdown = 90;
    d->power_mw = 120000;
    d->power_limit_mw = 700000;
    d->energy_mj = 1000000;
    d->link_count = 18;
    for (int l = 0; l < 18; l++) d->link_active[l] = 1;
    /* XID | DBE | SBE | SBE storm | DRAM retirement event/failure | poison | GPU unavailable | recovery action */
    d->supported_events = 0x1 | 0x2 | 0x8 | 0x200 | 0x400 | 0x800 | 0x1000 | 0x2000 | 0x4000 | 0x8000;
}

static int overridden(const stub_device *d, const char *function) {
    int index = d ? (d->is_mig ? d->parent->index : d->index) : -1;
    for (int i = 0; i < override_count; i++) {
        if ((overrides[i].device == -1 || overrides[i].device == index) && strcmp(overrides[i].function, function) == 0) {
            return overrides[i].rc;
        }
    }
    return NVML_SUCCESS;
}

/* Common prologue of device calls: initialised, valid handle, not lost, no override. */
static int check(stub_device *d, const char *function) {
    if (init_count == 0) return NVML_ERROR_UNINITIALIZED;
    if (d == NULL) return NVML_ERROR_INVALID_ARGUMENT;
    stub_device *gpu = d->is_mig ? d->parent : d;
    if (gpu->index >= gpu_count) return NVML_ERROR_INVALID_ARGUMENT;
    if (gpu->lost) return NVML_ERROR_GPU_IS_LOST;
    return overridden(d, function);
}

#define DEVICE_CALL(handle, fn) \
    stub_device *d = (stub_device *)(handle); \
    pthread_mutex_lock(&lock); \
    int rc = check(d, fn); \
    if (rc != NVML_SUCCESS) { pthread_mutex_unlock(&lock); return rc; }
#define DONE pthread_mutex_unlock(&lock); return NVML_SUCCESS;

static int copy_string(char *out, unsigned int length, const char *value) {
    if (out == NULL) return NVML_ERROR_INVALID_ARGUMENT;
    if (strlen(value) + 1 > length) return NVML_ERROR_INSUFFICIENT_SIZE;
    strcpy(out, value);
    return NVML_SUCCESS;
}

/* ------------------------------------------------------------------ NVML API */

EXPORT int nvmlInit_v2(void) {
    pthread_mutex_lock(&lock);
    init_calls++;
    int rc = init_result;
    if (rc == NVML_SUCCESS) init_count++;
    pthread_mutex_unlock(&lock);
    return rc;
}

EXPORT int nvmlInit(void) { return nvmlInit_v2(); }

EXPORT int nvmlShutdown(void) {
    pthread_mutex_lock(&lock);
    int rc = init_count > 0 ? NVML_SUCCESS : NVML_ERROR_UNINITIALIZED;
    if (init_count > 0) init_count--;
    pthread_mutex_unlock(&lock);
    return rc;
}

EXPORT const char *nvmlErrorString(int result) {
    switch (result) {
        case 0: return "Success";
        case 1: return "Uninitialized";
        case 2: return "Invalid Argument";
        case 3: return "Not Supported";
        case 4: return "Insufficient Permissions";
        case 6: return "Not Found";
        case 7: return "Insufficient Size";
        case 9: return "Driver Not Loaded";
        case 10: return "Timeout";
        case 13: return "Function Not Found";
        case 15: return "GPU is lost";
        case 16: return "GPU requires restart";
        case 25: return "Argument version mismatch";
        default: return "Unknown Error";
    }
}

EXPORT int nvmlSystemGetDriverVersion(char *version, unsigned int length) {
    pthread_mutex_lock(&lock);
    int rc = init_count == 0 ? NVML_ERROR_UNINITIALIZED : copy_string(version, length, "999.99-devhealth-stub");
    pthread_mutex_unlock(&lock);
    return rc;
}

EXPORT int nvmlDeviceGetCount_v2(unsigned int *count) {
    pthread_mutex_lock(&lock);
    int rc = init_count == 0 ? NVML_ERROR_UNINITIALIZED : overridden(NULL, "nvmlDeviceGetCount_v2");
    if (rc == NVML_SUCCESS) *count = (unsigned int)gpu_count;
    pthread_mutex_unlock(&lock);
    return rc;
}

EXPORT int nvmlDeviceGetHandleByIndex_v2(unsigned int index, void **device) {
    pthread_mutex_lock(&lock);
    int rc = init_count == 0 ? NVML_ERROR_UNINITIALIZED : (index >= (unsigned int)gpu_count ? NVML_ERROR_INVALID_ARGUMENT : NVML_SUCCESS);
    if (rc == NVML_SUCCESS) {
        rc = gpus[index].lost ? NVML_ERROR_GPU_IS_LOST : overridden(&gpus[index], "nvmlDeviceGetHandleByIndex_v2");
    }
    if (rc == NVML_SUCCESS) *device = &gpus[index];
    pthread_mutex_unlock(&lock);
    return rc;
}

EXPORT int nvmlDeviceGetUUID(void *handle, char *uuid, unsigned int length) {
    DEVICE_CALL(handle, "nvmlDeviceGetUUID")
    rc = copy_string(uuid, length, d->uuid);
    pthread_mutex_unlock(&lock);
    return rc;
}

EXPORT int nvmlDeviceGetName(void *handle, char *name, unsigned int length) {
    DEVICE_CALL(handle, "nvmlDeviceGetName")
    rc = copy_string(name, length, d->name);
    pthread_mutex_unlock(&lock);
    return rc;
}

EXPORT int nvmlDeviceGetIndex(void *handle, unsigned int *index) {
    DEVICE_CALL(handle, "nvmlDeviceGetIndex")
    *index = (unsigned int)(d->is_mig ? d->parent->index : d->index);
    DONE
}

EXPORT int nvmlDeviceGetPciInfo_v3(void *handle, nvmlPciInfo_t *pci) {
    DEVICE_CALL(handle, "nvmlDeviceGetPciInfo_v3")
    stub_device *gpu = d->is_mig ? d->parent : d;
    memset(pci, 0, sizeof(*pci));
    snprintf(pci->busIdLegacy, sizeof pci->busIdLegacy, "0000:%02X:00.0", gpu->pci_bus);
    pci->bus = gpu->pci_bus;
    pci->pciDeviceId = 0x233010DE;
    snprintf(pci->busId, sizeof pci->busId, "%s", gpu->bus_id);
    DONE
}

EXPORT int nvmlDeviceGetMigMode(void *handle, unsigned int *current, unsigned int *pending) {
    DEVICE_CALL(handle, "nvmlDeviceGetMigMode")
    *current = d->mig_enabled;
    *pending = d->mig_enabled;
    DONE
}

EXPORT int nvmlDeviceGetMaxMigDeviceCount(void *handle, unsigned int *count) {
    DEVICE_CALL(handle, "nvmlDeviceGetMaxMigDeviceCount")
    *count = d->mig_enabled ? MAX_MIG : 0;
    DONE
}

EXPORT int nvmlDeviceGetMigDeviceHandleByIndex(void *handle, unsigned int index, void **mig) {
    DEVICE_CALL(handle, "nvmlDeviceGetMigDeviceHandleByIndex")
    if (!d->mig_enabled || index >= MAX_MIG) { pthread_mutex_unlock(&lock); return NVML_ERROR_INVALID_ARGUMENT; }
    if ((int)index >= d->mig_count) { pthread_mutex_unlock(&lock); return NVML_ERROR_NOT_FOUND; }
    *mig = d->mig[index];
    DONE
}

EXPORT int nvmlDeviceGetGpuInstanceId(void *handle, unsigned int *id) {
    DEVICE_CALL(handle, "nvmlDeviceGetGpuInstanceId")
    if (!d->is_mig) { pthread_mutex_unlock(&lock); return NVML_ERROR_INVALID_ARGUMENT; }
    *id = d->gi;
    DONE
}

EXPORT int nvmlDeviceGetComputeInstanceId(void *handle, unsigned int *id) {
    DEVICE_CALL(handle, "nvmlDeviceGetComputeInstanceId")
    if (!d->is_mig) { pthread_mutex_unlock(&lock); return NVML_ERROR_INVALID_ARGUMENT; }
    *id = d->ci;
    DONE
}

EXPORT int nvmlDeviceGetDeviceHandleFromMigDeviceHandle(void *handle, void **parent) {
    DEVICE_CALL(handle, "nvmlDeviceGetDeviceHandleFromMigDeviceHandle")
    if (!d->is_mig) { pthread_mutex_unlock(&lock); return NVML_ERROR_INVALID_ARGUMENT; }
    *parent = d->parent;
    DONE
}

EXPORT int nvmlDeviceGetTemperature(void *handle, int sensor, unsigned int *temp) {
    DEVICE_CALL(handle, "nvmlDeviceGetTemperature")
    if (sensor != 0) { pthread_mutex_unlock(&lock); return NVML_ERROR_INVALID_ARGUMENT; }
    *temp = d->temperature;
    DONE
}

/* nvmlTemperature_t: 12 bytes (header 12.8+). */
typedef struct {
    unsigned int version;
    int sensorType;
    int temperature;
} nvmlTemperature_t;
#define NVML_TEMPERATURE_V1 (unsigned int)(sizeof(nvmlTemperature_t) | (1 << 24))

EXPORT int nvmlDeviceGetTemperatureV(void *handle, nvmlTemperature_t *temperature) {
    DEVICE_CALL(handle, "nvmlDeviceGetTemperatureV")
    if (temperature == NULL) { pthread_mutex_unlock(&lock); return NVML_ERROR_INVALID_ARGUMENT; }
    /* Like NVML's versioned calls: a struct version the library does not know is refused. */
    if (temperature->version != NVML_TEMPERATURE_V1) { pthread_mutex_unlock(&lock); return NVML_ERROR_ARGUMENT_VERSION_MISMATCH; }
    if (temperature->sensorType != 0) { pthread_mutex_unlock(&lock); return NVML_ERROR_INVALID_ARGUMENT; }
    temperature->temperature = (int)d->temperature;
    DONE
}

EXPORT int nvmlDeviceGetTemperatureThreshold(void *handle, int type, unsigned int *temp) {
    DEVICE_CALL(handle, "nvmlDeviceGetTemperatureThreshold")
    if (type == 1) *temp = d->slowdown;          /* NVML_TEMPERATURE_THRESHOLD_SLOWDOWN */
    else if (type == 0) *temp = d->slowdown + 5; /* SHUTDOWN */
    else { pthread_mutex_unlock(&lock); return NVML_ERROR_NOT_SUPPORTED; }
    DONE
}

EXPORT int nvmlDeviceGetRemappedRows(void *handle, unsigned int *corr, unsigned int *unc, unsigned int *pending, unsigned int *failure) {
    DEVICE_CALL(handle, "nvmlDeviceGetRemappedRows")
    if (d->mig_enabled && d->mig_count > 0) { pthread_mutex_unlock(&lock); return NVML_ERROR_NOT_SUPPORTED; }
    *corr = d->corr_rows; *unc = d->unc_rows; *pending = d->remap_pending; *failure = d->remap_failure;
    DONE
}

EXPORT int nvmlDeviceGetRetiredPagesPendingStatus(void *handle, int *pending) {
    DEVICE_CALL(handle, "nvmlDeviceGetRetiredPagesPendingStatus")
    *pending = (int)d->retired_pending;
    DONE
}

EXPORT int nvmlDeviceGetTotalEccErrors(void *handle, int errorType, int counterType, unsigned long long *count) {
    DEVICE_CALL(handle, "nvmlDeviceGetTotalEccErrors")
    /* Only uncorrected (1) volatile (0) counts are simulated; aggregate counts mirror them. */
    *count = errorType == 1 ? d->volatile_unc_ecc : 0;
    (void)counterType;
    DONE
}

EXPORT int nvmlDeviceGetNvLinkState(void *handle, unsigned int link, int *active) {
    DEVICE_CALL(handle, "nvmlDeviceGetNvLinkState")
    if (link >= MAX_LINKS) { pthread_mutex_unlock(&lock); return NVML_ERROR_INVALID_ARGUMENT; }
    if (link >= d->link_count) { pthread_mutex_unlock(&lock); return NVML_ERROR_NOT_SUPPORTED; }
    *active = (int)d->link_active[link];
    DONE
}

EXPORT int nvmlDeviceGetCurrentClocksEventReasons(void *handle, unsigned long long *reasons) {
    DEVICE_CALL(handle, "nvmlDeviceGetCurrentClocksEventReasons")
    *reasons = d->clocks_reasons;
    DONE
}

EXPORT int nvmlDeviceGetPowerUsage(void *handle, unsigned int *power) {
    DEVICE_CALL(handle, "nvmlDeviceGetPowerUsage")
    *power = d->power_mw;
    DONE
}

EXPORT int nvmlDeviceGetEnforcedPowerLimit(void *handle, unsigned int *limit) {
    DEVICE_CALL(handle, "nvmlDeviceGetEnforcedPowerLimit")
    *limit = d->power_limit_mw;
    DONE
}

EXPORT int nvmlDeviceGetTotalEnergyConsumption(void *handle, unsigned long long *energy) {
    DEVICE_CALL(handle, "nvmlDeviceGetTotalEnergyConsumption")
    *energy = d->energy_mj;
    DONE
}

EXPORT int nvmlDeviceGetFieldValues(void *handle, int count, nvmlFieldValue_t *values) {
    DEVICE_CALL(handle, "nvmlDeviceGetFieldValues")
    for (int i = 0; i < count; i++) {
        if (values[i].fieldId == FIELD_GPU_RECOVERY_ACTION) {
            values[i].nvmlReturn = overridden(d, "field230");
            values[i].valueType = 1; /* NVML_VALUE_TYPE_UNSIGNED_INT */
            values[i].value.ullVal = 0;
            values[i].value.uiVal = d->recovery_action;
        } else {
            values[i].nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
        }
    }
    DONE
}

EXPORT int nvmlEventSetCreate(void **set) {
    pthread_mutex_lock(&lock);
    if (init_count == 0) { pthread_mutex_unlock(&lock); return NVML_ERROR_UNINITIALIZED; }
    int rc = overridden(NULL, "nvmlEventSetCreate");
    if (rc == NVML_SUCCESS) { event_sets++; *set = (void *)&event_sets; }
    pthread_mutex_unlock(&lock);
    return rc;
}

EXPORT int nvmlDeviceGetSupportedEventTypes(void *handle, unsigned long long *types) {
    DEVICE_CALL(handle, "nvmlDeviceGetSupportedEventTypes")
    *types = d->supported_events;
    DONE
}

EXPORT int nvmlDeviceRegisterEvents(void *handle, unsigned long long types, void *set) {
    DEVICE_CALL(handle, "nvmlDeviceRegisterEvents")
    if (set == NULL) { pthread_mutex_unlock(&lock); return NVML_ERROR_INVALID_ARGUMENT; }
    /* Like NVML: asking for an unsupported type is NOT_SUPPORTED and registers nothing. */
    if ((types & ~d->supported_events) != 0) { pthread_mutex_unlock(&lock); return NVML_ERROR_NOT_SUPPORTED; }
    d->registered |= types;
    DONE
}

EXPORT int nvmlEventSetFree(void *set) {
    pthread_mutex_lock(&lock);
    if (set == NULL) { pthread_mutex_unlock(&lock); return NVML_ERROR_INVALID_ARGUMENT; }
    if (event_sets > 0) event_sets--;
    for (int i = 0; i < MAX_GPUS; i++) gpus[i].registered = 0;
    pthread_cond_broadcast(&queued);
    pthread_mutex_unlock(&lock);
    return NVML_SUCCESS;
}

static int deliverable(const queued_event *e) {
    stub_device *gpu = e->device->is_mig ? e->device->parent : e->device;
    return gpu->index < gpu_count && (gpu->registered & e->type) != 0;
}

/* Pops the next deliverable event into data; drops undeliverable ones. Lock held. */
static int pop_event(nvmlEventData_t *data) {
    while (queue_head < queue_tail) {
        queued_event *e = &queue[queue_head];
        if (e->remaining <= 0 || !deliverable(e)) { queue_head++; continue; }
        data->device = e->device->is_mig ? (void *)e->device->parent : (void *)e->device;
        data->eventType = e->type;
        data->eventData = e->data;
        data->gpuInstanceId = e->gi;
        data->computeInstanceId = e->ci;
        if (--e->remaining == 0) queue_head++;
        delivered++;
        return 1;
    }
    queue_head = queue_tail = 0;
    return 0;
}

EXPORT int nvmlEventSetWait_v2(void *set, nvmlEventData_t *data, unsigned int timeoutms) {
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += timeoutms / 1000;
    deadline.tv_nsec += (long)(timeoutms % 1000) * 1000000L;
    if (deadline.tv_nsec >= 1000000000L) { deadline.tv_sec++; deadline.tv_nsec -= 1000000000L; }
    pthread_mutex_lock(&lock);
    for (;;) {
        if (init_count == 0) { pthread_mutex_unlock(&lock); return NVML_ERROR_UNINITIALIZED; }
        if (set == NULL || data == NULL) { pthread_mutex_unlock(&lock); return NVML_ERROR_INVALID_ARGUMENT; }
        int rc = overridden(NULL, "nvmlEventSetWait_v2");
        if (rc != NVML_SUCCESS) { pthread_mutex_unlock(&lock); return rc; }
        if (lost_signal) { lost_signal = 0; pthread_mutex_unlock(&lock); return NVML_ERROR_GPU_IS_LOST; }
        if (pop_event(data)) { pthread_mutex_unlock(&lock); return NVML_SUCCESS; }
        if (pthread_cond_timedwait(&queued, &lock, &deadline) == ETIMEDOUT) {
            int got = pop_event(data);
            pthread_mutex_unlock(&lock);
            return got ? NVML_SUCCESS : NVML_ERROR_TIMEOUT;
        }
    }
}

/* ------------------------------------------------------------------ control API */

static stub_device *gpu_at(int index) {
    return index >= 0 && index < MAX_GPUS ? &gpus[index] : NULL;
}

EXPORT void stub_reset(void) {
    pthread_mutex_lock(&lock);
    for (int i = 0; i < MAX_GPUS; i++) default_device(i);
    gpu_count = 0;
    init_result = NVML_SUCCESS;
    init_calls = 0;
    lost_signal = 0;
    queue_head = queue_tail = 0;
    delivered = 0;
    override_count = 0;
    pthread_mutex_unlock(&lock);
}

__attribute__((constructor)) static void stub_load(void) { stub_reset(); }

EXPORT void stub_set_device_count(int count) {
    pthread_mutex_lock(&lock);
    gpu_count = count < 0 ? 0 : (count > MAX_GPUS ? MAX_GPUS : count);
    pthread_mutex_unlock(&lock);
}

EXPORT int stub_init_count(void) { pthread_mutex_lock(&lock); int n = init_count; pthread_mutex_unlock(&lock); return n; }
EXPORT int stub_init_calls(void) { pthread_mutex_lock(&lock); int n = init_calls; pthread_mutex_unlock(&lock); return n; }
EXPORT void stub_set_init_result(int rc) { pthread_mutex_lock(&lock); init_result = rc; pthread_mutex_unlock(&lock); }

EXPORT void stub_set_identity(int index, const char *uuid, const char *name) {
    pthread_mutex_lock(&lock);
    stub_device *d = gpu_at(index);
    if (d) {
        if (uuid) snprintf(d->uuid, sizeof d->uuid, "%s", uuid);
        if (name) snprintf(d->name, sizeof d->name, "%s", name);
    }
    pthread_mutex_unlock(&lock);
}

#define SETTER(fn, type, field) \
    EXPORT void fn(int index, type value) { \
        pthread_mutex_lock(&lock); \
        stub_device *d = gpu_at(index); \
        if (d) d->field = value; \
        pthread_mutex_unlock(&lock); \
    }

SETTER(stub_set_temperature, unsigned int, temperature)
SETTER(stub_set_slowdown_threshold, unsigned int, slowdown)
SETTER(stub_set_retired_pages_pending, unsigned int, retired_pending)
SETTER(stub_set_volatile_uncorrected_ecc, unsigned long long, volatile_unc_ecc)
SETTER(stub_set_clocks_event_reasons, unsigned long long, clocks_reasons)
SETTER(stub_set_power, unsigned int, power_mw)
SETTER(stub_set_power_limit, unsigned int, power_limit_mw)
SETTER(stub_set_energy, unsigned long long, energy_mj)
SETTER(stub_set_recovery_action, unsigned int, recovery_action)
SETTER(stub_set_supported_events, unsigned long long, supported_events)
SETTER(stub_set_nvlink_count, unsigned int, link_count)

EXPORT void stub_set_remapped_rows(int index, unsigned int corr, unsigned int unc, unsigned int pending, unsigned int failure) {
    pthread_mutex_lock(&lock);
    stub_device *d = gpu_at(index);
    if (d) { d->corr_rows = corr; d->unc_rows = unc; d->remap_pending = pending; d->remap_failure = failure; }
    pthread_mutex_unlock(&lock);
}

EXPORT void stub_set_nvlink_state(int index, unsigned int link, unsigned int active) {
    pthread_mutex_lock(&lock);
    stub_device *d = gpu_at(index);
    if (d && link < MAX_LINKS) d->link_active[link] = active;
    pthread_mutex_unlock(&lock);
}

EXPORT unsigned long long stub_registered_events(int index) {
    pthread_mutex_lock(&lock);
    stub_device *d = gpu_at(index);
    unsigned long long mask = d ? d->registered : 0;
    pthread_mutex_unlock(&lock);
    return mask;
}

/* Enables MIG with count instances; instance i gets the given GI/CI ids. */
EXPORT void stub_set_mig(int index, int count, const unsigned int *gi, const unsigned int *ci) {
    pthread_mutex_lock(&lock);
    stub_device *d = gpu_at(index);
    if (d) {
        d->mig_enabled = count > 0;
        d->mig_count = count > MAX_MIG ? MAX_MIG : (count < 0 ? 0 : count);
        for (int i = 0; i < d->mig_count; i++) {
            stub_device *m = &migs[index][i];
            memset(m, 0, sizeof(*m));
            m->is_mig = 1;
            m->parent = d;
            m->index = index;
            m->gi = gi[i];
            m->ci = ci[i];
            snprintf(m->uuid, sizeof m->uuid, "MIG-5a1d0000-0000-4000-8%03d-%012d", index, i);
            snprintf(m->name, sizeof m->name, "%s MIG %u/%u", d->name, gi[i], ci[i]);
            d->mig[i] = m;
        }
    }
    pthread_mutex_unlock(&lock);
}

/* Sets the return code of an NVML function for one GPU (-1: every GPU and device-less calls). rc 0 removes it. */
EXPORT void stub_set_return(int index, const char *function, int rc) {
    pthread_mutex_lock(&lock);
    int slot = -1;
    for (int i = 0; i < override_count; i++) {
        if (overrides[i].device == index && strcmp(overrides[i].function, function) == 0) slot = i;
    }
    if (rc == NVML_SUCCESS) {
        if (slot >= 0) overrides[slot] = overrides[--override_count];
    } else {
        if (slot < 0 && override_count < MAX_OVERRIDES) slot = override_count++;
        if (slot >= 0) {
            overrides[slot].device = index;
            snprintf(overrides[slot].function, sizeof overrides[slot].function, "%s", function);
            overrides[slot].rc = rc;
        }
    }
    pthread_mutex_unlock(&lock);
}

/* Queues count copies of one event (count > 1 simulates a storm without count entries). */
EXPORT int stub_queue_events(int index, unsigned long long type, unsigned long long data, unsigned int gi, unsigned int ci, long long count) {
    pthread_mutex_lock(&lock);
    stub_device *d = gpu_at(index);
    if (d == NULL || count <= 0) { pthread_mutex_unlock(&lock); return -1; }
    if (queue_tail == queue_capacity) {
        size_t capacity = queue_capacity == 0 ? 64 : queue_capacity * 2;
        queued_event *grown = realloc(queue, capacity * sizeof(queued_event));
        if (grown == NULL) { pthread_mutex_unlock(&lock); return -1; }
        queue = grown;
        queue_capacity = capacity;
    }
    queued_event *e = &queue[queue_tail++];
    e->device = d;
    e->type = type;
    e->data = data;
    e->gi = gi;
    e->ci = ci;
    e->remaining = count;
    pthread_cond_broadcast(&queued);
    pthread_mutex_unlock(&lock);
    return 0;
}

/* Events still queued (deliverable or not). */
EXPORT long long stub_pending_events(void) {
    pthread_mutex_lock(&lock);
    long long n = 0;
    for (size_t i = queue_head; i < queue_tail; i++) n += queue[i].remaining;
    pthread_mutex_unlock(&lock);
    return n;
}

EXPORT long long stub_delivered_events(void) {
    pthread_mutex_lock(&lock);
    long long n = delivered;
    pthread_mutex_unlock(&lock);
    return n;
}

/* The GPU falls off the bus: every call on it returns GPU_IS_LOST, the next wait reports it once. */
EXPORT void stub_set_lost(int index, int lost) {
    pthread_mutex_lock(&lock);
    stub_device *d = gpu_at(index);
    if (d) {
        d->lost = lost;
        if (lost) { lost_signal = 1; pthread_cond_broadcast(&queued); }
    }
    pthread_mutex_unlock(&lock);
}

/* A GPU reset: reachable again, volatile state cleared, its queued events dropped. */
EXPORT void stub_reset_gpu(int index) {
    pthread_mutex_lock(&lock);
    stub_device *d = gpu_at(index);
    if (d) {
        d->lost = 0;
        d->volatile_unc_ecc = 0;
        d->remap_pending = 0;
        d->retired_pending = 0;
        d->recovery_action = 0;
        d->energy_mj = 0;
        d->clocks_reasons = 0;
        for (size_t i = queue_head; i < queue_tail; i++) {
            stub_device *gpu = queue[i].device->is_mig ? queue[i].device->parent : queue[i].device;
            if (gpu == d) queue[i].remaining = 0;
        }
    }
    pthread_mutex_unlock(&lock);
}
