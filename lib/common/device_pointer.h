/* device_pointer.h: whether memory a caller hands to an object's _device call is memory the
 * object's kernels can reach, checked before anything is queued. A kernel that reads an address of
 * another device or context faults, and a fault is sticky: it ends CUDA work in the whole process
 * (cudafft/common.h, Device errors). So every entry point that takes device memory asks here first
 * and fails with WRONG_DEVICE_MEMORY, naming where the memory is and where the object runs.
 *
 * What passes: device memory of the object's device allocated in the object's context (or in no
 * context: stream-ordered pools and virtual memory belong to the device), managed memory,
 * page-locked host memory mapped for the object's context, and plain host memory on a device that
 * reaches pageable memory (HMM, ATS). Anything else fails.
 *
 * The check asks the driver once per allocation and object: an allocation's range that passed is
 * kept (a few per object, the most recent ones), and a later pointer inside it passes without a
 * driver call, so that streaming through the same buffers costs nothing. The object is used by one
 * thread at a time (cudafft/common.h, Threads), so its ranges need no lock. What the cache cannot
 * see is memory freed and allocated again at the same address elsewhere while the object lives;
 * a reset forgets the ranges.
 *
 * Internal to the library; plain C in every build (the driver's answer comes from cuda_host.h in
 * CUDA builds; the judgement and the ranges are plain C so that the CPU tests cover them). */
#ifndef CUDAFFT_DEVICE_POINTER_H
#define CUDAFFT_DEVICE_POINTER_H

#include <cudafft/common.h>

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What CUDA says of an address, read with the object's context current. */
typedef enum {
  CUDAFFT_PLACE_UNKNOWN = 0, /* not memory CUDA knows: plain host memory, or no memory at all */
  CUDAFFT_PLACE_HOST,        /* page-locked host memory */
  CUDAFFT_PLACE_DEVICE,      /* device memory */
  CUDAFFT_PLACE_MANAGED,     /* managed (unified) memory */
} CudafftPlaceKind;

typedef struct {
  CudafftPlaceKind kind;
  int device;          /* the ordinal device memory is on (-1: unknown) */
  const void *context; /* the context it was allocated in (NULL: none, or not known) */
  int pooled;          /* from a stream-ordered pool or virtual memory: no context of its own */
  int mapped;          /* host memory the object's context reaches at the same address */
  uintptr_t start;     /* the allocation's range (size 0: not known) */
  size_t size;
  /* the object's side */
  int object_device;          /* the object's device ordinal */
  const void *object_context; /* the object's context */
  int pageable;               /* the object's device reaches pageable host memory */
} CudafftPointerPlace;

/* Whether memory described by place can be handed to the object's kernels for bytes from ptr:
 * OK, or WRONG_DEVICE_MEMORY with a message "<call>: the <what> (ptr) is ..., but ...". */
CudafftStatus cudafft_device_pointer_judge(const CudafftPointerPlace *place, const void *ptr,
                                           size_t bytes, const char *call, const char *what);

/* The ranges of one object that passed, the most recent ones: enough for the buffers a pool of
 * GStreamer's CUDA memory cycles through (its buffers are allocations of their own). Zeroed: none
 * (what a new object starts with). */
#define CUDAFFT_CHECKED_RANGES 16
typedef struct {
  uintptr_t start[CUDAFFT_CHECKED_RANGES];
  size_t size[CUDAFFT_CHECKED_RANGES];
  unsigned next; /* the slot the next range replaces */
} CudafftCheckedMemory;

/* Whether [ptr, ptr + bytes) lies in a range that passed. */
int cudafft_checked_memory_has(const CudafftCheckedMemory *checked, const void *ptr, size_t bytes);
/* Keeps [start, start + size) as passed, replacing the oldest; nothing for size 0. */
void cudafft_checked_memory_keep(CudafftCheckedMemory *checked, uintptr_t start, size_t size);
/* Forgets every range (an object's reset). */
void cudafft_checked_memory_forget(CudafftCheckedMemory *checked);

/* The check an entry point makes for each pointer it takes in device memory (ptr non-NULL, bytes
 * from it): OK where the memory is in `checked` or passes the judgement (then kept), else the
 * judgement's status. `device` is the object's device id (an ordinal or an attached context's).
 * Leaves the caller's current context as it was. UNSUPPORTED in a build without the CUDA backend
 * (no object there takes device memory). */
CudafftStatus cudafft_device_pointer_check(CudafftCheckedMemory *checked, int device,
                                           const void *ptr, size_t bytes, const char *call,
                                           const char *what);

/* A _device call's two sides (`on_device`, CudafftMemory flags): in (in_bytes from it) where
 * CUDAFFT_IN_DEVICE is set, out where CUDAFFT_OUT_DEVICE is, each checked as above when non-NULL
 * and of bytes > 0. */
CudafftStatus cudafft_device_pointers_check(CudafftCheckedMemory *checked, int device,
                                            unsigned on_device, const void *in, size_t in_bytes,
                                            const void *out, size_t out_bytes, const char *call);

#ifdef __cplusplus
}
#endif

#endif
