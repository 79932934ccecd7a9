/* executor_cuda.cu: the executor's CUDA device (executor_device.h) and
 * cudafft_executor_acquire(), which always uses it.
 *
 * Streams: a batch's inputs go up on the upload stream, its kernels run on the compute stream
 * (which waits for the upload, and runs the batches in order), its outputs come down on the
 * download stream (which waits for the kernels); so one batch's copies overlap the other batch's
 * kernels. A fourth stream orders the memory pool's allocations and frees. Every stream is
 * non-blocking: the application's work on the legacy default stream neither waits for ours nor
 * holds ours up.
 *
 * Work ahead (a kind's launch_ahead) runs on the compute stream after a batch's `computed` event,
 * so the batch's download does not wait for it; it reads the slot's auxiliary data, so the slot's
 * next upload waits for its `released` event, and the owners' state, so a free waits for the
 * compute stream's work queued so far.
 *
 * Completion: each slot's `done` event is made with cudaEventBlockingSync, so that the completion
 * thread sleeps in cudaEventSynchronize instead of spinning (the executor's rule: waiting threads
 * block). The same for the allocation event.
 *
 * Memory: the slots' device buffers and the engines' state come from a memory pool of the
 * executor's own (stream-ordered allocation), so that objects coming and going never synchronise
 * the device the way cudaFree does.
 *
 * Contexts: an executor belongs to a device id, so an attached context's id (contexts.h) has one
 * of its own, apart from its device's: its streams, events, pool and staging are made with that
 * context current, and every call here (on the launcher and completion threads too) makes it
 * current first through cudafft_use_device(). The device's attributes and the pool's location take
 * the physical device (ordinal). */
#include "caller_context.cuh"
#include "cuda_check.cuh"
#include "device_choice.cuh"
#include "executor_device.h"
#include "size_math.h"

#include <new>
#include <pthread.h>
#include <stdint.h>

namespace {

/* The executor's sizes on CUDA: a batch stages up to 8 MB each way (1024 stereo streams of 10 ms
 * F32 buffers take 4 MB), in 4 slots: two on the device, one collecting submissions, one being
 * collected; 64 MB of page-locked host memory and 64 MB of device memory. Under load (hundreds of
 * streams on a busy host) done batches wait longer for their waiters' threads, and the executor
 * grows to 8 slots (128 MB of each) rather than deliver their outputs on its launcher thread
 * (streams-bench on the H100: 15% more aggregate for cudaconvolve at 1024 streams, 55% for
 * cudafft). */
constexpr size_t kMaxJobBytes = (size_t)8 << 20;
constexpr unsigned kSlots = 4;
constexpr unsigned kMaxSlots = 8;
constexpr unsigned kMaxInFlight = 2;
constexpr size_t kMaxJobs = 4096;

struct CudaExecutorDevice {
  int device = -1;  /* the id it was acquired for: a device, or an attached context (contexts.h) */
  int ordinal = -1; /* the physical device: its attributes, its memory's location, messages */
  cudaStream_t upload = nullptr, compute = nullptr, download = nullptr;
  cudaStream_t memory = nullptr; /* the pool's allocations and frees */
  cudaMemPool_t pool = nullptr;
  cudaEvent_t allocated = nullptr; /* blocking sync: an allocation is usable everywhere */
  cudaEvent_t computed = nullptr;  /* a free's mark on the compute stream (work ahead) */
  pthread_mutex_t alloc_lock; /* one allocation or free at a time: the events and the free check */
  bool lock_made = false;
};

struct CudaSlot {
  cudaEvent_t uploaded = nullptr; /* the batch's inputs are on the device */
  cudaEvent_t computed = nullptr; /* its kernels are done */
  cudaEvent_t done = nullptr;     /* blocking sync: its outputs are down, the slot is free */
  cudaEvent_t released = nullptr; /* the work ahead that reads its auxiliary data is done */
  /* upload's calls failed (set by upload, read and cleared by finish, on the launching thread) */
  bool upload_broken = false;
  /* finish queued `done` after the whole batch (read by wait: the core's lock orders them) */
  bool marker = false;
};

CudafftStatus
use_device(const CudaExecutorDevice *d)
{
  CUDAFFT_CHECK(cudafft_use_device(d->device));
  return CUDAFFT_STATUS_OK;
}

/* Waits for everything queued on the memory stream so far: a new allocation is then usable from
 * any stream and the host; sleeps (blocking-sync event). Called under alloc_lock. */
CudafftStatus
memory_stream_settle(CudaExecutorDevice *d)
{
  CUDAFFT_CHECK(cudaEventRecord(d->allocated, d->memory));
  CUDAFFT_CHECK(cudaEventSynchronize(d->allocated));
  return CUDAFFT_STATUS_OK;
}

/* Bytes the device can still give: its free memory and what the pool holds unused. */
CudafftStatus
available_bytes(const CudaExecutorDevice *d, size_t *available, size_t *total)
{
  size_t free_bytes = 0;
  uint64_t reserved = 0, used = 0; /* the attributes' type (cuuint64_t) */
  CUDAFFT_CHECK(cudaMemGetInfo(&free_bytes, total));
  CUDAFFT_CHECK(cudaMemPoolGetAttribute(d->pool, cudaMemPoolAttrReservedMemCurrent, &reserved));
  CUDAFFT_CHECK(cudaMemPoolGetAttribute(d->pool, cudaMemPoolAttrUsedMemCurrent, &used));
  *available = sat_add(free_bytes, reserved > used ? (size_t)(reserved - used) : 0);
  return CUDAFFT_STATUS_OK;
}

CudafftStatus
pool_alloc_locked(CudaExecutorDevice *d, size_t bytes, const char *what, void **ptr)
{
  size_t available = 0, total = 0;
  CudafftStatus status = available_bytes(d, &available, &total);
  if (status == CUDAFFT_STATUS_OK && bytes > available) {
    /* Frees are stream-ordered: memory freed a moment ago counts as used until the memory stream
     * has run its frees. Wait for them (only where it matters) and look again. */
    status = memory_stream_settle(d);
    if (status == CUDAFFT_STATUS_OK)
      status = available_bytes(d, &available, &total);
  }
  if (status != CUDAFFT_STATUS_OK)
    return status;
  if (bytes > available)
    return cudafft_fail(CUDAFFT_STATUS_DEVICE_OUT_OF_MEMORY,
                        "%s needs %zu MB of GPU memory; device %d has %zu MB available of %zu MB",
                        what, megabytes(bytes), d->ordinal, available >> 20, total >> 20);
  const cudaError_t error = cudaMallocFromPoolAsync(ptr, bytes, d->pool, d->memory);
  if (error == cudaErrorMemoryAllocation) {
    *ptr = nullptr;
    cudaGetLastError();
    return cudafft_fail(CUDAFFT_STATUS_DEVICE_OUT_OF_MEMORY,
                        "%s needs %zu MB of GPU memory; device %d could not give it (%zu MB "
                        "available of %zu MB)",
                        what, megabytes(bytes), d->ordinal, available >> 20, total >> 20);
  }
  if (error != cudaSuccess) {
    *ptr = nullptr;
    return cudafft_cuda_failure(error, "cudaMallocFromPoolAsync", __FILE__, __LINE__);
  }
  status = memory_stream_settle(d);
  if (status != CUDAFFT_STATUS_OK) {
    cudaFreeAsync(*ptr, d->memory);
    cudaGetLastError();
    *ptr = nullptr;
  }
  return status;
}

CudafftStatus
device_alloc(void *ctx, size_t bytes, const char *what, void **ptr)
{
  CudaExecutorDevice *d = static_cast<CudaExecutorDevice *>(ctx);
  *ptr = nullptr;
  CudafftStatus status = use_device(d);
  if (status != CUDAFFT_STATUS_OK)
    return status;
  pthread_mutex_lock(&d->alloc_lock);
  status = pool_alloc_locked(d, bytes, what, ptr);
  pthread_mutex_unlock(&d->alloc_lock);
  return status;
}

/* Stream-ordered: returns at once. The executor's contract (no outstanding job uses ptr, and the
 * host has seen the jobs that did complete) leaves the work ahead those jobs queued (which may
 * still read ptr): the free waits on the memory stream for everything queued on the compute stream
 * so far. A failure cannot be reported from here; it is cleared so that the next call is not
 * blamed for it. */
void
device_free(void *ctx, void *ptr)
{
  CudaExecutorDevice *d = static_cast<CudaExecutorDevice *>(ctx);
  pthread_mutex_lock(&d->alloc_lock);
  if (cudafft_use_device(d->device) != cudaSuccess ||
      cudaEventRecord(d->computed, d->compute) != cudaSuccess ||
      cudaStreamWaitEvent(d->memory, d->computed, 0) != cudaSuccess ||
      cudaFreeAsync(ptr, d->memory) != cudaSuccess)
    cudaGetLastError();
  pthread_mutex_unlock(&d->alloc_lock);
}

void
device_close(void *ctx)
{
  CudaExecutorDevice *d = static_cast<CudaExecutorDevice *>(ctx);
  if (!d)
    return;
  /* Best effort, after any failure (sticky ones too): the frees queued so far first. */
  cudafft_use_device(d->device);
  if (d->memory && d->allocated && cudaEventRecord(d->allocated, d->memory) == cudaSuccess)
    cudaEventSynchronize(d->allocated);
  for (cudaEvent_t event : {d->allocated, d->computed})
    if (event)
      cudaEventDestroy(event);
  for (cudaStream_t stream : {d->upload, d->compute, d->download, d->memory})
    if (stream)
      cudaStreamDestroy(stream);
  /* Outstanding allocations (none, by the contract) would keep it until they are freed. */
  if (d->pool)
    cudaMemPoolDestroy(d->pool);
  cudaGetLastError();
  if (d->lock_made)
    pthread_mutex_destroy(&d->alloc_lock);
  delete d;
}

CudafftStatus
make_device(CudaExecutorDevice *d)
{
  CUDAFFT_CHECK(cudafft_use_device(d->device));
  int pools = 0;
  CUDAFFT_CHECK(cudaDeviceGetAttribute(&pools, cudaDevAttrMemoryPoolsSupported, d->ordinal));
  if (!pools)
    return cudafft_fail(CUDAFFT_STATUS_UNSUPPORTED,
                        "CUDA device %d does not support stream-ordered memory pools, which the "
                        "executor needs (driver or platform too old)",
                        d->ordinal);
  for (cudaStream_t *stream : {&d->upload, &d->compute, &d->download, &d->memory})
    CUDAFFT_CHECK(cudaStreamCreateWithFlags(stream, cudaStreamNonBlocking));
  cudaMemPoolProps props = {};
  props.allocType = cudaMemAllocationTypePinned;
  props.handleTypes = cudaMemHandleTypeNone;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = d->ordinal;
  CUDAFFT_CHECK(cudaMemPoolCreate(&d->pool, &props));
  CUDAFFT_CHECK(
      cudaEventCreateWithFlags(&d->allocated, cudaEventBlockingSync | cudaEventDisableTiming));
  CUDAFFT_CHECK(cudaEventCreateWithFlags(&d->computed, cudaEventDisableTiming));
  if (pthread_mutex_init(&d->alloc_lock, nullptr) != 0)
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY, "executor: cannot make a mutex");
  d->lock_made = true;
  return CUDAFFT_STATUS_OK;
}

CudafftStatus
device_open(int device, void **ctx, CudafftExecutorLimits *limits)
{
  CudaExecutorDevice *d = new (std::nothrow) CudaExecutorDevice;
  if (!d)
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY, "executor: no memory");
  d->device = device;
  d->ordinal = cudafft_context_ordinal(device);
  const CudafftStatus status = make_device(d);
  if (status != CUDAFFT_STATUS_OK) {
    device_close(d);
    return status;
  }
  *ctx = d;
  *limits = CudafftExecutorLimits{};
  limits->max_job_bytes = kMaxJobBytes;
  limits->slots = kSlots;
  limits->max_in_flight = kMaxInFlight;
  limits->max_jobs = kMaxJobs;
  limits->max_slots = kMaxSlots;
  return CUDAFFT_STATUS_OK;
}

CudafftStatus
host_staging_alloc(void **ptr, size_t bytes)
{
  const cudaError_t error = cudaHostAlloc(ptr, bytes, cudaHostAllocDefault);
  if (error == cudaSuccess)
    return CUDAFFT_STATUS_OK;
  *ptr = nullptr;
  if (error != cudaErrorMemoryAllocation)
    return cudafft_cuda_failure(error, "cudaHostAlloc", __FILE__, __LINE__);
  cudaGetLastError();
  return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY,
                      "cannot allocate %zu MB of page-locked host memory for the executor's "
                      "staging",
                      megabytes(bytes));
}

void
slot_free(void *ctx, CudafftSlotMemory *mem)
{
  CudaExecutorDevice *d = static_cast<CudaExecutorDevice *>(ctx);
  CudaSlot *slot = static_cast<CudaSlot *>(mem->handle);
  cudafft_use_device(d->device);
  if (slot) {
    for (cudaEvent_t event : {slot->uploaded, slot->computed, slot->done, slot->released})
      if (event)
        cudaEventDestroy(event);
    delete slot;
  }
  /* The slot is idle (its last batch was waited for). cudaFreeHost may synchronise the device: it
   * runs only when the executor stops. */
  if (mem->host_in)
    cudaFreeHost(mem->host_in);
  if (mem->host_out)
    cudaFreeHost(mem->host_out);
  if (mem->device_in)
    device_free(d, mem->device_in);
  if (mem->device_out)
    device_free(d, mem->device_out);
  cudaGetLastError();
  *mem = CudafftSlotMemory{};
}

CudafftStatus
make_slot(CudaExecutorDevice *d, size_t in_bytes, size_t out_bytes, CudafftSlotMemory *mem)
{
  CudaSlot *slot = new (std::nothrow) CudaSlot;
  if (!slot)
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY, "executor: no memory");
  mem->handle = slot;
  CUDAFFT_CHECK(cudaEventCreateWithFlags(&slot->uploaded, cudaEventDisableTiming));
  CUDAFFT_CHECK(cudaEventCreateWithFlags(&slot->computed, cudaEventDisableTiming));
  CUDAFFT_CHECK(
      cudaEventCreateWithFlags(&slot->done, cudaEventBlockingSync | cudaEventDisableTiming));
  CUDAFFT_CHECK(cudaEventCreateWithFlags(&slot->released, cudaEventDisableTiming));
  CudafftStatus status = host_staging_alloc(&mem->host_in, in_bytes);
  if (status == CUDAFFT_STATUS_OK)
    status = host_staging_alloc(&mem->host_out, out_bytes);
  if (status == CUDAFFT_STATUS_OK)
    status = device_alloc(d, in_bytes, "the executor's input staging", &mem->device_in);
  if (status == CUDAFFT_STATUS_OK)
    status = device_alloc(d, out_bytes, "the executor's output staging", &mem->device_out);
  return status;
}

CudafftStatus
slot_alloc(void *ctx, size_t in_bytes, size_t out_bytes, CudafftSlotMemory *mem)
{
  CudaExecutorDevice *d = static_cast<CudaExecutorDevice *>(ctx);
  *mem = CudafftSlotMemory{};
  CudafftStatus status = use_device(d);
  if (status == CUDAFFT_STATUS_OK)
    status = make_slot(d, in_bytes, out_bytes, mem);
  if (status != CUDAFFT_STATUS_OK)
    slot_free(ctx, mem);
  return status;
}

void *
compute_stream(void *ctx)
{
  return static_cast<CudaExecutorDevice *>(ctx)->compute;
}

CudafftStatus
queue_upload(const CudaExecutorDevice *d, CudaSlot *slot, const CudafftSlotMemory *mem,
             size_t bytes)
{
  CUDAFFT_CHECK(cudafft_use_device(d->device));
  /* the slot's last work ahead may still read its auxiliary data (an event never recorded is
   * complete) */
  CUDAFFT_CHECK(cudaStreamWaitEvent(d->upload, slot->released, 0));
  if (bytes > 0)
    CUDAFFT_CHECK(
        cudaMemcpyAsync(mem->device_in, mem->host_in, bytes, cudaMemcpyHostToDevice, d->upload));
  CUDAFFT_CHECK(cudaEventRecord(slot->uploaded, d->upload));
  CUDAFFT_CHECK(cudaStreamWaitEvent(d->compute, slot->uploaded, 0));
  return CUDAFFT_STATUS_OK;
}

CudafftStatus
batch_upload(void *ctx, CudafftSlotMemory *mem, size_t bytes)
{
  CudaSlot *slot = static_cast<CudaSlot *>(mem->handle);
  const CudafftStatus status =
      queue_upload(static_cast<CudaExecutorDevice *>(ctx), slot, mem, bytes);
  slot->upload_broken = status != CUDAFFT_STATUS_OK;
  return status;
}

CudafftStatus
queue_finish(const CudaExecutorDevice *d, CudaSlot *slot, const CudafftSlotMemory *mem,
             size_t bytes)
{
  CUDAFFT_CHECK(cudafft_use_device(d->device));
  CUDAFFT_CHECK(cudaEventRecord(slot->computed, d->compute));
  CUDAFFT_CHECK(cudaStreamWaitEvent(d->download, slot->computed, 0));
  if (bytes > 0)
    CUDAFFT_CHECK(cudaMemcpyAsync(mem->host_out, mem->device_out, bytes, cudaMemcpyDeviceToHost,
                                  d->download));
  CUDAFFT_CHECK(cudaEventRecord(slot->done, d->download));
  return CUDAFFT_STATUS_OK;
}

CudafftStatus
batch_finish(void *ctx, CudafftSlotMemory *mem, size_t bytes)
{
  CudaSlot *slot = static_cast<CudaSlot *>(mem->handle);
  const CudafftStatus status =
      queue_finish(static_cast<CudaExecutorDevice *>(ctx), slot, mem, bytes);
  /* `done` covers the upload only through the compute stream's wait for it. */
  slot->marker = status == CUDAFFT_STATUS_OK && !slot->upload_broken;
  slot->upload_broken = false;
  return status;
}

CudafftStatus
batch_ahead_queued(void *ctx, CudafftSlotMemory *mem)
{
  const CudaExecutorDevice *d = static_cast<CudaExecutorDevice *>(ctx);
  CUDAFFT_CHECK(cudafft_use_device(d->device));
  CUDAFFT_CHECK(cudaEventRecord(static_cast<CudaSlot *>(mem->handle)->released, d->compute));
  return CUDAFFT_STATUS_OK;
}

/* Waits for everything queued on the three streams, sleeping on the slot's blocking-sync event
 * recorded on each in turn (cudaStreamSynchronize would spin). */
CudafftStatus
wait_streams(const CudaExecutorDevice *d, cudaEvent_t event)
{
  for (cudaStream_t stream : {d->upload, d->compute, d->download}) {
    CUDAFFT_CHECK(cudaEventRecord(event, stream));
    CUDAFFT_CHECK(cudaEventSynchronize(event));
  }
  return CUDAFFT_STATUS_OK;
}

CudafftStatus
batch_wait(void *ctx, CudafftSlotMemory *mem)
{
  const CudaExecutorDevice *d = static_cast<CudaExecutorDevice *>(ctx);
  const CudaSlot *slot = static_cast<CudaSlot *>(mem->handle);
  CUDAFFT_CHECK(cudafft_use_device(d->device));
  if (!slot->marker)
    /* The batch's own calls failed, so no marker covers what of it was queued: the streams do.
     * (A failed kind's launch still has its marker.) */
    return wait_streams(d, slot->done);
  CUDAFFT_CHECK(cudaEventSynchronize(slot->done));
  return CUDAFFT_STATUS_OK;
}

/* Kept for the callers' threads that reach the device: a submitter whose job is alone in its
 * batch, a waiter that completes its own batch, an object's allocation; the executor's own threads
 * keep nothing (thread_name.h). */
const CudafftExecutorDevice cuda_executor_device = {
    cudafft_keeping_caller<device_open>,
    cudafft_keeping_caller<device_close>,
    cudafft_keeping_caller<slot_alloc>,
    cudafft_keeping_caller<slot_free>,
    compute_stream,
    cudafft_keeping_caller<batch_upload>,
    cudafft_keeping_caller<batch_finish>,
    cudafft_keeping_caller<batch_ahead_queued>,
    cudafft_keeping_caller<batch_wait>,
    cudafft_keeping_caller<device_alloc>,
    cudafft_keeping_caller<device_free>,
};

} // namespace

extern "C" CudafftStatus
cudafft_executor_acquire(int device, CudafftExecutor **ex)
{
  if (!ex)
    return cudafft_fail(CUDAFFT_STATUS_NULL_POINTER, "cudafft_executor_acquire: NULL result");
  *ex = nullptr;
  int picked = 0;
  const CudafftStatus status = cudafft_cuda_pick_device(device, &picked);
  if (status != CUDAFFT_STATUS_OK)
    return status;
  return cudafft_executor_acquire_on(&cuda_executor_device, picked, ex);
}
