/* features.c: the features API's front end: the object, its stream's counts (samples pushed,
 * outputs written), stamps and latency from the shared timeline, the checks of every call, and
 * the choice of backend. Validation and presets: features_config.c, features_presets.c; the
 * tables: features_tables.c. */
#include "api_getter.h"
#include "backend_choice.h"
#include "device_pointer.h"
#include "device_samples.h"
#include "executor.h"
#include "features_backend.h"
#include "features_timeline.h"

#include <stdint.h>
#include <stdlib.h>

struct CudafftFeatures {
  CudafftFeaturesConfig config;
  CudafftFeaturesShape shape;
  CudafftFeaturesTimeline timeline;
  CudafftBackend backend;
  int device; /* the CUDA device it runs on, -1 for the CPU backend */
  const CudafftFeaturesBackend *ops;
  void *impl;
  uint64_t pushed;       /* samples per channel since create/reset/finish */
  uint64_t outputs_done; /* outputs written since then */
  uint64_t latency;
  /* the stream finish ended, for its outputs' stamps until the next push: its kept frames */
  int finished;
  uint64_t finished_frames;
  CudafftCheckedMemory checked; /* device memory that passed */
};

static CudafftStatus
check_config(const void *args)
{
  return cudafft_features_shape(args, NULL);
}

CUDAFFT_DEFINE_TRY_BACKEND(try_backend, CudafftFeatures, CudafftFeaturesSpec,
                           cudafft_features_cpu_backend, cudafft_features_cuda_backend)

/* The stream sample output `index` stands for. */
static uint64_t
output_position(const CudafftFeatures *f, uint64_t index)
{
  const CudafftFeaturesConfig *c = &f->config;
  switch (c->output) {
  case CUDAFFT_FEATURES_OUTPUT_FRAMES:
    return index * c->hop;
  case CUDAFFT_FEATURES_OUTPUT_WINDOWS:
    return index * c->window_stride * c->hop;
  default:
    return index * c->chunk_samples;
  }
}

/* The fewest samples after which output `index` is complete (the counts never fall as samples
 * come, so a bisection finds it). */
static uint64_t
samples_for_output(const CudafftFeatures *f, uint64_t index)
{
  uint64_t lo = 0, hi = output_position(f, index) + ((uint64_t)1 << 40);
  while (lo < hi) {
    const uint64_t mid = lo + (hi - lo) / 2;
    if (cudafft_features_outputs_ready(&f->timeline, mid) > index)
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo;
}

/* The most samples past its position an output waits for: over the first outputs, after which
 * the wait repeats (the frames' and windows' pattern is periodic past the start). */
static uint64_t
compute_latency(const CudafftFeatures *f)
{
  const CudafftFeaturesTimeline *t = &f->timeline;
  const uint64_t first = 8 + (uint64_t)((t->span + t->pad_in) / t->hop) + 4 * t->delta_reach + 2;
  uint64_t latency = 0;
  for (uint64_t k = 0; k < first; k++) {
    const uint64_t need = samples_for_output(f, k), at = output_position(f, k);
    if (need > at && need - at > latency)
      latency = need - at;
  }
  return latency;
}

CudafftStatus
cudafft_features_create(CudafftFeatures **out, CudafftBackend backend, int device_id,
                        const CudafftFeaturesConfig *config)
{
  CudafftStatus status =
      cudafft_check_create((void **)out, "cudafft_features_create: features", config,
                           "features config", check_config, backend, device_id);
  if (status != CUDAFFT_STATUS_OK)
    return status;
  CudafftFeatures *f = calloc(1, sizeof *f);
  if (!f)
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY, "cannot allocate a features object");
  f->config = *config;
  if (f->config.win_length == 0)
    f->config.win_length = f->config.fft_size;
  (void)cudafft_features_shape(&f->config, &f->shape);
  f->timeline = cudafft_features_timeline(&f->config);
  f->latency = compute_latency(f);
  CudafftFeaturesTables tables;
  status = cudafft_features_tables_make(&f->config, &tables);
  if (status == CUDAFFT_STATUS_OK) {
    const CudafftFeaturesSpec spec = {f->config, f->shape, &tables, device_id};
    status = cudafft_create_on_backend(backend, device_id, try_backend, f, &spec, &f->backend,
                                       &f->device);
    cudafft_features_tables_free(&tables); /* the backend keeps its own copy */
  }
  return cudafft_publish((void **)out, f, status, free);
}

void
cudafft_features_destroy(CudafftFeatures *f)
{
  if (!f)
    return;
  f->ops->destroy(f->impl);
  free(f);
}

CUDAFFT_DEFINE_GETTER(CudafftBackend, cudafft_features_get_backend, CudafftFeatures,
                      object->backend, CUDAFFT_BACKEND_AUTO)
CUDAFFT_DEFINE_GETTER(int, cudafft_features_get_device, CudafftFeatures, object->device, -1)
CUDAFFT_DEFINE_GETTER(const CudafftFeaturesConfig *, cudafft_features_get_config, CudafftFeatures,
                      &object->config, NULL)
CUDAFFT_DEFINE_GETTER(size_t, cudafft_features_output_bytes, CudafftFeatures, object->shape.bytes,
                      0)
CUDAFFT_DEFINE_GETTER(uint64_t, cudafft_features_outputs_done, CudafftFeatures,
                      object->outputs_done, 0)
CUDAFFT_DEFINE_GETTER(uint64_t, cudafft_features_samples_pushed, CudafftFeatures, object->pushed, 0)
CUDAFFT_DEFINE_GETTER(uint64_t, cudafft_features_latency, CudafftFeatures, object->latency, 0)

/* Pushes are refused beyond this many samples per channel per call, so that counts never wrap. */
#define MAX_PUSH_SAMPLES ((size_t)1 << 40)

size_t
cudafft_features_outputs_for(const CudafftFeatures *f, size_t samples)
{
  if (!f || samples > MAX_PUSH_SAMPLES)
    return 0;
  return (size_t)(cudafft_features_outputs_ready(&f->timeline, f->pushed + samples) -
                  f->outputs_done);
}

size_t
cudafft_features_finish_outputs(const CudafftFeatures *f)
{
  if (!f)
    return 0;
  return (size_t)(cudafft_features_outputs_final(&f->timeline, f->pushed) - f->outputs_done);
}

CudafftStatus
cudafft_features_stamp(const CudafftFeatures *f, uint64_t index, CudafftFeaturesStamp *stamp)
{
  if (!f || !stamp)
    return cudafft_fail(CUDAFFT_STATUS_NULL_POINTER, "cudafft_features_stamp: %s is NULL",
                        !f ? "features" : "stamp");
  const CudafftFeaturesConfig *c = &f->config;
  CudafftFeaturesStamp s = {.index = index, .position = output_position(f, index)};
  switch (c->output) {
  case CUDAFFT_FEATURES_OUTPUT_FRAMES:
    s.frame = index;
    s.frames = 1;
    s.duration = s.extent = c->hop;
    break;
  case CUDAFFT_FEATURES_OUTPUT_WINDOWS:
    s.frame = index * c->window_stride;
    s.frames = c->window_frames;
    /* the finished stream's last window may be partial */
    if (f->finished && f->finished_frames < s.frame + s.frames)
      s.frames = f->finished_frames > s.frame ? (size_t)(f->finished_frames - s.frame) : 0;
    s.duration = (uint64_t)c->window_stride * c->hop;
    s.extent = (uint64_t)s.frames * c->hop;
    break;
  default:
    s.frame = 0;
    s.frames = f->shape.frames;
    s.duration = s.extent = c->chunk_samples;
  }
  *stamp = s;
  return CUDAFFT_STATUS_OK;
}

/* The stream is forgotten: after reset, and after any failure of a push or finish. */
static void
forget(CudafftFeatures *f)
{
  f->pushed = 0;
  f->outputs_done = 0;
}

/* push, push_device, finish and finish_device: in and out where on_device says. */
static CudafftStatus
features_call(CudafftFeatures *f, const void *in, size_t samples, int finish, void *out,
              size_t *outputs, unsigned on_device, const CudafftFence *after, CudafftFence *done,
              const char *name)
{
  if (outputs)
    *outputs = 0;
  if (done)
    *done = (CudafftFence){0, 0};
  if (!f)
    return cudafft_fail(CUDAFFT_STATUS_NULL_POINTER, "%s: features is NULL", name);
  CudafftStatus status = cudafft_device_samples_check_flags(on_device, f->backend, name);
  if (status != CUDAFFT_STATUS_OK)
    return status;
  if (samples > MAX_PUSH_SAMPLES) {
    forget(f);
    return cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE, "%s: %zu samples is too many", name, samples);
  }
  const int in_on_device = in && (on_device & CUDAFFT_IN_DEVICE);
  CudafftFence order;
  status = cudafft_fence_order(after, in_on_device, &order);
  if (status != CUDAFFT_STATUS_OK)
    return status;
  const size_t count =
      finish ? cudafft_features_finish_outputs(f) : cudafft_features_outputs_for(f, samples);
  if (count > 0 && !out) {
    forget(f);
    return cudafft_fail(CUDAFFT_STATUS_NULL_POINTER, "%s: out is NULL but %zu outputs are complete",
                        name, count);
  }
  const size_t in_bytes = samples * f->config.channels * cudafft_sample_bytes(f->config.format);
  status = cudafft_device_pointers_check(&f->checked, f->device, on_device, in, in_bytes, out,
                                         count * f->shape.bytes, name);
  if (status != CUDAFFT_STATUS_OK) {
    forget(f);
    return status;
  }
  if (f->finished && (samples > 0 || finish))
    f->finished = 0;
  if (samples == 0 && !finish)
    return CUDAFFT_STATUS_OK;
  const CudafftFeaturesJob job = {.in = in,
                                  .samples = samples,
                                  .finish = finish,
                                  .out = out,
                                  .outputs = count,
                                  .pushed = f->pushed,
                                  .outputs_done = f->outputs_done,
                                  .in_on_device = in_on_device,
                                  .out_on_device = (on_device & CUDAFFT_OUT_DEVICE) != 0,
                                  .after = order,
                                  .done = on_device & CUDAFFT_OUT_DEVICE ? done : NULL};
  status = f->ops->run(f->impl, &job);
  if (status != CUDAFFT_STATUS_OK) {
    forget(f);
    return status;
  }
  if (finish) {
    f->finished = 1;
    f->finished_frames = cudafft_features_kept_frames(&f->timeline, f->pushed + samples);
    forget(f);
  } else {
    f->pushed += samples;
    f->outputs_done += count;
  }
  if (outputs)
    *outputs = count;
  return CUDAFFT_STATUS_OK;
}

CudafftStatus
cudafft_features_push(CudafftFeatures *f, const void *in, size_t samples, void *out,
                      size_t *outputs)
{
  return features_call(f, in, samples, 0, out, outputs, 0, NULL, NULL, "cudafft_features_push");
}

CudafftStatus
cudafft_features_push_device(CudafftFeatures *f, const void *in, size_t samples, void *out,
                             size_t *outputs, unsigned on_device, const CudafftFence *after,
                             CudafftFence *done)
{
  return features_call(f, in, samples, 0, out, outputs, on_device, after, done,
                       "cudafft_features_push_device");
}

CudafftStatus
cudafft_features_finish(CudafftFeatures *f, void *out, size_t *outputs)
{
  return features_call(f, NULL, 0, 1, out, outputs, 0, NULL, NULL, "cudafft_features_finish");
}

CudafftStatus
cudafft_features_finish_device(CudafftFeatures *f, void *out, size_t *outputs, unsigned on_device,
                               CudafftFence *done)
{
  return features_call(f, NULL, 0, 1, out, outputs, on_device & CUDAFFT_OUT_DEVICE, NULL, done,
                       "cudafft_features_finish_device");
}

void
cudafft_features_reset(CudafftFeatures *f)
{
  if (!f)
    return;
  forget(f);
  f->finished = 0;
  cudafft_checked_memory_forget(&f->checked);
  f->ops->reset(f->impl); /* nothing to report: the counts are 0 whatever it says */
}
