/* batch_units.cuh: what the engines' batched kinds of work (executor.h) share: the map from a
 * launch's work units to the batch's jobs, the layout of a kind's auxiliary data, and segments
 * (2D copies and zero fills of an object's device state) with the kind that runs nothing else
 * (uploading an object's tables at creation). Internal to the library; for .cu files only.
 *
 * Why a map: one launch serves every job of a batch, whatever their sizes, so each thread block
 * (or each transform of a block FFT kernel) must find its job and its place in it. The kind's
 * prepare() writes an entry per unit into the batch's auxiliary data; a unit reads its entry (one
 * load) and its job's descriptor. */
#ifndef CUDAFFT_BATCH_UNITS_CUH
#define CUDAFFT_BATCH_UNITS_CUH

#include "cuda_check.cuh"
#include "executor.h"

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>

/* Unit `index` of job `job` (the job's place among the kind's jobs of the batch). */
struct CudafftUnit {
  uint32_t job, index;
};

/* Threads of the blocks of the flat kernels (conversions, copies, sums). */
constexpr int kCudafftUnitThreads = 256;

/* A kind's auxiliary data: regions laid out one after another, each aligned to 16 bytes. A kind
 * reserves kCudafftAuxSlack bytes on top of its jobs' regions for the alignment of its (at most
 * eight) regions, so that its aux_bytes for jobs together never exceeds the sum of theirs alone
 * (executor.h's rule). */
constexpr size_t kCudafftAuxSlack = 128;

struct CudafftAuxLayout {
  size_t bytes = 0;

  /* The offset of a region of count items of size bytes, placed after the others. */
  size_t
  take(size_t count, size_t size)
  {
    const size_t at = (bytes + 15) / 16 * 16;
    bytes = at + count * size;
    return at;
  }
};

/* A pointer `offset` bytes into base. */
template <typename T>
inline T *
cudafft_aux_at(void *base, size_t offset)
{
  return reinterpret_cast<T *>(static_cast<unsigned char *>(base) + offset);
}

/* The map entries of `units` units of job `job`, appended at *map. */
inline void
cudafft_put_units(CudafftUnit **map, size_t job, size_t units)
{
  for (size_t u = 0; u < units; u++)
    *(*map)++ = CudafftUnit{(uint32_t)job, (uint32_t)u};
}

/* Segments ------------------------------------------------------------------------------------ */

/* `rows` rows of `width` bytes from src (rows src_pitch bytes apart) to dst (dst_pitch apart); src
 * NULL writes zeros. width is a multiple of 4 and every row starts 4-byte aligned: the copy moves
 * 32-bit words, so floats keep their bits (NaN payloads included). A segment's units split each
 * row into at most kCudafftSegmentChunks pieces of at least kCudafftSegmentWords words. */
struct CudafftSegment {
  const void *src;
  void *dst;
  size_t src_pitch, dst_pitch;
  size_t width, rows;
};

constexpr size_t kCudafftSegmentWords = 2048;
constexpr size_t kCudafftSegmentChunks = 64;

__host__ __device__ inline size_t
cudafft_segment_chunks(const CudafftSegment &s)
{
  const size_t words = s.width / 4;
  if (words == 0 || s.rows == 0)
    return 0;
  const size_t chunks = (words + kCudafftSegmentWords - 1) / kCudafftSegmentWords;
  return chunks < kCudafftSegmentChunks ? chunks : kCudafftSegmentChunks;
}

/* Units of a segment (0 for an empty one). */
__host__ __device__ inline size_t
cudafft_segment_units(const CudafftSegment &s)
{
  return s.rows * cudafft_segment_chunks(s);
}

/* The block's part of a segment: unit `unit` of cudafft_segment_units(s). */
__device__ inline void
cudafft_segment_unit(const CudafftSegment &s, size_t unit)
{
  const size_t chunks = cudafft_segment_chunks(s), words = s.width / 4;
  const size_t row = unit / chunks, chunk = unit % chunks;
  const size_t per = (words + chunks - 1) / chunks;
  const size_t first = chunk * per, last = first + per < words ? first + per : words;
  uint32_t *dst = reinterpret_cast<uint32_t *>(static_cast<char *>(s.dst) + row * s.dst_pitch);
  if (s.src) {
    const uint32_t *src =
        reinterpret_cast<const uint32_t *>(static_cast<const char *>(s.src) + row * s.src_pitch);
    for (size_t i = first + threadIdx.x; i < last; i += blockDim.x)
      dst[i] = src[i];
  } else {
    for (size_t i = first + threadIdx.x; i < last; i += blockDim.x)
      dst[i] = 0u;
  }
}

/* One block per unit of the segments segs[units[b].job]. */
template <int Unused = 0>
__global__ void
__launch_bounds__(kCudafftUnitThreads)
    cudafft_segments_kernel(const CudafftSegment *__restrict__ segs,
                            const CudafftUnit *__restrict__ units)
{
  const CudafftUnit u = units[blockIdx.x];
  cudafft_segment_unit(segs[u.job], u.index);
}

/* A job of segments only: an object's tables uploaded (segments whose source is the job's input)
 * or parts of its state zeroed. */
#define CUDAFFT_SEGMENT_JOB_MAX 4

typedef struct {
  CudafftJob job; /* first: the kinds cast the CudafftJob pointers back */
  CudafftSegment segments[CUDAFFT_SEGMENT_JOB_MAX];
  /* nonzero: the segment's src is an offset (in bytes) into the job's input, not a pointer */
  int from_input[CUDAFFT_SEGMENT_JOB_MAX];
  unsigned count;
} CudafftSegmentJob;

/* The segment kind's callbacks; an engine names its own kind (a static table) with them. */
inline size_t
cudafft_segment_jobs_count(CudafftJob *const *jobs, size_t count, size_t *units)
{
  size_t segments = 0;
  *units = 0;
  for (size_t j = 0; j < count; j++) {
    const CudafftSegmentJob *t = reinterpret_cast<const CudafftSegmentJob *>(jobs[j]);
    segments += t->count;
    for (unsigned s = 0; s < t->count; s++)
      *units += cudafft_segment_units(t->segments[s]);
  }
  return segments;
}

inline size_t
cudafft_segment_aux_bytes(CudafftJob *const *jobs, size_t count)
{
  size_t units = 0;
  const size_t segments = cudafft_segment_jobs_count(jobs, count, &units);
  return kCudafftAuxSlack + segments * sizeof(CudafftSegment) + units * sizeof(CudafftUnit);
}

inline void
cudafft_segment_prepare(CudafftJob *const *jobs, size_t count, void *host_aux, void *device_aux)
{
  (void)device_aux;
  size_t units = 0;
  const size_t segments = cudafft_segment_jobs_count(jobs, count, &units);
  CudafftAuxLayout layout;
  CudafftSegment *segs =
      cudafft_aux_at<CudafftSegment>(host_aux, layout.take(segments, sizeof *segs));
  CudafftUnit *map = cudafft_aux_at<CudafftUnit>(host_aux, layout.take(units, sizeof *map));
  size_t at = 0;
  for (size_t j = 0; j < count; j++) {
    const CudafftSegmentJob *t = reinterpret_cast<const CudafftSegmentJob *>(jobs[j]);
    for (unsigned s = 0; s < t->count; s++, at++) {
      segs[at] = t->segments[s];
      if (t->from_input[s])
        segs[at].src = static_cast<const char *>(t->job.device_in) + (uintptr_t)t->segments[s].src;
      cudafft_put_units(&map, at, cudafft_segment_units(segs[at]));
    }
  }
}

inline CudafftStatus
cudafft_segment_launch(CudafftJob *const *jobs, size_t count, void *device_aux, void *stream)
{
  size_t units = 0;
  const size_t segments = cudafft_segment_jobs_count(jobs, count, &units);
  if (units == 0)
    return CUDAFFT_STATUS_OK;
  CudafftAuxLayout layout;
  const CudafftSegment *segs =
      cudafft_aux_at<CudafftSegment>(device_aux, layout.take(segments, sizeof(CudafftSegment)));
  const CudafftUnit *map =
      cudafft_aux_at<CudafftUnit>(device_aux, layout.take(units, sizeof(CudafftUnit)));
  cudafft_segments_kernel<>
      <<<(unsigned)units, kCudafftUnitThreads, 0, static_cast<cudaStream_t>(stream)>>>(segs, map);
  CUDAFFT_CHECK(cudaGetLastError());
  return CUDAFFT_STATUS_OK;
}

/* An object's jobs in flight ---------------------------------------------------------------------
 */

/* Up to Ahead jobs of one owner outstanding at once: a call that needs several jobs submits them
 * this far ahead of its waits, so that their copies and kernels overlap across batches (the
 * executor runs one job of an owner per batch, in order). Job is an engine's job struct, or a
 * struct whose first member is one, so that it starts with its CudafftJob; its slots stay in place
 * for the executor. The first failure is
 * kept (status and message): nothing more should be submitted after it, and finish() reports it
 * once every job has been waited for. */
template <typename Job, int Ahead> struct CudafftJobQueue {
  Job jobs[Ahead] = {};
  unsigned head = 0, count = 0;
  CudafftStatus failed = CUDAFFT_STATUS_OK;
  char why[512] = "";

  void
  note(CudafftStatus status)
  {
    if (status != CUDAFFT_STATUS_OK && failed == CUDAFFT_STATUS_OK) {
      failed = status;
      snprintf(why, sizeof why, "%s", cudafft_last_error_message());
    }
  }

  /* Waits for the oldest job; done(job) runs after it succeeded (its output is in place). */
  template <typename Done>
  void
  wait_oldest(CudafftExecutor *ex, Done &&done)
  {
    Job *job = &jobs[head];
    head = (head + 1) % Ahead;
    count--;
    const CudafftStatus status = cudafft_executor_wait(ex, reinterpret_cast<CudafftJob *>(job));
    if (status == CUDAFFT_STATUS_OK)
      done(job);
    note(status);
  }

  /* The slot for the next job, once fewer than Ahead are outstanding. */
  template <typename Done>
  Job *
  next(CudafftExecutor *ex, Done &&done)
  {
    if (count == (unsigned)Ahead)
      wait_oldest(ex, done);
    return &jobs[(head + count) % Ahead];
  }

  /* Submits the slot next() gave (its header and fields set); nothing after a failure. */
  void
  submit(CudafftExecutor *ex, Job *job, const void *in, void *out)
  {
    if (failed != CUDAFFT_STATUS_OK)
      return;
    const CudafftStatus status =
        cudafft_executor_submit(ex, reinterpret_cast<CudafftJob *>(job), in, out);
    if (status == CUDAFFT_STATUS_OK)
      count++;
    note(status);
  }

  /* Waits for every outstanding job; returns OK or the first failure, its message restored. The
   * queue is empty and clean afterwards. With `fence` (a call that does not wait for its device
   * output), waits for none and gives in *fence where the newest job's batch ends (zeroed for no
   * job): the jobs stay outstanding, and a later next() or finish() waits for them. */
  template <typename Done>
  CudafftStatus
  finish(CudafftExecutor *ex, Done &&done, CudafftFence *fence = nullptr)
  {
    if (fence) {
      *fence = CudafftFence{};
      uint64_t batch = 0;
      if (count > 0 && failed == CUDAFFT_STATUS_OK)
        note(cudafft_executor_batch_of(
            ex, reinterpret_cast<CudafftJob *>(&jobs[(head + count - 1) % Ahead]), &batch));
      if (batch > 0 && failed == CUDAFFT_STATUS_OK) {
        *fence = CudafftFence{cudafft_executor_id(ex), batch};
        return CUDAFFT_STATUS_OK;
      }
    }
    while (count > 0)
      wait_oldest(ex, done);
    const CudafftStatus status = failed;
    failed = CUDAFFT_STATUS_OK;
    if (status != CUDAFFT_STATUS_OK)
      return cudafft_fail(status, "%s", why);
    return CUDAFFT_STATUS_OK;
  }
};

/* A done() for jobs whose outputs need nothing more. */
struct CudafftNothingToDo {
  template <typename Job>
  void
  operator()(Job *) const
  {
  }
};

/* A part of an object's device state set at creation: bytes copied from host (NULL: zeros) to
 * device (4-byte aligned, bytes a multiple of 4). */
struct CudafftTablePiece {
  const void *host;
  void *device;
  size_t bytes;
};

/* Sets the pieces through segment jobs of `kind` (CudafftSegmentJob), each within
 * cudafft_executor_max_job_bytes(), a few ahead, and waits for them: the object's first jobs, so
 * that its later ones find the tables in place. */
inline CudafftStatus
cudafft_upload_tables(CudafftExecutor *ex, CudafftJobOwner *owner, const CudafftWorkKind *kind,
                      const CudafftTablePiece *pieces, size_t count)
{
  CudafftJobQueue<CudafftSegmentJob, 4> queue;
  /* room beside a part for the job's auxiliary data (a segment and its units) */
  const size_t most = (cudafft_executor_max_job_bytes(ex) - 4096) / 16 * 16;
  for (size_t p = 0; p < count && queue.failed == CUDAFFT_STATUS_OK; p++) {
    const char *host = static_cast<const char *>(pieces[p].host);
    char *device = static_cast<char *>(pieces[p].device);
    for (size_t done = 0; done < pieces[p].bytes && queue.failed == CUDAFFT_STATUS_OK;) {
      const size_t part = pieces[p].bytes - done < most ? pieces[p].bytes - done : most;
      CudafftSegmentJob *job = queue.next(ex, CudafftNothingToDo());
      job->job.kind = kind;
      job->job.owner = owner;
      job->job.in_bytes = host ? part : 0;
      job->job.out_bytes = 0;
      job->segments[0] = CudafftSegment{nullptr, device + done, part, part, part, 1};
      job->from_input[0] = host != nullptr;
      job->count = 1;
      queue.submit(ex, job, host ? host + done : nullptr, nullptr);
      done += part;
    }
  }
  return queue.finish(ex, CudafftNothingToDo());
}

#endif
