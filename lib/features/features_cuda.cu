/* features_cuda.cu: the features engine's CUDA backend on the shared executor of its device
 * (executor.h): the object's device state (from the executor's memory: the tables, the circular
 * history of each channel, the ring of per-frame values, the base rows, the range floors), and
 * the driver's operations (features_driver.h) turned into jobs of the engine's kind
 * (features_kernels.h): a step is an append and the frames and units that follow it, one job
 * (a window's channel groups, where a window of every channel exceeds a job, more jobs). The
 * object owns no stream, event or staging: a call's jobs are submitted a few ahead of their
 * waits, and it returns when they are done, or (device output with a `done` fence) once they
 * are queued. */
#include "backend_object.cuh"
#include "batch_units.cuh"
#include "cuda_check.cuh"
#include "device_choice.cuh"
#include "executor.h"
#include "features_backend.h"
#include "features_driver.h"
#include "features_kernels.h"
#include "mixed_fft.cuh"
#include "sample_values.h"
#include "size_math.h"
#include "twiddles.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

/* Frames per append at most (fewer where a job's input or output would not fit). */
constexpr size_t kPieceFrames = 256;
/* Bytes of a job's input side kept for its auxiliary data. */
constexpr size_t kAuxReserve = (size_t)1 << 20;
/* Jobs an object submits ahead of its waits. */
constexpr int kAhead = 4;
/* Device state parts start at multiples of this. */
constexpr size_t kStateAlign = 256;

size_t
align_up(size_t bytes)
{
  return (bytes + kStateAlign - 1) / kStateAlign * kStateAlign;
}

struct CudaFeatures {
  int device = 0;
  CudafftExecutor *ex = nullptr;
  CudafftJobOwner owner = {};
  void *state = nullptr;
  CudafftFeaturesConfig config = {};
  CudafftFeaturesShape shape = {};
  CudafftFeaturesObject o = {};
  CudafftFeaturesDriver driver = {};
  size_t budget = 0;
  size_t in_frame_bytes = 0, value_bytes = 0;
  unsigned group = 0;       /* channels of a job's window units */
  size_t units_per_job = 0; /* window units of a job (of every channel) */
  CudafftJobQueue<CudafftFeaturesStepJob, kAhead> queue;
  /* the call */
  unsigned char *out = nullptr;
  bool in_on_device = false, out_on_device = false;
  uint64_t after = 0;
  /* the step being built: its append waits for the frames and units that follow it */
  bool pending = false;
  CudafftFeaturesStep step = {};
  const void *step_in = nullptr;
  /* the front end's counts this object follows */
  uint64_t pushed = 0, outputs_done = 0;
};

bool
direct_output(const CudafftFeaturesConfig &c)
{
  return c.output == CUDAFFT_FEATURES_OUTPUT_FRAMES && c.delta_order == 0 &&
         (c.kind == CUDAFFT_FEATURES_MEL || !(c.range > 0.0f));
}

void
release(CudaFeatures *f)
{
  /* a call that did not wait left its jobs: they use the state */
  if (f->ex)
    (void)f->queue.finish(f->ex, CudafftNothingToDo());
  cudafft_executor_free(f->ex, f->state);
  cudafft_executor_release(f->ex);
  f->state = nullptr;
  f->ex = nullptr;
}

/* The state's parts, in order, and where each starts. */
struct StateLayout {
  size_t window, filters, weights, dct, lifter, savgol[2], twiddles;
  size_t history, ring, base, floors, bytes;
};

StateLayout
state_layout(const CudafftFeaturesConfig &c, const CudafftFeaturesTables &t, size_t twiddle_count,
             size_t history_floats, size_t ring_frames, size_t base_features, bool direct)
{
  const size_t q = c.kind == CUDAFFT_FEATURES_MFCC ? c.n_mfcc : 0;
  const size_t width = c.delta_order ? c.delta_width : 1;
  StateLayout l{};
  size_t at = 0;
  const auto take = [&](size_t bytes) {
    const size_t here = at;
    at += align_up(bytes ? bytes : 4);
    return here;
  };
  l.window = take(c.win_length * sizeof(float));
  l.filters = take(3 * (size_t)c.n_mels * sizeof(uint32_t));
  l.weights = take(t.weight_count * sizeof(float));
  l.dct = take(q * c.n_mels * sizeof(float));
  l.lifter = take(q * sizeof(float));
  l.savgol[0] = take(t.savgol[0] ? width * width * sizeof(float) : 0);
  l.savgol[1] = take(t.savgol[1] ? width * width * sizeof(float) : 0);
  l.twiddles = take(twiddle_count * sizeof(float2));
  l.history = take(history_floats * sizeof(float));
  const size_t slots = direct ? 0 : c.channels * ring_frames;
  l.ring = take(sat_mul(slots, (size_t)c.n_mels + 1) * sizeof(float));
  l.base = take(sat_mul(slots, base_features) * sizeof(float));
  l.floors = take(slots * sizeof(float));
  l.bytes = at;
  return l;
}

/* Frames per append: what fits a job's input (beside its auxiliary data) and, with frames out,
 * its output. */
size_t
piece_frames(const CudaFeatures *f)
{
  const CudafftFeaturesConfig &c = f->config;
  size_t frames = kPieceFrames;
  frames = min_size(frames, (f->budget - kAuxReserve) / (c.hop * f->in_frame_bytes));
  if (c.output == CUDAFFT_FEATURES_OUTPUT_FRAMES)
    frames = min_size(frames, f->budget / f->shape.bytes / 2);
  return frames > 0 ? frames : 1;
}

/* Where a job's outputs go: windows of every channel in one job, or channel groups of one. */
CudafftStatus
plan_jobs(CudaFeatures *f)
{
  const CudafftFeaturesConfig &c = f->config;
  if (c.hop * f->in_frame_bytes > f->budget - kAuxReserve)
    return cudafft_fail(CUDAFFT_STATUS_UNSUPPORTED,
                        "features: a hop of %zu samples of %u channels (%zu bytes) exceeds a "
                        "device job (%zu bytes)",
                        c.hop, c.channels, c.hop * f->in_frame_bytes, f->budget - kAuxReserve);
  if (c.output == CUDAFFT_FEATURES_OUTPUT_FRAMES) {
    if (f->shape.bytes * 2 > f->budget)
      return cudafft_fail(CUDAFFT_STATUS_UNSUPPORTED,
                          "features: one frame of %u channels x %zu features (%zu bytes) exceeds "
                          "half a device job (%zu bytes): use fewer channels or features a "
                          "stream",
                          c.channels, f->shape.features, f->shape.bytes, f->budget);
    f->group = c.channels;
    return CUDAFFT_STATUS_OK;
  }
  const size_t per_channel = f->shape.bytes / c.channels;
  if (per_channel > f->budget)
    return cudafft_fail(CUDAFFT_STATUS_UNSUPPORTED,
                        "features: a window of %zu frames x %zu features (%zu bytes a channel) "
                        "exceeds a device job (%zu bytes)",
                        f->shape.frames, f->shape.features, per_channel, f->budget);
  f->group = (unsigned)min_size(c.channels, f->budget / per_channel);
  /* windows whose range clamps differ must not share frames in one job (their base rows) */
  const bool overlapping = c.output == CUDAFFT_FEATURES_OUTPUT_WINDOWS &&
                           c.window_stride < c.window_frames && c.kind != CUDAFFT_FEATURES_MEL &&
                           c.range > 0.0f;
  f->units_per_job =
      f->group == c.channels && !overlapping ? max_size(f->budget / f->shape.bytes, 1) : 1;
  return CUDAFFT_STATUS_OK;
}

/* The object's settings for its kernels (CudafftFeaturesObject), its state's pointers aside. */
void
describe(CudaFeatures *f, const CudafftFeaturesSpec *spec, size_t history_capacity,
         size_t ring_frames)
{
  const CudafftFeaturesConfig &c = f->config;
  const CudafftFeaturesTimeline t = cudafft_features_timeline(&c);
  CudafftFeaturesObject &o = f->o;
  o.channels = c.channels;
  o.history_capacity = (uint32_t)history_capacity;
  o.ring_frames = (uint32_t)ring_frames;
  o.ring_values = c.n_mels + 1;
  o.n_mels = c.n_mels;
  o.n_mfcc = c.kind == CUDAFFT_FEATURES_MFCC ? c.n_mfcc : 0;
  o.base_features = (uint32_t)spec->shape.base_features;
  o.features = (uint32_t)spec->shape.features;
  o.length = (uint32_t)c.win_length;
  o.fft_size = (uint32_t)c.fft_size;
  o.hop = (uint32_t)c.hop;
  o.start_offset = (int32_t)(t.pad_in - t.offset);
  o.pad = c.pad;
  o.zero_end = c.edges == CUDAFFT_FEATURES_EDGES_END;
  o.kind = c.kind;
  o.log = c.log;
  o.energy = c.energy;
  o.power = (int32_t)c.power;
  o.remove_dc = c.remove_dc != 0;
  o.preemphasis = c.preemphasis;
  o.delta_order = (int32_t)c.delta_order;
  o.delta_style = c.delta_style;
  o.delta_reach = (int32_t)t.delta_reach;
  o.precision = c.precision;
  o.layout = c.layout;
  o.output = c.output;
  o.direct = direct_output(c);
  o.format = c.format;
  o.log_floor = (float)c.log_floor;
  o.db_offset = (float)(10.0 * log10(c.log_floor > c.db_ref ? c.log_floor : c.db_ref));
  o.log_energy_floor = c.energy_floor > 0.0f ? logf(c.energy_floor) : -INFINITY;
  o.bin_scale = spec->tables->bin_scale;
  o.preemph_coeff = c.preemph_coeff;
  o.dither = c.dither;
  o.sample_scale = c.sample_scale;
  o.range = c.range;
  o.shift = c.shift;
  o.scale = c.scale;
  o.regression_norm = spec->tables->regression_norm;
  o.pad_value = c.pad_value;
  o.dither_seed = c.dither_seed;
  o.window_frames = (uint32_t)spec->shape.frames;
  o.window_stride = (uint32_t)c.window_stride;
}

CudafftStatus
setup(CudaFeatures *f, const CudafftFeaturesSpec *spec)
{
  const CudafftFeaturesConfig &c = spec->config;
  const CudafftFeaturesTables &t = *spec->tables;
  f->config = c;
  f->shape = spec->shape;
  int smem_optin = 0;
  CudafftStatus status = cudafft_cuda_open_device(spec->device_id, &f->device, &smem_optin);
  if (status != CUDAFFT_STATUS_OK)
    return status;
  int threads = 0, per_block = 0;
  size_t smem = 0;
  cudafft_features_frame_shape((uint32_t)c.fft_size, c.n_mels, &threads, &per_block, &smem);
  if (smem > (size_t)smem_optin)
    return cudafft_fail(CUDAFFT_STATUS_UNSUPPORTED,
                        "features: a %zu-point frame with %u mel bands needs %zu bytes of shared "
                        "memory per block; this GPU offers %d",
                        c.fft_size, c.n_mels, smem, smem_optin);
  CUDAFFT_CHECK(cudafft_features_kernels_prepare());
  status = cudafft_executor_acquire(f->device, &f->ex);
  if (status != CUDAFFT_STATUS_OK)
    return status;
  f->budget = cudafft_executor_max_job_bytes(f->ex);
  f->in_frame_bytes = c.channels * cudafft_sample_size(c.format);
  f->value_bytes = c.precision == CUDAFFT_FEATURES_F16 ? 2 : 4;
  status = plan_jobs(f);
  if (status != CUDAFFT_STATUS_OK)
    return status;
  const size_t piece = piece_frames(f);
  cudafft_features_driver_init(&f->driver, &c, piece);
  const CudafftFeaturesTimeline tl = cudafft_features_timeline(&c);
  /* the samples a step's frames read and the ones it appends (features_driver.c's history) */
  const size_t history = (size_t)(tl.span + tl.pad_in + tl.offset) + 4 * c.hop + piece * c.hop + 64;
  const bool direct = direct_output(c);
  const size_t ring_frames = (size_t)cudafft_features_ring_frames(&c, piece);
  describe(f, spec, history, ring_frames);
  const int big_n = c.fft_size % 2 ? (int)c.fft_size : (int)c.fft_size / 2;
  const CudafftTwiddlePlan plan = {big_n, cudafft::kPlanMixed};
  const size_t twiddle_count = cudafft_twiddles_count(&plan, 1);
  const StateLayout l = state_layout(c, t, twiddle_count, c.channels * history, ring_frames,
                                     spec->shape.base_features, direct);
  char what[200];
  snprintf(what, sizeof what,
           "a features object of %u channels (%zu-point frames, %zu frames of state, %zu MB)",
           c.channels, c.fft_size, direct ? (size_t)0 : ring_frames, megabytes(l.bytes));
  status = cudafft_executor_alloc(f->ex, l.bytes, what, &f->state);
  if (status != CUDAFFT_STATUS_OK)
    return status;
  char *s = static_cast<char *>(f->state);
  CudafftFeaturesObject &o = f->o;
  o.window = reinterpret_cast<const float *>(s + l.window);
  o.filters = reinterpret_cast<const uint32_t *>(s + l.filters);
  o.weights = reinterpret_cast<const float *>(s + l.weights);
  o.dct = reinterpret_cast<const float *>(s + l.dct);
  o.lifter = reinterpret_cast<const float *>(s + l.lifter);
  o.savgol[0] = reinterpret_cast<const float *>(s + l.savgol[0]);
  o.savgol[1] = reinterpret_cast<const float *>(s + l.savgol[1]);
  o.twiddles = reinterpret_cast<const float2 *>(s + l.twiddles);
  o.history = reinterpret_cast<float *>(s + l.history);
  o.ring = reinterpret_cast<float *>(s + l.ring);
  o.base = reinterpret_cast<float *>(s + l.base);
  o.floors = reinterpret_cast<float *>(s + l.floors);
  /* the tables, from the host */
  uint32_t *filters = static_cast<uint32_t *>(malloc(3 * (size_t)c.n_mels * sizeof(uint32_t)));
  float *twiddles = static_cast<float *>(malloc(twiddle_count * sizeof(float2)));
  if (!filters || !twiddles) {
    free(filters);
    free(twiddles);
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY,
                        "cannot allocate a features object's tables on the host");
  }
  for (unsigned j = 0; j < c.n_mels; j++) {
    filters[3 * j] = t.filters[j].first;
    filters[3 * j + 1] = t.filters[j].count;
    filters[3 * j + 2] = t.filters[j].offset;
  }
  cudafft_twiddle_table(big_n, cudafft::kPlanMixed, twiddles);
  const size_t q = c.kind == CUDAFFT_FEATURES_MFCC ? c.n_mfcc : 0;
  const size_t width = c.delta_order ? c.delta_width : 1;
  const CudafftTablePiece pieces[] = {
      {t.window, s + l.window, c.win_length * sizeof(float)},
      {filters, s + l.filters, 3 * (size_t)c.n_mels * sizeof(uint32_t)},
      {t.weights, s + l.weights, t.weight_count * sizeof(float)},
      {t.dct, s + l.dct, q * c.n_mels * sizeof(float)},
      {t.lifter, s + l.lifter, q * sizeof(float)},
      {t.savgol[0], s + l.savgol[0], t.savgol[0] ? width * width * sizeof(float) : 0},
      {t.savgol[1], s + l.savgol[1], t.savgol[1] ? width * width * sizeof(float) : 0},
      {twiddles, s + l.twiddles, twiddle_count * sizeof(float2)},
  };
  status = cudafft_upload_tables(f->ex, &f->owner, &cudafft_features_tables_kind, pieces,
                                 sizeof pieces / sizeof pieces[0]);
  free(filters);
  free(twiddles);
  return status;
}

/* Jobs ---------------------------------------------------------------------------------------- */

/* Submits a job of step s: its input (the append's, staged from host memory or read in place)
 * and its output (`out_bytes` to dest: staged to host memory or written in place). */
void
submit(CudaFeatures *f, const CudafftFeaturesStep &s, const void *in, size_t out_bytes,
       unsigned char *dest)
{
  CudafftFeaturesStepJob *job = f->queue.next(f->ex, CudafftNothingToDo());
  job->o = f->o;
  job->step = s;
  job->job.kind = &cudafft_features_step_kind;
  job->job.owner = &f->owner;
  const size_t in_bytes = s.has_input ? (size_t)s.append_count * f->in_frame_bytes : 0;
  const bool in_device = s.has_input && f->in_on_device;
  job->job.in_bytes = in_bytes;
  job->job.in_device = in_device ? in : nullptr;
  job->job.out_bytes = out_bytes;
  job->job.out_device = f->out_on_device && out_bytes ? dest : nullptr;
  job->job.after = f->after;
  f->queue.submit(f->ex, job, s.has_input && !in_device ? in : nullptr,
                  f->out_on_device || !out_bytes ? nullptr : dest);
}

/* Submits the step being built, if any (an append, its frames). */
void
flush(CudaFeatures *f)
{
  if (!f->pending)
    return;
  f->pending = false;
  submit(f, f->step, f->step_in, 0, nullptr);
}

void
begin_step(CudaFeatures *f)
{
  if (f->pending)
    return;
  f->pending = true;
  f->step = CudafftFeaturesStep{};
  f->step.kept = CUDAFFT_FEATURES_UNKNOWN;
  f->step.group = f->config.channels;
  f->step_in = nullptr;
}

CudafftStatus
op_append(void *ctx, const void *in, size_t count, int in_on_device, uint64_t at)
{
  (void)in_on_device;
  CudaFeatures *f = static_cast<CudaFeatures *>(ctx);
  flush(f);
  /* the history keeps what later frames read (SIGNAL pre-emphasis: one sample before) */
  uint64_t keep = cudafft_features_history_start(&f->driver.t, f->driver.made, at);
  if (f->config.preemphasis == CUDAFFT_FEATURES_PREEMPHASIS_SIGNAL && keep > 0)
    keep--;
  if (at + count - keep > f->o.history_capacity)
    return cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE,
                        "features: %llu samples to hold exceed the history of %u",
                        (unsigned long long)(at + count - keep), f->o.history_capacity);
  begin_step(f);
  f->step.append_at = at;
  f->step.append_count = (uint32_t)count;
  f->step.has_input = in != nullptr;
  f->step_in = in;
  return f->queue.failed;
}

CudafftStatus
op_make_frames(void *ctx, uint64_t f0, uint64_t f1, uint64_t length, int ended)
{
  CudaFeatures *f = static_cast<CudaFeatures *>(ctx);
  if (f->pending && f->step.f1 > f->step.f0)
    flush(f);
  begin_step(f);
  f->step.f0 = f0;
  f->step.f1 = f1;
  f->step.length = length;
  f->step.ended = ended;
  return f->queue.failed;
}

CudafftStatus
op_write_units(void *ctx, const CudafftFeaturesUnits *units)
{
  CudaFeatures *f = static_cast<CudaFeatures *>(ctx);
  const CudafftFeaturesConfig &c = f->config;
  begin_step(f);
  CudafftFeaturesStep s = f->step;
  const void *in = f->step_in;
  f->pending = false;
  s.kept = units->kept;
  s.made = units->made;
  unsigned char *out = f->out + units->out_index * f->shape.bytes;
  if (c.output == CUDAFFT_FEATURES_OUTPUT_FRAMES) {
    if (f->o.direct && (s.f0 != units->first || s.f1 != units->first + units->count))
      return cudafft_fail(
          CUDAFFT_STATUS_INVALID_VALUE, "features: frames %llu..%llu made but %llu..%llu due",
          (unsigned long long)s.f0, (unsigned long long)s.f1, (unsigned long long)units->first,
          (unsigned long long)(units->first + units->count));
    s.first = units->first;
    s.count = units->count;
    s.c0 = 0;
    s.group = c.channels;
    submit(f, s, in, (size_t)units->count * f->shape.bytes, out);
    return f->queue.failed;
  }
  /* windows: several of every channel a job, or one window's channel groups */
  const size_t channel_bytes = f->shape.bytes / c.channels;
  for (uint64_t u = 0; u < units->count && f->queue.failed == CUDAFFT_STATUS_OK;) {
    const uint64_t count =
        f->group == c.channels ? min_size(units->count - u, f->units_per_job) : 1;
    for (unsigned c0 = 0; c0 < c.channels && f->queue.failed == CUDAFFT_STATUS_OK; c0 += f->group) {
      s.first = units->first + u;
      s.count = count;
      s.c0 = c0;
      s.group = c.channels - c0 < f->group ? c.channels - c0 : f->group;
      submit(f, s, in, (size_t)count * s.group * channel_bytes,
             out + (size_t)u * f->shape.bytes + (size_t)c0 * channel_bytes);
      /* the step's append and frames go with its first job only */
      s.append_count = 0;
      s.has_input = 0;
      s.f0 = s.f1 = 0;
      in = nullptr;
    }
    u += count;
  }
  return f->queue.failed;
}

void
op_end_utterance(void *ctx)
{
  flush(static_cast<CudaFeatures *>(ctx));
}

/* The table ----------------------------------------------------------------------------------- */

void
forget(CudaFeatures *f)
{
  cudafft_features_driver_reset(&f->driver);
  f->pending = false;
  f->pushed = 0;
  f->outputs_done = 0;
}

CudafftStatus
run(void *impl, const CudafftFeaturesJob *job)
{
  CudaFeatures *f = static_cast<CudaFeatures *>(impl);
  /* an earlier call's jobs that it did not wait for: a failure of theirs is this call's */
  CudafftStatus status =
      f->queue.count > 0 ? f->queue.finish(f->ex, CudafftNothingToDo()) : CUDAFFT_STATUS_OK;
  if (status == CUDAFFT_STATUS_OK)
    status = cudafft_executor_order_after(f->ex, job->after, &f->after);
  if (status != CUDAFFT_STATUS_OK) {
    forget(f);
    return status;
  }
  if (job->pushed != f->pushed || job->outputs_done != f->outputs_done)
    forget(f); /* the front end forgot the stream */
  f->out = static_cast<unsigned char *>(job->out);
  f->in_on_device = job->in_on_device != 0;
  f->out_on_device = job->out_on_device != 0;
  const CudafftFeaturesOps ops = {f, op_append, op_make_frames, op_write_units, op_end_utterance};
  size_t outputs = 0;
  status = cudafft_features_drive(&f->driver, &ops, job->in, job->samples, f->in_frame_bytes,
                                  f->in_on_device, job->finish, &outputs);
  if (status == CUDAFFT_STATUS_OK)
    flush(f);
  f->after = 0;
  const CudafftStatus waited = f->queue.finish(f->ex, CudafftNothingToDo(), job->done);
  status = status != CUDAFFT_STATUS_OK ? status : waited;
  if (status == CUDAFFT_STATUS_OK && outputs != job->outputs)
    status = cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE,
                          "CUDA backend: a features call wrote %zu outputs where %zu were due",
                          outputs, job->outputs);
  if (status != CUDAFFT_STATUS_OK) {
    forget(f);
    return status;
  }
  f->pushed = job->finish ? 0 : f->pushed + job->samples;
  f->outputs_done = job->finish ? 0 : f->outputs_done + outputs;
  return CUDAFFT_STATUS_OK;
}

CudafftStatus
reset(void *impl)
{
  CudaFeatures *f = static_cast<CudaFeatures *>(impl);
  const CudafftStatus status =
      f->queue.count > 0 ? f->queue.finish(f->ex, CudafftNothingToDo()) : CUDAFFT_STATUS_OK;
  forget(f);
  return status;
}

void *
no_stream(const void *impl)
{
  (void)impl;
  return nullptr;
}

} // namespace

extern "C" const CudafftFeaturesBackend cudafft_features_cuda_backend = {
    cudafft_keeping_caller<cudafft_cuda_create<CudaFeatures, CudafftFeaturesSpec, setup, release>>,
    cudafft_keeping_caller<cudafft_cuda_destroy<CudaFeatures, release>>,
    cudafft_keeping_caller<run>, cudafft_keeping_caller<reset>, no_stream};
