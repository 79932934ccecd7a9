/* executor.h: the shared per-device executor: one per CUDA device per process, shared by every
 * engine object on that device, which batches the objects' work into one launch chain per kind of
 * work. Internal to the library; plain C (no CUDA types), so that its host logic (executor.c) runs
 * and is tested without a GPU. executor_device.h says what a device must do for it;
 * executor_cuda.cu is the CUDA device, the only one the library uses.
 *
 * Why: an engine object that makes its own synchronous round trip per buffer (its own streams, a
 * few small launches, two copies, a wait) serialises with every other object in the driver, and
 * many live streams on one GPU then top out far below what the GPU can do.
 *
 * The model:
 * - A job is one engine object's unit of work: `in_bytes` of input, `out_bytes` of output and the
 *   engine's own parameters (CudafftJob is the common header an engine embeds first in its job
 *   struct). Its kind (CudafftWorkKind) says how a batch of such jobs runs on the device.
 * - cudafft_executor_submit() copies a job's input into the executor's page-locked staging and
 *   returns; cudafft_executor_wait() blocks until the job's batch has run and copies its output
 *   out of the staging.
 * - Group commit, no timers: a submission that finds the device idle goes out at once (launched
 *   by the submitting thread itself, and completed by its wait, so that a lone stream's round trip
 *   wakes no other thread); while batches run, submissions collect and go out together as the
 *   next batch. At most two batches are in flight, so that one's copies overlap the other's
 *   kernels.
 * - Work ahead: a kind may queue work for its owners' next jobs after a batch's completion marker
 *   (CudafftWorkKind.launch_ahead), work that needs no new input: the device does it while the
 *   next inputs are on their way.
 * - An owner (an engine object) has at most one job per batch, and its jobs run in the order it
 *   submitted them, so a job may depend on the device state its owner's previous job left (a delay
 *   line). An owner may submit several jobs before waiting for any (a large push in chunks).
 * - Device memory for the objects' state comes from the executor (cudafft_executor_alloc), from a
 *   stream-ordered pool, so that objects come and go without synchronising the device.
 *
 * Threads: acquire, release and alloc/free are thread-safe. Submit and wait may be called from
 * any threads at once for different owners; one owner's jobs are submitted by one thread at a time
 * (the engines' rule: an object is used by one thread at a time). Jobs may be waited for in any
 * order, or from another thread: nothing in the executor waits for a job's collection (a batch
 * whose outputs are not collected when its slot is needed has them delivered to their `out`).
 *
 * Errors: every function returns a status and records the message (cudafft_fail); none prints,
 * aborts or exits. */
#ifndef CUDAFFT_EXECUTOR_H
#define CUDAFFT_EXECUTOR_H

#include <cudafft/common.h>

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Where in a batch's staging each job's input, output and each kind's auxiliary data start: a
 * multiple of this many bytes (coalesced access for any element type). */
#define CUDAFFT_EXECUTOR_ALIGN 256

typedef struct CudafftExecutor CudafftExecutor;
typedef struct CudafftJob CudafftJob;

/* What the executor keeps about one owner (an engine object whose jobs must run in order, one per
 * batch). The engine embeds it in its object, zeroed before the owner's first job, and keeps it
 * until the owner's last job has been waited for. Private to the executor. */
typedef struct {
  uint64_t last_batch; /* the batch that holds the owner's latest placed job; 0: none yet */
  size_t queued;       /* its jobs waiting for room */
  uint64_t scan;       /* the launcher's last pass over the queue that left one of them there */
} CudafftJobOwner;

/* A kind of work: how a batch of jobs of one kind runs. An engine defines one per kernel chain
 * (a static const table). The callbacks run on the thread that launches the batch, one batch at a
 * time: the executor's launcher thread, or the submitting thread of a job that goes out alone
 * (aux_bytes also on submitting threads, for a job alone); `jobs` are the batch's jobs of
 * this kind (count >= 1), in the order they were submitted, each from a different owner, with
 * device_in and device_out set. */
typedef struct {
  /* Names the kind in error messages ("convolution blocks"). */
  const char *name;
  /* Bytes of auxiliary data (job descriptors, a unit -> job map) a batch of these jobs needs on
   * the device; NULL for none. It must not grow when jobs share a batch: for any jobs,
   * aux_bytes(jobs, count) <= the sum of each one's aux_bytes(&job, 1), each rounded up to
   * CUDAFFT_EXECUTOR_ALIGN (the executor reserves room per job at submission; a batch that breaks
   * this fails with INVALID_VALUE). */
  size_t (*aux_bytes)(CudafftJob *const *jobs, size_t count);
  /* Writes the auxiliary data into host_aux (page-locked staging, aux_bytes(jobs, count) bytes,
   * uploaded with the batch's inputs before any launch); device_aux is where it will be on the
   * device (for pointers inside it). NULL when aux_bytes is NULL. */
  void (*prepare)(CudafftJob *const *jobs, size_t count, void *host_aux, void *device_aux);
  /* Queues the kind's kernels for these jobs on `stream` (the device's compute stream: a
   * cudaStream_t for CUDA kinds) and returns: it never waits for the device. Each job reads its
   * input at device_in and writes its output at device_out (and may read or write its owner's
   * state). The first failure is returned through cudafft_fail() naming the call: the executor
   * then launches nothing more of the batch, and every job of it reports that status. */
  CudafftStatus (*launch)(CudafftJob *const *jobs, size_t count, void *device_aux, void *stream);
  /* Work ahead (NULL for none): queues kernels for the owners' next jobs on `stream` after the
   * batch's completion marker, so that no output of this batch waits for them and the device runs
   * them while the owners' next inputs are still on their way (the convolution's share of a
   * block's sum over past blocks, which needs no new input). It reads only the owners' state and
   * this batch's auxiliary data; every later batch's kernels run after it. Called once the whole
   * batch has been queued without failure; a failure fails the batch (each of its jobs reports
   * it), as a failed launch does. */
  CudafftStatus (*launch_ahead)(CudafftJob *const *jobs, size_t count, void *device_aux,
                                void *stream);
} CudafftWorkKind;

/* The common header of a job: an engine's job struct starts with it and follows it with the
 * engine's parameters (kinds cast the CudafftJob pointers back). Zero it before its first
 * submission; it may be submitted again once it has been waited for. It must stay in place from
 * submission until its wait returns (or until the executor's last release, for a job never waited
 * for). */
struct CudafftJob {
  /* Set by the engine before each submission. */
  const CudafftWorkKind *kind;
  CudafftJobOwner *owner;
  size_t in_bytes;  /* input copied to the device before the kind's launch */
  size_t out_bytes; /* output copied back after it */
  /* Where the engine's caller keeps the input or wants the output in device memory of the
   * executor's context (CUDA memory an element got or will push), or NULL for host memory
   * through the staging: a side on the device takes no room in the batch and is not copied, the
   * kind reads or writes it in place (device_in, device_out are these pointers). The input must
   * be complete before the submission and stay until the wait returns; the output is complete
   * once the wait returns. submit's `in` and `out` are then not used for that side. */
  const void *in_device;
  void *out_device;
  /* A batch of this executor the job must run after (0: none), such as the batch that writes its
   * in_device (another owner's push that did not wait: cudafft_executor_batch_of()). The device
   * runs batches in serial order on one stream, so a job in a later batch reads what the earlier
   * one wrote without the host waiting for it. */
  uint64_t after;

  /* Set by the executor once the job has its place in a batch, before the kind's callbacks see
   * it: where its input and output are on the device (NULL for 0 bytes), and the serial number of
   * its batch (1, 2, ... in launch order; for diagnostics and tests). */
  void *device_in;
  void *device_out;
  uint64_t batch;

  /* Private to the executor: never read or written by engines or kinds. */
  struct {
    int delivered;        /* its output is out, put there by the completion thread (nothing to
                           * copy) or the launcher (eviction): set under its slot's collect_lock,
                           * read and cleared atomically (GCC builtins: C++ includes this too) */
    int outstanding;      /* submitted and not yet waited for: the owner's calls only */
    int queued;           /* it waited for room when submitted: the owner's calls only */
    int unplaced;         /* it still waits for room: under the executor's lock */
    int launched_alone;   /* its submit launched its batch (it was alone in it): the owner's
                           * calls only */
    int slot;             /* the batch slot it is in */
    size_t index;         /* its place in the slot's list of jobs */
    size_t in_offset;     /* of its input in the slot's input staging */
    size_t out_offset;    /* of its output in the slot's output staging */
    size_t aux_reserved;  /* room reserved for its share of its kind's auxiliary data */
    const void *in;       /* its input while it waits for room (NULL: zeros) */
    void *out;            /* where its output goes (NULL: nowhere) */
    CudafftStatus status; /* once delivered */
    CudafftJob *next;     /* the queue of jobs waiting for room */
  } priv;
};

/* The executor of CUDA device `device` (-1: device 0; the engines pass the device that
 * cudafft_create_on_backend() chose), made by the first call for that device and
 * shared by every later one: each successful call takes a reference that
 * cudafft_executor_release() gives back. NO_DEVICE where there is no such device; the device's
 * failures (out of memory for the staging, ...) as statuses. *ex is NULL on failure. Defined only
 * in builds with the CUDA backend (executor_cuda.cu). */
CudafftStatus cudafft_executor_acquire(int device, CudafftExecutor **ex);

/* Gives back a reference from acquire; NULL allowed. The last one stops the executor: jobs still
 * outstanding (submitted and never waited for) run to completion first (their outputs are
 * dropped, not delivered), and every resource of the executor is freed (the device is idle when
 * it returns). Memory from cudafft_executor_alloc() must have been freed before, and no job of
 * this executor may be waited for after. */
void cudafft_executor_release(CudafftExecutor *ex);

/* The CUDA device the executor runs on. */
int cudafft_executor_device(const CudafftExecutor *ex);

/* The most bytes of one job: a job fits in an empty batch when its in_bytes plus its kind's
 * aux_bytes for it alone, and its out_bytes, are each at most this; engines cut larger work into
 * jobs of this size or less. The same for the executor's whole life. */
size_t cudafft_executor_max_job_bytes(const CudafftExecutor *ex);

/* Device memory for an engine object's state, for the kinds' kernels: `bytes` (0 gives NULL) on
 * the executor's device. Checked against the device's available memory first:
 * DEVICE_OUT_OF_MEMORY, with `what` (what the memory is for: "convolution delay line") and the
 * sizes in the message, where it does not fit, so that an object too large fails at creation
 * while other objects keep running. Its content is undefined. *ptr is NULL on failure. The bytes
 * count in the device's load (devices.h) until they are freed: the load measure by which
 * cudafft_create_on_backend() spreads objects made with device -1 over the host's devices. */
CudafftStatus cudafft_executor_alloc(CudafftExecutor *ex, size_t bytes, const char *what,
                                     void **ptr);

/* Frees memory from cudafft_executor_alloc() (NULL allowed) without synchronising the device. No
 * job of the executor that uses it may be outstanding. */
void cudafft_executor_free(CudafftExecutor *ex, void *ptr);

/* Submits job (its common header filled in: kind, owner, in_bytes, out_bytes) with its input and
 * the place for its output: in holds in_bytes bytes, or is NULL for zeros; out receives out_bytes
 * bytes by the time the job's wait returns (NULL: the output is dropped), and must not be touched
 * until then (the output may be delivered there before the wait, by another thread). Returns once
 * the input is copied into the staging of a batch, or, where no batch has room for the job yet
 * (the batches in flight and the owner's earlier jobs fill them), once it is queued for the next
 * room: `in` must then stay readable and unchanged until the job's wait returns. Either way the
 * job runs after the owner's earlier jobs and in a later batch than any of them.
 * NULL_POINTER for a NULL ex, job, kind, kind->launch or owner; INVALID_VALUE for a job already
 * outstanding, or one too large (cudafft_executor_max_job_bytes()), with the sizes in the message.
 * A refused job is not submitted. */
CudafftStatus cudafft_executor_submit(CudafftExecutor *ex, CudafftJob *job, const void *in,
                                      void *out);

/* Blocks (without spinning) until job's batch has run and its output is in the `out` given to
 * submit, and returns the job's status: OK, or the status of its batch's failure (a failed copy or
 * launch, or an error the device reported for the batch) with the message naming the batch, the
 * kind or call and CUDA's words; out is then not written. The job may be submitted again
 * afterwards. INVALID_VALUE (and nothing else happens) for a job not outstanding. */
CudafftStatus cudafft_executor_wait(CudafftExecutor *ex, CudafftJob *job);

/* The batch an outstanding job is in, in *batch: at once for a job placed at submission, else
 * once the launcher has placed it and copied its input in (blocking, without spinning, while the
 * batches ahead make room): submit's `in` may then be reused, as after its wait.
 * Its output in device memory (out_device) is complete once that batch is (a later batch's job
 * may read it: `after`; the host: cudafft_executor_sync()). INVALID_VALUE for a job not
 * outstanding. */
CudafftStatus cudafft_executor_batch_of(CudafftExecutor *ex, CudafftJob *job, uint64_t *batch);

/* Blocks (without spinning) until batch `batch` of this executor, and every earlier one, is done on
 * the device, whether or not its jobs have been waited for. The batch's own failure is not
 * reported here but to its jobs' waits. INVALID_VALUE for a batch not yet made. */
CudafftStatus cudafft_executor_sync(CudafftExecutor *ex, uint64_t batch);

/* This executor's number, unique in the process and never reused: the `queue` of a CudafftFence
 * (cudafft/common.h) that points into its batches. */
uint64_t cudafft_executor_id(const CudafftExecutor *ex);

/* The batch an engine's jobs that read device input written by queued work (the fence `after`)
 * must follow, in *batch (a job's `after`): the fence's own where it is this executor's, so that
 * the device orders the work; else 0, once the host has waited for the fence (another context's
 * work, or none: a zeroed fence). */
CudafftStatus cudafft_executor_order_after(CudafftExecutor *ex, CudafftFence after,
                                           uint64_t *batch);

/* For an engine's front end: the fence a push's device work goes after (its `after`, NULL for
 * none), in *order: the caller's where the object reads the input in device memory (in_device),
 * which its backend orders on the device (cudafft_executor_order_after); else zeroed, once the host
 * has waited for it (input the object does not read there). */
CudafftStatus cudafft_fence_order(const CudafftFence *after, int in_device, CudafftFence *order);

#ifdef __cplusplus
}
#endif

#endif
