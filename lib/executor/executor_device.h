/* executor_device.h: what the executor's host logic (executor.c) asks of a device: staging and
 * device buffers for its batch slots, a batch's copies and completion marker, a blocking wait for
 * a batch, and memory for the engine objects' state. Internal to the library.
 *
 * Two tables implement it: the CUDA device (executor_cuda.cu, the only one the library
 * uses), and a test device in tests/ that does the "device" work with host memory on a thread of
 * its own, so that the launcher's logic runs under the sanitizers on machines without a GPU. */
#ifndef CUDAFFT_EXECUTOR_DEVICE_H
#define CUDAFFT_EXECUTOR_DEVICE_H

#include "executor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The sizes an executor is made with (the device's choice, fixed for its life). */
typedef struct {
  size_t max_job_bytes;   /* cudafft_executor_max_job_bytes() */
  unsigned slots;         /* batch slots made with the executor: at least max_in_flight + 1 */
  unsigned max_in_flight; /* batches queued on the device at once: at least 1 */
  size_t max_jobs;        /* jobs in one batch: at least 1 */
  unsigned max_slots;     /* slots it may grow to, made one at a time when jobs wait for room and
                           * none is free (at least slots) */
} CudafftExecutorLimits;

/* One batch slot's memory: inputs and auxiliary data are staged in host_in and uploaded to
 * device_in in one copy; outputs come from device_out down to host_out. `handle` is the device
 * table's own state for the slot (its events). */
typedef struct {
  void *host_in, *host_out;
  void *device_in, *device_out;
  void *handle;
} CudafftSlotMemory;

/* Which thread calls what: open and close on the thread of the first acquire and of the last
 * release; slot_alloc and slot_free there too; stream, upload and finish on the thread that
 * launches a batch (the launcher thread, or the submitting thread of a job alone in its batch),
 * one batch after another, in the order the batches run; wait on the thread that completes a batch
 * (the completion thread, or that job's waiting thread), one at a time, in the same order; the
 * executor's lock orders each call after the one before. alloc and free on any thread,
 * concurrently. Failures return a status through cudafft_fail() naming the call. */
typedef struct {
  /* Starts using `device` (validated by the caller): *ctx is the table's state for it, *limits
   * the executor's sizes. On failure leaves nothing behind. */
  CudafftStatus (*open)(int device, void **ctx, CudafftExecutorLimits *limits);
  /* Frees ctx. Every slot is freed and the device idle. */
  void (*close)(void *ctx);
  /* A slot with in_bytes of input staging and out_bytes of output staging, page-locked, and the
   * device buffers of the same sizes. On failure leaves nothing behind (*mem zeroed). */
  CudafftStatus (*slot_alloc)(void *ctx, size_t in_bytes, size_t out_bytes, CudafftSlotMemory *mem);
  void (*slot_free)(void *ctx, CudafftSlotMemory *mem);
  /* The stream the kinds queue their kernels on. */
  void *(*stream)(void *ctx);
  /* Queues the copy of the first `bytes` of host_in to device_in (none for 0) before anything the
   * kinds queue next on the stream. */
  CudafftStatus (*upload)(void *ctx, CudafftSlotMemory *mem, size_t bytes);
  /* After the kinds' launches: queues the copy of the first `bytes` of device_out to host_out
   * (none for 0) after everything queued so far on the stream, and the slot's completion marker
   * after that. Called for every batch, failed ones too (with 0 bytes), so that wait covers
   * whatever of the batch was queued. */
  CudafftStatus (*finish)(void *ctx, CudafftSlotMemory *mem, size_t bytes);
  /* After the kinds' work ahead (CudafftWorkKind.launch_ahead) of the slot's batch: the slot's
   * device memory (its auxiliary data) may be written again only after everything queued so far
   * on the stream, which the slot's next upload must wait for. Called only for batches with work
   * ahead; NULL for a device whose copies and launches run in one order anyway. */
  CudafftStatus (*ahead_queued)(void *ctx, CudafftSlotMemory *mem);
  /* Blocks (never spinning) until everything queued for the slot's batch is done, and returns
   * the error the device reported for it, if any. Called once per batch after finish, whatever
   * upload and finish returned: when it returns, the slot's memory is free for reuse. */
  CudafftStatus (*wait)(void *ctx, CudafftSlotMemory *mem);
  /* cudafft_executor_alloc() and cudafft_executor_free() (bytes > 0, ptr non-NULL). A free must
   * also come after the work ahead queued so far (which may still read the memory once its job's
   * wait has returned). */
  CudafftStatus (*alloc)(void *ctx, size_t bytes, const char *what, void **ptr);
  void (*free)(void *ctx, void *ptr);
} CudafftExecutorDevice;

/* cudafft_executor_acquire() over any device table: the executor of (device_table, device), made
 * by the first call and shared by later ones (one process-wide registry). `device` is passed to
 * open() as it is. */
CudafftStatus cudafft_executor_acquire_on(const CudafftExecutorDevice *device_table, int device,
                                          CudafftExecutor **ex);

#ifdef __cplusplus
}
#endif

#endif
