/* convolve_cuda.cu: the convolution's CUDA backend, on the device's shared executor
 * (lib/common/executor.h): an object holds its state in executor memory and does everything on the
 * device through jobs, so that the work of every convolution object on a device goes out in
 * batched launches (convolve_kernels.h) and in the executor's order. It owns no streams, events or
 * staging. Every CUDA call is checked; a failure becomes a status and a message.
 *
 * State (one executor allocation, so that an object too large fails at create with the sizes in
 * the message, before anything else is done): the partitioned path's twiddle table, kernel
 * spectra, delay line and two sets of signal rows (and, where one block is more than a job holds,
 * a block of input and one of output); the direct path's taps and its history ring, in the
 * format's type; the split path's twiddle table, head spectrum, tail spectra and delay line, three
 * sets of signal rows, the tail's sums and its output ring. F64 streams run in double end to end:
 * the direct path sums in double, and the partitioned path has double kernel spectra, a double
 * delay line, a job's frames, sums and inverse transforms, and cuFFT's D2Z and Z2D plans (one pair
 * per object, `channels` transforms a block) with their work area in the state. F32 streams keep
 * the single-precision block FFT.
 *
 * Kinds of work (one job per call of the executor; the kernels are convolve_kernels.h's):
 * - blocks: partitioned F32 jobs: deinterleave into the object's signal rows, then forward FFTs
 *   into its delay line and MAC + inverse FFT + mix + interleave (P > 1), or the fused kernel
 *   (P = 1);
 * - blocks (double): partitioned F64 jobs: deinterleave into frames, D2Z into the delay line, MAC,
 *   Z2D, mix + interleave (the kernels batched over the jobs, the transforms per job and block);
 * - direct: direct-path jobs: the tiled direct kernel, then the append to the history ring;
 * - split: the split path's F32 jobs (CUDAFFT_CONVOLVE_SPLIT, convolve_kernels.h), one a push of
 *   whole blocks of L within one block of B: gather, head, the push's share of the tail's MAC
 *   (where the job before did not run it ahead), the block's transforms in the push that
 *   completes it, and the tail's output added; then, as work ahead (after the batch is done), the
 *   MAC share of the object's next push;
 * - spectra: the kernel spectra from uploaded taps (setup), or for F64 their frames and a D2Z;
 * - fill: copies, conversions and zeroing of state (setup, reset, and the staged blocks' input and
 *   output).
 * Each kind's launch serves all its jobs in the batch, one launch per stage, whatever their
 * objects. An object's host-side sequence (the delay line's head, which set of rows or history a
 * job reads) advances as its jobs are submitted: the executor runs an owner's jobs in order.
 *
 * A call runs in jobs of at most job_units blocks (frames on the direct path), cut as the old
 * per-object pipeline cut its chunks (call_job_units()), and keeps up to kWindow of them
 * outstanding, so that consecutive jobs go out in consecutive batches whose copies and kernels
 * overlap. Every call waits for all its jobs before it returns; a failed job's status is the
 * call's (the front end then resets). */
#include "backend_object.cuh"
#include "convolve_backend.h"
#include "convolve_kernels.h"
#include "convolve_split.h"
#include "cuda_check.cuh"
#include "cufft_check.cuh"
#include "executor.h"
#include "sample_values.h"
#include "size_math.h"

#include <cufft.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

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

/* Sizes ------------------------------------------------------------------------------------- */

size_t
round_up(size_t bytes, size_t to)
{
  return bytes > SIZE_MAX - (to - 1) ? SIZE_MAX : (bytes + to - 1) / to * to;
}

size_t
twiddle_bytes()
{
  int plans = 0;
  const CudafftTwiddlePlan *twiddles = cudafft_convolve_twiddle_plans(&plans);
  return cudafft_twiddles_count(twiddles, plans) * sizeof(float2);
}

/* Lays the object's state out from base (nullptr: only counts), each part at a multiple of
 * kStateAlign, and returns its bytes (saturating: SIZE_MAX stands for more than can be counted).
 */
size_t
lay_out(CudaConvolve *f, char *base)
{
  size_t at = 0;
  auto part = [&](size_t bytes) -> void * {
    void *p = base && bytes > 0 ? base + at : nullptr;
    at = sat_add(at, round_up(bytes, kStateAlign));
    return p;
  };
  const size_t sample = cudafft_sample_size(f->format);
  const size_t transforms = sat_mul(f->job_units, f->channels);
  if (f->path == CUDAFFT_CONVOLVE_PARTITIONED && f->format == CUDAFFT_SAMPLE_F64) {
    f->spectra64 = static_cast<double2 *>(
        part(sat_mul(sat_add(sat_mul(f->partitions, f->rows), f->channels), kRow64Bytes)));
    f->ring64 = static_cast<double2 *>(part(sat_mul(sat_mul(f->slots, f->channels), kRow64Bytes)));
    f->frames64 = static_cast<double *>(part(sat_mul(transforms, kN * sizeof(double))));
    f->sums64 = static_cast<double2 *>(part(sat_mul(transforms, kRow64Bytes)));
    f->time64 = static_cast<double *>(part(sat_mul(transforms, kN * sizeof(double))));
    for (double *&previous : f->previous64)
      previous = static_cast<double *>(part(sat_mul(f->channels, kBlock * sizeof(double))));
    if (f->staged) {
      f->raw_block = part(kBlock * f->frame_bytes);
      f->out_block = part(kBlock * f->frame_bytes);
    }
    f->work64 = part(f->work64_bytes);
  } else if (f->path == CUDAFFT_CONVOLVE_SPLIT) {
    f->twiddles = static_cast<float2 *>(part(twiddle_bytes()));
    f->spectra = static_cast<float2 *>(part(sat_mul(sat_mul(f->partitions, f->rows), kRowBytes)));
    f->ring = static_cast<float2 *>(part(sat_mul(sat_mul(f->slots, f->channels), kRowBytes)));
    for (float *&rows : f->rows3)
      rows = static_cast<float *>(part(sat_mul(3 * kBlock * f->channels, sizeof(float))));
    f->head_spectra = static_cast<float2 *>(part(sat_mul(f->rows, kRowBytes)));
    f->acc = static_cast<float2 *>(part(sat_mul(f->channels, kRowBytes)));
    f->tail = static_cast<float *>(part(sat_mul(2 * kBlock * f->channels, sizeof(float))));
  } else if (f->path == CUDAFFT_CONVOLVE_PARTITIONED) {
    f->twiddles = static_cast<float2 *>(part(twiddle_bytes()));
    f->spectra = static_cast<float2 *>(part(sat_mul(sat_mul(f->partitions, f->rows), kRowBytes)));
    f->ring = static_cast<float2 *>(part(sat_mul(sat_mul(f->slots, f->channels), kRowBytes)));
    for (float *&rows : f->signal)
      rows = static_cast<float *>(part(sat_mul(sat_mul(f->pitch, f->channels), sizeof(float))));
    if (f->staged) {
      f->raw_block = part(kBlock * f->frame_bytes);
      f->out_block = part(kBlock * f->frame_bytes);
    }
  } else {
    f->direct_taps = part(sat_mul(f->taps * f->rows, sample));
    f->history = part(sat_mul((f->taps - 1) * f->channels, sample));
  }
  return at;
}

/* Auxiliary data of a kind: count descriptors of desc_bytes each, then `units` unit entries. A
 * batch needs no more than its jobs alone: the descriptors' rounding to 16 bytes is at most each
 * job's. */
size_t
descs_bytes(size_t count, size_t desc_bytes)
{
  return round_up(count * desc_bytes, 16);
}

size_t
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

const ConvolveJob *
as_job(const CudafftJob *job)
{
  return reinterpret_cast<const ConvolveJob *>(job);
}

size_t
units_of(size_t count, size_t per_unit)
{
  return (count + per_unit - 1) / per_unit;
}

/* Units of each job (convolve_kernels.h): transforms of a partitioned job, tiles of a direct one
 * and the samples of its append to the ring in runs of CUDAFFT_CONVOLVE_DIRECT_UNIT, partitions
 * of a spectra job (F64: frames of a whole batch of the plan, `channels`). */
size_t
block_units(const ConvolveJob *j)
{
  return j->count * j->f->channels;
}

size_t
direct_units(const ConvolveJob *j)
{
  const unsigned channels = j->f->channels;
  return units_of(channels, CUDAFFT_CONVOLVE_DIRECT_TILE_CHANNELS(channels)) *
         units_of(j->count, CUDAFFT_CONVOLVE_DIRECT_TILE_FRAMES(channels));
}

size_t
history_units(const ConvolveJob *j)
{
  const size_t ring = j->f->taps - 1, kept = j->count < ring ? j->count : ring;
  return units_of(kept * j->f->channels, CUDAFFT_CONVOLVE_DIRECT_UNIT);
}

size_t
spectra_units(const ConvolveJob *j)
{
  return j->f->format == CUDAFFT_SAMPLE_F64 && j->f->path == CUDAFFT_CONVOLVE_PARTITIONED
             ? j->f->channels
             : units_of(j->count, kBlock);
}

/* Units of an F64 partitioned job's deinterleave and output: its samples in runs of B. */
size_t
sample_units(const ConvolveJob *j)
{
  return j->count * j->f->channels;
}

/* The kinds --------------------------------------------------------------------------------- */

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

size_t
direct_and_history_units(const ConvolveJob *j)
{
  return direct_units(j) + history_units(j);
}

/* Appends the unit entries of job `index` (units of it) to *at. */
CudafftConvolveUnit *
map_units(CudafftConvolveUnit *at, size_t index, size_t units)
{
  for (size_t k = 0; k < units; ++k)
    *at++ = CudafftConvolveUnit{(uint32_t)index, (uint32_t)k};
  return at;
}

bool
multi_partition(const ConvolveJob *j)
{
  return j->f->partitions > 1;
}

size_t
blocks_aux_bytes(CudafftJob *const *jobs, size_t count)
{
  return aux_bytes_for(count, sizeof(CudafftConvolveBlocksJob), sum_over(jobs, count, block_units));
}

CudafftConvolveBlocksJob
describe_blocks(const ConvolveJob *j)
{
  const CudaConvolve *f = j->f;
  CudafftConvolveBlocksJob d = {};
  d.in = j->staged ? f->raw_block : j->job.device_in;
  d.out = j->staged ? f->out_block : j->job.device_out;
  d.signal = f->signal[j->current];
  d.next = f->signal[1 - j->current];
  d.ring = f->ring;
  d.spectra = f->spectra;
  d.pitch = f->pitch;
  d.wet_gain = (float)j->mix;
  d.dry_gain = (float)(1.0 - j->mix);
  d.format = f->format;
  d.channels = (int)f->channels;
  d.kernel_rows = (int)f->rows;
  d.partitions = (int)f->partitions;
  d.slots = (int)f->slots;
  d.first_slot = (int)j->head;
  d.blocks = (int)j->count;
  return d;
}

/* The units of the jobs with P > 1 first (forward and MAC launch over them), then those of the
 * jobs with P = 1 (the fused launch); the deinterleave launches over all. */
void
blocks_prepare(CudafftJob *const *jobs, size_t count, void *host_aux, void *)
{
  CudafftConvolveBlocksJob *descs = aux_descs<CudafftConvolveBlocksJob>(host_aux);
  CudafftConvolveUnit *at = aux_units<CudafftConvolveBlocksJob>(host_aux, count);
  for (size_t i = 0; i < count; ++i)
    descs[i] = describe_blocks(as_job(jobs[i]));
  for (int multi = 1; multi >= 0; --multi)
    for (size_t i = 0; i < count; ++i)
      if (multi_partition(as_job(jobs[i])) == (multi == 1))
        at = map_units(at, i, block_units(as_job(jobs[i])));
}

CudafftStatus
blocks_launch(CudafftJob *const *jobs, size_t count, void *device_aux, void *stream)
{
  size_t multi = 0, single = 0;
  for (size_t i = 0; i < count; ++i)
    (multi_partition(as_job(jobs[i])) ? multi : single) += block_units(as_job(jobs[i]));
  const CudafftConvolveBlocksJob *descs = aux_descs<CudafftConvolveBlocksJob>(device_aux);
  const CudafftConvolveUnit *units = aux_units<CudafftConvolveBlocksJob>(device_aux, count);
  /* every object's table is the same: the first job's serves the launch */
  const float2 *twiddles = as_job(jobs[0])->f->twiddles;
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  CUDAFFT_CHECK(cudafft_convolve_deinterleave_launch(descs, units, multi + single, s));
  CUDAFFT_CHECK(cudafft_convolve_forward_launch(descs, units, multi, twiddles, s));
  CUDAFFT_CHECK(cudafft_convolve_mac_launch(descs, units, multi, twiddles, s));
  CUDAFFT_CHECK(cudafft_convolve_fused_launch(descs, units + multi, single, twiddles, s));
  return CUDAFFT_STATUS_OK;
}

const CudafftWorkKind blocks_kind = {"convolution blocks", blocks_aux_bytes, blocks_prepare,
                                     blocks_launch, nullptr};

/* F64 partitioned jobs: the transforms' units (the MAC's) first, then the sample runs' (the
 * deinterleave's and the output's); as many of each. */
size_t
blocks64_aux_bytes(CudafftJob *const *jobs, size_t count)
{
  return aux_bytes_for(count, sizeof(CudafftConvolveBlocks64Job),
                       2 * sum_over(jobs, count, block_units));
}

CudafftConvolveBlocks64Job
describe_blocks64(const ConvolveJob *j)
{
  const CudaConvolve *f = j->f;
  CudafftConvolveBlocks64Job d = {};
  d.in = static_cast<const double *>(j->staged ? f->raw_block : j->job.device_in);
  d.out = static_cast<double *>(j->staged ? f->out_block : j->job.device_out);
  d.frames = f->frames64;
  d.previous = f->previous64[j->current];
  d.next_previous = f->previous64[1 - j->current];
  d.ring = f->ring64;
  d.spectra = f->spectra64;
  d.sums = f->sums64;
  d.time = f->time64;
  d.wet_gain = j->mix;
  d.dry_gain = 1.0 - j->mix;
  d.channels = (int)f->channels;
  d.kernel_rows = (int)f->rows;
  d.partitions = (int)f->partitions;
  d.slots = (int)f->slots;
  d.first_slot = (int)j->head;
  d.blocks = (int)j->count;
  return d;
}

void
blocks64_prepare(CudafftJob *const *jobs, size_t count, void *host_aux, void *)
{
  CudafftConvolveBlocks64Job *descs = aux_descs<CudafftConvolveBlocks64Job>(host_aux);
  CudafftConvolveUnit *at = aux_units<CudafftConvolveBlocks64Job>(host_aux, count);
  for (size_t i = 0; i < count; ++i) {
    descs[i] = describe_blocks64(as_job(jobs[i]));
    at = map_units(at, i, block_units(as_job(jobs[i])));
  }
  for (size_t i = 0; i < count; ++i)
    at = map_units(at, i, sample_units(as_job(jobs[i])));
}

/* The kernels batch every job; cuFFT's transforms go per job and block, `channels` transforms
 * each on the object's plans (a block's frames, spectra, sums and inverse transforms are
 * `channels` consecutive rows everywhere, its ring slot's included). */
CudafftStatus
blocks64_launch(CudafftJob *const *jobs, size_t count, void *device_aux, void *stream)
{
  const size_t transforms = sum_over(jobs, count, block_units);
  const CudafftConvolveBlocks64Job *descs = aux_descs<CudafftConvolveBlocks64Job>(device_aux);
  const CudafftConvolveUnit *units = aux_units<CudafftConvolveBlocks64Job>(device_aux, count);
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  CUDAFFT_CHECK(cudafft_convolve_deinterleave64_launch(descs, units + transforms, transforms, s));
  for (size_t i = 0; i < count; ++i) {
    const ConvolveJob *j = as_job(jobs[i]);
    const CudaConvolve *f = j->f;
    CUDAFFT_CHECK_CUFFT(cufftSetStream(f->forward64, s));
    for (size_t q = 0; q < j->count; ++q) {
      const size_t slot = (j->head + q) % f->slots;
      CUDAFFT_CHECK_CUFFT(
          cufftExecD2Z(f->forward64, f->frames64 + q * f->channels * kN,
                       reinterpret_cast<cufftDoubleComplex *>(
                           f->ring64 + slot * f->channels * CUDAFFT_CONVOLVE_BIN_PITCH)));
    }
  }
  CUDAFFT_CHECK(cudafft_convolve_mac64_launch(descs, units, transforms, s));
  for (size_t i = 0; i < count; ++i) {
    const ConvolveJob *j = as_job(jobs[i]);
    const CudaConvolve *f = j->f;
    CUDAFFT_CHECK_CUFFT(cufftSetStream(f->inverse64, s));
    for (size_t q = 0; q < j->count; ++q)
      CUDAFFT_CHECK_CUFFT(
          cufftExecZ2D(f->inverse64,
                       reinterpret_cast<cufftDoubleComplex *>(
                           f->sums64 + q * f->channels * CUDAFFT_CONVOLVE_BIN_PITCH),
                       f->time64 + q * f->channels * kN));
  }
  CUDAFFT_CHECK(cudafft_convolve_output64_launch(descs, units + transforms, transforms, s));
  return CUDAFFT_STATUS_OK;
}

const CudafftWorkKind blocks64_kind = {"convolution blocks (double)", blocks64_aux_bytes,
                                       blocks64_prepare, blocks64_launch, nullptr};

size_t
direct_aux_bytes(CudafftJob *const *jobs, size_t count)
{
  return aux_bytes_for(count, sizeof(CudafftConvolveDirectJob),
                       sum_over(jobs, count, direct_and_history_units));
}

CudafftConvolveDirectJob
describe_direct(const ConvolveJob *j)
{
  const CudaConvolve *f = j->f;
  CudafftConvolveDirectJob d = {};
  d.in = j->job.device_in;
  d.out = j->job.device_out;
  d.history = f->history;
  d.taps = f->direct_taps;
  d.frames = j->count;
  /* F32: the float gains of the single-precision path, exactly */
  const bool f64 = f->format == CUDAFFT_SAMPLE_F64;
  d.wet_gain = f64 ? j->mix : (double)(float)j->mix;
  d.dry_gain = f64 ? 1.0 - j->mix : (double)(float)(1.0 - j->mix);
  d.format = f->format;
  d.channels = (int)f->channels;
  d.taps_count = (int)f->taps;
  d.kernel_rows = (int)f->rows;
  d.history_head = (int)j->head;
  return d;
}

/* Every job's output units, then every job's history units. */
void
direct_prepare(CudafftJob *const *jobs, size_t count, void *host_aux, void *)
{
  CudafftConvolveDirectJob *descs = aux_descs<CudafftConvolveDirectJob>(host_aux);
  CudafftConvolveUnit *at = aux_units<CudafftConvolveDirectJob>(host_aux, count);
  for (size_t i = 0; i < count; ++i) {
    descs[i] = describe_direct(as_job(jobs[i]));
    at = map_units(at, i, direct_units(as_job(jobs[i])));
  }
  for (size_t i = 0; i < count; ++i)
    at = map_units(at, i, history_units(as_job(jobs[i])));
}

CudafftStatus
direct_launch(CudafftJob *const *jobs, size_t count, void *device_aux, void *stream)
{
  const size_t outputs = sum_over(jobs, count, direct_units);
  const size_t histories = sum_over(jobs, count, history_units);
  const CudafftConvolveUnit *units = aux_units<CudafftConvolveDirectJob>(device_aux, count);
  CUDAFFT_CHECK(cudafft_convolve_direct_launch(aux_descs<CudafftConvolveDirectJob>(device_aux),
                                               units, outputs, units + outputs, histories,
                                               static_cast<cudaStream_t>(stream)));
  return CUDAFFT_STATUS_OK;
}

const CudafftWorkKind direct_kind = {"convolution direct", direct_aux_bytes, direct_prepare,
                                     direct_launch, nullptr};

/* Split jobs (convolve_kernels.h's split path): a push's head and tail in one job of one kind, so
 * that a push is one job in one batch. */

/* The partitions [first, end) of 1..P - 1 whose products the pushes of L frames at [within,
 * within + frames) of a block add to its sum: their shares. The block's K = B / L pushes but the
 * last (K >= 2), which has the block's transforms to do, share them about equally: push k < K - 1
 * gets [1 + (P - 1) k / (K - 1), 1 + (P - 1) (k + 1) / (K - 1)), so that each is added once. */
void
split_share_range(const CudaConvolve *f, size_t within, size_t frames, int *first, int *end)
{
  const size_t sharing = kBlock / f->block_size - 1, earlier = f->partitions - 1;
  const size_t k0 = min_size(within / f->block_size, sharing);
  const size_t k1 = min_size((within + frames) / f->block_size, sharing);
  *first = (int)(1 + earlier * k0 / sharing);
  *end = (int)(1 + earlier * k1 / sharing);
}

/* A split job's own shares: its pushes', but the first push's where a job came before it since
 * create or reset (each runs the share of the push after it ahead, split_ahead_range). */
void
split_mac_range(const ConvolveJob *j, int *first, int *end)
{
  const size_t skip = j->position > 0 ? j->f->block_size : 0;
  split_share_range(j->f, j->position % kBlock + skip, j->count - skip, first, end);
}

/* Work ahead: the share of the push after the job (the next block's first where the job completes
 * a block) and that push's block's ring slot. It reads only blocks before that push's, so the
 * device runs it after the job's batch, in the time before the next push comes (a live source's
 * period), instead of in that push's round trip. */
void
split_ahead_range(const ConvolveJob *j, int *first, int *end, int *slot)
{
  const size_t next = j->position + j->count;
  split_share_range(j->f, next % kBlock, j->f->block_size, first, end);
  *slot = (int)(next / kBlock % j->f->partitions);
}

bool
split_completes(const ConvolveJob *j)
{
  return j->position % kBlock + j->count == kBlock;
}

size_t
split_run_units(const ConvolveJob *j)
{
  return units_of(j->count * j->f->channels, CUDAFFT_CONVOLVE_SPLIT_RUN);
}

size_t
split_head_units(const ConvolveJob *j)
{
  return j->f->channels;
}

size_t
split_mac_units(const ConvolveJob *j)
{
  int first = 0, end = 0;
  split_mac_range(j, &first, &end);
  return first < end ? j->f->channels * CUDAFFT_CONVOLVE_SPLIT_MAC_CHUNKS : 0;
}

size_t
split_transform_units(const ConvolveJob *j)
{
  return split_completes(j) ? j->f->channels : 0;
}

size_t
split_ahead_units(const ConvolveJob *j)
{
  int first = 0, end = 0, slot = 0;
  split_ahead_range(j, &first, &end, &slot);
  return first < end ? j->f->channels * CUDAFFT_CONVOLVE_SPLIT_MAC_CHUNKS : 0;
}

/* The units of each launch, in the order of the launches and of the auxiliary data; the work
 * ahead's last. */
using UnitsOf = size_t (*)(const ConvolveJob *);
const UnitsOf split_unit_kinds[] = {split_run_units, split_head_units, split_mac_units,
                                    split_transform_units, split_ahead_units};
constexpr int kSplitLaunches = sizeof split_unit_kinds / sizeof split_unit_kinds[0] - 1;

size_t
split_units(const ConvolveJob *j)
{
  size_t units = 0;
  for (UnitsOf of : split_unit_kinds)
    units += of(j);
  return units;
}

/* The auxiliary data: the jobs' descriptors, then their work ahead's (the same but for the MAC's
 * share and slot), then the units. */
size_t
split_aux_bytes(CudafftJob *const *jobs, size_t count)
{
  return aux_bytes_for(2 * count, sizeof(CudafftConvolveSplitJob),
                       sum_over(jobs, count, split_units));
}

CudafftConvolveSplitJob
describe_split(const ConvolveJob *j)
{
  const CudaConvolve *f = j->f;
  const size_t block = j->position / kBlock;
  CudafftConvolveSplitJob d = {};
  d.in = static_cast<const float *>(j->job.device_in);
  d.out = static_cast<float *>(j->job.device_out);
  d.signal = f->rows3[block % 3];
  d.next = f->rows3[(block + 1) % 3];
  d.after = f->rows3[(block + 2) % 3];
  d.head_spectra = f->head_spectra;
  d.ring = f->ring;
  d.spectra = f->spectra;
  d.acc = f->acc;
  d.tail = f->tail;
  d.within = j->position % kBlock;
  d.frames = j->count;
  /* output frame n adds z[n - a], a = B - L: ring frame (n - a) mod 2B = (n + B + L) mod 2B */
  d.tail_from = (j->position + kBlock + f->block_size) % (2 * kBlock);
  d.wet_gain = (float)j->mix;
  d.dry_gain = (float)(1.0 - j->mix);
  d.channels = (int)f->channels;
  d.kernel_rows = (int)f->rows;
  d.partitions = (int)f->partitions;
  split_mac_range(j, &d.mac_first, &d.mac_end);
  d.slot = (int)(block % f->partitions);
  d.tail_block = (int)(block % 2);
  return d;
}

void
split_prepare(CudafftJob *const *jobs, size_t count, void *host_aux, void *)
{
  CudafftConvolveSplitJob *descs = aux_descs<CudafftConvolveSplitJob>(host_aux);
  for (size_t i = 0; i < count; ++i) {
    const ConvolveJob *j = as_job(jobs[i]);
    descs[i] = describe_split(j);
    descs[count + i] = descs[i];
    split_ahead_range(j, &descs[count + i].mac_first, &descs[count + i].mac_end,
                      &descs[count + i].slot);
  }
  CudafftConvolveUnit *at = aux_units<CudafftConvolveSplitJob>(host_aux, 2 * count);
  for (int k = 0; k < kSplitLaunches; ++k)
    for (size_t i = 0; i < count; ++i)
      at = map_units(at, i, split_unit_kinds[k](as_job(jobs[i])));
  for (size_t i = 0; i < count; ++i)
    at = map_units(at, count + i, split_ahead_units(as_job(jobs[i])));
}

CudafftStatus
split_launch(CudafftJob *const *jobs, size_t count, void *device_aux, void *stream)
{
  const CudafftConvolveUnit *units[kSplitLaunches];
  size_t counts[kSplitLaunches];
  units[0] = aux_units<CudafftConvolveSplitJob>(device_aux, 2 * count);
  for (int k = 0; k < kSplitLaunches; ++k) {
    counts[k] = sum_over(jobs, count, split_unit_kinds[k]);
    if (k + 1 < kSplitLaunches)
      units[k + 1] = units[k] + counts[k];
  }
  /* every object's table is the same: the first job's serves the launch */
  CUDAFFT_CHECK(cudafft_convolve_split_launch(
      aux_descs<CudafftConvolveSplitJob>(device_aux), units[0], counts[0], units[1], counts[1],
      units[2], counts[2], units[3], counts[3], as_job(jobs[0])->f->twiddles,
      static_cast<cudaStream_t>(stream)));
  return CUDAFFT_STATUS_OK;
}

/* The MAC shares of the pushes after the jobs (split_ahead_range), after the batch's marker. */
CudafftStatus
split_launch_ahead(CudafftJob *const *jobs, size_t count, void *device_aux, void *stream)
{
  const CudafftConvolveUnit *units = aux_units<CudafftConvolveSplitJob>(device_aux, 2 * count);
  for (int k = 0; k < kSplitLaunches; ++k)
    units += sum_over(jobs, count, split_unit_kinds[k]);
  CUDAFFT_CHECK(cudafft_convolve_split_mac_launch(aux_descs<CudafftConvolveSplitJob>(device_aux),
                                                  units, sum_over(jobs, count, split_ahead_units),
                                                  static_cast<cudaStream_t>(stream)));
  return CUDAFFT_STATUS_OK;
}

const CudafftWorkKind split_kind = {"convolution split", split_aux_bytes, split_prepare,
                                    split_launch, split_launch_ahead};

size_t
spectra_aux_bytes(CudafftJob *const *jobs, size_t count)
{
  return aux_bytes_for(count, sizeof(CudafftConvolveSpectraJob),
                       sum_over(jobs, count, spectra_units));
}

void
spectra_prepare(CudafftJob *const *jobs, size_t count, void *host_aux, void *)
{
  CudafftConvolveSpectraJob *descs = aux_descs<CudafftConvolveSpectraJob>(host_aux);
  CudafftConvolveUnit *at = aux_units<CudafftConvolveSpectraJob>(host_aux, count);
  for (size_t i = 0; i < count; ++i) {
    const ConvolveJob *j = as_job(jobs[i]);
    descs[i] = CudafftConvolveSpectraJob{static_cast<const double *>(j->job.device_in),
                                         j->spectra_rows, j->count};
    at = map_units(at, i, spectra_units(j));
  }
}

CudafftStatus
spectra_launch(CudafftJob *const *jobs, size_t count, void *device_aux, void *stream)
{
  CUDAFFT_CHECK(cudafft_convolve_spectra_launch(
      aux_descs<CudafftConvolveSpectraJob>(device_aux),
      aux_units<CudafftConvolveSpectraJob>(device_aux, count), sum_over(jobs, count, spectra_units),
      as_job(jobs[0])->f->twiddles, static_cast<cudaStream_t>(stream)));
  return CUDAFFT_STATUS_OK;
}

const CudafftWorkKind spectra_kind = {"convolution kernel spectra", spectra_aux_bytes,
                                      spectra_prepare, spectra_launch, nullptr};

/* F64 kernel spectra: a job's taps to `channels` frames, then one D2Z of them to its spectrum
 * rows (and the rows after them up to a whole batch: the spare rows at the end of the spectra, or
 * rows a later job of the object overwrites). */
size_t
spectra64_aux_bytes(CudafftJob *const *jobs, size_t count)
{
  return aux_bytes_for(count, sizeof(CudafftConvolveSpectra64Job),
                       sum_over(jobs, count, spectra_units));
}

void
spectra64_prepare(CudafftJob *const *jobs, size_t count, void *host_aux, void *)
{
  CudafftConvolveSpectra64Job *descs = aux_descs<CudafftConvolveSpectra64Job>(host_aux);
  CudafftConvolveUnit *at = aux_units<CudafftConvolveSpectra64Job>(host_aux, count);
  for (size_t i = 0; i < count; ++i) {
    const ConvolveJob *j = as_job(jobs[i]);
    descs[i] = CudafftConvolveSpectra64Job{static_cast<const double *>(j->job.device_in),
                                           j->f->frames64, j->count};
    at = map_units(at, i, spectra_units(j));
  }
}

CudafftStatus
spectra64_launch(CudafftJob *const *jobs, size_t count, void *device_aux, void *stream)
{
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  CUDAFFT_CHECK(cudafft_convolve_spectra64_frames_launch(
      aux_descs<CudafftConvolveSpectra64Job>(device_aux),
      aux_units<CudafftConvolveSpectra64Job>(device_aux, count),
      sum_over(jobs, count, spectra_units), s));
  for (size_t i = 0; i < count; ++i) {
    const ConvolveJob *j = as_job(jobs[i]);
    const CudaConvolve *f = j->f;
    CUDAFFT_CHECK_CUFFT(cufftSetStream(f->forward64, s));
    CUDAFFT_CHECK_CUFFT(cufftExecD2Z(f->forward64, f->frames64,
                                     reinterpret_cast<cufftDoubleComplex *>(j->spectra64_rows)));
  }
  return CUDAFFT_STATUS_OK;
}

const CudafftWorkKind spectra64_kind = {"convolution kernel spectra (double)", spectra64_aux_bytes,
                                        spectra64_prepare, spectra64_launch, nullptr};

size_t
fill_aux_bytes(CudafftJob *const *, size_t count)
{
  return descs_bytes(count, sizeof(CudafftConvolveFillJob));
}

void
fill_prepare(CudafftJob *const *jobs, size_t count, void *host_aux, void *)
{
  CudafftConvolveFillJob *descs = aux_descs<CudafftConvolveFillJob>(host_aux);
  for (size_t i = 0; i < count; ++i) {
    const ConvolveJob *j = as_job(jobs[i]);
    for (int r = 0; r < CUDAFFT_CONVOLVE_FILL_RANGES; ++r) {
      const FillStep &step = j->steps[r];
      descs[i].ranges[r] = CudafftConvolveFillRange{step.to_output ? j->job.device_out : step.dst,
                                                    step.from_input ? j->job.device_in : step.src,
                                                    step.count, step.op};
    }
  }
}

CudafftStatus
fill_launch(CudafftJob *const *jobs, size_t count, void *device_aux, void *stream)
{
  size_t longest = 0;
  for (size_t i = 0; i < count; ++i)
    for (const FillStep &step : as_job(jobs[i])->steps)
      longest = step.count > longest ? step.count : longest;
  CUDAFFT_CHECK(cudafft_convolve_fill_launch(aux_descs<CudafftConvolveFillJob>(device_aux), count,
                                             longest, static_cast<cudaStream_t>(stream)));
  return CUDAFFT_STATUS_OK;
}

const CudafftWorkKind fill_kind = {"convolution state", fill_aux_bytes, fill_prepare, fill_launch,
                                   nullptr};

/* A call's jobs ------------------------------------------------------------------------------- */

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

/* A fill job's step: a range of 4-byte words (bytes a multiple of 4) or of narrowed doubles. */
FillStep
zero_step(void *dst, size_t bytes)
{
  FillStep step;
  step.dst = dst;
  step.count = bytes / 4;
  return step;
}

FillStep
copy_step(void *dst, const void *src, size_t bytes)
{
  FillStep step;
  step.op = CUDAFFT_CONVOLVE_FILL_COPY;
  step.dst = dst;
  step.src = src;
  step.count = bytes / 4;
  return step;
}

FillStep
from_input(FillStep step)
{
  step.from_input = true;
  return step;
}

FillStep
to_output(FillStep step)
{
  step.to_output = true;
  return step;
}

/* The submissions of the steps of each kind ------------------------------------------------- */

/* History to zeros: the delay line (the spectra of the blocks before the first) and the first set
 * of signal rows (the block before the first is zeros), or the first history, or on the split path
 * the delay line, every set of rows and the tail's output ring (z before frame 0 is zeros; the
 * tail's sums need none: each block's first share sets them); from then on the sequence starts
 * again. The jobs follow the object's earlier ones. */
void
submit_clear(Window *w, CudaConvolve *f)
{
  f->head = 0;
  f->current = 0;
  f->position = 0;
  if (f->path == CUDAFFT_CONVOLVE_DIRECT && f->taps == 1)
    return; /* nothing kept */
  ConvolveJob *job = w->next();
  if (!job)
    return;
  if (f->path == CUDAFFT_CONVOLVE_SPLIT) {
    const size_t rows_bytes = 3 * kBlock * f->channels * sizeof(float);
    job->steps[0] = zero_step(f->ring, f->slots * f->channels * kRowBytes);
    job->steps[1] = zero_step(f->rows3[0], rows_bytes);
    job->steps[2] = zero_step(f->rows3[1], rows_bytes);
    w->submit(job, nullptr, nullptr);
    job = w->next();
    if (!job)
      return;
    job->steps[0] = zero_step(f->rows3[2], rows_bytes);
    job->steps[1] = zero_step(f->tail, 2 * kBlock * f->channels * sizeof(float));
  } else if (f->path == CUDAFFT_CONVOLVE_PARTITIONED && f->format == CUDAFFT_SAMPLE_F64) {
    job->steps[0] = zero_step(f->ring64, f->slots * f->channels * kRow64Bytes);
    job->steps[1] = zero_step(f->previous64[0], f->channels * kBlock * sizeof(double));
  } else if (f->path == CUDAFFT_CONVOLVE_PARTITIONED) {
    job->steps[0] = zero_step(f->ring, f->slots * f->channels * kRowBytes);
    job->steps[1] = zero_step(f->signal[0], f->pitch * f->channels * sizeof(float));
  } else {
    job->steps[0] =
        zero_step(f->history, (f->taps - 1) * f->channels * cudafft_sample_size(f->format));
  }
  w->submit(job, nullptr, nullptr);
}

/* The twiddle table on the host (the tables of cudafft_convolve_twiddle_plans(), one after
 * another), for the object's copy; free() it. */
float *
host_twiddles()
{
  int plans = 0;
  const CudafftTwiddlePlan *twiddles = cudafft_convolve_twiddle_plans(&plans);
  float *table = static_cast<float *>(malloc(twiddle_bytes()));
  if (!table)
    return nullptr;
  float *at = table;
  for (int i = 0; i < plans; ++i) {
    cudafft_twiddle_table(twiddles[i].n_complex, twiddles[i].plan_kind, at);
    at += 2 * cudafft_twiddle_count(twiddles[i].n_complex, twiddles[i].plan_kind);
  }
  return table;
}

/* The twiddle table, from `table` (host_twiddles()'s, which must outlive the window's jobs). */
void
submit_twiddles(Window *w, CudaConvolve *f, const float *table)
{
  if (ConvolveJob *job = w->next()) {
    job->steps[0] = from_input(copy_step(f->twiddles, nullptr, twiddle_bytes()));
    job->job.in_bytes = twiddle_bytes();
    w->submit(job, table, nullptr);
  }
}

/* The spectra of the `partitions` partitions of kernel (F32), row r's partition p to spectrum row
 * r partitions + p from `spectra` on: each job a range of partitions of a row, the taps uploaded
 * as they are and rounded to float by the kernel. */
void
submit_spectra(Window *w, CudaConvolve *f, const CudafftConvolveKernel &kernel, size_t partitions,
               float2 *spectra)
{
  /* partitions per job: their taps and unit entries, after the descriptor */
  const size_t max_job = cudafft_executor_max_job_bytes(f->ex);
  const size_t room = max_job - aux_bytes_for(1, sizeof(CudafftConvolveSpectraJob), 0);
  const size_t per_job = room / (kBlock * sizeof(double) + sizeof(CudafftConvolveUnit));
  for (size_t r = 0; r < kernel.rows; ++r)
    for (size_t p = 0; p < partitions; p += per_job) {
      ConvolveJob *job = w->next();
      if (!job)
        return;
      job->work = Work::Spectra;
      job->spectra_rows = spectra + (r * partitions + p) * CUDAFFT_CONVOLVE_BIN_PITCH;
      job->count = min_size(kernel.taps - p * kBlock, per_job * kBlock);
      job->job.in_bytes = job->count * sizeof(double);
      w->submit(job, kernel.taps_data + r * kernel.taps + p * kBlock, nullptr);
    }
}

/* Partitioned (F32) and split setup: the twiddle table, the split path's head spectrum (one
 * partition of its a <= B taps; head nullptr on the partitioned path), the spectra of kernel (the
 * split path's tail), and the history cleared. */
CudafftStatus
load_partitioned(CudaConvolve *f, const CudafftConvolveKernel &kernel,
                 const CudafftConvolveKernel *head = nullptr)
{
  float *table = host_twiddles();
  if (!table)
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY, "cannot allocate a twiddle table");
  Window w(f);
  submit_twiddles(&w, f, table);
  if (head)
    submit_spectra(&w, f, *head, 1, f->head_spectra);
  submit_spectra(&w, f, kernel, f->partitions, f->spectra);
  submit_clear(&w, f);
  const CudafftStatus status = w.finish();
  free(table);
  return status;
}

/* Partitioned F64 setup: the kernel spectra in double from the taps as they are (each job up to
 * a batch of the forward plan, `channels` partitions of a row, as many as a job holds), the
 * history cleared. A job's transform writes a whole batch of rows, those past its partitions
 * from zero frames: the next job of the row, which runs later, overwrites them, and the last
 * row's spill into the spare rows at the end. */
CudafftStatus
load_partitioned64(CudaConvolve *f, const CudafftConvolveKernel &kernel)
{
  Window w(f);
  const size_t max_job = cudafft_executor_max_job_bytes(f->ex);
  const size_t room = max_job - aux_bytes_for(1, sizeof(CudafftConvolveSpectra64Job), f->channels);
  size_t per_job = room / (kBlock * sizeof(double));
  per_job = per_job < f->channels ? per_job : f->channels;
  for (size_t r = 0; r < f->rows; ++r)
    for (size_t p = 0; p < f->partitions; p += per_job) {
      ConvolveJob *job = w.next();
      if (!job)
        break;
      job->work = Work::Spectra;
      job->spectra64_rows = f->spectra64 + (r * f->partitions + p) * CUDAFFT_CONVOLVE_BIN_PITCH;
      job->count = min_size(f->taps - p * kBlock, per_job * kBlock);
      job->job.in_bytes = job->count * sizeof(double);
      w.submit(job, kernel.taps_data + r * f->taps + p * kBlock, nullptr);
    }
  submit_clear(&w, f);
  return w.finish();
}

/* Direct setup: the taps in the format's type (F32: rounded to float on the device; F64: copied
 * as they are), in jobs of at most a job's bytes, and the history cleared. */
CudafftStatus
load_direct(CudaConvolve *f, const CudafftConvolveKernel &kernel)
{
  Window w(f);
  const size_t count = f->taps * f->rows;
  const size_t room =
      cudafft_executor_max_job_bytes(f->ex) - aux_bytes_for(1, sizeof(CudafftConvolveFillJob), 0);
  const size_t per_job = room / sizeof(double) / 64 * 64;
  const size_t sample = cudafft_sample_size(f->format);
  for (size_t at = 0; at < count; at += per_job) {
    ConvolveJob *job = w.next();
    if (!job)
      break;
    const size_t part = min_size(per_job, count - at);
    FillStep &step = job->steps[0];
    step.op =
        f->format == CUDAFFT_SAMPLE_F64 ? CUDAFFT_CONVOLVE_FILL_COPY : CUDAFFT_CONVOLVE_FILL_NARROW;
    step.dst = static_cast<char *>(f->direct_taps) + at * sample;
    step.count = f->format == CUDAFFT_SAMPLE_F64 ? part * sizeof(double) / 4 : part;
    step.from_input = true;
    job->job.in_bytes = part * sizeof(double);
    w.submit(job, kernel.taps_data + at, nullptr);
  }
  submit_clear(&w, f);
  return w.finish();
}

/* Jobs of a call of `units` blocks (frames on the direct path): kPipelineChunks says why. */
size_t
call_job_units(const CudaConvolve *f, size_t units)
{
  const size_t unit_bytes = (f->path == CUDAFFT_CONVOLVE_PARTITIONED ? kBlock : 1) * f->frame_bytes;
  size_t per_job = (units + kPipelineChunks - 1) / kPipelineChunks;
  const size_t least = (kMinChunkBytes + unit_bytes - 1) / unit_bytes;
  per_job = per_job > least ? per_job : least;
  return per_job < f->job_units ? per_job : f->job_units;
}

/* One partitioned job of `blocks` blocks, its input at in (nullptr: zeros), its output to out. */
void
submit_blocks(Window *w, CudaConvolve *f, const char *in, char *out, size_t blocks, double mix)
{
  ConvolveJob *job = w->next();
  if (!job)
    return;
  job->work = Work::Blocks;
  job->count = blocks;
  job->current = f->current;
  job->head = f->head;
  job->mix = mix;
  job->job.in_bytes = job->job.out_bytes = blocks * kBlock * f->frame_bytes;
  w->submit(job, in, out);
  f->current = 1 - f->current;
  if (f->slots > 0)
    f->head = (f->head + blocks) % f->slots;
}

/* One block of a staged object: its input copied into the object's raw block in parts, the block's
 * job on the block buffers, its output copied out of the out block in parts. */
void
submit_staged_block(Window *w, CudaConvolve *f, const char *in, char *out, double mix)
{
  const size_t bytes = kBlock * f->frame_bytes;
  char *raw = static_cast<char *>(f->raw_block);
  const char *cooked = static_cast<const char *>(f->out_block);
  for (size_t at = 0; at < bytes; at += f->part_bytes) {
    ConvolveJob *job = w->next();
    if (!job)
      return;
    const size_t size = min_size(f->part_bytes, bytes - at);
    job->steps[0] = from_input(copy_step(raw + at, nullptr, size));
    job->job.in_bytes = size;
    w->submit(job, in ? in + at : nullptr, nullptr);
  }
  ConvolveJob *job = w->next();
  if (!job)
    return;
  job->work = Work::Blocks;
  job->count = 1;
  job->current = f->current;
  job->head = f->head;
  job->mix = mix;
  job->staged = true;
  w->submit(job, nullptr, nullptr);
  f->current = 1 - f->current;
  if (f->slots > 0)
    f->head = (f->head + 1) % f->slots;
  for (size_t at = 0; at < bytes; at += f->part_bytes) {
    job = w->next();
    if (!job)
      return;
    const size_t size = min_size(f->part_bytes, bytes - at);
    job->steps[0] = to_output(copy_step(nullptr, cooked + at, size));
    job->job.out_bytes = size;
    w->submit(job, nullptr, out + at);
  }
}

/* One direct job of `frames` frames. */
void
submit_direct(Window *w, CudaConvolve *f, const char *in, char *out, size_t frames, double mix)
{
  ConvolveJob *job = w->next();
  if (!job)
    return;
  job->work = Work::Direct;
  job->count = frames;
  job->head = f->head;
  job->mix = mix;
  job->job.in_bytes = job->job.out_bytes = frames * f->frame_bytes;
  w->submit(job, in, out);
  if (f->taps > 1)
    f->head = (f->head + frames) % (f->taps - 1);
}

/* One split job of `frames` frames (whole blocks of L, within one block of B). */
void
submit_split(Window *w, CudaConvolve *f, const char *in, char *out, size_t frames, double mix)
{
  ConvolveJob *job = w->next();
  if (!job)
    return;
  job->work = Work::Split;
  job->count = frames;
  job->position = f->position;
  job->mix = mix;
  job->job.in_bytes = job->job.out_bytes = frames * f->frame_bytes;
  w->submit(job, in, out);
  f->position += frames;
}

/* The backend table ------------------------------------------------------------------------- */

/* Whether a partitioned job of `blocks` blocks fits an executor job. */
bool
blocks_fit(const CudaConvolve *f, size_t blocks, size_t max_job)
{
  const size_t in = blocks * kBlock * f->frame_bytes;
  const size_t aux =
      f->format == CUDAFFT_SAMPLE_F64
          ? aux_bytes_for(1, sizeof(CudafftConvolveBlocks64Job), 2 * blocks * f->channels)
          : aux_bytes_for(1, sizeof(CudafftConvolveBlocksJob), blocks * f->channels);
  return in <= max_job && aux <= max_job - in;
}

/* The F64 path's cuFFT plans, `channels` transforms of N points each (a block's frames to its ring
 * slot's rows; a block's sums to its inverse transforms), with no work area yet: *work receives
 * the larger one's. */
CudafftStatus
make_plans64(CudaConvolve *f, size_t *work)
{
  long long n = (long long)kN, frame = (long long)kN, row = CUDAFFT_CONVOLVE_BIN_PITCH;
  const long long batch = f->channels;
  size_t forward_work = 0, inverse_work = 0;
  CUDAFFT_CHECK_CUFFT(cufftCreate(&f->forward64));
  f->forward64_made = true;
  CUDAFFT_CHECK_CUFFT(cufftSetAutoAllocation(f->forward64, 0));
  CUDAFFT_CHECK_CUFFT(cufftMakePlanMany64(f->forward64, 1, &n, &frame, 1, frame, &row, 1, row,
                                          CUFFT_D2Z, batch, &forward_work));
  CUDAFFT_CHECK_CUFFT(cufftCreate(&f->inverse64));
  f->inverse64_made = true;
  CUDAFFT_CHECK_CUFFT(cufftSetAutoAllocation(f->inverse64, 0));
  CUDAFFT_CHECK_CUFFT(cufftMakePlanMany64(f->inverse64, 1, &n, &row, 1, row, &frame, 1, frame,
                                          CUFFT_Z2D, batch, &inverse_work));
  *work = forward_work > inverse_work ? forward_work : inverse_work;
  return CUDAFFT_STATUS_OK;
}

/* Whether a split job of `frames` frames, with the aux bytes of the most units such a job has
 * (one that completes a block has the transforms; one at a block's start the MAC shares of all
 * its pushes, and its work ahead's), fits what a job holds. */
bool
split_fits(CudaConvolve *f, size_t frames, size_t max_job)
{
  size_t aux = 0;
  for (size_t position : {kBlock - frames, (size_t)0}) {
    ConvolveJob probe;
    probe.f = f;
    probe.count = frames;
    probe.position = position;
    CudafftJob *jobs[] = {&probe.job};
    aux = std::max(aux, split_aux_bytes(jobs, 1));
  }
  const size_t in = frames * f->frame_bytes;
  return in <= max_job && aux <= max_job - in;
}

/* The split path (convolve_kernels.h's), where the backend has it: F32, block sizes from
 * CUDAFFT_CONVOLVE_MIN_BLOCK to B / 2, and a kernel that reaches past the head (shorter ones are
 * the head alone, which the split module runs on the direct path); UNSUPPORTED otherwise, before
 * anything is made, and where a block of L frames is more than a job holds. */
CudafftStatus
split_setup(CudaConvolve *f, const CudafftConvolveSpec *spec)
{
  const size_t L = spec->block_size, a = cudafft_convolve_split_head_taps(L);
  if (f->format != CUDAFFT_SAMPLE_F32 || L < CUDAFFT_CONVOLVE_MIN_BLOCK || L >= kBlock ||
      f->taps <= a)
    return cudafft_fail(CUDAFFT_STATUS_UNSUPPORTED,
                        "no CUDA split path for %s at block size %zu with %zu taps",
                        cudafft_sample_format_name(f->format), L, f->taps);
  CudafftStatus status = cudafft_executor_acquire(spec->device_id, &f->ex);
  if (status != CUDAFFT_STATUS_OK)
    return status;
  f->device = cudafft_executor_device(f->ex);
  f->block_size = L;
  const size_t tail_taps = f->taps - a;
  f->partitions = (tail_taps + kBlock - 1) / kBlock;
  f->slots = f->partitions;
  /* a job: the most whole blocks of L up to B that it holds */
  const size_t max_job = cudafft_executor_max_job_bytes(f->ex);
  size_t frames = kBlock;
  while (frames >= L && !split_fits(f, frames, max_job))
    frames -= L;
  if (frames < L)
    return cudafft_fail(CUDAFFT_STATUS_UNSUPPORTED,
                        "a CUDA split job of %zu frames of %u channels is more than a job holds", L,
                        f->channels);
  f->job_units = frames;

  char what[256];
  snprintf(what, sizeof what,
           "the split state of a %zu-tap kernel (%u rows) on %u channels at block size %zu "
           "(kernel spectra %zu MB, delay line %zu MB)",
           f->taps, f->rows, f->channels, L,
           megabytes(sat_mul(sat_mul(f->partitions, f->rows), kRowBytes)),
           megabytes(sat_mul(sat_mul(f->slots, f->channels), kRowBytes)));
  status = cudafft_executor_alloc(f->ex, lay_out(f, nullptr), what, &f->state);
  if (status != CUDAFFT_STATUS_OK)
    return status;
  lay_out(f, static_cast<char *>(f->state));
  double *head = cudafft_convolve_kernel_columns(&spec->kernel, 0, a);
  double *tail = cudafft_convolve_kernel_columns(&spec->kernel, a, tail_taps);
  if (head && tail) {
    const CudafftConvolveKernel head_kernel{head, a, f->rows};
    status = load_partitioned(f, CudafftConvolveKernel{tail, tail_taps, f->rows}, &head_kernel);
  } else
    status = cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY,
                          "cannot copy the head and tail of a %zu-tap kernel (%u rows)", f->taps,
                          f->rows);
  free(head);
  free(tail);
  return status;
}

CudafftStatus
convolve_setup(CudaConvolve *f, const CudafftConvolveSpec *spec)
{
  f->format = spec->format;
  f->path = spec->path;
  f->channels = spec->channels;
  f->rows = spec->kernel.rows;
  f->taps = spec->kernel.taps;
  f->frame_bytes = spec->channels * cudafft_sample_size(spec->format);
  if (f->path == CUDAFFT_CONVOLVE_SPLIT)
    return split_setup(f, spec);
  if (f->path == CUDAFFT_CONVOLVE_DIRECT && f->taps > CUDAFFT_CONVOLVE_BLOCK)
    return cudafft_fail(CUDAFFT_STATUS_INVALID_SIZE,
                        "the CUDA direct path takes at most %d taps, not %zu",
                        CUDAFFT_CONVOLVE_BLOCK, f->taps);
  CudafftStatus status = cudafft_executor_acquire(spec->device_id, &f->ex);
  if (status != CUDAFFT_STATUS_OK)
    return status;
  f->device = cudafft_executor_device(f->ex);
  const size_t max_job = cudafft_executor_max_job_bytes(f->ex);
  const bool double_blocks =
      f->path == CUDAFFT_CONVOLVE_PARTITIONED && f->format == CUDAFFT_SAMPLE_F64;
  if (f->path == CUDAFFT_CONVOLVE_PARTITIONED) {
    size_t blocks = (double_blocks ? kChunkTransforms64 : kChunkTransforms) / f->channels;
    if (blocks > kChunkBytes / (kBlock * f->frame_bytes))
      blocks = kChunkBytes / (kBlock * f->frame_bytes);
    blocks = blocks < 1 ? 1 : blocks > kMaxChunkBlocks ? kMaxChunkBlocks : blocks;
    while (blocks > 1 && !blocks_fit(f, blocks, max_job))
      --blocks;
    f->staged = !blocks_fit(f, 1, max_job);
    if (f->staged)
      f->part_bytes = (max_job - aux_bytes_for(1, sizeof(CudafftConvolveFillJob), 0)) /
                      kStateAlign * kStateAlign;
    f->job_units = blocks;
    f->partitions = (f->taps + kBlock - 1) / kBlock;
    /* A job's blocks and the P - 1 before its first must coexist in the ring (which F64 jobs use
     * for P = 1 too: their transforms go through it). */
    f->slots = f->partitions > 1 || double_blocks ? f->partitions + blocks - 1 : 0;
    f->pitch = kBlock + blocks * kBlock;
  } else {
    const size_t frames = kChunkSamples / f->channels;
    f->job_units = frames > 0 ? frames : 1;
  }

  char what[256];
  if (double_blocks)
    snprintf(what, sizeof what,
             "the double-precision state of a %zu-tap kernel (%u rows) on %u channels (kernel "
             "spectra %zu MB, delay line %zu MB, transforms of a job %zu MB)",
             f->taps, f->rows, f->channels,
             megabytes(sat_mul(sat_add(sat_mul(f->partitions, f->rows), f->channels), kRow64Bytes)),
             megabytes(sat_mul(sat_mul(f->slots, f->channels), kRow64Bytes)),
             megabytes(sat_mul(sat_mul(f->job_units, f->channels),
                               2 * kN * sizeof(double) + kRow64Bytes)));
  else if (f->path == CUDAFFT_CONVOLVE_PARTITIONED)
    snprintf(what, sizeof what,
             "the state of a %zu-tap kernel (%u rows) on %u channels (kernel spectra %zu MB, "
             "delay line %zu MB)",
             f->taps, f->rows, f->channels,
             megabytes(sat_mul(sat_mul(f->partitions, f->rows), kRowBytes)),
             megabytes(sat_mul(sat_mul(f->slots, f->channels), kRowBytes)));
  else
    snprintf(what, sizeof what, "the state of a %zu-tap kernel (%u rows) on %u channels (%s)",
             f->taps, f->rows, f->channels, cudafft_sample_format_name(f->format));
  if (double_blocks) {
    /* Whether the state fits before cuFFT plans anything (their work area is small next to it),
     * so that an object too large fails with the sizes, as every other one does; the probe's
     * memory goes back to the executor's pool, which keeps it for the allocation below. */
    void *probe = nullptr;
    status = cudafft_executor_alloc(f->ex, lay_out(f, nullptr), what, &probe);
    cudafft_executor_free(f->ex, probe);
    if (status != CUDAFFT_STATUS_OK)
      return status;
    CUDAFFT_CHECK(cudafft_use_device(f->device));
    status = make_plans64(f, &f->work64_bytes);
    if (status != CUDAFFT_STATUS_OK)
      return status;
  }
  const size_t bytes = lay_out(f, nullptr);
  status = cudafft_executor_alloc(f->ex, bytes, what, &f->state);
  if (status != CUDAFFT_STATUS_OK)
    return status;
  lay_out(f, static_cast<char *>(f->state));
  if (double_blocks) {
    if (f->work64) {
      CUDAFFT_CHECK_CUFFT(cufftSetWorkArea(f->forward64, f->work64));
      CUDAFFT_CHECK_CUFFT(cufftSetWorkArea(f->inverse64, f->work64));
    }
    return load_partitioned64(f, spec->kernel);
  }
  return f->path == CUDAFFT_CONVOLVE_PARTITIONED ? load_partitioned(f, spec->kernel)
                                                 : load_direct(f, spec->kernel);
}

/* Frees the state and gives the executor back, once the jobs of a run that did not wait are
 * done (their failure has nobody left to hear it). */
void
convolve_release(CudaConvolve *f)
{
  if (f->ex && f->waited < f->submitted)
    (void)Window(f).finish();
  if (f->forward64_made)
    cufftDestroy(f->forward64);
  if (f->inverse64_made)
    cufftDestroy(f->inverse64);
  if (!f->ex)
    return;
  cudafft_executor_free(f->ex, f->state);
  cudafft_executor_release(f->ex);
}

/* A split call: jobs of whole blocks of L, each within one block of B (the schedule's unit) and at
 * most job_units frames. */
CudafftStatus
run_split(CudaConvolve *f, const CudafftConvolveJob *call)
{
  if (call->frames % f->block_size != 0)
    return cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE,
                        "the CUDA split convolution takes whole blocks of %zu frames, not %zu",
                        f->block_size, call->frames);
  const char *in = static_cast<const char *>(call->in);
  char *out = static_cast<char *>(call->out);
  Window w(f, call->on_device, call->after);
  for (size_t done = 0; done < call->frames && w.ok();) {
    const size_t within = f->position % kBlock;
    const size_t count = min_size(min_size(call->frames - done, kBlock - within), f->job_units);
    submit_split(&w, f, in ? in + done * f->frame_bytes : nullptr, out + done * f->frame_bytes,
                 count, call->mix);
    done += count;
  }
  return w.finish(call->done);
}

CudafftStatus
convolve_run(void *impl, const CudafftConvolveJob *call)
{
  CudaConvolve *f = static_cast<CudaConvolve *>(impl);
  const size_t frames = call->frames;
  if (call->done)
    *call->done = CudafftFence{};
  if (frames == 0)
    return CUDAFFT_STATUS_OK;
  if (f->path == CUDAFFT_CONVOLVE_SPLIT)
    return run_split(f, call);
  const bool partitioned = f->path == CUDAFFT_CONVOLVE_PARTITIONED;
  if (partitioned && frames % kBlock != 0)
    return cudafft_fail(
        CUDAFFT_STATUS_INVALID_VALUE,
        "the partitioned CUDA convolution takes whole blocks of %zu frames, not %zu", kBlock,
        frames);
  const char *in = static_cast<const char *>(call->in);
  char *out = static_cast<char *>(call->out);
  const size_t unit = partitioned ? kBlock : 1, units = frames / unit;
  const size_t per_job = call_job_units(f, units), unit_bytes = unit * f->frame_bytes;
  Window w(f, call->on_device, call->after);
  for (size_t done = 0; done < units && w.ok();) {
    const size_t count = min_size(per_job, units - done);
    const char *job_in = in ? in + done * unit_bytes : nullptr;
    char *job_out = out + done * unit_bytes;
    if (!partitioned)
      submit_direct(&w, f, job_in, job_out, count, call->mix);
    else if (f->staged)
      submit_staged_block(&w, f, job_in, job_out, call->mix);
    else
      submit_blocks(&w, f, job_in, job_out, count, call->mix);
    done += count;
  }
  return w.finish(call->done);
}

CudafftStatus
convolve_reset(void *impl)
{
  CudaConvolve *f = static_cast<CudaConvolve *>(impl);
  Window w(f);
  submit_clear(&w, f);
  return w.finish();
}

void *
convolve_stream(const void *)
{
  return nullptr; /* the executor's streams carry the work */
}

} // namespace

extern "C" const CudafftConvolveBackend cudafft_convolve_cuda_backend = {
    cudafft_keeping_caller<
        cudafft_cuda_create<CudaConvolve, CudafftConvolveSpec, convolve_setup, convolve_release>>,
    cudafft_keeping_caller<cudafft_cuda_destroy<CudaConvolve, convolve_release>>,
    cudafft_keeping_caller<convolve_run>, cudafft_keeping_caller<convolve_reset>, convolve_stream};
