/* fft_cuda.cu: the FFT engine's CUDA backend: the plan's streams and buffers, its kernel queued
 * through cached launch graphs, the pinned staging pipeline of the host entry point, and the cuFFT
 * fallback for GPUs whose shared memory cannot hold a transform. Every CUDA call is checked; a
 * failure becomes a status and a message. */
#include "backend_object.cuh"
#include "cuda_check.cuh"
#include "cufft_check.cuh"
#include "device_choice.cuh"
#include "device_memory.h"
#include "fft_backend.h"
#include "fft_kernels.h"
#include "kernel_launch.h"
#include "streams.cuh"

#include <cufft.h>

#include <cstring>

namespace {

/* Bytes of one staging slot (each of two slots has one for input and one for output, on the host
 * and on the device): large enough that a chunk's copy takes far longer than its launch overhead,
 * small enough that a plan holds at most 4 x 8 MB of pinned memory. */
constexpr size_t kStagingSlotBytes = 8u << 20;
constexpr int kSlots = 2;

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
  const CudafftBlockKernels *kernel = nullptr;
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

void
free_slots(CudaPlan *p)
{
  for (Slot &s : p->slots) {
    cudaFreeHost(s.h_in);
    cudaFreeHost(s.h_out);
    cudafft_device_free({s.d_in, s.d_out});
    s.h_in = s.h_out = s.d_in = s.d_out = nullptr;
  }
  p->slot_transforms = 0;
}

/* The plan's resources, best effort (cudafft_cuda_destroy). */
void
release(CudaPlan *p)
{
  cudafft_streams_settle({p->stream, p->upload, p->download});
  free_slots(p);
  for (Slot &s : p->slots)
    cudafft_events_destroy({s.uploaded, s.computed, s.downloaded});
  cudafft_graph_cache_clear(&p->graphs);
  if (p->cufft_made)
    cufftDestroy(p->cufft);
  cudafft_device_free({p->d_scratch, p->d_twiddles});
  cudafft_streams_destroy({p->stream, p->upload, p->download});
}

CudafftStatus
setup(CudaPlan *p, const CudafftFftSpec *spec)
{
  int smem_optin = 0;
  const CudafftStatus opened = cudafft_cuda_open_device(spec->device_id, &p->device, &smem_optin);
  if (opened != CUDAFFT_STATUS_OK)
    return opened;
  p->kind = spec->kind;
  p->n = spec->n;
  CUDAFFT_CHECK(cudafft_streams_create({&p->stream, &p->upload, &p->download}));
  for (Slot &s : p->slots)
    CUDAFFT_CHECK(cudafft_events_create({&s.uploaded, &s.computed, &s.downloaded}));

  /* Our kernels hold a whole transform in shared memory; where the GPU offers too little, cuFFT
   * runs the plan instead: of the powers of two, 16384-point C2C on sm_86/sm_89 (on sm_75 also
   * 8192-point C2C and 16384-point real transforms); of the mixed-radix sizes, whose transforms of
   * N points take about 17 N bytes, those of N above 13673 on sm_90, 9818 on sm_80, 5963 on
   * sm_86/sm_89 and 3855 on sm_75 (N = n/2 for the real transforms of even n, else n). */
  p->kernel = cudafft_fft_kernel(p->kind, p->n);
  if (!p->kernel)
    return cudafft_fail(CUDAFFT_STATUS_INVALID_SIZE, "no kernel for size %zu", p->n);
  p->use_cufft = spec->force_cufft || p->kernel->smem_bytes > (size_t)smem_optin;
  if (p->use_cufft)
    return CUDAFFT_STATUS_OK;

  CUDAFFT_CHECK(cudafft_block_kernels_prepare(p->kernel));
  CUDAFFT_CHECK(cudafft_kernel_resolve(p->kernel->entries[0], &p->resolved));
  return cudafft_twiddles_upload(&p->kernel->twiddles, 1, p->stream, &p->d_twiddles);
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
    CUDAFFT_CHECK_CUFFT(cufftPlan1d(&p->cufft, (int)p->n, type, (int)batch));
    p->cufft_made = true;
    p->cufft_batch = batch;
    CUDAFFT_CHECK_CUFFT(cufftSetStream(p->cufft, p->stream));
  }
  const size_t out_floats = batch * cudafft_output_floats(p->kind, p->n);
  switch (p->kind) {
  case CUDAFFT_C2C:
    CUDAFFT_CHECK_CUFFT(cufftExecC2C(p->cufft, (cufftComplex *)in, (cufftComplex *)out,
                                     direction == CUDAFFT_FORWARD ? CUFFT_FORWARD : CUFFT_INVERSE));
    break;
  case CUDAFFT_R2C:
    CUDAFFT_CHECK_CUFFT(cufftExecR2C(p->cufft, (cufftReal *)in, (cufftComplex *)out));
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
    /* cuFFT reads the imaginary parts of bins 0 and (even n) n/2, which our contract ignores:
     * zero them */
    const size_t row_bytes = (p->n / 2 + 1) * sizeof(float2);
    char *scratch = (char *)p->d_scratch;
    CUDAFFT_CHECK(
        cudaMemset2DAsync(scratch + sizeof(float), row_bytes, 0, sizeof(float), batch, p->stream));
    if (p->n % 2 == 0)
      CUDAFFT_CHECK(cudaMemset2DAsync(scratch + row_bytes - sizeof(float), row_bytes, 0,
                                      sizeof(float), batch, p->stream));
    CUDAFFT_CHECK_CUFFT(cufftExecC2R(p->cufft, (cufftComplex *)p->d_scratch, (cufftReal *)out));
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
  for (size_t done = 0; done < batch; done += CUDAFFT_MAX_LAUNCH_TRANSFORMS) {
    const size_t count =
        batch - done < CUDAFFT_MAX_LAUNCH_TRANSFORMS ? batch - done : CUDAFFT_MAX_LAUNCH_TRANSFORMS;
    CudafftFftLaunch launch;
    cudafft_fft_launch_init(&launch, &p->resolved, p->kernel, direction,
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
  if (status != CUDAFFT_STATUS_OK) /* no copy may still write into the caller's buffer */
    cudafft_streams_settle({p->stream, p->upload, p->download});
  return status;
}

} // namespace

extern "C" const CudafftFftBackend cudafft_fft_cuda_backend = {
    cudafft_keeping_caller<cudafft_cuda_create<CudaPlan, CudafftFftSpec, setup, release>>,
    cudafft_keeping_caller<cudafft_cuda_destroy<CudaPlan, release>>,
    cudafft_keeping_caller<cuda_run>, cudafft_keeping_caller<cudafft_cuda_wait<CudaPlan>>,
    cudafft_cuda_stream<CudaPlan>};
