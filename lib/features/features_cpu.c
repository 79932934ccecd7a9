/* features_cpu.c: the features engine's CPU backend, on FFTW single precision: the reference the
 * GStreamer element falls back to where there is no GPU, and what CI runs. The shared driver
 * (features_driver.h) orders the work; this file keeps the utterance's samples (planar rows, from
 * the first sample a later frame still reads) and the ring of per-frame values, and computes
 * frames (steps 2 to 7 of cudafft/features.h) and output units (steps 6, 8 to 10, the layout)
 * with the formulas of features_values.h. */
#include "cpu_backend.h"
#include "errors.h"
#include "features_backend.h"
#include "features_driver.h"
#include "features_values.h"
#include "fftw_real.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Frames per append: pieces small enough that the ring stays small. */
#define PIECE_FRAMES 64

typedef struct {
  CudafftCpuObject base; /* owns the plan and the arrays */
  CudafftFeaturesConfig config;
  CudafftFeaturesShape shape;
  CudafftFeaturesDriver driver;
  CudafftFftwReal fft;
  CudafftFeaturesLogSpec log;
  float log_energy_floor; /* ln(energy_floor), or -INFINITY for none */
  float bin_scale;        /* s of step 4 */
  /* the tables (features_tables.h), copied */
  float *window;
  CudafftMelFilter *filters;
  float *weights, *dct, *lifter, *savgol[2];
  float regression_norm;
  /* the utterance's samples: channels rows of `capacity`, sample history_start + i at row[i] */
  float *history;
  size_t capacity, held;
  uint64_t history_start;
  float *previous; /* channels: the last raw sample (SIGNAL pre-emphasis) */
  /* the ring: channels x ring_frames rows of ring_values (the mel or log-mel values, the energy) */
  float *ring;
  uint64_t ring_frames;
  size_t ring_values;
  /* scratch: one frame's samples, its spectrum, and a unit's vectors */
  float *frame, *spectrum;
  float *unit, *deltas;
  size_t unit_frames;
  /* the current call */
  void *out;
  uint64_t pushed, outputs_done; /* the front end's counts this object follows */
} CpuFeatures;

/* Frames a unit's computation holds at most: a window, or the frames the ring holds. */
static size_t
unit_capacity(const CudafftFeaturesShape *s, uint64_t ring)
{
  return s->frames + (size_t)ring;
}

/* Copies the float tables into one array the object owns: window, weights, DCT, lifter,
 * Savitzky-Golay rows. */
static int
copy_tables(CpuFeatures *impl, const CudafftFeaturesTables *t, size_t width)
{
  const CudafftFeaturesConfig *c = &impl->config;
  const size_t q = c->kind == CUDAFFT_FEATURES_MFCC ? c->n_mfcc : 0;
  const size_t savgol = width * width;
  const size_t count = c->win_length + t->weight_count + q * c->n_mels + q +
                       (t->savgol[0] ? savgol : 0) + (t->savgol[1] ? savgol : 0);
  float *at = cudafft_cpu_array(&impl->base, (count ? count : 1) * sizeof *at);
  impl->filters = cudafft_cpu_array(&impl->base, c->n_mels * sizeof *impl->filters);
  if (!at || !impl->filters)
    return 0;
  memcpy(impl->filters, t->filters, c->n_mels * sizeof *impl->filters);
  const struct {
    float **dst;
    const float *src;
    size_t count;
  } parts[] = {
      {&impl->window, t->window, c->win_length},
      {&impl->weights, t->weights, t->weight_count},
      {&impl->dct, t->dct, q * c->n_mels},
      {&impl->lifter, t->lifter, q},
      {&impl->savgol[0], t->savgol[0], t->savgol[0] ? savgol : 0},
      {&impl->savgol[1], t->savgol[1], t->savgol[1] ? savgol : 0},
  };
  for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
    *parts[i].dst = at;
    if (parts[i].count)
      memcpy(at, parts[i].src, parts[i].count * sizeof *at);
    at += parts[i].count;
  }
  return 1;
}

static CudafftStatus
cpu_create(const CudafftFeaturesSpec *spec, void **out)
{
  *out = NULL;
  const CudafftFeaturesConfig *c = &spec->config;
  CpuFeatures *impl = cudafft_cpu_object_new(sizeof *impl, "a features object");
  if (!impl)
    return CUDAFFT_STATUS_HOST_OUT_OF_MEMORY;
  impl->config = *c;
  impl->shape = spec->shape;
  cudafft_features_driver_init(&impl->driver, c, PIECE_FRAMES);
  impl->log = (CudafftFeaturesLogSpec){
      c->log, (float)c->log_floor,
      (float)(10.0 * log10(c->log_floor > c->db_ref ? c->log_floor : c->db_ref))};
  impl->log_energy_floor = c->energy_floor > 0.0f ? logf(c->energy_floor) : -INFINITY;
  impl->bin_scale = spec->tables->bin_scale;
  impl->ring_frames = cudafft_features_ring_frames(c, PIECE_FRAMES);
  impl->ring_values = c->n_mels + 1;
  impl->unit_frames = unit_capacity(&spec->shape, impl->ring_frames);
  impl->regression_norm = spec->tables->regression_norm;
  const size_t bins = c->fft_size / 2 + 1, base = spec->shape.base_features;
  const size_t width = 2 * (size_t)(c->delta_order ? (c->delta_width - 1) / 2 : 0) + 1;
  int ok = copy_tables(impl, spec->tables, width);
  impl->previous = cudafft_cpu_array(&impl->base, c->channels * sizeof(float));
  impl->ring = cudafft_cpu_array(&impl->base, (size_t)impl->ring_frames * impl->ring_values *
                                                  c->channels * sizeof(float));
  impl->frame = cudafft_cpu_array(&impl->base, c->win_length * sizeof(float));
  /* the spectrum, and an MFCC frame's log-mel values while units are written */
  impl->spectrum = cudafft_cpu_array(&impl->base, (bins > c->n_mels ? bins : c->n_mels) * 4);
  impl->unit = cudafft_cpu_array(&impl->base, impl->unit_frames * base * sizeof(float));
  impl->deltas = cudafft_cpu_array(&impl->base, impl->unit_frames * base * sizeof(float));
  ok = ok && impl->previous && impl->ring && impl->frame && impl->spectrum && impl->unit &&
       impl->deltas;
  CudafftStatus status =
      ok ? CUDAFFT_STATUS_OK
         : cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY,
                        "CPU backend: cannot allocate a features object (%llu ring frames of %u "
                        "channels)",
                        (unsigned long long)impl->ring_frames, c->channels);
  if (status == CUDAFFT_STATUS_OK)
    status = cudafft_fftw_real_init(&impl->base, &impl->fft, c->fft_size, 1);
  if (status != CUDAFFT_STATUS_OK) {
    cudafft_cpu_destroy(impl);
    return status;
  }
  *out = impl;
  return CUDAFFT_STATUS_OK;
}

/* Samples ------------------------------------------------------------------------------------ */

/* Drops the samples before `start` and makes room for `more` after the held ones. */
static CudafftStatus
reserve_history(CpuFeatures *impl, uint64_t start, size_t more)
{
  const unsigned channels = impl->config.channels;
  if (start > impl->history_start) {
    const size_t drop = (size_t)(start - impl->history_start);
    const size_t keep = impl->held > drop ? impl->held - drop : 0;
    for (unsigned c = 0; c < channels && keep > 0; c++) {
      float *row = impl->history + c * impl->capacity;
      memmove(row, row + (impl->held - keep), keep * sizeof *row);
    }
    impl->held = keep;
    impl->history_start = start;
  }
  if (impl->held + more <= impl->capacity)
    return CUDAFFT_STATUS_OK;
  const size_t capacity = impl->held + more + (impl->held + more) / 2;
  float *rows = cudafft_cpu_array(&impl->base, capacity * channels * sizeof *rows);
  if (!rows)
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY,
                        "CPU backend: cannot hold %zu samples of %u channels", capacity, channels);
  for (unsigned c = 0; c < channels && impl->held > 0; c++)
    memcpy(rows + c * capacity, impl->history + c * impl->capacity, impl->held * sizeof *rows);
  cudafft_cpu_array_free(&impl->base, impl->history);
  impl->history = rows;
  impl->capacity = capacity;
  return CUDAFFT_STATUS_OK;
}

static CudafftStatus
op_append(void *ctx, const void *in, size_t count, int in_on_device, uint64_t at)
{
  (void)in_on_device;
  CpuFeatures *impl = ctx;
  const CudafftFeaturesConfig *c = &impl->config;
  if (at == 0) {
    impl->held = 0;
    impl->history_start = 0;
  }
  const uint64_t start = cudafft_features_history_start(&impl->driver.t, impl->driver.made, at);
  const CudafftStatus status = reserve_history(impl, start, count);
  if (status != CUDAFFT_STATUS_OK)
    return status;
  const int signal = c->preemphasis == CUDAFFT_FEATURES_PREEMPHASIS_SIGNAL;
  for (unsigned ch = 0; ch < c->channels; ch++) {
    float *row = impl->history + ch * impl->capacity + impl->held;
    float previous = impl->previous[ch];
    for (size_t i = 0; i < count; i++) {
      const float x =
          in ? cudafft_sample_float(c->format, in, i * c->channels + ch, CUDAFFT_INT_SCALE_POW2) *
                   c->sample_scale
             : 0.0f;
      row[i] = signal && at + i > 0 ? x - c->preemph_coeff * previous : x;
      previous = x;
    }
    impl->previous[ch] = previous;
  }
  impl->held += count;
  return CUDAFFT_STATUS_OK;
}

/* Frames ------------------------------------------------------------------------------------- */

/* Frame f of channel ch into its ring row (steps 2 to 7). */
static void
make_frame(CpuFeatures *impl, unsigned ch, uint64_t f, uint64_t length)
{
  const CudafftFeaturesConfig *c = &impl->config;
  const CudafftFeaturesTimeline *t = &impl->driver.t;
  const size_t len = c->win_length, n = c->fft_size, bins = n / 2 + 1;
  const float *row = impl->history + ch * impl->capacity;
  const int64_t start = cudafft_features_window_start(t, f);
  const int zero_end = c->edges == CUDAFFT_FEATURES_EDGES_END;
  float *u = impl->frame;
  for (size_t i = 0; i < len; i++) {
    const int64_t at =
        cudafft_features_pad_index(start + (int64_t)i, (int64_t)length, c->pad, zero_end);
    u[i] = at < 0 ? 0.0f : row[at - (int64_t)impl->history_start];
  }
  if (c->dither > 0.0f)
    for (size_t i = 0; i < len; i++)
      u[i] += c->dither * cudafft_features_gauss(c->dither_seed, ch, f, i);
  if (c->remove_dc) {
    float sum = 0.0f;
    for (size_t i = 0; i < len; i++)
      sum += u[i];
    const float mean = sum / (float)len;
    for (size_t i = 0; i < len; i++)
      u[i] -= mean;
  }
  float energy = 0.0f;
  if (c->energy == CUDAFFT_FEATURES_ENERGY_RAW)
    for (size_t i = 0; i < len; i++)
      energy += u[i] * u[i];
  if (c->preemphasis == CUDAFFT_FEATURES_PREEMPHASIS_FRAME) {
    for (size_t i = len - 1; i > 0; i--)
      u[i] -= c->preemph_coeff * u[i - 1];
    u[0] -= c->preemph_coeff * u[0];
  }
  for (size_t i = 0; i < len; i++)
    u[i] *= impl->window[i];
  if (c->energy == CUDAFFT_FEATURES_ENERGY_WINDOWED)
    for (size_t i = 0; i < len; i++)
      energy += u[i] * u[i];
  memcpy(impl->fft.real, u, len * sizeof *u);
  memset(impl->fft.real + len, 0, (n - len) * sizeof *u);
  fftwf_execute(impl->fft.plan);
  float *v = impl->spectrum;
  for (size_t k = 0; k < bins; k++)
    v[k] = cudafft_features_bin_value(impl->fft.bins[k][0], impl->fft.bins[k][1], impl->bin_scale,
                                      c->power);
  if (c->energy == CUDAFFT_FEATURES_ENERGY_SPECTRUM)
    for (size_t k = 0; k < bins; k++)
      energy += v[k];
  float *out = impl->ring + ((size_t)ch * impl->ring_frames + (size_t)(f % impl->ring_frames)) *
                                impl->ring_values;
  for (unsigned j = 0; j < c->n_mels; j++) {
    const CudafftMelFilter *filter = &impl->filters[j];
    float m = 0.0f;
    for (unsigned k = 0; k < filter->count; k++)
      m += impl->weights[filter->offset + k] * v[filter->first + k];
    out[j] = c->kind == CUDAFFT_FEATURES_MEL ? m : cudafft_features_log(&impl->log, m);
  }
  out[c->n_mels] = c->energy != CUDAFFT_FEATURES_ENERGY_NONE
                       ? cudafft_features_energy_log(&impl->log, energy, impl->log_energy_floor)
                       : 0.0f;
}

static CudafftStatus
op_make_frames(void *ctx, uint64_t f0, uint64_t f1, uint64_t length, int ended)
{
  (void)ended;
  CpuFeatures *impl = ctx;
  for (uint64_t f = f0; f < f1; f++)
    for (unsigned ch = 0; ch < impl->config.channels; ch++)
      make_frame(impl, ch, f, length);
  return CUDAFFT_STATUS_OK;
}

/* Output units -------------------------------------------------------------------------------- */

static const float *
ring_row(const CpuFeatures *impl, unsigned ch, uint64_t f)
{
  return impl->ring +
         ((size_t)ch * impl->ring_frames + (size_t)(f % impl->ring_frames)) * impl->ring_values;
}

/* The floor of the range clamp over frames f0 .. f1 - 1 of channel ch: their largest finite
 * log-mel value - range; -INFINITY without a range. */
static float
range_floor(const CpuFeatures *impl, unsigned ch, uint64_t f0, uint64_t f1)
{
  const CudafftFeaturesConfig *c = &impl->config;
  if (c->kind == CUDAFFT_FEATURES_MEL || !(c->range > 0.0f))
    return -INFINITY;
  float max = -INFINITY;
  for (uint64_t f = f0; f < f1; f++) {
    const float *r = ring_row(impl, ch, f);
    for (unsigned j = 0; j < c->n_mels; j++)
      max = cudafft_features_finite_max(max, r[j]);
  }
  return max - c->range;
}

/* The base vector b of frame f (step 9) into b, the log-mel values clamped at lo. */
static void
base_vector(const CpuFeatures *impl, unsigned ch, uint64_t f, float lo, float *b)
{
  const CudafftFeaturesConfig *c = &impl->config;
  const float *r = ring_row(impl, ch, f);
  const unsigned m = c->n_mels;
  const int energy = c->energy != CUDAFFT_FEATURES_ENERGY_NONE;
  switch (c->kind) {
  case CUDAFFT_FEATURES_MEL:
    memcpy(b, r, m * sizeof *b);
    break;
  case CUDAFFT_FEATURES_LOG_MEL:
    if (energy)
      *b++ = r[m];
    for (unsigned j = 0; j < m; j++)
      b[j] = cudafft_features_normalise(r[j], lo, c->shift, c->scale);
    break;
  default: {
    float *l = impl->spectrum; /* free while units are written */
    for (unsigned j = 0; j < m; j++)
      l[j] = cudafft_features_normalise(r[j], lo, c->shift, c->scale);
    for (unsigned q = 0; q < c->n_mfcc; q++)
      b[q] = cudafft_features_cepstrum(impl->dct + (size_t)q * m, l, 1, m, impl->lifter[q]);
    if (energy)
      b[0] = r[m];
  }
  }
}

static uint64_t
max_u64(uint64_t a, uint64_t b)
{
  return a > b ? a : b;
}

/* Writes the features of frames o0 .. o1 - 1 of channel ch, which belong to a unit (the frames
 * the deltas see, from e0 to e1 exclusive, e1 CUDAFFT_FEATURES_UNKNOWN while the utterance
 * runs), each with its range clamp (per_frame: its own; else the unit's), to dst: frame o at
 * dst + (o - o0) frame_stride, feature i at + i feature_stride. */
static void
write_frames(CpuFeatures *impl, unsigned ch, uint64_t e0, uint64_t e1, uint64_t o0, uint64_t o1,
             int per_frame, void *dst, size_t frame_stride, size_t feature_stride)
{
  const CudafftFeaturesConfig *c = &impl->config;
  const size_t base = impl->shape.base_features;
  const int r = (int)impl->driver.t.delta_reach;
  const int64_t reach = 2 * (int64_t)r * (c->delta_order ? c->delta_order : 1);
  /* the frames whose base vectors the deltas read (clamped to the unit and to those made) */
  const uint64_t g0 = o0 - e0 > (uint64_t)reach ? o0 - (uint64_t)reach : e0;
  uint64_t g1 = o1 + (uint64_t)reach;
  g1 = g1 < e1 ? g1 : e1;
  g1 = g1 < impl->driver.made ? g1 : impl->driver.made;
  const float unit_lo = per_frame ? 0.0f : range_floor(impl, ch, e0, e1);
  for (uint64_t g = g0; g < g1; g++)
    base_vector(impl, ch, g, per_frame ? range_floor(impl, ch, g, g + 1) : unit_lo,
                impl->unit + (size_t)(g - g0) * base);
  /* unit-relative indices: the unit starts at 0, its values from g0 - e0 on */
  const int64_t frames = e1 == CUDAFFT_FEATURES_UNKNOWN ? INT64_MAX : (int64_t)(e1 - e0);
  const int64_t at = (int64_t)(g0 - e0);
  const int regression = c->delta_style == CUDAFFT_FEATURES_DELTAS_REGRESSION;
  /* the first-order deltas the second order reads: frames o0 - r .. o1 + r - 1 of the unit (their
   * own reach stays within the base vectors made) */
  const uint64_t d0 = max_u64(g0, o0 - (o0 - e0 < (uint64_t)r ? o0 - e0 : (uint64_t)r));
  const uint64_t d1 = o1 + (uint64_t)r < g1 ? o1 + (uint64_t)r : g1;
  if (c->delta_order == 2 && regression)
    for (uint64_t g = d0; g < d1; g++)
      for (size_t i = 0; i < base; i++)
        impl->deltas[(g - g0) * base + i] =
            cudafft_features_regression(impl->unit + i, base, at, INT64_MAX, (int64_t)(g - e0),
                                        frames, r, impl->regression_norm);
  const int half = c->precision == CUDAFFT_FEATURES_F16;
  for (uint64_t o = o0; o < o1; o++) {
    const int64_t t = (int64_t)(o - e0);
    const float *b = impl->unit + (size_t)(o - g0) * base;
    for (size_t i = 0; i < base * (1 + c->delta_order); i++) {
      const size_t order = i / base, feature = i % base;
      float value = b[feature];
      if (order == 1 && regression)
        value = cudafft_features_regression(impl->unit + feature, base, at, INT64_MAX, t, frames, r,
                                            impl->regression_norm);
      else if (order == 2 && regression)
        value = cudafft_features_regression(impl->deltas + feature, base, at, INT64_MAX, t, frames,
                                            r, impl->regression_norm);
      else if (order > 0)
        value = cudafft_features_savgol(impl->unit + feature, base, at, INT64_MAX, t, frames, r,
                                        impl->savgol[order - 1]);
      const size_t place = (size_t)(o - o0) * frame_stride + i * feature_stride;
      if (half)
        ((uint16_t *)dst)[place] = cudafft_features_half(value);
      else
        ((float *)dst)[place] = value;
    }
  }
}

/* Sets frames o0 .. o1 - 1 of a window (those past the stream's end) to pad_value. */
static void
write_padding(const CpuFeatures *impl, uint64_t o0, uint64_t o1, void *dst, size_t frame_stride,
              size_t feature_stride)
{
  const float value = impl->config.pad_value;
  const int half = impl->config.precision == CUDAFFT_FEATURES_F16;
  for (uint64_t o = o0; o < o1; o++)
    for (size_t i = 0; i < impl->shape.features; i++) {
      const size_t place = (size_t)(o - o0) * frame_stride + i * feature_stride;
      if (half)
        ((uint16_t *)dst)[place] = cudafft_features_half(value);
      else
        ((float *)dst)[place] = value;
    }
}

static CudafftStatus
op_write_units(void *ctx, const CudafftFeaturesUnits *units)
{
  CpuFeatures *impl = ctx;
  const CudafftFeaturesConfig *c = &impl->config;
  const size_t value_bytes = c->precision == CUDAFFT_FEATURES_F16 ? 2 : 4;
  const size_t d = impl->shape.features;
  unsigned char *out = (unsigned char *)impl->out + units->out_index * impl->shape.bytes;
  if (c->output == CUDAFFT_FEATURES_OUTPUT_FRAMES) {
    /* [channel][feature] per frame: frames impl->shape.bytes apart */
    const size_t frame_stride = impl->shape.bytes / value_bytes;
    for (unsigned ch = 0; ch < c->channels; ch++)
      write_frames(impl, ch, 0, units->kept, units->first, units->first + units->count, 1,
                   out + ch * d * value_bytes, frame_stride, 1);
    return CUDAFFT_STATUS_OK;
  }
  const size_t frames = impl->shape.frames; /* T */
  const int feature_major = c->layout == CUDAFFT_FEATURES_LAYOUT_FEATURE_MAJOR;
  const size_t frame_stride = feature_major ? 1 : d, feature_stride = feature_major ? frames : 1;
  for (uint64_t w = units->first; w < units->first + units->count; w++) {
    unsigned char *window = out + (size_t)(w - units->first) * impl->shape.bytes;
    const uint64_t e0 = c->output == CUDAFFT_FEATURES_OUTPUT_WINDOWS ? w * c->window_stride : 0;
    uint64_t e1 = e0 + frames;
    e1 = units->kept != CUDAFFT_FEATURES_UNKNOWN && units->kept < e1 ? units->kept : e1;
    for (unsigned ch = 0; ch < c->channels; ch++) {
      unsigned char *dst = window + (size_t)ch * frames * d * value_bytes;
      write_frames(impl, ch, e0, e1, e0, e1, 0, dst, frame_stride, feature_stride);
      write_padding(impl, e1, e0 + frames, dst + (size_t)(e1 - e0) * frame_stride * value_bytes,
                    frame_stride, feature_stride);
    }
  }
  return CUDAFFT_STATUS_OK;
}

static void
op_end_utterance(void *ctx)
{
  CpuFeatures *impl = ctx;
  impl->held = 0;
  impl->history_start = 0;
}

/* The table --------------------------------------------------------------------------------- */

static CudafftStatus
cpu_reset(void *p)
{
  CpuFeatures *impl = p;
  cudafft_features_driver_reset(&impl->driver);
  op_end_utterance(impl);
  impl->pushed = 0;
  impl->outputs_done = 0;
  return CUDAFFT_STATUS_OK;
}

static CudafftStatus
cpu_run(void *p, const CudafftFeaturesJob *job)
{
  CpuFeatures *impl = p;
  if (job->pushed != impl->pushed || job->outputs_done != impl->outputs_done)
    cpu_reset(impl); /* the front end forgot the stream */
  const CudafftFeaturesOps ops = {impl, op_append, op_make_frames, op_write_units,
                                  op_end_utterance};
  impl->out = job->out;
  size_t outputs = 0;
  const size_t frame_bytes = impl->config.channels * cudafft_sample_size(impl->config.format);
  CudafftStatus status = cudafft_features_drive(&impl->driver, &ops, job->in, job->samples,
                                                frame_bytes, 0, job->finish, &outputs);
  if (status == CUDAFFT_STATUS_OK && outputs != job->outputs)
    status = cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE,
                          "CPU backend: a features call wrote %zu outputs where %zu were due",
                          outputs, job->outputs);
  if (status != CUDAFFT_STATUS_OK) {
    cpu_reset(impl);
    return status;
  }
  impl->pushed = job->finish ? 0 : impl->pushed + job->samples;
  impl->outputs_done = job->finish ? 0 : impl->outputs_done + outputs;
  return CUDAFFT_STATUS_OK;
}

const CudafftFeaturesBackend cudafft_features_cpu_backend = {
    cpu_create, cudafft_cpu_destroy, cpu_run, cpu_reset, cudafft_cpu_stream};
