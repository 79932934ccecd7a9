/* devices.h: the CUDA devices as the library sees them: how many there are (and which device an
 * id stands for), the per-device load, and which device a new object goes to when its caller
 * leaves the choice to the library (device id -1). Internal to the library; plain C (no CUDA
 * types), so that the rule runs and is tested without a GPU (tests/test_device_load.c).
 *
 * One file for the three, below the backend choice (backend_choice.c calls in, nothing here calls
 * back) and above the contexts' table (contexts.h, which calls nothing here): counting, load and
 * choice each need the others (the load is kept per physical device, the choice reads it for the
 * devices counted), and split they called one another in a circle.
 *
 * The rule (cudafft_device_pick): a device where an object lately failed for the device's own
 * reasons goes after every other (set aside, see below); then the device whose objects hold the
 * fewest bytes of state; among equals, the one with the fewest objects (those being made on it
 * counted); among equals, the one with the most free memory; then the lowest id. Explicit ids pin
 * and one GPU changes nothing: cudafft_try_cuda_device() asks this only for -1 on a host with two
 * devices or more.
 *
 * Why state bytes and not device work per second: they are known the moment an object is made,
 * exactly, and leave the moment it goes, while work per second is measured after the fact (over a
 * window that lags, and is zero for every object of a burst made before any streams: a server
 * starting its pipelines would put them all on one device). For the engines whose device work
 * dominates they follow the work: a convolution's state is its kernel spectra and delay line,
 * partitions x (rows + channels), and its work per block partitions x channels; a spectrum's is
 * bands x spectra. And memory is what makes the next object not fit. What they miss: an object's
 * rate (one that never pushes weighs as much as one that streams flat out), and plans and scopes,
 * whose memory is their own (not the executor's): those count as objects only, the second key.
 * The object count also spreads a burst of objects made at once from many threads: each is
 * counted on its device from its choice on, before its state exists. Free memory breaks the
 * remaining ties, so that a device that others (another process, the application) fill gets new
 * objects last.
 *
 * Set aside: a device where a try failed (out of its memory, a CUDA failure, unusable) is tried
 * only after every other, so that creates do not each pay a failed try on it first (a device
 * filled by another process, with few objects of ours, would otherwise always look the lightest).
 * It stays in the choice: where the others fail too it is tried last. The mark goes when an object
 * is made on it (it works again) and, for out of memory, when state is freed on it (memory came
 * back). A device that cannot run one object's settings (UNSUPPORTED) is not set aside: that says
 * nothing about other objects.
 *
 * Threads: every function is thread-safe; the table is kept under one mutex, taken for a few
 * loads and stores at a time (objects made and destroyed, state allocated and freed, a choice). */
#ifndef CUDAFFT_DEVICES_H
#define CUDAFFT_DEVICES_H

#include <cudafft/common.h>

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Devices the table keeps: the ids 0 .. CUDAFFT_LOAD_DEVICES - 1 (more than any host has); the
 * choice looks at no more, and changes for other ids are ignored. */
#define CUDAFFT_LOAD_DEVICES 64

/* One device as the choice sees it. */
typedef struct {
  size_t state_bytes; /* device memory the executor has given the objects on it for their state */
  unsigned objects;   /* CUDA backend objects on it, and objects being made there */
  int set_aside;      /* a try failed on it lately (see above): after every other device */
  size_t free_bytes;  /* its free memory, a snapshot taken before the choice; 0 if unknown */
  int tried;          /* already tried for this object: no candidate */
} CudafftDeviceLoad;

/* The rule above, a pure function: the id (index into loads) of the device to try next among
 * loads[0 .. count), or -1 when every one was tried (or count is 0). */
int cudafft_device_pick(const CudafftDeviceLoad *loads, int count);

/* Changes device's load: objects and state bytes by the given amounts (negative to remove). An
 * attached context's id (contexts.h) counts on the context's device: the load is the physical
 * device's. Ignored for ids outside the table. */
void cudafft_device_load_change(int device, int objects, long long state_bytes);

/* device's load now (0, 0 outside the table). */
void cudafft_device_load_get(int device, unsigned *objects, size_t *state_bytes);

/* Under the table's lock: copies the table's objects, state bytes and set-aside marks into
 * loads[0 .. count) (the caller's free_bytes and tried stay), picks a device by the rule, counts
 * one object being made on it and marks it tried. Returns its id, or -1 when every one was tried.
 * The caller gives the count back with cudafft_device_load_change(device, -1, 0) once the object is
 * made there (which then counts itself) or failed. */
int cudafft_device_load_reserve(CudafftDeviceLoad *loads, int count);

/* One device tried for an object, and why it failed. */
typedef struct {
  int device;
  CudafftStatus status;
  char message[256];
} CudafftDeviceTry;

/* A try on device failed with status: sets it aside (see above) where status is the device's
 * own lasting trouble (DEVICE_OUT_OF_MEMORY, CUDA_ERROR, NO_DEVICE); nothing for other statuses
 * or ids outside the table. */
void cudafft_device_load_failed(int device, CudafftStatus status);

/* Whether a failure on one device lets the choice try another: the device's own troubles (out of
 * memory, a CUDA failure, a device that cannot run these settings, an unusable device); not bad
 * arguments, nor the host's memory. */
int cudafft_device_try_next(CudafftStatus status);

/* The failure of an object that no device took: records (cudafft_fail) a message naming every
 * device tried, in order, each with its own message ("no CUDA device could take it (tried 1, 0):
 * device 1: ...; device 0: ..."), each cut to fit, and returns the status: the one every try
 * failed with, or DEVICE_OUT_OF_MEMORY where they differ and one was out of memory, else the
 * first try's. count >= 1. */
CudafftStatus cudafft_device_tries_fail(const CudafftDeviceTry *tries, size_t count);

/* Makes an engine object's backend object on one backend (never AUTO) and, for CUDA, on
 * device_id, returning its status; on failure it must leave nothing behind, since it may be called
 * again (AUTO's fallback, the next device). backend_choice.h's CUDAFFT_DEFINE_TRY_BACKEND defines
 * one for an engine. */
typedef CudafftStatus (*CudafftTryBackend)(void *object, const void *spec, CudafftBackend backend,
                                           int device_id);

/* try_backend on CUDA for device_id, as cudafft_create_on_backend() does for CUDA and AUTO: an
 * explicit device_id pins (it is passed as it is); -1 on a host with one device is device 0; -1 on
 * a host with two or more goes to the device the rule above picks, and where the object fails
 * there for the device's own reasons (cudafft_device_try_next: it does not fit, say), to the next
 * one by the same rule, until one takes it; when none does, the failure names every device tried
 * with its own message (cudafft_device_tries_fail). With OK, *device is the device the object was
 * made on. */
CudafftStatus cudafft_try_cuda_device(CudafftTryBackend try_backend, void *object, const void *spec,
                                      int device_id, int *device);

/* The spreading part of cudafft_try_cuda_device(), apart so that it runs without a GPU (tests/
 * test_device_load.c): try_backend on CUDA on one device after another among the first count,
 * picked and counted by cudafft_device_load_reserve() with free_bytes[i] as device i's free
 * memory, until one takes the object (OK, *device its id) or fails for a reason that no other
 * device would change (that status), or every one failed (cudafft_device_tries_fail()). */
CudafftStatus cudafft_try_devices(int count, const size_t *free_bytes,
                                  CudafftTryBackend try_backend, void *object, const void *spec,
                                  int *device);

#ifdef __cplusplus
}
#endif

#endif
