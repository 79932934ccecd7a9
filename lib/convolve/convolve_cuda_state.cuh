/* convolve_cuda_state.cuh: what the convolution's CUDA backend files share: the object
 * (CudaConvolve: its state in executor memory, laid out by lay_out() in convolve_cuda.cu), its
 * jobs, the helpers that lay a kind's auxiliary data out, the Window through which a call submits
 * its jobs, and each path's entry points. The backend is one object of one path; each path's kinds
 * of work, setup and submissions are in a file of its own:
 * - convolve_cuda.cu: the state's layout, the fill kind, clearing, and the backend table that
 *   chooses the path (create, run, reset, destroy);
 * - convolve_cuda_partitioned.cu: the partitioned F32 path (blocks and kernel spectra);
 * - convolve_cuda_f64.cu: the partitioned F64 path (double end to end, cuFFT's D2Z and Z2D);
 * - convolve_cuda_direct.cu: the direct path (taps in the time domain, a history ring);
 * - convolve_cuda_split.cu: the split path (a direct head and a partitioned tail at block L).
 * The kernels those kinds launch are convolve_kernels.h's. Everything here is the backend's own
 * (the namespace keeps it out of the library's C names). */
#pragma once

#include "convolve_backend.h"
#include "convolve_kernels.h"
#include "cuda_check.cuh"
#include "executor.h"
#include "sample_values.h"
#include "size_math.h"

#include <cufft.h>

#include <cstdint>
#include <cstdio>

namespace convolve_cuda {

constexpr size_t kBlock = CUDAFFT_CONVOLVE_BLOCK;
constexpr size_t kN = CUDAFFT_CONVOLVE_FFT_SIZE;
constexpr size_t kRowBytes = CUDAFFT_CONVOLVE_BIN_PITCH * sizeof(float2); /* a spectrum row */
constexpr size_t kRow64Bytes = CUDAFFT_CONVOLVE_BIN_PITCH * sizeof(double2);
/* Partitioned jobs: at most kChunkTransforms (blocks x channels) transforms, which fill an H100
 * (132 SMs) about twice over at 128 threads a block, and at most kChunkBytes of interleaved input,
 * so that a long call has several jobs to overlap; the delay line holds P - 1 + job_units blocks
 * per channel (64 channels of F32: 8 blocks a job). */
constexpr size_t kChunkTransforms = 2048;
constexpr size_t kChunkBytes = (size_t)4 << 20;
constexpr size_t kMaxChunkBlocks = 64;
/* F64 partitioned jobs: at most this many transforms, since each has a frame, a row of sums and an
 * inverse transform of its own in the object's state (about 100 KB; 12 MB for 128), for cuFFT's
 * batched transforms between the kernels. 128 still gives a mono stream jobs of 64 blocks. */
constexpr size_t kChunkTransforms64 = 128;
/* Direct jobs: interleaved samples (1 MB of F32; the direct kernel needs no more to fill a GPU). */
constexpr size_t kChunkSamples = (size_t)1 << 18;
/* Jobs per call: a call is cut into up to kPipelineChunks jobs, so that a large push pipelines
 * (one job would upload, compute and download one after the other), but into none smaller than
 * kMinChunkBytes of input (rounded up to whole blocks on the partitioned path): a job costs a
 * submission, a wait and a batch's latency, and a smaller launch fills less of the GPU. These are
 * the old per-object pipeline's chunks, measured through the element (bench/HISTORY.md). */
constexpr size_t kPipelineChunks = 4;
constexpr size_t kMinChunkBytes = (size_t)1 << 20;
/* Jobs an object keeps outstanding: the executor runs one per batch with two batches in flight,
 * so that four keep a large call's copies and kernels overlapping. */
constexpr unsigned kWindow = 4;
/* State parts start at multiples of this (coalesced, 16-byte loads of every part). */
constexpr size_t kStateAlign = 256;

enum class Work { Blocks, Direct, Spectra, Fill, Split };

struct CudaConvolve;

/* A fill range before its job's place in a batch is known: from the job's input and to its output
 * are resolved when the batch is prepared. */
struct FillStep {
  CudafftConvolveFillOp op = CUDAFFT_CONVOLVE_FILL_ZERO;
  void *dst = nullptr;       /* state, unless to_output */
  const void *src = nullptr; /* state, unless from_input (unused for ZERO) */
  size_t count = 0;          /* elements */
  bool from_input = false, to_output = false;
};

/* One job of an object (the executor's CudafftJob first: the kinds cast its pointers back). */
struct ConvolveJob {
  CudafftJob job = {};
  CudaConvolve *f = nullptr;
  Work work = Work::Fill;
  /* Blocks, Direct */
  size_t count = 0;    /* blocks (Blocks), frames (Direct), taps (Spectra) */
  int current = 0;     /* the set of signal rows or history it reads */
  size_t head = 0;     /* Blocks, P > 1: its first block's slot */
  double mix = 1.0;    /* wet fraction */
  bool staged = false; /* Blocks: input and output in the object's block buffers */
  /* Spectra: the spectrum rows its partitions go to, from this one on (F32 or F64) */
  float2 *spectra_rows = nullptr;
  double2 *spectra64_rows = nullptr;
  /* Split: its first frame's place in the stream (frames since create or reset), which says
   * everything else of its sequence */
  size_t position = 0;
  /* Fill */
  FillStep steps[CUDAFFT_CONVOLVE_FILL_RANGES];
};

struct CudaConvolve {
  int device = 0; /* for cudafft_cuda_destroy */
  CudafftExecutor *ex = nullptr;
  CudafftJobOwner owner = {};
  CudafftSampleFormat format = CUDAFFT_SAMPLE_F32;
  CudafftConvolvePath path = CUDAFFT_CONVOLVE_DIRECT;
  unsigned channels = 0, rows = 0;
  size_t taps = 0;
  size_t frame_bytes = 0;
  size_t job_units = 0;  /* the most blocks (partitioned) or frames (direct) of one job */
  bool staged = false;   /* a block is more than a job holds: it goes through block buffers */
  size_t part_bytes = 0; /* staged: bytes of one copy job */

  /* partitioned; split: its tail's */
  size_t partitions = 0;
  size_t slots = 0; /* of the delay line (P > 1; split: P) */
  size_t pitch = 0; /* of the signal rows: B + job_units B */

  /* split (convolve_kernels.h's split path): the tail's state is the partitioned path's, with
   * three sets of signal rows of 3B (block j's at j mod 3) */
  size_t block_size = 0;          /* L */
  size_t position = 0;            /* frames since create or reset, advanced as jobs are submitted */
  float *rows3[3] = {};           /* channels rows of 3B floats each */
  float2 *head_spectra = nullptr; /* rows spectrum rows */
  float2 *acc = nullptr;          /* channels spectrum rows */
  float *tail = nullptr;          /* the tail's output ring: channels rows of 2B */

  /* executor memory: one allocation, in parts */
  void *state = nullptr;
  float2 *twiddles = nullptr;
  float2 *spectra = nullptr;                       /* rows x partitions spectrum rows */
  float2 *ring = nullptr;                          /* channels x slots spectrum rows (P > 1) */
  float *signal[2] = {};                           /* channels rows of pitch floats each */
  void *raw_block = nullptr, *out_block = nullptr; /* staged: a block of input, of output */
  void *direct_taps = nullptr;                     /* rows x taps, in the format's type */
  void *history = nullptr; /* a ring of taps - 1 interleaved frames, in the format's type */

  /* partitioned F64 (double end to end, with cuFFT's transforms) */
  double *frames64 = nullptr;   /* job_units x channels frames of N */
  double *previous64[2] = {};   /* channels blocks each: the block before a job's first */
  double2 *spectra64 = nullptr; /* rows x partitions spectrum rows, then channels spare ones */
  double2 *ring64 = nullptr;    /* slots x channels spectrum rows */
  double2 *sums64 = nullptr;    /* job_units x channels spectrum rows */
  double *time64 = nullptr;     /* job_units x channels frames of N */
  void *work64 = nullptr;       /* the plans' work area */
  size_t work64_bytes = 0;
  cufftHandle forward64 = 0, inverse64 = 0; /* D2Z, Z2D of `channels` transforms */
  bool forward64_made = false, inverse64_made = false;

  /* The sequence on the host, advanced as jobs are submitted. */
  size_t head = 0; /* the slot the next block's spectrum goes to; direct: the ring's head */
  int current = 0; /* the set of signal rows or previous blocks the next job reads */

  ConvolveJob jobs[kWindow];
  /* Jobs submitted and waited for since creation: jobs[n % kWindow] is the n-th. A run that did
   * not wait (CudafftConvolveJob.done) leaves its jobs outstanding for the next call's window. */
  size_t submitted = 0, waited = 0;
};

inline size_t
round_up(size_t bytes, size_t to)
{
  return bytes > SIZE_MAX - (to - 1) ? SIZE_MAX : (bytes + to - 1) / to * to;
}

/* Auxiliary data of a kind: count descriptors of desc_bytes each, then `units` unit entries. A
 * batch needs no more than its jobs alone: the descriptors' rounding to 16 bytes is at most each
 * job's. */
inline size_t
descs_bytes(size_t count, size_t desc_bytes)
{
  return round_up(count * desc_bytes, 16);
}

inline size_t
aux_bytes_for(size_t count, size_t desc_bytes, size_t units)
{
  return descs_bytes(count, desc_bytes) + units * sizeof(CudafftConvolveUnit);
}

template <typename Desc>
Desc *
aux_descs(void *aux)
{
  return static_cast<Desc *>(aux);
}

template <typename Desc>
CudafftConvolveUnit *
aux_units(void *aux, size_t count)
{
  return reinterpret_cast<CudafftConvolveUnit *>(static_cast<char *>(aux) +
                                                 descs_bytes(count, sizeof(Desc)));
}

inline const ConvolveJob *
as_job(const CudafftJob *job)
{
  return reinterpret_cast<const ConvolveJob *>(job);
}

inline size_t
units_of(size_t count, size_t per_unit)
{
  return (count + per_unit - 1) / per_unit;
}

/* The sum of per_job(job) over the jobs. */
template <typename PerJob>
size_t
sum_over(CudafftJob *const *jobs, size_t count, PerJob per_job)
{
  size_t sum = 0;
  for (size_t i = 0; i < count; ++i)
    sum += per_job(as_job(jobs[i]));
  return sum;
}

/* Appends the unit entries of job `index` (units of it) to *at. */
inline CudafftConvolveUnit *
map_units(CudafftConvolveUnit *at, size_t index, size_t units)
{
  for (size_t k = 0; k < units; ++k)
    *at++ = CudafftConvolveUnit{(uint32_t)index, (uint32_t)k};
  return at;
}

/* A fill job's step: a range of 4-byte words (bytes a multiple of 4) or of narrowed doubles. */
inline FillStep
zero_step(void *dst, size_t bytes)
{
  FillStep step;
  step.dst = dst;
  step.count = bytes / 4;
  return step;
}

inline FillStep
copy_step(void *dst, const void *src, size_t bytes)
{
  FillStep step;
  step.op = CUDAFFT_CONVOLVE_FILL_COPY;
  step.dst = dst;
  step.src = src;
  step.count = bytes / 4;
  return step;
}

inline FillStep
from_input(FillStep step)
{
  step.from_input = true;
  return step;
}

inline FillStep
to_output(FillStep step)
{
  step.to_output = true;
  return step;
}

/* The kinds of work (one per path and stage, convolve_cuda.cu's top comment lists them). */
extern const CudafftWorkKind fill_kind;
extern const CudafftWorkKind blocks_kind;
extern const CudafftWorkKind spectra_kind;
extern const CudafftWorkKind blocks64_kind;
extern const CudafftWorkKind spectra64_kind;
extern const CudafftWorkKind direct_kind;
extern const CudafftWorkKind split_kind;

/* The jobs of one call: filled in and submitted in order, up to kWindow outstanding (the oldest is
 * waited for before its place is reused), all waited for by finish(), unless the call does not
 * wait (finish's done): its jobs then stay outstanding, and the next call's window waits for them
 * first. The first failure is kept, status and message, and ends the submissions. A call's input
 * and output may be device memory (on_device, CudafftMemory flags): the jobs then read and write
 * them in place, the input after the fence `after` (ordered on the device where it is this
 * object's executor's, else waited for here). */
class Window {
public:
  explicit Window(CudaConvolve *f, unsigned on_device = 0, CudafftFence after = CudafftFence{})
      : f_(f), on_device_(on_device)
  {
    /* an earlier call's jobs that were not waited for: done by now where the output's consumer
     * came after them (no sleep), and their slots go back to the executor; a failure of theirs
     * is this call's */
    while (f_->waited < f_->submitted)
      wait_oldest();
    if (status_ == CUDAFFT_STATUS_OK)
      failed(cudafft_executor_order_after(f->ex, after, &after_));
  }

  /* The next job, reset, for the caller to fill in and submit(); nullptr once one has failed. */
  ConvolveJob *
  next()
  {
    if (f_->submitted - f_->waited == kWindow)
      wait_oldest();
    if (status_ != CUDAFFT_STATUS_OK)
      return nullptr;
    ConvolveJob *job = &f_->jobs[f_->submitted % kWindow];
    *job = ConvolveJob{};
    job->f = f_;
    job->job.owner = &f_->owner;
    return job;
  }

  /* Submits job (from next(), its work and sizes filled in) with its input (nullptr: zeros) and the
   * place for its output. */
  void
  submit(ConvolveJob *job, const void *in, void *out)
  {
    static const CudafftWorkKind *const kinds[] = {&blocks_kind, &direct_kind, &spectra_kind,
                                                   &fill_kind, &split_kind};
    const bool double_blocks =
        f_->format == CUDAFFT_SAMPLE_F64 && f_->path == CUDAFFT_CONVOLVE_PARTITIONED;
    job->job.kind = !double_blocks               ? kinds[(int)job->work]
                    : job->work == Work::Blocks  ? &blocks64_kind
                    : job->work == Work::Spectra ? &spectra64_kind
                                                 : kinds[(int)job->work];
    job->job.in_device = in && (on_device_ & CUDAFFT_IN_DEVICE) ? in : nullptr;
    job->job.out_device = out && (on_device_ & CUDAFFT_OUT_DEVICE) ? out : nullptr;
    job->job.after = after_;
    const CudafftStatus status = cudafft_executor_submit(f_->ex, &job->job, in, out);
    if (status == CUDAFFT_STATUS_OK) {
      ++f_->submitted;
      ++mine_;
    } else
      failed(status);
  }

  /* Whether no job has failed so far. */
  bool
  ok() const
  {
    return status_ == CUDAFFT_STATUS_OK;
  }

  /* Waits for every job submitted (done NULL); or, with done, for none: *done receives the fence
   * where this call's output is complete (zeroed where it submitted nothing). The first failure's
   * status (and message), or OK. */
  CudafftStatus
  finish(CudafftFence *done = nullptr)
  {
    if (done) {
      *done = CudafftFence{};
      uint64_t batch = 0;
      /* an owner's jobs go in increasing batches: the last one's is the call's */
      if (mine_ > 0 && status_ == CUDAFFT_STATUS_OK)
        failed(cudafft_executor_batch_of(f_->ex, &f_->jobs[(f_->submitted - 1) % kWindow].job,
                                         &batch));
      if (batch > 0 && status_ == CUDAFFT_STATUS_OK)
        *done = CudafftFence{cudafft_executor_id(f_->ex), batch};
    }
    while (f_->waited < f_->submitted && (!done || status_ != CUDAFFT_STATUS_OK))
      wait_oldest();
    if (status_ != CUDAFFT_STATUS_OK)
      return cudafft_fail(status_, "%s", message_);
    return CUDAFFT_STATUS_OK;
  }

private:
  void
  wait_oldest()
  {
    const CudafftStatus status = cudafft_executor_wait(f_->ex, &f_->jobs[f_->waited % kWindow].job);
    ++f_->waited;
    if (status != CUDAFFT_STATUS_OK)
      failed(status);
  }

  void
  failed(CudafftStatus status)
  {
    if (status_ != CUDAFFT_STATUS_OK || status == CUDAFFT_STATUS_OK)
      return;
    status_ = status;
    snprintf(message_, sizeof message_, "%s", cudafft_last_error_message());
  }

  CudaConvolve *f_;
  unsigned on_device_;
  uint64_t after_ = 0;
  size_t mine_ = 0; /* jobs this call submitted */
  CudafftStatus status_ = CUDAFFT_STATUS_OK;
  char message_[512] = "";
};

/* Entry points of the paths' files, for the backend table and each other. */
size_t lay_out(CudaConvolve *f, char *base);

void submit_clear(Window *w, CudaConvolve *f);

size_t twiddle_bytes();

size_t block_units(const ConvolveJob *j);

size_t spectra_units(const ConvolveJob *j);

CudafftStatus load_partitioned(CudaConvolve *f, const CudafftConvolveKernel &kernel,
                               const CudafftConvolveKernel *head = nullptr);

void submit_blocks(Window *w, CudaConvolve *f, const char *in, char *out, size_t blocks,
                   double mix);

void submit_staged_block(Window *w, CudaConvolve *f, const char *in, char *out, double mix);

bool blocks_fit(const CudaConvolve *f, size_t blocks, size_t max_job);

CudafftStatus load_partitioned64(CudaConvolve *f, const CudafftConvolveKernel &kernel);

CudafftStatus make_plans64(CudaConvolve *f, size_t *work);

CudafftStatus load_direct(CudaConvolve *f, const CudafftConvolveKernel &kernel);

void submit_direct(Window *w, CudaConvolve *f, const char *in, char *out, size_t frames,
                   double mix);

CudafftStatus split_setup(CudaConvolve *f, const CudafftConvolveSpec *spec);

CudafftStatus run_split(CudaConvolve *f, const CudafftConvolveJob *call);

} // namespace convolve_cuda
