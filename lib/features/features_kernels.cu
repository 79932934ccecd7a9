/* features_kernels.cu: the features engine's kind of work (features_kernels.h): its five batched
 * kernels and the callbacks that lay out their descriptors. Every value is computed by the
 * formulas of features_values.h, in the order the CPU backend (features_cpu.c) applies them.
 *
 * A batch's jobs come from different objects (sizes, channels, kinds): each kernel finds its job
 * from its work item by a binary search over the jobs' prefix sums of items (no per-item map in
 * the auxiliary data), and the frame kernel launches once per transform size, its blocks' groups
 * all running the same plan. Control flow around the block's barriers never depends on a job's
 * settings: every group of a block runs the same reductions, so jobs of different objects share
 * blocks. */
#include "block_kernels.cuh"
#include "cuda_check.cuh"
#include "features_driver.h"
#include "features_kernel_math.cuh"
#include "features_kernels.h"
#include "mixed_fft.cuh"

#include <cstdint>
#include <cstdlib>
#include <cstring>

using namespace cudafft;

namespace {

constexpr int kFlatThreads = 256;
constexpr int kFloorThreads = 256;

using Desc = CudafftFeaturesDesc;
using Items = CudafftFeaturesItems;

__global__ void
__launch_bounds__(kFlatThreads)
    append_kernel(const Desc *__restrict__ descs, const uint64_t *__restrict__ prefix, int jobs)
{
  const uint64_t item = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (item >= prefix[jobs])
    return;
  const int j = fx_find_job(prefix, jobs, item);
  fx_append_item(descs[j], item - prefix[j]);
}

/* Groups of `threads` threads, blockDim.x / threads transforms a block (fx_frame_thread). */
template <bool Odd>
__global__ void
__launch_bounds__(kMixedMaxBlockThreads)
    frames_kernel(const Desc *__restrict__ descs, const uint32_t *__restrict__ order,
                  const uint64_t *__restrict__ prefix, int jobs, uint64_t total,
                  const float2 *__restrict__ twiddles, CudafftMixedArgs m, int extra,
                  unsigned flags)
{
  extern __shared__ float2 smem[];
  fx_frame_thread<Odd>(descs, order, prefix, jobs, total, twiddles, m.plan, m.threads, extra, flags,
                       reinterpret_cast<float *>(smem), blockIdx.x, threadIdx.x, blockDim.x,
                       MixedBlockBarrier{});
}

/* One block per unit (FRAMES: per frame) and channel. The maximum is exact whatever the order of
 * the reduction. */
__global__ void
__launch_bounds__(kFloorThreads)
    floors_kernel(const Desc *__restrict__ descs, const uint64_t *__restrict__ prefix, int jobs)
{
  __shared__ float best[kFloorThreads];
  const uint64_t item = blockIdx.x;
  const int j = fx_find_job(prefix, jobs, item);
  const Desc &d = descs[j];
  uint32_t c;
  uint64_t e0, e1, key;
  fx_floor_unit(d, item - prefix[j], &c, &e0, &e1, &key);
  best[threadIdx.x] = fx_floor_share(d, c, e0, e1, threadIdx.x, blockDim.x);
  __syncthreads();
  for (int s = kFloorThreads / 2; s > 0; s /= 2) {
    if ((int)threadIdx.x < s)
      best[threadIdx.x] = fmaxf(best[threadIdx.x], best[threadIdx.x + s]);
    __syncthreads();
  }
  if (threadIdx.x == 0)
    fx_floor_store(d, c, key, best[0]);
}

__global__ void
__launch_bounds__(kFlatThreads)
    base_kernel(const Desc *__restrict__ descs, const uint64_t *__restrict__ prefix, int jobs)
{
  const uint64_t item = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (item >= prefix[jobs])
    return;
  const int j = fx_find_job(prefix, jobs, item);
  fx_base_item(descs[j], item - prefix[j]);
}

__global__ void
__launch_bounds__(kFlatThreads)
    out_kernel(const Desc *__restrict__ descs, const uint64_t *__restrict__ prefix, int jobs)
{
  const uint64_t item = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (item >= prefix[jobs])
    return;
  const int j = fx_find_job(prefix, jobs, item);
  fx_out_item(descs[j], item - prefix[j]);
}

/* The kind's callbacks ------------------------------------------------------------------------ */

const CudafftFeaturesStepJob *
step(CudafftJob *job)
{
  return reinterpret_cast<const CudafftFeaturesStepJob *>(job);
}

Desc
make_desc(const CudafftFeaturesStepJob *job)
{
  return fx_desc(job->o, job->step, job->job.device_in,
                 static_cast<unsigned char *>(job->job.device_out));
}

/* The auxiliary data: the descriptors, the jobs in the frame launches' order (by fft size), and
 * each stage's prefix sums of items (the frames' over that order). */
struct Layout {
  size_t descs, append, order, frames, floors, base, out, bytes;
};

Layout
layout(size_t count)
{
  CudafftAuxLayout l;
  Layout at;
  at.descs = l.take(count, sizeof(Desc));
  at.append = l.take(count + 1, sizeof(uint64_t));
  at.order = l.take(count, sizeof(uint32_t));
  at.frames = l.take(count + 1, sizeof(uint64_t));
  at.floors = l.take(count + 1, sizeof(uint64_t));
  at.base = l.take(count + 1, sizeof(uint64_t));
  at.out = l.take(count + 1, sizeof(uint64_t));
  at.bytes = l.bytes;
  return at;
}

size_t
aux_bytes(CudafftJob *const *jobs, size_t count)
{
  (void)jobs;
  return kCudafftAuxSlack + layout(count).bytes;
}

/* The jobs' indices sorted by fft size, each size's in submission order: a pass per size in the
 * batch, smallest first. A batch holds up to thousands of jobs but few sizes, so that this is
 * linear where an insertion sort's moves grow with the square of the jobs of mixed sizes. */
void
order_by_size(CudafftJob *const *jobs, size_t count, uint32_t *order)
{
  size_t placed = 0;
  for (int64_t done = -1; placed < count;) {
    int64_t next = INT64_MAX; /* the smallest size not yet placed */
    for (size_t i = 0; i < count; ++i) {
      const int64_t n = step(jobs[i])->o.fft_size;
      next = n > done && n < next ? n : next;
    }
    for (size_t i = 0; i < count; ++i)
      if (step(jobs[i])->o.fft_size == next)
        order[placed++] = (uint32_t)i;
    done = next;
  }
}

void
prepare(CudafftJob *const *jobs, size_t count, void *host_aux, void *device_aux)
{
  (void)device_aux;
  const Layout at = layout(count);
  Desc *descs = cudafft_aux_at<Desc>(host_aux, at.descs);
  uint64_t *append = cudafft_aux_at<uint64_t>(host_aux, at.append);
  uint32_t *order = cudafft_aux_at<uint32_t>(host_aux, at.order);
  uint64_t *frames = cudafft_aux_at<uint64_t>(host_aux, at.frames);
  uint64_t *floors = cudafft_aux_at<uint64_t>(host_aux, at.floors);
  uint64_t *base = cudafft_aux_at<uint64_t>(host_aux, at.base);
  uint64_t *out = cudafft_aux_at<uint64_t>(host_aux, at.out);
  append[0] = floors[0] = base[0] = out[0] = frames[0] = 0;
  for (size_t i = 0; i < count; ++i) {
    descs[i] = make_desc(step(jobs[i]));
    const Items n = fx_items(descs[i]);
    append[i + 1] = append[i] + n.append;
    floors[i + 1] = floors[i] + n.floors;
    base[i + 1] = base[i] + n.base;
    out[i + 1] = out[i] + n.out;
  }
  order_by_size(jobs, count, order);
  for (size_t i = 0; i < count; ++i)
    frames[i + 1] = frames[i] + fx_items(descs[order[i]]).frames;
}

unsigned
flat_blocks(uint64_t items, int threads)
{
  return (unsigned)((items + (uint64_t)threads - 1) / (uint64_t)threads);
}

/* Queues the frame kernel of one fft size over the sorted jobs first .. last - 1. */
CudafftStatus
launch_frames(CudafftJob *const *jobs, const Desc *descs, const uint32_t *order,
              const uint64_t *prefix, const uint32_t *host_order, const uint64_t *host_prefix,
              size_t first, size_t last, cudaStream_t stream)
{
  const uint64_t total = host_prefix[last] - host_prefix[first];
  if (total == 0)
    return CUDAFFT_STATUS_OK;
  const CudafftFeaturesStepJob *lead = step(jobs[host_order[first]]);
  uint32_t mels = 0;
  unsigned flags = 0;
  for (size_t i = first; i < last; ++i) {
    const CudafftFeaturesObject &o = step(jobs[host_order[i]])->o;
    mels = o.n_mels > mels ? o.n_mels : mels;
    flags |= fx_frame_flags(o);
  }
  const uint32_t n = lead->o.fft_size;
  int threads = 0, per_block = 0;
  size_t smem = 0;
  cudafft_features_frame_shape(n, mels, &threads, &per_block, &smem);
  const int points = mixed_buffer_points(n % 2 ? (int)n : (int)n / 2);
  const int extra = (int)(smem / (size_t)per_block / sizeof(float)) - 4 * points;
  const CudafftMixedArgs m = {mixed_plan(n % 2 ? (int)n : (int)n / 2), threads};
  const uint64_t blocks = (total + (uint64_t)per_block - 1) / (uint64_t)per_block;
  if (blocks > 0x7fffffffu)
    return cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE, "features: %llu frames in one launch",
                        (unsigned long long)total);
  const int jobs_here = (int)(last - first);
  if (n % 2)
    frames_kernel<true><<<(unsigned)blocks, threads * per_block, smem, stream>>>(
        descs, order + first, prefix + first, jobs_here, total,
        static_cast<const float2 *>(lead->o.twiddles), m, extra, flags);
  else
    frames_kernel<false><<<(unsigned)blocks, threads * per_block, smem, stream>>>(
        descs, order + first, prefix + first, jobs_here, total,
        static_cast<const float2 *>(lead->o.twiddles), m, extra, flags);
  CUDAFFT_CHECK(cudaGetLastError());
  return CUDAFFT_STATUS_OK;
}

/* The stages' launches in order (features_kernels.h). */
CudafftStatus
launch_stages(CudafftJob *const *jobs, size_t count, const Items &total, const uint32_t *host_order,
              const uint64_t *host_frames, const Desc *descs, const uint64_t *append,
              const uint32_t *order, const uint64_t *frames, const uint64_t *floors,
              const uint64_t *base, const uint64_t *out, cudaStream_t stream)
{
  const int jobs_count = (int)count;
  if (total.append > 0) {
    append_kernel<<<flat_blocks(total.append, kFlatThreads), kFlatThreads, 0, stream>>>(
        descs, append, jobs_count);
    CUDAFFT_CHECK(cudaGetLastError());
  }
  for (size_t first = 0; first < count;) {
    size_t last = first + 1;
    const uint32_t n = step(jobs[host_order[first]])->o.fft_size;
    while (last < count && step(jobs[host_order[last]])->o.fft_size == n)
      ++last;
    const CudafftStatus status =
        launch_frames(jobs, descs, order, frames, host_order, host_frames, first, last, stream);
    if (status != CUDAFFT_STATUS_OK)
      return status;
    first = last;
  }
  if (total.floors > 0) {
    floors_kernel<<<(unsigned)total.floors, kFloorThreads, 0, stream>>>(descs, floors, jobs_count);
    CUDAFFT_CHECK(cudaGetLastError());
  }
  if (total.base > 0) {
    base_kernel<<<flat_blocks(total.base, kFlatThreads), kFlatThreads, 0, stream>>>(descs, base,
                                                                                    jobs_count);
    CUDAFFT_CHECK(cudaGetLastError());
  }
  if (total.out > 0) {
    out_kernel<<<flat_blocks(total.out, kFlatThreads), kFlatThreads, 0, stream>>>(descs, out,
                                                                                  jobs_count);
    CUDAFFT_CHECK(cudaGetLastError());
  }
  return CUDAFFT_STATUS_OK;
}

CudafftStatus
launch(CudafftJob *const *jobs, size_t count, void *device_aux, void *stream_ptr)
{
  cudaStream_t stream = static_cast<cudaStream_t>(stream_ptr);
  const Layout at = layout(count);
  const Desc *descs = cudafft_aux_at<const Desc>(device_aux, at.descs);
  const uint64_t *append = cudafft_aux_at<const uint64_t>(device_aux, at.append);
  const uint32_t *order = cudafft_aux_at<const uint32_t>(device_aux, at.order);
  const uint64_t *frames = cudafft_aux_at<const uint64_t>(device_aux, at.frames);
  const uint64_t *floors = cudafft_aux_at<const uint64_t>(device_aux, at.floors);
  const uint64_t *base = cudafft_aux_at<const uint64_t>(device_aux, at.base);
  const uint64_t *out = cudafft_aux_at<const uint64_t>(device_aux, at.out);
  /* the host's copy of the counts: the same arithmetic as prepare's */
  Items total{};
  uint32_t *host_order = static_cast<uint32_t *>(malloc(count * sizeof(uint32_t)));
  uint64_t *host_frames = static_cast<uint64_t *>(malloc((count + 1) * sizeof(uint64_t)));
  if (!host_order || !host_frames) {
    free(host_order);
    free(host_frames);
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY,
                        "features: cannot order a batch of %zu jobs", count);
  }
  order_by_size(jobs, count, host_order);
  host_frames[0] = 0;
  for (size_t i = 0; i < count; ++i) {
    const Items n = fx_items(make_desc(step(jobs[i])));
    total.append += n.append;
    total.floors += n.floors;
    total.base += n.base;
    total.out += n.out;
    host_frames[i + 1] = host_frames[i] + fx_items(make_desc(step(jobs[host_order[i]]))).frames;
  }
  const CudafftStatus status = launch_stages(jobs, count, total, host_order, host_frames, descs,
                                             append, order, frames, floors, base, out, stream);
  free(host_order);
  free(host_frames);
  return status;
}

} // namespace

CudafftFeaturesAuxView
cudafft_features_aux_view(const void *aux, size_t count)
{
  const Layout at = layout(count);
  void *base = const_cast<void *>(aux);
  return {cudafft_aux_at<const Desc>(base, at.descs),
          cudafft_aux_at<const uint64_t>(base, at.append),
          cudafft_aux_at<const uint64_t>(base, at.frames),
          cudafft_aux_at<const uint64_t>(base, at.floors),
          cudafft_aux_at<const uint64_t>(base, at.base),
          cudafft_aux_at<const uint64_t>(base, at.out),
          cudafft_aux_at<const uint32_t>(base, at.order)};
}

void
cudafft_features_frame_shape(uint32_t fft_size, uint32_t n_mels, int *threads, int *per_block,
                             size_t *smem)
{
  const int big_n = fft_size % 2 ? (int)fft_size : (int)fft_size / 2;
  const MixedPlan plan = mixed_plan(big_n);
  *threads = mixed_group_threads(plan);
  *per_block = *threads >= kMixedBlockThreadsAim ? 1 : kMixedBlockThreadsAim / *threads;
  /* the scratch and the log-mel values, rounded to whole float2 (the next row's alignment) */
  const int extra = (*threads + (int)n_mels + 1) / 2 * 2;
  *smem =
      (size_t)*per_block * (4 * (size_t)mixed_buffer_points(big_n) + (size_t)extra) * sizeof(float);
}

cudaError_t
cudafft_features_kernels_prepare(void)
{
  int device = 0, optin = 0;
  cudaError_t error = cudaGetDevice(&device);
  if (error == cudaSuccess)
    error = cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device);
  if (error == cudaSuccess)
    error = cudaFuncSetAttribute(frames_kernel<true>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 optin);
  if (error == cudaSuccess)
    error = cudaFuncSetAttribute(frames_kernel<false>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 optin);
  return error;
}

size_t
cudafft_features_step_aux_bytes(const CudafftFeaturesStepJob *job)
{
  CudafftJob *one = const_cast<CudafftJob *>(&job->job);
  return aux_bytes(&one, 1);
}

const CudafftWorkKind cudafft_features_step_kind = {"features steps", aux_bytes, prepare, launch,
                                                    nullptr};
const CudafftWorkKind cudafft_features_tables_kind = {"features tables", cudafft_segment_aux_bytes,
                                                      cudafft_segment_prepare,
                                                      cudafft_segment_launch, nullptr};
