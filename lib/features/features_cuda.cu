/* features_cuda.cu: the features engine's CUDA backend on the shared executor of its device
 * (executor.h): the object's device state (from the executor's memory: the tables, the circular
 * history of each channel, the ring of per-frame values, the base rows, the range floors), and
 * its steps (features_step.h, which cuts a call into them) submitted as jobs of the engine's kind
 * (features_kernels.h). The object owns no stream, event or staging: a call's jobs are submitted
 * a few ahead of their waits, and it returns when they are done, or (device output with a `done`
 * fence) once they are queued. */
#include "backend_object.cuh"
#include "batch_units.cuh"
#include "cuda_check.cuh"
#include "device_choice.cuh"
#include "executor.h"
#include "features_backend.h"
#include "features_kernels.h"
#include "features_step.h"
#include "mixed_fft.cuh"
#include "size_math.h"
#include "twiddles.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

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
  CudafftFeaturesObject o = {};
  CudafftFeaturesStepper stepper = {};
  CudafftJobQueue<CudafftFeaturesStepJob, kAhead> queue;
  /* the call */
  bool in_on_device = false, out_on_device = false;
  uint64_t after = 0;
  /* the front end's counts this object follows */
  uint64_t pushed = 0, outputs_done = 0;
};

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
             const CudafftFeaturesStepper &s)
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
  l.history = take(sat_mul(c.channels, s.history_capacity) * sizeof(float));
  const size_t slots = sat_mul(c.channels, s.ring_frames);
  l.ring = take(sat_mul(slots, (size_t)c.n_mels + 1) * sizeof(float));
  l.base = take(sat_mul(slots, s.shape.base_features) * sizeof(float));
  l.floors = take(slots * sizeof(float));
  l.bytes = at;
  return l;
}

/* Submits a step as a job: its input (staged from host memory or read in place) and its output
 * (staged to host memory or written in place). A failure is kept by the queue and ends the
 * call. */
CudafftStatus
submit(void *ctx, const CudafftFeaturesWork *work)
{
  CudaFeatures *f = static_cast<CudaFeatures *>(ctx);
  if (f->queue.failed != CUDAFFT_STATUS_OK)
    return f->queue.failed;
  CudafftFeaturesStepJob *job = f->queue.next(f->ex, CudafftNothingToDo());
  job->o = f->o;
  job->step = work->step;
  job->job.kind = &cudafft_features_step_kind;
  job->job.owner = &f->owner;
  const bool in_device = work->in && f->in_on_device;
  job->job.in_bytes = work->in_bytes;
  job->job.in_device = in_device ? work->in : nullptr;
  job->job.out_bytes = work->out_bytes;
  job->job.out_device = f->out_on_device ? work->out : nullptr;
  job->job.after = f->after;
  f->queue.submit(f->ex, job, in_device ? nullptr : work->in,
                  f->out_on_device ? nullptr : work->out);
  return f->queue.failed;
}

CudafftStatus
setup(CudaFeatures *f, const CudafftFeaturesSpec *spec)
{
  const CudafftFeaturesConfig &c = spec->config;
  const CudafftFeaturesTables &t = *spec->tables;
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
  status = cudafft_features_stepper_init(&f->stepper, &c, &spec->shape,
                                         cudafft_executor_max_job_bytes(f->ex), kAuxReserve);
  if (status != CUDAFFT_STATUS_OK)
    return status;
  f->stepper.submit = submit;
  f->stepper.ctx = f;
  cudafft_features_object_describe(&f->o, &c, &spec->shape, spec->tables,
                                   f->stepper.history_capacity, f->stepper.ring_frames);
  const int big_n = c.fft_size % 2 ? (int)c.fft_size : (int)c.fft_size / 2;
  const CudafftTwiddlePlan plan = {big_n, cudafft::kPlanMixed};
  const size_t twiddle_count = cudafft_twiddles_count(&plan, 1);
  const StateLayout l = state_layout(c, t, twiddle_count, f->stepper);
  char what[200];
  snprintf(what, sizeof what,
           "a features object of %u channels (%zu-point frames, %zu frames of state, %zu MB)",
           c.channels, c.fft_size, f->stepper.ring_frames, megabytes(l.bytes));
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
  o.twiddles = s + l.twiddles;
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

void
forget(CudaFeatures *f)
{
  cudafft_features_stepper_reset(&f->stepper);
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
  f->in_on_device = job->in_on_device != 0;
  f->out_on_device = job->out_on_device != 0;
  size_t outputs = 0;
  status = cudafft_features_stepper_run(&f->stepper, job->in, job->samples, job->in_on_device,
                                        job->finish, job->out, &outputs);
  f->after = 0;
  const CudafftStatus waited = f->queue.finish(f->ex, CudafftNothingToDo(), job->done);
  if (status == CUDAFFT_STATUS_OK || waited != CUDAFFT_STATUS_OK)
    status = waited; /* a failed job's message is restored by the wait */
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
