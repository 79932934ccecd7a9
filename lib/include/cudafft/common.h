/* cudafft/common.h: what every engine of the cudafft library shares: statuses and error messages,
 * the choice of backend, sample formats, and host memory for fast copies to the GPU.
 *
 * The library is plain C behind its headers and knows nothing of GLib or GStreamer; its CUDA
 * backend (where built in) runs on NVIDIA GPUs, its CPU backend on FFTW. Every engine (block FFT
 * plans, cudafft/fft.h; streaming STFT, cudafft/stft.h; interval spectra, cudafft/spectrum.h;
 * streaming FIR filters, cudafft/convolve.h; model features, cudafft/features.h) takes the same
 * backend argument and returns the same statuses.
 *
 * Errors: every function returns a status; none prints, aborts or exits. The detail of the last
 * failure on the calling thread (which call failed, with CUDA's own words) is available from
 * cudafft_last_error_message(). Functions that take an engine object require a non-NULL one unless
 * they say otherwise; every destroy function accepts NULL.
 *
 * Devices: every create function takes a CUDA device id. An id of 0 or more pins the object to that
 * device. -1 (what the elements' cuda-device-id defaults to) leaves the choice to the library: on a
 * host with one GPU that is device 0, as it always was; on a host with several, a new object goes
 * to the least loaded device, by this rule: the device whose objects hold the fewest bytes of
 * device state (delay lines, kernel spectra, open sums: what the engines keep on the GPU between
 * calls), then the one with the fewest objects (counted from the moment one is being made there,
 * so that objects made at once from many threads spread too), then the one with the most free
 * memory, then the lowest id. State bytes rather than measured device work per second because they
 * are exact the moment an object is made and leave the moment it goes (work per second is known
 * only after a while of streaming, and is zero for every object of a burst made at start-up), they
 * follow the work of the engines whose work dominates (a convolution's kernel spectra and delay
 * line), and memory is what makes the next object not fit. Where an object does not fit on the
 * device chosen (or fails there for the device's own reasons), the others are tried in the same
 * order before the create fails, and its message names every device tried with what each said.
 * One object never spans devices (a convolution's later filters stay on its first one's). Each
 * engine's get_device function tells where an object runs; cudafft_cuda_device_load() what a
 * device holds. An object made with -1 may thus run on any device: a caller that hands it device
 * memory pins it instead, or reads get_device and allocates there (Device memory below).
 *
 * Contexts: an id of a device runs its objects in the device's primary context (the CUDA
 * runtime's). An application whose device memory lives in a context of its own (made with the
 * driver's cuCtxCreate, as GStreamer's GstCudaContext is) attaches that context with
 * cudafft_cuda_context_attach() and passes the id it gets as the device id of any create function:
 * the object then runs in that context (its kernels can read and write that context's memory, for
 * cudafft_execute_device() and cudafft_scope_render_device()), pinned like an explicit device id.
 * Each attached context has its own executor (streams, memory pool, staging) beside its device's;
 * its objects count in their device's load. A context id that is not attached fails a create with
 * NO_DEVICE on the CUDA and AUTO backends (no fallback to the CPU: the application meant its
 * context); the CPU backend ignores device ids. The application keeps the context alive until every
 * object made with the id is destroyed and the id detached. The get_device functions return the id
 * an object was made with; cudafft_cuda_context_device() gives the device it stands for.
 *
 * The caller's context: every call leaves the calling thread's current context (and so its current
 * device) as it found it, as CUDA's own libraries do, create and destroy included, whatever device
 * the object runs on: a caller's own allocations, plans and events after a call go where they went
 * before it. (A thread with no context current keeps none, or gets the primary context of its
 * runtime device where that exists, which the runtime would bind anyway.)
 *
 * Device memory: an object's _device calls (cudafft_execute_device(), every _push_device,
 * cudafft_istft_drain_device(), cudafft_scope_render_device()) take memory its kernels can reach:
 * device memory of the object's device allocated in the object's context (a device id's object:
 * the device's primary context, which cudaMalloc uses; an attached context's object: that context;
 * memory of a stream-ordered pool or virtual memory mapped for the device counts as the device's),
 * managed memory, or page-locked host memory mapped for the object's context. Every pointer is
 * checked before anything is queued; anything else fails the call with WRONG_DEVICE_MEMORY, whose
 * message names where the memory is and where the object runs (a kernel given such an address
 * would fault, and a fault ends CUDA work in the whole process: Device errors below). So a caller
 * of device memory pins its objects to the device (or attached context) its memory is on, or asks
 * an object made with -1 where it runs (its get_device function) and allocates there. The check
 * asks the driver once per allocation and object (a few allocations are remembered per object, and
 * forgotten at its reset), so that streaming through the same buffers costs no driver call; memory
 * freed and allocated again at the same address elsewhere while an object remembers it is not
 * noticed.
 *
 * Fences: the device work of one context's objects runs in one order (the context's executor's
 * batches, on one stream). A producer's _push_device call given a `done` fence returns without
 * waiting for its device output; a consumer of the same context given that fence as `after` puts
 * its own work behind it on the device, so samples and frames pass from object to object with no
 * host wait between them. Anything else that reads the output (the host, another context, a copy
 * on another stream) calls cudafft_fence_wait() first. A producer waits for its own earlier work
 * at its next call at the latest, and reports that work's failure there. The caller keeps the
 * producer's output memory until the fence is reached, and a consumer's input until the consumer's
 * own work is done.
 *
 * Device errors: one that is not sticky (a failed launch, out of memory) fails only the work of
 * that device (each device has its own executor, and a failed batch fails the calls whose work was
 * in it, leaving its object as the engine's header says: a convolution, STFT or spectrum object is
 * reset), and the device's objects work again after it. A sticky error (a kernel fault such as
 * cudaErrorLaunchFailure or cudaErrorIllegalAddress) ends CUDA work in the whole process, on every
 * device. CUDA's rule (the runtime API's error types): "This leaves the process in an inconsistent
 * state and any further CUDA work will return the same error. To continue using CUDA, the process
 * must be terminated and relaunched." After one, every call that needs a device fails with an error
 * status (CUDA_ERROR, with CUDA's words), none hangs, and objects can still be destroyed. An
 * application that must survive one GPU's fault runs a process per GPU, each pinned to its device
 * with an explicit id (the elements' cuda-device-id).
 *
 * Threads: one engine object must not be used by two threads at once; different objects may be
 * used from different threads concurrently. The functions that take no object are thread-safe.
 * The CPU backends serialise their own calls into FFTW's planner; an application that also plans
 * with FFTW on other threads must hold off while cudafft objects are created or destroyed.
 */
#ifndef CUDAFFT_COMMON_H
#define CUDAFFT_COMMON_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Marks the library's public functions: the only symbols the shared library exports. */
#if defined(__GNUC__)
#define CUDAFFT_API __attribute__((visibility("default")))
#else
#define CUDAFFT_API
#endif

/* The transform sizes of the FFT engine and of the STFT: every n from CUDAFFT_MIN_SIZE to
 * CUDAFFT_MAX_SIZE whose only prime factors are 2, 3, 5 and 7 (400, 480, 1000, 1536, 3000, 4096,
 * ...; cudafft_fft_size_supported()). The powers of two from CUDAFFT_FUSED_MIN_SIZE up have kernels
 * of their own, tuned; they are also the sizes of the display engine (cudafft/scope.h) and of the
 * fft-size of cudaspectrum's band layouts. This is the one place they are written. */
#define CUDAFFT_MIN_SIZE 16
#define CUDAFFT_MAX_SIZE 16384
#define CUDAFFT_FUSED_MIN_SIZE 256

/* Whether n is a transform size of the FFT engine and the STFT (CUDAFFT_MIN_SIZE..CUDAFFT_MAX_SIZE,
 * no prime factor above 7). */
CUDAFFT_API int cudafft_fft_size_supported(size_t n);

/* The supported sizes nearest n: *below the largest <= n, *above the smallest >= n (both n where
 * it is supported), 0 where there is none (below CUDAFFT_MIN_SIZE, above CUDAFFT_MAX_SIZE). Either
 * pointer may be NULL. */
CUDAFFT_API void cudafft_fft_size_nearest(size_t n, size_t *below, size_t *above);

/* The most channels any engine takes. */
#define CUDAFFT_MAX_CHANNELS 1024

typedef enum {
  CUDAFFT_STATUS_OK = 0,
  CUDAFFT_STATUS_INVALID_SIZE,  /* a size out of its range (transform size, bands, taps) */
  CUDAFFT_STATUS_INVALID_BATCH, /* batch is 0, or so large that byte counts overflow */
  CUDAFFT_STATUS_NULL_POINTER,  /* a required pointer is NULL */
  CUDAFFT_STATUS_INVALID_VALUE, /* an argument out of its range (direction, alignment...) */
  CUDAFFT_STATUS_UNSUPPORTED,   /* the call does not exist for this backend, or these settings
                                   cannot run on it */
  CUDAFFT_STATUS_NO_DEVICE,     /* no usable CUDA device (none, no driver, bad device id) */
  CUDAFFT_STATUS_DEVICE_OUT_OF_MEMORY,
  CUDAFFT_STATUS_HOST_OUT_OF_MEMORY,
  CUDAFFT_STATUS_CUDA_ERROR,          /* any other CUDA failure; see cudafft_last_error_message() */
  CUDAFFT_STATUS_BACKEND_UNAVAILABLE, /* the backend was not built into this library */
  CUDAFFT_STATUS_WRONG_DEVICE_MEMORY, /* a _device call was given memory of another device or
                                         context than the object's, or no device memory at all
                                         (the message says where it is); nothing was queued */
  CUDAFFT_STATUS_COUNT_               /* not a status: the number of statuses */
} CudafftStatus;

typedef enum {
  CUDAFFT_BACKEND_AUTO = 0, /* CUDA when the device is usable, otherwise CPU (also when the
                               requested device id does not exist; not for a context id that is
                               not attached: NO_DEVICE, see Contexts) */
  CUDAFFT_BACKEND_CUDA,
  CUDAFFT_BACKEND_CPU,
} CudafftBackend;

/* Where an engine's _push_device call finds its input and puts its output (flags): in device
 * memory of the object's context, read or written in place, or (flag clear) in host memory. */
typedef enum {
  CUDAFFT_IN_DEVICE = 1 << 0,  /* the input is device memory */
  CUDAFFT_OUT_DEVICE = 1 << 1, /* the output is device memory */
} CudafftMemory;

/* A point in the device work of the objects of one context (one executor's batch), where the
 * output of a _push_device call that did not wait for the device (its `done` argument) becomes
 * complete. An object of the same context that is given it as `after` orders its own device work
 * behind it, with no host wait; anyone else calls cudafft_fence_wait() first. Zeroed: no fence
 * (the work is complete). Plain values: copy them freely. */
typedef struct {
  unsigned long long queue; /* which context's work (0: none) */
  unsigned long long mark;  /* the batch in it */
} CudafftFence;

/* Blocks (without spinning) until the device work before `fence` is done; OK at once for a zeroed
 * fence, and for one whose objects are all gone (their work ran to its end first). A failure of
 * that work is reported to the object that queued it, at its next call. Thread-safe. */
CUDAFFT_API CudafftStatus cudafft_fence_wait(CudafftFence fence);

/* Interleaved samples, native (little-endian) byte order; S24 is packed (3 bytes). How integers
 * become values is each engine's to say (its header states it); which formats an engine takes
 * too. */
typedef enum {
  CUDAFFT_SAMPLE_S16 = 0,
  CUDAFFT_SAMPLE_S24,
  CUDAFFT_SAMPLE_S32,
  CUDAFFT_SAMPLE_F32,
  CUDAFFT_SAMPLE_F64,
  CUDAFFT_SAMPLE_COUNT_ /* not a format */
} CudafftSampleFormat;

/* A short lower-case name for each status ("invalid transform size", "no usable CUDA device",
 * ...); never NULL. */
CUDAFFT_API const char *cudafft_status_name(CudafftStatus status);

/* What the last failed call on this thread said in detail; "" if none failed yet. Successful
 * calls leave it unchanged; the text stays valid until the next failing call on this thread. */
CUDAFFT_API const char *cudafft_last_error_message(void);

/* Number of usable CUDA devices: 0 when there is none, no driver, or no CUDA backend built in. */
CUDAFFT_API int cudafft_cuda_device_count(void);

/* Why cudafft_cuda_device_count() is 0, in words a user can act on, written into `size` bytes at
 * text (cut to fit, always terminated): "this build has no CUDA backend ...", "no NVIDIA driver
 * found ...", "the NVIDIA driver (for CUDA 11.4) is older than this build's CUDA runtime (13.0)",
 * "no CUDA device found ...", or CUDA's own words; "" where there is a usable device. Returns the
 * length written (0 for a NULL text or size 0). Any thread. */
CUDAFFT_API size_t cudafft_cuda_unavailable_reason(char *text, size_t size);

/* What the library's objects hold on CUDA device `device` now, the load by which objects made with
 * device id -1 are spread (see Devices above): *objects (its CUDA backend objects, a convolution
 * of the split path counting its parts) and *state_bytes (their state on the device). Either may
 * be NULL. INVALID_VALUE for a device id outside 0 .. cudafft_cuda_device_count() - 1. */
CUDAFFT_API CudafftStatus cudafft_cuda_device_load(int device, unsigned *objects,
                                                   size_t *state_bytes);

/* The first context id (cudafft_cuda_context_attach()): far above any device count, so that a
 * context id and a device id never meet. */
#define CUDAFFT_CONTEXT_ID_BASE 1024

/* Attaches the CUDA driver context `cu_context` (a CUcontext) for the library's objects (see
 * Contexts above) and stores in *device_id the id that names it. Where it is its device's primary
 * context, that is the device's id itself (objects made with it are the device's, as always);
 * otherwise an id from CUDAFFT_CONTEXT_ID_BASE up. Attaching the same context again gives the same
 * id and counts one more reference. NULL_POINTER for a NULL argument; UNSUPPORTED where 64
 * contexts are attached already; NO_DEVICE where there is no driver; BACKEND_UNAVAILABLE in a
 * build without the CUDA backend; CUDA_ERROR (with CUDA's words) for a context the driver does not
 * take. Thread-safe. */
CUDAFFT_API CudafftStatus cudafft_cuda_context_attach(void *cu_context, int *device_id);

/* Gives back one reference of an id from cudafft_cuda_context_attach(); the id names nothing once
 * every one is back (a later attach may give it to another context). Every object made with it
 * must be destroyed first. Does nothing for a device's own id or an id that is not attached. */
CUDAFFT_API void cudafft_cuda_context_detach(int device_id);

/* The CUDA device ordinal an id stands for: device_id itself for 0 .. cudafft_cuda_device_count()
 * - 1, the context's device for an attached context's id, -1 otherwise. */
CUDAFFT_API int cudafft_cuda_context_device(int device_id);

/* The primary context of CUDA device `device` (a CUcontext) in *cu_context: the context objects
 * made with that device id run in, for an application that shares it (GStreamer: wrapped in a
 * GstCudaContext); made where it is not yet, the caller's current context left as it was. Valid
 * while the CUDA runtime keeps it (the process's life, unless cudaDeviceReset). NULL_POINTER,
 * INVALID_VALUE for a device outside 0 .. cudafft_cuda_device_count() - 1, NO_DEVICE where there
 * is none or no driver, BACKEND_UNAVAILABLE in a build without the CUDA backend. Thread-safe. */
CUDAFFT_API CudafftStatus cudafft_cuda_primary_context(int device, void **cu_context);

/* Whether this library was built with the CUDA backend. */
CUDAFFT_API int cudafft_has_cuda_backend(void);

/* Bytes of one sample of `format` (2, 3, 4, 4, 8); 0 for an unknown format. */
CUDAFFT_API size_t cudafft_sample_bytes(CudafftSampleFormat format);

/* The format's name as GStreamer writes it ("S16LE", "S24LE", "S32LE", "F32LE", "F64LE"); "?"
 * for an unknown one. */
CUDAFFT_API const char *cudafft_sample_format_name(CudafftSampleFormat format);

/* Host memory that needs no engine object, for buffers that outlive any one object (the GStreamer
 * elements' buffer pools): page-locked when want_pinned is set and a CUDA device is usable (copies
 * to and from it run at full bus speed and asynchronously), otherwise plain 64-byte aligned
 * memory. *pinned (may be NULL) says which it got; pass it back to cudafft_pinned_free(). NULL when
 * out of memory. */
CUDAFFT_API void *cudafft_pinned_alloc(size_t bytes, int want_pinned, int *pinned);
CUDAFFT_API void cudafft_pinned_free(void *ptr, int pinned);

#ifdef __cplusplus
}
#endif

#endif /* CUDAFFT_COMMON_H */
