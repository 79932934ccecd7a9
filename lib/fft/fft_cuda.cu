/* fft_cuda.cu: the FFT engine's CUDA backend: the plan's streams and buffers, its kernel queued
 * through cached launch graphs, the pinned staging pipeline of the host entry point, and the cuFFT
 * fallback for GPUs whose shared memory cannot hold a transform. Every CUDA call is checked; a
 * failure becomes a status and a message. */
#include "cuda_check.cuh"
#include "fft_backend.h"
#include "fft_kernels.h"
#include "kernel_launch.h"

#include <cufft.h>

#include <cstdlib>
#include <cstring>
#include <new>

namespace {

/* Bytes of one staging slot (each of two slots has one for input and one for output, on the host
 * and on the device): large enough that a chunk's copy takes far longer than its launch overhead,
 * small enough that a plan holds at most 4 x 8 MB of pinned memory. */
constexpr size_t kStagingSlotBytes = 8u << 20;
constexpr int kSlots = 2;
/* Transforms per kernel launch, which keeps every index in int range. */
constexpr size_t kMaxLaunchBatch = 1u << 20;

struct Slot {
  void *h_in = nullptr, *h_out = nullptr; /* pinned */
  void *d_in = nullptr, *d_out = nullptr;
  cudaEvent_t uploaded = nullptr;   /* h_in and the upload source are free again */
  cudaEvent_t computed = nullptr;   /* d_in is free again, d_out holds results */
  cudaEvent_t downloaded = nullptr; /* d_out is free again, h_out holds results */
};

struct CudaPlan {
  CudafftKind kind = CUDAFFT_C2C;
  size_t n = 0;
  int device = 0;
  cudaStream_t stream = nullptr; /* compute; the one cudafft_plan_get_cuda_stream() returns */
  cudaStream_t upload = nullptr, download = nullptr;
  size_t slot_transforms = 0; /* capacity of each slot, 0 until the first host execute */
  Slot slots[kSlots];
  /* our kernel (unless use_cufft), resolved on the device, and its twiddle table */
  CudafftFftKernel kernel = {};
  CudafftKernel resolved = {};
  float2 *d_twiddles = nullptr;
  CudafftGraphCache graphs = {};
  /* cuFFT fallback (use_cufft): plan made for cufft_batch transforms, scratch for C2R input */
  bool use_cufft = false;
  cufftHandle cufft = 0;
  bool cufft_made = false;
  size_t cufft_batch = 0;
  void *d_scratch = nullptr;
  size_t scratch_bytes = 0;
};

CudafftStatus
cufft_failure(cufftResult result, const char *call, int line)
{
  return cudafft_fail(result == CUFFT_ALLOC_FAILED ? CUDAFFT_STATUS_DEVICE_OUT_OF_MEMORY
                                                   : CUDAFFT_STATUS_CUDA_ERROR,
                      "%s failed (fft_cuda.cu:%d): cuFFT error %d", call, line, (int)result);
}

#define CF_CHECK_CUFFT(call)                                                                       \
  do {                                                                                             \
    const cufftResult cf_result_ = (call);                                                         \
    if (cf_result_ != CUFFT_SUCCESS)                                                               \
      return cufft_failure(cf_result_, #call, __LINE__);                                           \
  } while (0)

void
free_slots(CudaPlan *p)
{
  for (Slot &s : p->slots) {
    cudaFreeHost(s.h_in);
    cudaFreeHost(s.h_out);
    cudaFree(s.d_in);
    cudaFree(s.d_out);
    s.h_in = s.h_out = s.d_in = s.d_out = nullptr;
  }
  p->slot_transforms = 0;
}

void
cuda_destroy(void *impl)
{
  CudaPlan *p = static_cast<CudaPlan *>(impl);
  if (!p)
    return;
  /* Best effort throughout: a plan must be releasable after any failure, sticky ones included. */
  cudaSetDevice(p->device);
  if (p->stream)
    cudaStreamSynchronize(p->stream);
  if (p->upload)
    cudaStreamSynchronize(p->upload);
  if (p->download)
    cudaStreamSynchronize(p->download);
  free_slots(p);
  for (Slot &s : p->slots) {
    if (s.uploaded)
      cudaEventDestroy(s.uploaded);
    if (s.computed)
      cudaEventDestroy(s.computed);
    if (s.downloaded)
      cudaEventDestroy(s.downloaded);
  }
  cudafft_graph_cache_clear(&p->graphs);
  if (p->cufft_made)
    cufftDestroy(p->cufft);
  cudaFree(p->d_scratch);
  cudaFree(p->d_twiddles);
  if (p->stream)
    cudaStreamDestroy(p->stream);
  if (p->upload)
    cudaStreamDestroy(p->upload);
  if (p->download)
    cudaStreamDestroy(p->download);
  cudaGetLastError(); /* leave no error of ours behind for the caller's next CUDA call */
  delete p;
}

CudafftStatus
setup(CudaPlan *p, bool force_cufft)
{
  CUDAFFT_CHECK(cudaSetDevice(p->device));
  /* one attribute, not cudaGetDeviceProperties(), which gathers all of them and is slow */
  int smem_optin = 0;
  CUDAFFT_CHECK(
      cudaDeviceGetAttribute(&smem_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, p->device));
  CUDAFFT_CHECK(cudaStreamCreateWithFlags(&p->stream, cudaStreamNonBlocking));
  CUDAFFT_CHECK(cudaStreamCreateWithFlags(&p->upload, cudaStreamNonBlocking));
  CUDAFFT_CHECK(cudaStreamCreateWithFlags(&p->download, cudaStreamNonBlocking));
  for (Slot &s : p->slots) {
    CUDAFFT_CHECK(cudaEventCreateWithFlags(&s.uploaded, cudaEventDisableTiming));
    CUDAFFT_CHECK(cudaEventCreateWithFlags(&s.computed, cudaEventDisableTiming));
    CUDAFFT_CHECK(cudaEventCreateWithFlags(&s.downloaded, cudaEventDisableTiming));
  }

  /* Our kernels hold a whole transform in shared memory; where the GPU offers too little
   * (16384-point C2C on sm_86/sm_89; on sm_75 also 8192-point C2C and 16384-point real
   * transforms), cuFFT runs the plan instead. */
  if (!cudafft_fft_kernel(p->kind, p->n, &p->kernel))
    return cudafft_fail(CUDAFFT_STATUS_INVALID_SIZE, "no kernel for size %zu", p->n);
  p->use_cufft = force_cufft || p->kernel.smem_bytes > (size_t)smem_optin;
  if (p->use_cufft)
    return CUDAFFT_STATUS_OK;

  CUDAFFT_CHECK(cudafft_fft_kernel_prepare(&p->kernel));
  CUDAFFT_CHECK(cudafft_kernel_resolve(p->kernel.entry, &p->resolved));
  const size_t table_bytes = cudafft_fft_twiddle_count(p->kind, p->n) * sizeof(float2);
  float *values = (float *)malloc(table_bytes); /* up to 200 KB: not for a thread's stack */
  if (!values)
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY, "cannot allocate a twiddle table");
  cudafft_fft_twiddles(p->kind, p->n, values);
  cudaError_t error = cudaMalloc(&p->d_twiddles, table_bytes);
  if (error == cudaSuccess)
    error = cudaMemcpy(p->d_twiddles, values, table_bytes, cudaMemcpyHostToDevice);
  free(values);
  if (error != cudaSuccess)
    return cudafft_cuda_failure(error, "uploading a twiddle table", __FILE__, __LINE__);
  return CUDAFFT_STATUS_OK;
}

CudafftStatus
cuda_create(const CudafftFftSpec *spec, void **impl)
{
  *impl = nullptr;
  int device = 0;
  const CudafftStatus picked = cudafft_cuda_pick_device(spec->device_id, &device);
  if (picked != CUDAFFT_STATUS_OK)
    return picked;
  CudaPlan *p = new (std::nothrow) CudaPlan;
  if (!p)
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY, "cannot allocate a CUDA plan");
  p->kind = spec->kind;
  p->n = spec->n;
  p->device = device;
  const CudafftStatus status = setup(p, spec->force_cufft != 0);
  if (status != CUDAFFT_STATUS_OK) {
    cuda_destroy(p);
    return status;
  }
  *impl = p;
  return CUDAFFT_STATUS_OK;
}

/* cuFFT's plans are made for one batch count; the fallback keeps one, remade when it changes. */
CudafftStatus
cufft_execute(CudaPlan *p, CudafftDirection direction, const void *in, void *out, size_t batch,
              float scale)
{
  if (!p->cufft_made || p->cufft_batch != batch) {
    if (p->cufft_made)
      cufftDestroy(p->cufft);
    p->cufft_made = false;
    const cufftType type = p->kind == CUDAFFT_C2C   ? CUFFT_C2C
                           : p->kind == CUDAFFT_R2C ? CUFFT_R2C
                                                    : CUFFT_C2R;
    CF_CHECK_CUFFT(cufftPlan1d(&p->cufft, (int)p->n, type, (int)batch));
    p->cufft_made = true;
    p->cufft_batch = batch;
    CF_CHECK_CUFFT(cufftSetStream(p->cufft, p->stream));
  }
  const size_t out_floats = batch * cudafft_output_floats(p->kind, p->n);
  switch (p->kind) {
  case CUDAFFT_C2C:
    CF_CHECK_CUFFT(cufftExecC2C(p->cufft, (cufftComplex *)in, (cufftComplex *)out,
                                direction == CUDAFFT_FORWARD ? CUFFT_FORWARD : CUFFT_INVERSE));
    break;
  case CUDAFFT_R2C:
    CF_CHECK_CUFFT(cufftExecR2C(p->cufft, (cufftReal *)in, (cufftComplex *)out));
    break;
  case CUDAFFT_C2R: {
    /* cuFFT's C2R overwrites its input, which our API promises to leave alone */
    const size_t in_bytes = batch * cudafft_input_floats(p->kind, p->n) * sizeof(float);
    if (p->scratch_bytes < in_bytes) {
      cudaFree(p->d_scratch);
      p->d_scratch = nullptr;
      p->scratch_bytes = 0;
      CUDAFFT_CHECK(cudaMalloc(&p->d_scratch, in_bytes));
      p->scratch_bytes = in_bytes;
    }
    CUDAFFT_CHECK(cudaMemcpyAsync(p->d_scratch, in, in_bytes, cudaMemcpyDeviceToDevice, p->stream));
    /* cuFFT reads the imaginary parts of bins 0 and n/2, which our contract ignores: zero them */
    const size_t row_bytes = (p->n / 2 + 1) * sizeof(float2);
    char *scratch = (char *)p->d_scratch;
    CUDAFFT_CHECK(
        cudaMemset2DAsync(scratch + sizeof(float), row_bytes, 0, sizeof(float), batch, p->stream));
    CUDAFFT_CHECK(cudaMemset2DAsync(scratch + row_bytes - sizeof(float), row_bytes, 0,
                                    sizeof(float), batch, p->stream));
    CF_CHECK_CUFFT(cufftExecC2R(p->cufft, (cufftComplex *)p->d_scratch, (cufftReal *)out));
    break;
  }
  }
  if (scale != 1.0f)
    CUDAFFT_CHECK(cudafft_scale_launch((float *)out, out_floats, scale, p->stream));
  return CUDAFFT_STATUS_OK;
}

/* Queues batch transforms of device memory on the plan's stream. */
CudafftStatus
enqueue(CudaPlan *p, CudafftDirection direction, const void *in, void *out, size_t batch,
        float scale)
{
  if (p->use_cufft)
    return cufft_execute(p, direction, in, out, batch, scale);
  const size_t in_bytes = cudafft_input_floats(p->kind, p->n) * sizeof(float);
  const size_t out_bytes = cudafft_output_floats(p->kind, p->n) * sizeof(float);
  for (size_t done = 0; done < batch; done += kMaxLaunchBatch) {
    const size_t count = batch - done < kMaxLaunchBatch ? batch - done : kMaxLaunchBatch;
    CudafftFftLaunch launch;
    cudafft_fft_launch_init(&launch, &p->resolved, &p->kernel, direction,
                            (const char *)in + done * in_bytes, (char *)out + done * out_bytes,
                            (int)count, scale, p->d_twiddles);
    CUDAFFT_CHECK(cudafft_graph_run(&p->graphs, &launch.launch, p->stream));
  }
  return CUDAFFT_STATUS_OK;
}

CudafftStatus
ensure_slots(CudaPlan *p, size_t transforms)
{
  if (p->slot_transforms >= transforms)
    return CUDAFFT_STATUS_OK;
  CUDAFFT_CHECK(cudaStreamSynchronize(p->stream));
  CUDAFFT_CHECK(cudaStreamSynchronize(p->upload));
  CUDAFFT_CHECK(cudaStreamSynchronize(p->download));
  free_slots(p);
  const size_t in_bytes = transforms * cudafft_input_floats(p->kind, p->n) * sizeof(float);
  const size_t out_bytes = transforms * cudafft_output_floats(p->kind, p->n) * sizeof(float);
  for (Slot &s : p->slots) {
    CUDAFFT_CHECK(cudaMallocHost(&s.h_in, in_bytes));
    CUDAFFT_CHECK(cudaMallocHost(&s.h_out, out_bytes));
    CUDAFFT_CHECK(cudaMalloc(&s.d_in, in_bytes));
    CUDAFFT_CHECK(cudaMalloc(&s.d_out, out_bytes));
  }
  p->slot_transforms = transforms;
  return CUDAFFT_STATUS_OK;
}

/* The host entry point: chunk c goes through slot c % 2. The host copies chunk c into pinned
 * memory while the GPU still transforms chunk c - 1; uploads, transforms and downloads run on
 * three streams, ordered by the slots' events, so that a download overlaps the next upload. The
 * host copies chunk c - 1's results out after queueing chunk c. Pinned caller buffers skip the
 * host copies. */
CudafftStatus
pipeline(CudaPlan *p, CudafftDirection direction, const char *in, char *out, size_t batch,
         float scale)
{
  const size_t in_per = cudafft_input_floats(p->kind, p->n) * sizeof(float);
  const size_t out_per = cudafft_output_floats(p->kind, p->n) * sizeof(float);
  size_t chunk = kStagingSlotBytes / (in_per > out_per ? in_per : out_per);
  if (chunk > batch)
    chunk = batch;
  CudafftStatus status = ensure_slots(p, chunk);
  if (status != CUDAFFT_STATUS_OK)
    return status;
  const bool in_pinned = cudafft_is_pinned(in), out_pinned = cudafft_is_pinned(out);
  const size_t chunks = (batch + chunk - 1) / chunk;
  for (size_t c = 0; c <= chunks; ++c) {
    if (c < chunks) {
      Slot &s = p->slots[c % kSlots];
      const size_t first = c * chunk;
      const size_t count = batch - first < chunk ? batch - first : chunk;
      const void *source = in + first * in_per;
      if (!in_pinned) {
        CUDAFFT_CHECK(cudaEventSynchronize(s.uploaded));
        memcpy(s.h_in, source, count * in_per);
        source = s.h_in;
      }
      CUDAFFT_CHECK(cudaStreamWaitEvent(p->upload, s.computed, 0));
      CUDAFFT_CHECK(
          cudaMemcpyAsync(s.d_in, source, count * in_per, cudaMemcpyHostToDevice, p->upload));
      CUDAFFT_CHECK(cudaEventRecord(s.uploaded, p->upload));
      CUDAFFT_CHECK(cudaStreamWaitEvent(p->stream, s.uploaded, 0));
      CUDAFFT_CHECK(cudaStreamWaitEvent(p->stream, s.downloaded, 0));
      status = enqueue(p, direction, s.d_in, s.d_out, count, scale);
      if (status != CUDAFFT_STATUS_OK)
        return status;
      CUDAFFT_CHECK(cudaEventRecord(s.computed, p->stream));
      CUDAFFT_CHECK(cudaStreamWaitEvent(p->download, s.computed, 0));
      void *target = out_pinned ? (void *)(out + first * out_per) : s.h_out;
      CUDAFFT_CHECK(
          cudaMemcpyAsync(target, s.d_out, count * out_per, cudaMemcpyDeviceToHost, p->download));
      CUDAFFT_CHECK(cudaEventRecord(s.downloaded, p->download));
    }
    if (c > 0) {
      const size_t prev = c - 1;
      Slot &s = p->slots[prev % kSlots];
      const size_t first = prev * chunk;
      const size_t count = batch - first < chunk ? batch - first : chunk;
      CUDAFFT_CHECK(cudaEventSynchronize(s.downloaded));
      if (!out_pinned)
        memcpy(out + first * out_per, s.h_out, count * out_per);
    }
  }
  return CUDAFFT_STATUS_OK;
}

CudafftStatus
cuda_run(void *impl, const CudafftFftJob *job)
{
  CudaPlan *p = static_cast<CudaPlan *>(impl);
  CUDAFFT_CHECK(cudafft_use_device(p->device));
  if (job->on_device)
    return enqueue(p, job->direction, job->in, job->out, job->batch, job->scale);
  const CudafftStatus status =
      pipeline(p, job->direction, (const char *)job->in, (char *)job->out, job->batch, job->scale);
  if (status != CUDAFFT_STATUS_OK) {
    /* No copy may still be writing into the caller's buffer once we return. */
    cudaStreamSynchronize(p->stream);
    cudaStreamSynchronize(p->upload);
    cudaStreamSynchronize(p->download);
    cudaGetLastError();
  }
  return status;
}

CudafftStatus
cuda_reset(void *impl)
{
  CudaPlan *p = static_cast<CudaPlan *>(impl);
  CUDAFFT_CHECK(cudafft_use_device(p->device));
  CUDAFFT_CHECK(cudaStreamSynchronize(p->stream));
  return CUDAFFT_STATUS_OK;
}

void *
cuda_stream(const void *impl)
{
  return static_cast<const CudaPlan *>(impl)->stream;
}

} // namespace

extern "C" const CudafftFftBackend cudafft_fft_cuda_backend = {
    cuda_create, cuda_destroy, cuda_run, cuda_reset, cuda_stream,
};
