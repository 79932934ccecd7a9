/* stft_cuda.cu: the STFT's CUDA backend on the shared executor of its device (executor.h): the
 * objects' device state (from the executor's memory), the cutting of a call into jobs of the
 * STFT's kinds (stft_kernels.h), and the bookkeeping of where the held samples and the overlap-add
 * sums are. The objects own no streams, events or staging: every call is jobs, submitted a few
 * ahead of their waits, and returns when they are done; a call writing device memory with a
 * `done` fence returns once they are queued, and the object's next call collects them.
 *
 * Analysis keeps the held samples on the device (every input sample crosses the bus once), in
 * planar rows of one of two signal buffers: a job appends behind them and its frames read from
 * where they start; the consumed samples are skipped, not moved, until the appended ones would run
 * past the buffer's end, and then the held samples move to the start of the other buffer in the
 * same launch that appends. A push that completes no frame waits on the host (it is kept with the
 * next one's input), so that a stream of small buffers makes one job per frame, not one per
 * buffer.
 *
 * Synthesis keeps the overlap-add sums carried between calls in two tail buffers (each job reads
 * one and writes the other); after a reset, a drain or a failure they are known to be zeros, and
 * the next job reads none instead of zeroing them first. */
#include "backend_object.cuh"
#include "batch_units.cuh"
#include "cuda_check.cuh"
#include "device_choice.cuh"
#include "executor.h"
#include "sample_values.h"
#include "size_math.h"
#include "stft_backend.h"
#include "stft_kernels.h"
#include "twiddles.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

/* Input values (all channels) one analysis job appends at most, which sizes the signal buffers;
 * and windowed rows one synthesis job makes at most. Larger calls become more jobs, pipelined
 * across batches; these keep an object's device state near 4 MB (1024 streams: a few GB). */
constexpr size_t kSignalFloats = (size_t)1 << 19;
constexpr size_t kRowsFloats = (size_t)1 << 19;
/* Bytes of a job's input side kept for its auxiliary data (descriptor, unit maps). */
constexpr size_t kAuxReserve = (size_t)1 << 20;
/* Jobs an object submits ahead of its waits. */
constexpr int kAhead = 4;
/* Device state sub-buffers start at multiples of this (coalesced and 16-byte loads). */
constexpr size_t kStateAlign = 256;

size_t
align_up(size_t bytes)
{
  return (bytes + kStateAlign - 1) / kStateAlign * kStateAlign;
}

/* What analysis and synthesis objects share: the configuration, the executor, the device state
 * (one allocation: the window, the twiddles, then the object's own buffers). */
struct Common {
  CudafftStftConfig config = {};
  int device = 0;
  CudafftExecutor *ex = nullptr;
  void *state = nullptr;
  float *window = nullptr; /* analysis window, or synthesis window g */
  float2 *twiddles = nullptr;
  CudafftJobOwner owner = {};
  size_t budget = 0; /* cudafft_executor_max_job_bytes() */
};

void
common_release(Common *c)
{
  /* every job was waited for: nothing of the executor's uses the state */
  cudafft_executor_free(c->ex, c->state);
  cudafft_executor_release(c->ex);
  c->state = nullptr;
  c->ex = nullptr;
}

/* Checks the kernels of the size, takes the executor of the device. */
CudafftStatus
common_open(Common *c, const CudafftStftSpec *spec)
{
  const size_t n = spec->config.fft_size;
  c->config = spec->config;
  int smem_optin = 0;
  const CudafftStatus opened = cudafft_cuda_open_device(spec->device_id, &c->device, &smem_optin);
  if (opened != CUDAFFT_STATUS_OK)
    return opened;
  const CudafftBlockKernels *kernels = cudafft_stft_kernels(n);
  if (!kernels)
    return cudafft_fail(CUDAFFT_STATUS_INVALID_SIZE, "no STFT kernel for size %zu", n);
  if (kernels->smem_bytes > (size_t)smem_optin)
    return cudafft_fail(CUDAFFT_STATUS_UNSUPPORTED,
                        "a %zu-point STFT needs %zu bytes of shared memory per block; this GPU "
                        "offers %d",
                        n, kernels->smem_bytes, smem_optin);
  CUDAFFT_CHECK(cudafft_block_kernels_prepare(kernels));
  const CudafftStatus status = cudafft_executor_acquire(c->device, &c->ex);
  if (status != CUDAFFT_STATUS_OK)
    return status;
  c->budget = cudafft_executor_max_job_bytes(c->ex);
  return CUDAFFT_STATUS_OK;
}

/* Bytes of the window and twiddles at the start of the state. */
size_t
tables_bytes(const CudafftStftConfig &config)
{
  const CudafftBlockKernels *kernels = cudafft_stft_kernels(config.fft_size);
  return align_up(config.fft_size * sizeof(float)) +
         align_up(cudafft_twiddles_count(&kernels->twiddles, 1) * sizeof(float2));
}

/* Allocates the state (`bytes`, the tables' included, for `what`), places the tables and uploads
 * them: the object's first job. */
CudafftStatus
common_state(Common *c, const CudafftStftSpec *spec, size_t bytes, const char *what)
{
  const size_t n = c->config.fft_size;
  CudafftStatus status = cudafft_executor_alloc(c->ex, bytes, what, &c->state);
  if (status != CUDAFFT_STATUS_OK)
    return status;
  const CudafftBlockKernels *kernels = cudafft_stft_kernels(n);
  const size_t twiddle_count = cudafft_twiddles_count(&kernels->twiddles, 1);
  c->window = static_cast<float *>(c->state);
  c->twiddles =
      reinterpret_cast<float2 *>(static_cast<char *>(c->state) + align_up(n * sizeof(float)));
  float *table = static_cast<float *>(malloc(twiddle_count * sizeof(float2)));
  if (!table)
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY, "cannot allocate a twiddle table");
  cudafft_twiddle_table(kernels->twiddles.n_complex, kernels->twiddles.plan_kind, table);
  const CudafftTablePiece pieces[] = {
      {spec->window, c->window, n * sizeof(float)},
      {table, c->twiddles, twiddle_count * sizeof(float2)},
  };
  status = cudafft_upload_tables(c->ex, &c->owner, &cudafft_stft_tables_kind, pieces, 2);
  free(table);
  return status;
}

/* The object has no stream of its own: its work runs on the executor's. */
template <typename T>
void *
no_stream(const void *impl)
{
  (void)impl;
  return nullptr;
}

/* Analysis ------------------------------------------------------------------------------------ */

struct CudaAnalysis : Common {
  size_t in_frame_bytes = 0; /* bytes of one input sample of every channel */
  size_t row_floats = 0;     /* of one channel's bins in a frame */
  unsigned group = 0;        /* channels of a job's transforms: all, unless a frame exceeds a job */
  size_t chunk = 0;          /* samples per channel one job appends at most */
  size_t pitch = 0;          /* floats per signal row */
  float *signal[2] = {};
  int current = 0;
  size_t offset = 0;                /* where the held samples start in signal[current] */
  size_t held = 0;                  /* samples held on the device */
  unsigned char *pending = nullptr; /* samples held on the host: chunk of them at most */
  size_t pending_samples = 0;
  bool out_on_device = false; /* this push's frames go to device memory (written in place) */
  uint64_t after = 0;         /* this push's jobs go after this batch (its device input's) */
  CudafftJobQueue<CudafftStftAnalysisJob, kAhead> queue;
};

void
analysis_release(CudaAnalysis *a)
{
  /* a push that did not wait left its jobs: they use the state */
  if (a->ex)
    (void)a->queue.finish(a->ex, CudafftNothingToDo());
  common_release(a);
  free(a->pending);
}

CudafftStatus
analysis_setup(CudaAnalysis *a, const CudafftStftSpec *spec)
{
  const CudafftStftConfig &config = spec->config;
  const size_t n = config.fft_size, hop = config.hop, channels = config.channels;
  CudafftStatus status = common_open(a, spec);
  if (status != CUDAFFT_STATUS_OK)
    return status;
  a->in_frame_bytes = channels * cudafft_sample_size(config.format);
  a->row_floats = cudafft_stft_bins(&config) * cudafft_stft_bin_floats(config.representation);
  const size_t row_bytes = a->row_floats * sizeof(float), frame_bytes = channels * row_bytes;
  /* A job's frames fit its output side: several frames, or one frame's channels in groups. */
  size_t max_frames = a->budget / frame_bytes;
  a->group = (unsigned)channels;
  if (max_frames == 0) {
    a->group = (unsigned)(a->budget / row_bytes);
    max_frames = 1;
  }
  size_t chunk = kSignalFloats / channels;
  chunk = min_size(chunk, max_frames * hop);
  chunk = min_size(chunk, (a->budget - kAuxReserve) / a->in_frame_bytes);
  a->chunk = chunk > 0 ? chunk : 1;
  a->pitch = (n + a->chunk + 3) / 4 * 4;
  a->pending = static_cast<unsigned char *>(malloc(a->chunk * a->in_frame_bytes));
  if (!a->pending)
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY,
                        "cannot allocate %zu bytes for the samples an STFT holds on the host",
                        a->chunk * a->in_frame_bytes);
  const size_t rows_bytes = align_up(a->pitch * channels * sizeof(float));
  const size_t tables = tables_bytes(config);
  char what[160];
  snprintf(what, sizeof what,
           "a %zu-point STFT analyser of %zu channels (2 signal buffers of %zu MB, tables %zu KB)",
           n, channels, megabytes(rows_bytes), tables >> 10);
  status = common_state(a, spec, tables + 2 * rows_bytes, what);
  if (status != CUDAFFT_STATUS_OK)
    return status;
  a->signal[0] = reinterpret_cast<float *>(static_cast<char *>(a->state) + tables);
  a->signal[1] = reinterpret_cast<float *>(reinterpret_cast<char *>(a->signal[0]) + rows_bytes);
  return CUDAFFT_STATUS_OK;
}

size_t
frames_after(const CudafftStftConfig &config, size_t samples)
{
  return samples < config.fft_size ? 0 : (samples - config.fft_size) / config.hop + 1;
}

/* Submits the jobs that append `samples` samples (from src, or zeros where src is NULL; device
 * memory, read in place, where src_on_device) behind the held ones and compute the frames they
 * complete into out (*written frames of it done so far). */
void
analysis_chunk(CudaAnalysis *a, const unsigned char *src, bool src_on_device, size_t samples,
               float *out, size_t *written)
{
  const CudafftStftConfig &config = a->config;
  const unsigned channels = config.channels;
  const size_t frames = frames_after(config, a->held + samples);
  CudafftSegment move = {};
  if (a->offset + a->held + samples > a->pitch) {
    float *from = a->signal[a->current] + a->offset, *to = a->signal[1 - a->current];
    const size_t pitch_bytes = a->pitch * sizeof(float);
    move = CudafftSegment{from, to, pitch_bytes, pitch_bytes, a->held * sizeof(float), channels};
    a->current = 1 - a->current;
    a->offset = 0;
  }
  const float *signal = a->signal[a->current] + a->offset;
  /* One job appends; with frames, it and (where a frame's channels come in groups) the next
   * jobs compute them. */
  for (unsigned c0 = 0; c0 < channels && a->queue.failed == CUDAFFT_STATUS_OK; c0 += a->group) {
    const unsigned group = channels - c0 < a->group ? channels - c0 : a->group;
    const bool first = c0 == 0;
    CudafftStftAnalysisJob *job = a->queue.next(a->ex, CudafftNothingToDo());
    job->job.kind = &cudafft_stft_analysis_kind;
    job->job.owner = &a->owner;
    job->format = config.format;
    job->channels = channels;
    job->samples = first ? samples : 0;
    job->zeros = !src;
    job->job.in_bytes = first && src ? samples * a->in_frame_bytes : 0;
    job->append = a->signal[a->current] + a->offset + a->held;
    job->pitch = a->pitch;
    job->move = first ? move : CudafftSegment{};
    job->n = config.fft_size;
    job->hop = config.hop;
    job->frames = frames;
    job->c0 = c0;
    job->group = group;
    job->signal = signal;
    job->window = a->window;
    job->twiddles = a->twiddles;
    job->representation = config.representation;
    job->job.out_bytes = frames * group * a->row_floats * sizeof(float);
    float *dst = frames ? out + (*written * channels + c0) * a->row_floats : nullptr;
    /* frames in device memory: the kernel writes them there, nothing comes down */
    job->job.out_device = a->out_on_device ? dst : nullptr;
    /* samples in device memory: the kernel reads them there, nothing goes up */
    job->job.in_device = first && src && src_on_device ? src : nullptr;
    job->job.after = a->after;
    a->queue.submit(a->ex, job, first && !src_on_device ? src : nullptr,
                    a->out_on_device ? nullptr : dst);
    if (frames == 0)
      break;
  }
  const size_t consumed = frames * config.hop;
  *written += frames;
  a->held = a->held + samples - consumed;
  a->offset = a->held ? a->offset + consumed : 0;
}

/* The host's held samples are forgotten with the device's: the front end's count is the truth. */
void
analysis_forget(CudaAnalysis *a)
{
  a->held = 0;
  a->offset = 0;
  a->pending_samples = 0;
}

/* Appends samples (src, or zeros) to the samples held on the host. */
void
hold_on_host(CudaAnalysis *a, const unsigned char *src, size_t samples)
{
  unsigned char *dst = a->pending + a->pending_samples * a->in_frame_bytes;
  if (src)
    memcpy(dst, src, samples * a->in_frame_bytes);
  else
    memset(dst, 0, samples * a->in_frame_bytes);
  a->pending_samples += samples;
}

CudafftStatus
analysis_run(void *impl, const CudafftStftJob *job)
{
  CudaAnalysis *a = static_cast<CudaAnalysis *>(impl);
  if (job->held != a->held + a->pending_samples)
    analysis_forget(a); /* the front end forgot them (a failure, or held 0 after a reset) */
  const unsigned char *in = static_cast<const unsigned char *>(job->in);
  size_t samples = job->samples;
  const bool in_on_device = job->in_on_device != 0;
  a->out_on_device = job->out_on_device != 0;
  /* an earlier push's jobs that it did not wait for: done by now where the frames' consumer came
   * after them (no sleep); a failure of theirs is this push's */
  CudafftStatus ordered =
      a->queue.count > 0 ? a->queue.finish(a->ex, CudafftNothingToDo()) : CUDAFFT_STATUS_OK;
  if (ordered == CUDAFFT_STATUS_OK)
    ordered = cudafft_executor_order_after(a->ex, job->after, &a->after);
  if (ordered != CUDAFFT_STATUS_OK) {
    analysis_forget(a); /* the front end holds 0 after a failure */
    return ordered;
  }
  /* samples in device memory are read where they are: none is held on the host */
  if (!in_on_device && job->frames == 0 && a->pending_samples + samples <= a->chunk) {
    hold_on_host(a, in, samples);
    return CUDAFFT_STATUS_OK;
  }
  size_t written = 0;
  if (a->pending_samples > 0) {
    /* the host's samples go first, with as many new ones as fill a job (a job of their own
     * before samples in device memory) */
    const size_t take = in_on_device ? 0 : min_size(samples, a->chunk - a->pending_samples);
    hold_on_host(a, in, take);
    analysis_chunk(a, a->pending, false, a->pending_samples, job->out, &written);
    a->pending_samples = 0;
    samples -= take;
    if (in)
      in += take * a->in_frame_bytes;
  }
  while (samples > 0 && a->queue.failed == CUDAFFT_STATUS_OK) {
    const size_t count = min_size(samples, a->chunk);
    analysis_chunk(a, in, in_on_device, count, job->out, &written);
    samples -= count;
    if (in)
      in += count * a->in_frame_bytes;
  }
  a->after = 0;
  const CudafftStatus status = a->queue.finish(a->ex, CudafftNothingToDo(), job->done);
  if (status != CUDAFFT_STATUS_OK)
    analysis_forget(a); /* the front end holds 0 after a failure */
  return status;
}

/* Nothing on the device to clear: the held samples are the front end's count. */
CudafftStatus
analysis_reset(void *impl)
{
  analysis_forget(static_cast<CudaAnalysis *>(impl));
  return CUDAFFT_STATUS_OK;
}

/* Synthesis ----------------------------------------------------------------------------------- */

/* A synthesis job and, where a frame's channels come in groups, where its output goes: its
 * samples (group channels interleaved) land in `scatter` and are spread over the channels of the
 * caller's output once the job is done. */
struct SynthesisWork {
  CudafftStftSynthesisJob s; /* first: the queue finds the CudafftJob at the start */
  float *scatter;
  float *dest; /* channel c0's first sample in the caller's output */
  bool dest_on_device;
  unsigned channels;
  size_t samples;
};

struct CudaSynthesis : Common {
  size_t in_floats = 0;  /* of one channel's bins in a frame */
  size_t max_frames = 0; /* frames one job takes */
  unsigned group = 0;    /* channels of a job: all, unless a frame exceeds a job */
  size_t carried = 0;    /* n - hop */
  float *rows = nullptr; /* max_frames x group rows of n floats */
  float *tail[2] = {};   /* channels rows of carried sums */
  int current = 0;
  bool tail_zero = true;      /* the carried sums are zeros (new, reset, drained, failed) */
  bool in_on_device = false;  /* this push's frames are device memory (read in place) */
  bool out_on_device = false; /* its samples go to device memory (written in place) */
  uint64_t after = 0;         /* this push's jobs go after this batch (its device input's) */
  cudaError_t scatter_error = cudaSuccess; /* the first failed copy of a group's samples */
  float *scatter[kAhead] = {};
  CudafftJobQueue<SynthesisWork, kAhead> queue;
};

/* Spreads a group job's samples over the channels of the caller's output: on the host, or into
 * device memory in one strided copy (its failure kept in the synthesiser's scatter_error). */
struct Scatter {
  CudaSynthesis *synthesis;

  void
  operator()(SynthesisWork *w) const
  {
    if (!w->scatter)
      return;
    const unsigned group = w->s.group;
    if (w->dest_on_device) {
      cudaError_t error = cudafft_use_device(synthesis->device);
      /* waited for: a copy from pageable memory may return before it lands */
      if (error == cudaSuccess)
        error = cudaMemcpy2DAsync(w->dest, w->channels * sizeof(float), w->scatter,
                                  group * sizeof(float), group * sizeof(float), w->samples,
                                  cudaMemcpyHostToDevice, cudaStreamPerThread);
      if (error == cudaSuccess)
        error = cudaStreamSynchronize(cudaStreamPerThread);
      if (error != cudaSuccess && synthesis->scatter_error == cudaSuccess)
        synthesis->scatter_error = error;
      return;
    }
    for (size_t p = 0; p < w->samples; p++)
      memcpy(w->dest + p * w->channels, w->scatter + p * group, group * sizeof(float));
  }
};

void
synthesis_release(CudaSynthesis *s)
{
  /* a push that did not wait left its jobs: they use the state */
  if (s->ex)
    (void)s->queue.finish(s->ex, Scatter{s});
  common_release(s);
  for (float *&buffer : s->scatter)
    free(buffer);
}

CudafftStatus
synthesis_setup(CudaSynthesis *s, const CudafftStftSpec *spec)
{
  const CudafftStftConfig &config = spec->config;
  const size_t n = config.fft_size, hop = config.hop, channels = config.channels;
  CudafftStatus status = common_open(s, spec);
  if (status != CUDAFFT_STATUS_OK)
    return status;
  s->carried = n - hop;
  s->in_floats = cudafft_stft_bins(&config) * 2;
  const size_t in_bytes = s->in_floats * sizeof(float);
  const size_t out_bytes = (hop > s->carried ? hop : s->carried) * sizeof(float);
  const size_t in_budget = s->budget - kAuxReserve;
  if (channels * in_bytes <= in_budget && channels * out_bytes <= s->budget) {
    s->group = (unsigned)channels;
    s->max_frames = min_size(in_budget / (channels * in_bytes), s->budget / (channels * hop * 4));
    s->max_frames = min_size(s->max_frames, kRowsFloats / (channels * n));
    s->max_frames = s->max_frames > 0 ? s->max_frames : 1;
  } else {
    s->group = (unsigned)min_size(in_budget / in_bytes, s->budget / out_bytes);
    s->max_frames = 1;
    for (float *&buffer : s->scatter) {
      buffer = static_cast<float *>(malloc(s->group * out_bytes));
      if (!buffer)
        return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY,
                            "cannot allocate %zu bytes for an STFT synthesiser's outputs",
                            s->group * out_bytes);
    }
  }
  const size_t rows_bytes = align_up(s->max_frames * s->group * n * sizeof(float));
  const size_t tail_bytes = align_up(s->carried * channels * sizeof(float));
  const size_t tables = tables_bytes(config);
  char what[160];
  snprintf(what, sizeof what,
           "a %zu-point STFT synthesiser of %zu channels (rows %zu MB, sums %zu MB, tables %zu "
           "KB)",
           n, channels, megabytes(rows_bytes), megabytes(2 * tail_bytes), tables >> 10);
  status = common_state(s, spec, tables + rows_bytes + 2 * tail_bytes, what);
  if (status != CUDAFFT_STATUS_OK)
    return status;
  char *at = static_cast<char *>(s->state) + tables;
  s->rows = reinterpret_cast<float *>(at);
  s->tail[0] = reinterpret_cast<float *>(at + rows_bytes);
  s->tail[1] = reinterpret_cast<float *>(at + rows_bytes + tail_bytes);
  return CUDAFFT_STATUS_OK;
}

/* Submits one job: `frames` frames (0: the drain) of channels c0 .. c0 + group - 1 from in, its
 * `samples` samples per channel to out (interleaved over all channels). */
void
synthesis_job(CudaSynthesis *s, const float *in, size_t frames, unsigned c0, unsigned group,
              float *out, size_t samples)
{
  const CudafftStftConfig &config = s->config;
  SynthesisWork *w = s->queue.next(s->ex, Scatter{s});
  const bool whole = group == config.channels;
  w->s.job.kind = &cudafft_stft_synthesis_kind;
  w->s.job.owner = &s->owner;
  w->s.job.in_bytes = frames * group * s->in_floats * sizeof(float);
  w->s.job.out_bytes = samples * group * sizeof(float);
  w->s.n = config.fft_size;
  w->s.hop = config.hop;
  w->s.frames = frames;
  w->s.group = group;
  w->s.rows = s->rows;
  w->s.window = s->window;
  w->s.twiddles = s->twiddles;
  const size_t tail_offset = (size_t)c0 * s->carried;
  const bool tails = s->carried > 0;
  w->s.tail_in = tails && !s->tail_zero ? s->tail[s->current] + tail_offset : nullptr;
  w->s.tail_out = tails && frames > 0 ? s->tail[1 - s->current] + tail_offset : nullptr;
  w->s.out_samples = samples;
  w->scatter = whole ? nullptr : s->scatter[(s->queue.head + s->queue.count) % kAhead];
  w->dest = out + c0;
  w->dest_on_device = s->out_on_device;
  w->channels = config.channels;
  w->samples = samples;
  /* frames in device memory: the kernel reads them there, nothing goes up; samples to device
   * memory: a job of all the channels writes them there (a group's go by way of its scatter) */
  w->s.job.in_device = s->in_on_device && frames ? in : nullptr;
  w->s.job.after = s->after;
  w->s.job.out_device = s->out_on_device && whole ? out : nullptr;
  s->queue.submit(s->ex, w, s->in_on_device ? nullptr : in,
                  !whole             ? w->scatter
                  : s->out_on_device ? nullptr
                                     : out);
}

/* done: as CudafftIstftJob's; a job of every channel leaves nothing to do on the host. */
CudafftStatus
synthesis_push(CudaSynthesis *s, const float *in, size_t frames, float *out, CudafftFence *done)
{
  const CudafftStftConfig &config = s->config;
  const unsigned channels = config.channels;
  const size_t hop = config.hop;
  const size_t frame_floats = channels * s->in_floats;
  for (size_t made = 0; made < frames && s->queue.failed == CUDAFFT_STATUS_OK;) {
    const size_t count = min_size(frames - made, s->max_frames);
    for (unsigned c0 = 0; c0 < channels && s->queue.failed == CUDAFFT_STATUS_OK; c0 += s->group) {
      const unsigned group = channels - c0 < s->group ? channels - c0 : s->group;
      synthesis_job(s, in + made * frame_floats + c0 * s->in_floats, count, c0, group,
                    out + made * hop * channels, count * hop);
    }
    s->current = 1 - s->current;
    s->tail_zero = false;
    made += count;
  }
  const bool whole = s->group == channels;
  return s->queue.finish(s->ex, Scatter{s}, whole ? done : nullptr);
}

CudafftStatus
synthesis_drain(CudaSynthesis *s, float *out)
{
  const unsigned channels = s->config.channels;
  if (s->carried == 0)
    return CUDAFFT_STATUS_OK;
  for (unsigned c0 = 0; c0 < channels && s->queue.failed == CUDAFFT_STATUS_OK; c0 += s->group) {
    const unsigned group = channels - c0 < s->group ? channels - c0 : s->group;
    synthesis_job(s, nullptr, 0, c0, group, out, s->carried);
  }
  return s->queue.finish(s->ex, Scatter{s});
}

CudafftStatus
synthesis_run(void *impl, const CudafftIstftJob *job)
{
  CudaSynthesis *s = static_cast<CudaSynthesis *>(impl);
  s->in_on_device = job->in_on_device != 0;
  s->out_on_device = job->out_on_device != 0;
  s->scatter_error = cudaSuccess;
  /* an earlier push's jobs that it did not wait for (none of channel groups: nothing to scatter);
   * a failure of theirs is this call's */
  CudafftStatus status =
      s->queue.count > 0 ? s->queue.finish(s->ex, Scatter{s}) : CUDAFFT_STATUS_OK;
  if (status == CUDAFFT_STATUS_OK)
    status = cudafft_executor_order_after(s->ex, job->after, &s->after);
  if (status == CUDAFFT_STATUS_OK)
    status = job->drain ? synthesis_drain(s, job->out)
                        : synthesis_push(s, job->in, job->frames, job->out, job->done);
  s->after = 0;
  if (status == CUDAFFT_STATUS_OK && s->scatter_error != cudaSuccess)
    status = cudafft_cuda_failure(s->scatter_error,
                                  "copying an STFT synthesiser's samples to "
                                  "device memory",
                                  __FILE__, __LINE__);
  /* after a drain the synthesiser is as after reset; after a failure its sums are unknown, and a
   * reset is the state to go on from */
  if (job->drain || status != CUDAFFT_STATUS_OK)
    s->tail_zero = true;
  return status;
}

CudafftStatus
synthesis_reset(void *impl)
{
  static_cast<CudaSynthesis *>(impl)->tail_zero = true;
  return CUDAFFT_STATUS_OK;
}

} // namespace

extern "C" const CudafftStftBackend cudafft_stft_cuda_backend = {
    cudafft_keeping_caller<
        cudafft_cuda_create<CudaAnalysis, CudafftStftSpec, analysis_setup, analysis_release>>,
    cudafft_keeping_caller<cudafft_cuda_destroy<CudaAnalysis, analysis_release>>,
    cudafft_keeping_caller<analysis_run>, cudafft_keeping_caller<analysis_reset>,
    no_stream<CudaAnalysis>};

extern "C" const CudafftIstftBackend cudafft_istft_cuda_backend = {
    cudafft_keeping_caller<
        cudafft_cuda_create<CudaSynthesis, CudafftStftSpec, synthesis_setup, synthesis_release>>,
    cudafft_keeping_caller<cudafft_cuda_destroy<CudaSynthesis, synthesis_release>>,
    cudafft_keeping_caller<synthesis_run>, cudafft_keeping_caller<synthesis_reset>,
    no_stream<CudaSynthesis>};
