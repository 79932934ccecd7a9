/* fft_cuda.cu: the CUDA backend: device selection, the plan's streams and buffers, the pinned
 * staging pipeline of the host entry point, and the cuFFT fallback for GPUs whose shared memory
 * cannot hold a transform. Every CUDA call is checked; a failure becomes a status and a message. */
#include "cuda_check.cuh"
#include "fft_backend.h"
#include "fft_graph.h"
#include "fft_launch.h"

#include <cufft.h>

#include <climits>
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

/* How the plan queues its kernels: through cached CUDA graphs (fft_graph.h), which cost the host
 * least per call; or, for comparison in benchmarks (CUDAFFT_LAUNCH=driver|runtime), through the
 * driver's cuLaunchKernel or the runtime's <<<>>>. */
enum class LaunchPath { Graph, Driver, Runtime };

struct CudaPlan {
  int device = 0;
  cudaStream_t stream = nullptr; /* compute; the one cudafft_plan_get_cuda_stream() returns */
  cudaStream_t upload = nullptr, download = nullptr;
  float2 *d_twiddles[CUDAFFT_VARIANT_COUNT] = {};
  size_t slot_transforms = 0; /* capacity of each slot, 0 until the first host execute */
  Slot slots[kSlots];
  /* cuFFT fallback (use_cufft): plan made for cufft_batch transforms, scratch for C2R input */
  bool use_cufft = false;
  cufftHandle cufft = 0;
  bool cufft_made = false;
  size_t cufft_batch = 0;
  void *d_scratch = nullptr;
  size_t scratch_bytes = 0;
  int forced_variant = -1; /* CUDAFFT_VARIANT (benchmarks): wide, pairs, narrow or products */
  CudafftKernel kernels[CUDAFFT_VARIANT_COUNT] = {};
  LaunchPath launch_path = LaunchPath::Graph;
  CudafftGraphCache graphs = {};
};

/* Whether variant v's twiddle table is an earlier variant's (setup() uploads one table once). */
bool
shared_table_of(const CudaPlan *p, int v)
{
  for (int w = 0; w < v; ++w)
    if (p->d_twiddles[w] && p->d_twiddles[w] == p->d_twiddles[v])
      return true;
  return false;
}

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

CudaPlan *
impl_of(const CudafftPlan *plan)
{
  return static_cast<CudaPlan *>(plan->impl);
}

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
cuda_fini(CudafftPlan *plan)
{
  CudaPlan *p = impl_of(plan);
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
  for (int v = 0; v < CUDAFFT_VARIANT_COUNT; ++v)
    if (!shared_table_of(p, v))
      cudaFree(p->d_twiddles[v]);
  if (p->stream)
    cudaStreamDestroy(p->stream);
  if (p->upload)
    cudaStreamDestroy(p->upload);
  if (p->download)
    cudaStreamDestroy(p->download);
  cudaGetLastError(); /* leave no error of ours behind for the caller's next CUDA call */
  delete p;
  plan->impl = nullptr;
}

CudafftStatus
setup(CudafftPlan *plan, CudaPlan *p)
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

  static const char *const variant_names[CUDAFFT_VARIANT_COUNT] = {"wide", "pairs", "narrow",
                                                                   "products"};
  const char *forced = getenv("CUDAFFT_VARIANT");
  for (int v = 0; forced && v < CUDAFFT_VARIANT_COUNT; ++v)
    if (strcmp(forced, variant_names[v]) == 0)
      p->forced_variant = v;
  const char *launch = getenv("CUDAFFT_LAUNCH");
  if (launch && strcmp(launch, "driver") == 0)
    p->launch_path = LaunchPath::Driver;
  else if (launch && strcmp(launch, "runtime") == 0)
    p->launch_path = LaunchPath::Runtime;

  /* Our kernels hold a whole transform in shared memory; where the GPU offers too little
   * (16384-point C2C on sm_86/sm_89; on sm_75 also 8192-point C2C and 16384-point real
   * transforms), cuFFT runs the plan instead. CUDAFFT_FORCE_CUFFT=1 takes that
   * path anywhere, so that it can be tested on any GPU. */
  const char *force = getenv("CUDAFFT_FORCE_CUFFT");
  p->use_cufft = force && strcmp(force, "1") == 0;
  for (int v = 0; v < CUDAFFT_VARIANT_COUNT; ++v) {
    CudafftKernelShape shape;
    if (!cudafft_kernel_shape(plan->kind, plan->n, (CudafftVariant)v, &shape))
      return cudafft_fail(CUDAFFT_STATUS_INVALID_SIZE, "no kernel for size %zu", plan->n);
    if (shape.smem_bytes > (size_t)smem_optin)
      p->use_cufft = true;
  }
  if (p->use_cufft)
    return CUDAFFT_STATUS_OK;

  for (int v = 0; v < CUDAFFT_VARIANT_COUNT; ++v) {
    const CudafftVariant variant = (CudafftVariant)v;
    CUDAFFT_CHECK(cudafft_kernel_prepare(plan->kind, plan->n, variant));
    CUDAFFT_CHECK(cudafft_kernel_resolve(plan->kind, plan->n, variant, &p->kernels[v]));
    const int table = cudafft_kernel_table_id(plan->kind, plan->n, variant);
    int same = 0; /* an earlier variant that reads the same table */
    while (same < v && cudafft_kernel_table_id(plan->kind, plan->n, (CudafftVariant)same) != table)
      ++same;
    if (same < v) {
      p->d_twiddles[v] = p->d_twiddles[same];
      continue;
    }
    const size_t table_bytes =
        cudafft_kernel_twiddle_count(plan->kind, plan->n, variant) * sizeof(float2);
    float *values = (float *)malloc(table_bytes); /* up to 200 KB: not for a thread's stack */
    if (!values)
      return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY, "cannot allocate a twiddle table");
    cudafft_kernel_twiddles(plan->kind, plan->n, variant, values);
    cudaError_t error = cudaMalloc(&p->d_twiddles[v], table_bytes);
    if (error == cudaSuccess)
      error = cudaMemcpy(p->d_twiddles[v], values, table_bytes, cudaMemcpyHostToDevice);
    free(values);
    if (error != cudaSuccess)
      return cudafft_cuda_failure(error, "uploading a twiddle table", __FILE__, __LINE__);
  }
  return CUDAFFT_STATUS_OK;
}

CudafftStatus
cuda_init(CudafftPlan *plan, int device_id)
{
  int device = 0;
  const CudafftStatus picked = cudafft_cuda_pick_device(device_id, &device);
  if (picked != CUDAFFT_STATUS_OK)
    return picked;
  CudaPlan *p = new (std::nothrow) CudaPlan;
  if (!p)
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY, "cannot allocate a CUDA plan");
  p->device = device;
  plan->impl = p;
  const CudafftStatus status = setup(plan, p);
  if (status != CUDAFFT_STATUS_OK)
    cuda_fini(plan);
  return status;
}

/* cuFFT's plans are made for one batch count; the fallback keeps one, remade when it changes. */
CudafftStatus
cufft_execute(CudafftPlan *plan, CudaPlan *p, CudafftDirection direction, const void *in, void *out,
              size_t batch, float scale)
{
  if (!p->cufft_made || p->cufft_batch != batch) {
    if (p->cufft_made)
      cufftDestroy(p->cufft);
    p->cufft_made = false;
    const cufftType type = plan->kind == CUDAFFT_C2C   ? CUFFT_C2C
                           : plan->kind == CUDAFFT_R2C ? CUFFT_R2C
                                                       : CUFFT_C2R;
    CF_CHECK_CUFFT(cufftPlan1d(&p->cufft, (int)plan->n, type, (int)batch));
    p->cufft_made = true;
    p->cufft_batch = batch;
    CF_CHECK_CUFFT(cufftSetStream(p->cufft, p->stream));
  }
  const size_t out_floats = batch * cudafft_output_floats(plan->kind, plan->n);
  switch (plan->kind) {
  case CUDAFFT_C2C:
    CF_CHECK_CUFFT(cufftExecC2C(p->cufft, (cufftComplex *)in, (cufftComplex *)out,
                                direction == CUDAFFT_FORWARD ? CUFFT_FORWARD : CUFFT_INVERSE));
    break;
  case CUDAFFT_R2C:
    CF_CHECK_CUFFT(cufftExecR2C(p->cufft, (cufftReal *)in, (cufftComplex *)out));
    break;
  case CUDAFFT_C2R: {
    /* cuFFT's C2R overwrites its input, which our API promises to leave alone */
    const size_t in_bytes = batch * cudafft_input_floats(plan->kind, plan->n) * sizeof(float);
    if (p->scratch_bytes < in_bytes) {
      cudaFree(p->d_scratch);
      p->d_scratch = nullptr;
      p->scratch_bytes = 0;
      CUDAFFT_CHECK(cudaMalloc(&p->d_scratch, in_bytes));
      p->scratch_bytes = in_bytes;
    }
    CUDAFFT_CHECK(cudaMemcpyAsync(p->d_scratch, in, in_bytes, cudaMemcpyDeviceToDevice, p->stream));
    /* cuFFT reads the imaginary parts of bins 0 and n/2, which our contract ignores: zero them */
    const size_t row_bytes = (plan->n / 2 + 1) * sizeof(float2);
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
enqueue(CudafftPlan *plan, CudaPlan *p, CudafftDirection direction, const void *in, void *out,
        size_t batch, float scale)
{
  if (p->use_cufft)
    return cufft_execute(plan, p, direction, in, out, batch, scale);
  /* The products variant was as fast as the others or faster at every batch measured
   * (bench/RESULTS.md, --sweep); the others stay for measurements through CUDAFFT_VARIANT. */
  const CudafftVariant variant =
      p->forced_variant >= 0 ? (CudafftVariant)p->forced_variant : CUDAFFT_VARIANT_PRODUCTS;
  const size_t in_bytes = cudafft_input_floats(plan->kind, plan->n) * sizeof(float);
  const size_t out_bytes = cudafft_output_floats(plan->kind, plan->n) * sizeof(float);
  for (size_t done = 0; done < batch; done += kMaxLaunchBatch) {
    const size_t count = batch - done < kMaxLaunchBatch ? batch - done : kMaxLaunchBatch;
    const void *from = (const char *)in + done * in_bytes;
    void *to = (char *)out + done * out_bytes;
    const float2 *twiddles = p->d_twiddles[variant];
    switch (p->launch_path) {
    case LaunchPath::Graph:
      CUDAFFT_CHECK(cudafft_graph_run(&p->graphs, &p->kernels[variant], direction, from, to,
                                      (int)count, scale, twiddles, p->stream));
      break;
    case LaunchPath::Driver:
      CUDAFFT_CHECK(cudafft_kernel_run(&p->kernels[variant], direction, from, to, (int)count, scale,
                                       twiddles, p->stream));
      break;
    case LaunchPath::Runtime:
      CUDAFFT_CHECK(cudafft_kernel_launch(plan->kind, plan->n, variant, direction, from, to,
                                          (int)count, scale, twiddles, p->stream));
      break;
    }
  }
  return CUDAFFT_STATUS_OK;
}

CudafftStatus
cuda_execute_device(CudafftPlan *plan, CudafftDirection direction, const void *in, void *out,
                    size_t batch, float scale)
{
  CudaPlan *p = impl_of(plan);
  CUDAFFT_CHECK(cudafft_use_device(p->device));
  return enqueue(plan, p, direction, in, out, batch, scale);
}

CudafftStatus
ensure_slots(CudafftPlan *plan, CudaPlan *p, size_t transforms)
{
  if (p->slot_transforms >= transforms)
    return CUDAFFT_STATUS_OK;
  CUDAFFT_CHECK(cudaStreamSynchronize(p->stream));
  CUDAFFT_CHECK(cudaStreamSynchronize(p->upload));
  CUDAFFT_CHECK(cudaStreamSynchronize(p->download));
  free_slots(p);
  const size_t in_bytes = transforms * cudafft_input_floats(plan->kind, plan->n) * sizeof(float);
  const size_t out_bytes = transforms * cudafft_output_floats(plan->kind, plan->n) * sizeof(float);
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
pipeline(CudafftPlan *plan, CudaPlan *p, CudafftDirection direction, const char *in, char *out,
         size_t batch, float scale)
{
  const size_t in_per = cudafft_input_floats(plan->kind, plan->n) * sizeof(float);
  const size_t out_per = cudafft_output_floats(plan->kind, plan->n) * sizeof(float);
  size_t chunk = kStagingSlotBytes / (in_per > out_per ? in_per : out_per);
  if (chunk > batch)
    chunk = batch;
  CudafftStatus status = ensure_slots(plan, p, chunk);
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
      status = enqueue(plan, p, direction, s.d_in, s.d_out, count, scale);
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
cuda_execute(CudafftPlan *plan, CudafftDirection direction, const void *in, void *out, size_t batch,
             float scale)
{
  CudaPlan *p = impl_of(plan);
  CUDAFFT_CHECK(cudafft_use_device(p->device));
  const CudafftStatus status =
      pipeline(plan, p, direction, (const char *)in, (char *)out, batch, scale);
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
cuda_synchronize(CudafftPlan *plan)
{
  CudaPlan *p = impl_of(plan);
  CUDAFFT_CHECK(cudafft_use_device(p->device));
  CUDAFFT_CHECK(cudaStreamSynchronize(p->stream));
  return CUDAFFT_STATUS_OK;
}

void *
cuda_get_stream(const CudafftPlan *plan)
{
  return impl_of(plan)->stream;
}

CudafftStatus
cuda_host_alloc(CudafftPlan *plan, size_t bytes, void **ptr)
{
  CUDAFFT_CHECK(cudafft_use_device(impl_of(plan)->device));
  const cudaError_t error = cudaMallocHost(ptr, bytes);
  if (error != cudaSuccess) {
    *ptr = nullptr;
    cudaGetLastError();
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY, "cudaMallocHost(%zu bytes): %s", bytes,
                        cudaGetErrorString(error));
  }
  return CUDAFFT_STATUS_OK;
}

void
cuda_host_free(CudafftPlan *, void *ptr)
{
  cudaFreeHost(ptr);
}

const CudafftBackendOps cuda_ops = {
    cuda_init,        cuda_fini,       cuda_execute,    cuda_execute_device,
    cuda_synchronize, cuda_get_stream, cuda_host_alloc, cuda_host_free,
};

} // namespace

extern "C" const CudafftBackendOps *const cudafft_cuda_backend = &cuda_ops;

extern "C" int
cudafft_cuda_backend_device_count(void)
{
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return count;
}

extern "C" void *
cudafft_cuda_backend_pinned_alloc(size_t bytes)
{
  void *ptr = nullptr;
  /* portable: the elements' buffers may meet plans on any device */
  if (cudaHostAlloc(&ptr, bytes, cudaHostAllocPortable) != cudaSuccess) {
    cudaGetLastError();
    return nullptr;
  }
  return ptr;
}

extern "C" void
cudafft_cuda_backend_pinned_free(void *ptr)
{
  cudaFreeHost(ptr);
}
