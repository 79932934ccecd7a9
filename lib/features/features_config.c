/* features_config.c: a features configuration's defaults, its validation (every field, with a
 * message naming it and its bounds), its output shape and its empty mel filters. */
#include "errors.h"
#include "features_tables.h"
#include "features_timeline.h"
#include "sizes.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void
cudafft_features_config_init(CudafftFeaturesConfig *c)
{
  if (!c)
    return;
  memset(c, 0, sizeof *c);
  c->kind = CUDAFFT_FEATURES_MEL;
  c->sample_rate = 16000.0;
  c->channels = 1;
  c->format = CUDAFFT_SAMPLE_F32;
  c->sample_scale = 1.0f;
  c->fft_size = 400;
  c->win_length = 0;
  c->hop = 160;
  c->window = CUDAFFT_FEATURES_WINDOW_HANN;
  c->span = CUDAFFT_FEATURES_SPAN_FFT;
  c->edges = CUDAFFT_FEATURES_EDGES_CENTER;
  c->pad = CUDAFFT_FEATURES_PAD_REFLECT;
  c->preemphasis = CUDAFFT_FEATURES_PREEMPHASIS_NONE;
  c->preemph_coeff = 0.97f;
  c->power = 2;
  c->n_mels = 128;
  c->mel_scale = CUDAFFT_MEL_SCALE_SLANEY;
  c->filters = CUDAFFT_MEL_FILTERS_HZ;
  c->mel_norm = CUDAFFT_MEL_NORM_SLANEY;
  c->f_min = 0.0;
  c->f_max = 0.0;
  c->log = CUDAFFT_FEATURES_LOG10;
  c->log_floor = 1e-10;
  c->db_ref = 1.0;
  c->range = 0.0f;
  c->shift = 0.0f;
  c->scale = 1.0f;
  c->energy = CUDAFFT_FEATURES_ENERGY_NONE;
  c->n_mfcc = 20;
  c->lifter_kind = CUDAFFT_FEATURES_LIFTER_KALDI;
  c->delta_width = 9;
  c->delta_style = CUDAFFT_FEATURES_DELTAS_REGRESSION;
  c->output = CUDAFFT_FEATURES_OUTPUT_FRAMES;
  c->window_frames = 100;
  c->window_stride = 100;
  c->chunk_samples = 480000;
  c->layout = CUDAFFT_FEATURES_LAYOUT_FRAME_MAJOR;
  c->precision = CUDAFFT_FEATURES_F32;
  c->pad_partial = 1;
  c->pad_value = 0.0f;
}

#define FAIL_SIZE(...) cudafft_fail(CUDAFFT_STATUS_INVALID_SIZE, "features: " __VA_ARGS__)
#define FAIL_VALUE(...) cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE, "features: " __VA_ARGS__)

static int
finite_positive(double v)
{
  return isfinite(v) && v > 0.0;
}

/* The enums, each against its count. */
static CudafftStatus
check_enums(const CudafftFeaturesConfig *c)
{
  const struct {
    unsigned value, count;
    const char *name;
  } enums[] = {
      {(unsigned)c->kind, CUDAFFT_FEATURES_KIND_COUNT_, "kind"},
      {(unsigned)c->window, CUDAFFT_FEATURES_WINDOW_COUNT_, "window"},
      {(unsigned)c->span, CUDAFFT_FEATURES_SPAN_COUNT_, "span"},
      {(unsigned)c->edges, CUDAFFT_FEATURES_EDGES_COUNT_, "edges"},
      {(unsigned)c->pad, CUDAFFT_FEATURES_PAD_COUNT_, "pad"},
      {(unsigned)c->preemphasis, CUDAFFT_FEATURES_PREEMPHASIS_COUNT_, "preemphasis"},
      {(unsigned)c->mel_scale, CUDAFFT_MEL_SCALE_COUNT_, "mel_scale"},
      {(unsigned)c->filters, CUDAFFT_MEL_FILTERS_COUNT_, "filters"},
      {(unsigned)c->mel_norm, CUDAFFT_MEL_NORM_COUNT_, "mel_norm"},
      {(unsigned)c->log, CUDAFFT_FEATURES_LOG_COUNT_, "log"},
      {(unsigned)c->energy, CUDAFFT_FEATURES_ENERGY_COUNT_, "energy"},
      {(unsigned)c->lifter_kind, CUDAFFT_FEATURES_LIFTER_COUNT_, "lifter_kind"},
      {(unsigned)c->delta_style, CUDAFFT_FEATURES_DELTAS_COUNT_, "delta_style"},
      {(unsigned)c->output, CUDAFFT_FEATURES_OUTPUT_COUNT_, "output"},
      {(unsigned)c->layout, CUDAFFT_FEATURES_LAYOUT_COUNT_, "layout"},
      {(unsigned)c->precision, CUDAFFT_FEATURES_PRECISION_COUNT_, "precision"},
  };
  for (size_t i = 0; i < sizeof enums / sizeof enums[0]; i++)
    if (enums[i].value >= enums[i].count)
      return FAIL_VALUE("unknown %s %u", enums[i].name, enums[i].value);
  return CUDAFFT_STATUS_OK;
}

/* The stream and the frames (steps 1 and 2). */
static CudafftStatus
check_framing(const CudafftFeaturesConfig *c)
{
  if (c->channels == 0 || c->channels > CUDAFFT_MAX_CHANNELS)
    return FAIL_VALUE("%u channels is not in 1..%d", c->channels, CUDAFFT_MAX_CHANNELS);
  if ((unsigned)c->format >= CUDAFFT_SAMPLE_COUNT_ || c->format == CUDAFFT_SAMPLE_S24)
    return FAIL_VALUE("takes S16, S32, F32 or F64 samples, not format %d", (int)c->format);
  if (!finite_positive(c->sample_rate) || c->sample_rate > 1e7)
    return FAIL_VALUE("sample rate %g Hz is not in (0, 1e7]", c->sample_rate);
  if (!finite_positive(c->sample_scale))
    return FAIL_VALUE("sample_scale %g is not a positive number", (double)c->sample_scale);
  const CudafftStatus size = cudafft_check_size(c->fft_size, "features: fft size");
  if (size != CUDAFFT_STATUS_OK)
    return size;
  if (c->win_length > c->fft_size)
    return FAIL_SIZE("window length %zu is above the fft size %zu (it must fit the transform; "
                     "raise fft_size)",
                     c->win_length, c->fft_size);
  if (c->hop == 0 || c->hop > CUDAFFT_FEATURES_MAX_HOP)
    return FAIL_SIZE("hop %zu is not in 1..%zu samples", c->hop, CUDAFFT_FEATURES_MAX_HOP);
  if (!(c->preemph_coeff >= 0.0f && c->preemph_coeff <= 1.0f))
    return FAIL_VALUE("pre-emphasis coefficient %g is not in 0..1", (double)c->preemph_coeff);
  if (!(c->dither >= 0.0f) || !isfinite(c->dither))
    return FAIL_VALUE("dither %g is not a finite number >= 0", (double)c->dither);
  if (c->normalized < 0 || c->normalized > 2)
    return FAIL_VALUE("normalized %d is not 0 (none), 1 (by n) or 2 (by the window's energy)",
                      c->normalized);
  if (c->normalized == 2 &&
      cudafft_features_window_energy(c) == 0.0) /* a 2-point symmetric Hann: 1/0 */
    return FAIL_VALUE("normalized 2 divides by the window's energy, which is 0 for this "
                      "%zu-point window: use a longer or another window, or normalized 0 or 1",
                      c->win_length ? c->win_length : c->fft_size);
  if (c->power != 1 && c->power != 2)
    return FAIL_VALUE("power %u is neither 1 (magnitude) nor 2 (power)", c->power);
  return CUDAFFT_STATUS_OK;
}

/* The mel bank, the log and the energy (steps 5 to 7). */
static CudafftStatus
check_mel(const CudafftFeaturesConfig *c)
{
  if (c->n_mels == 0 || c->n_mels > CUDAFFT_FEATURES_MAX_MELS)
    return FAIL_SIZE("%u mel bands is not in 1..%d", c->n_mels, CUDAFFT_FEATURES_MAX_MELS);
  const double nyquist = 0.5 * c->sample_rate, high = cudafft_features_f_high(c);
  if (!isfinite(c->f_min) || !isfinite(c->f_max) || c->f_min < 0.0)
    return FAIL_VALUE("f_min %g Hz and f_max %g Hz must be finite, f_min >= 0", c->f_min, c->f_max);
  if (high > nyquist * (1.0 + 1e-12))
    return FAIL_VALUE("f_max %g Hz is above the Nyquist frequency %g Hz (half the rate %g Hz)",
                      high, nyquist, c->sample_rate);
  if (!(c->f_min < high))
    return FAIL_VALUE("f_min %g Hz is not below the upper band edge %g Hz (f_max %g)", c->f_min,
                      high, c->f_max);
  if (c->kind == CUDAFFT_FEATURES_MEL)
    return c->energy == CUDAFFT_FEATURES_ENERGY_NONE
               ? CUDAFFT_STATUS_OK
               : FAIL_VALUE("an energy needs log-mel or MFCC features (its log), not mel");
  if (!finite_positive(c->log_floor))
    return FAIL_VALUE("log floor %g is not a positive number", c->log_floor);
  if (c->log == CUDAFFT_FEATURES_DB && !finite_positive(c->db_ref))
    return FAIL_VALUE("dB reference %g is not a positive number", c->db_ref);
  if (!(c->range >= 0.0f) || !isfinite(c->range))
    return FAIL_VALUE("range %g is not a finite number >= 0 (0: none)", (double)c->range);
  if (!isfinite(c->shift) || !isfinite(c->scale))
    return FAIL_VALUE("shift %g and scale %g must be finite", (double)c->shift, (double)c->scale);
  if (c->energy != CUDAFFT_FEATURES_ENERGY_NONE && c->log != CUDAFFT_FEATURES_LN_ADD &&
      c->log != CUDAFFT_FEATURES_LN_GUARD)
    return FAIL_VALUE("an energy is a natural log: it needs log LN_ADD or LN_GUARD");
  if (!(c->energy_floor >= 0.0f) || !isfinite(c->energy_floor))
    return FAIL_VALUE("energy floor %g is not a finite number >= 0", (double)c->energy_floor);
  return CUDAFFT_STATUS_OK;
}

/* MFCC, deltas and the output (step 8 on). */
static CudafftStatus
check_output(const CudafftFeaturesConfig *c)
{
  if (c->kind == CUDAFFT_FEATURES_MFCC) {
    if (c->n_mfcc == 0 || c->n_mfcc > c->n_mels)
      return FAIL_SIZE("%u MFCC coefficients is not in 1..%u (the mel bands)", c->n_mfcc,
                       c->n_mels);
    if (!(c->lifter >= 0.0f) || !isfinite(c->lifter))
      return FAIL_VALUE("lifter %g is not a finite number >= 0 (0: none)", (double)c->lifter);
  }
  if (c->delta_order > 2)
    return FAIL_VALUE("delta order %u is not 0, 1 or 2", c->delta_order);
  if (c->delta_order && (c->delta_width < 3 || c->delta_width % 2 == 0 ||
                         c->delta_width > CUDAFFT_FEATURES_MAX_DELTA_WIDTH))
    return FAIL_VALUE("delta width %u is not odd in 3..%d", c->delta_width,
                      CUDAFFT_FEATURES_MAX_DELTA_WIDTH);
  if (!isfinite(c->pad_value))
    return FAIL_VALUE("pad value %g is not finite", (double)c->pad_value);
  if (c->output == CUDAFFT_FEATURES_OUTPUT_WINDOWS &&
      (c->window_frames == 0 || c->window_frames > CUDAFFT_FEATURES_MAX_WINDOW_FRAMES ||
       c->window_stride == 0 || c->window_stride > CUDAFFT_FEATURES_MAX_WINDOW_FRAMES))
    return FAIL_SIZE("windows of %zu frames every %zu frames: both must be in 1..%zu",
                     c->window_frames, c->window_stride, CUDAFFT_FEATURES_MAX_WINDOW_FRAMES);
  if (c->output == CUDAFFT_FEATURES_OUTPUT_CHUNKS) {
    if (c->chunk_samples == 0 || c->chunk_samples > CUDAFFT_FEATURES_MAX_CHUNK_SAMPLES)
      return FAIL_SIZE("chunks of %zu samples: not in 1..%zu", c->chunk_samples,
                       CUDAFFT_FEATURES_MAX_CHUNK_SAMPLES);
    const CudafftFeaturesTimeline t = cudafft_features_timeline(c);
    if (cudafft_features_chunk_frames(&t) == 0)
      return FAIL_SIZE("a chunk of %zu samples holds no frame of %lld samples", c->chunk_samples,
                       (long long)t.span);
  }
  return CUDAFFT_STATUS_OK;
}

static size_t
base_features(const CudafftFeaturesConfig *c)
{
  if (c->kind == CUDAFFT_FEATURES_MFCC)
    return c->n_mfcc;
  return c->n_mels +
         (c->kind == CUDAFFT_FEATURES_LOG_MEL && c->energy != CUDAFFT_FEATURES_ENERGY_NONE);
}

/* Output sizes are capped so that byte counts never overflow and one output fits a device job. */
#define MAX_OUTPUT_VALUES ((size_t)1 << 30)

CudafftStatus
cudafft_features_shape(const CudafftFeaturesConfig *c, CudafftFeaturesShape *shape)
{
  if (!c)
    return cudafft_fail(CUDAFFT_STATUS_NULL_POINTER, "features: config is NULL");
  CudafftStatus status = check_enums(c);
  if (status == CUDAFFT_STATUS_OK)
    status = check_framing(c);
  if (status == CUDAFFT_STATUS_OK)
    status = check_mel(c);
  if (status == CUDAFFT_STATUS_OK)
    status = check_output(c);
  if (status != CUDAFFT_STATUS_OK)
    return status;
  const CudafftFeaturesTimeline t = cudafft_features_timeline(c);
  CudafftFeaturesShape s;
  s.base_features = base_features(c);
  s.features = s.base_features * (1 + c->delta_order);
  s.frames = c->output == CUDAFFT_FEATURES_OUTPUT_FRAMES    ? 1
             : c->output == CUDAFFT_FEATURES_OUTPUT_WINDOWS ? c->window_frames
                                                            : cudafft_features_chunk_frames(&t);
  const double values = (double)c->channels * (double)s.frames * (double)s.features;
  if (values > (double)MAX_OUTPUT_VALUES)
    return FAIL_SIZE("one output would hold %.0f values (%u channels x %zu frames x %zu "
                     "features); at most %zu",
                     values, c->channels, s.frames, s.features, MAX_OUTPUT_VALUES);
  s.values = c->channels * s.frames * s.features;
  s.bytes = s.values * (c->precision == CUDAFFT_FEATURES_F16 ? 2 : 4);
  s.span = (size_t)t.span;
  if (shape)
    *shape = s;
  return CUDAFFT_STATUS_OK;
}

CudafftStatus
cudafft_features_empty_filters(const CudafftFeaturesConfig *c, unsigned *filters, unsigned capacity,
                               unsigned *count)
{
  if (!c || !count || (capacity > 0 && !filters))
    return cudafft_fail(CUDAFFT_STATUS_NULL_POINTER,
                        "cudafft_features_empty_filters: config, count or filters is NULL");
  *count = 0;
  const CudafftStatus status = cudafft_features_shape(c, NULL);
  if (status != CUDAFFT_STATUS_OK)
    return status;
  const size_t bins = c->fft_size / 2 + 1;
  double *row = malloc(bins * sizeof *row);
  if (!row)
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY, "cannot allocate %zu mel weights", bins);
  for (unsigned j = 0; j < c->n_mels; j++) {
    cudafft_features_filter_row(c, j, row);
    int empty = 1;
    for (size_t k = 0; k < bins && empty; k++)
      empty = !(row[k] > 0.0);
    if (empty) {
      if (*count < capacity)
        filters[*count] = j;
      (*count)++;
    }
  }
  free(row);
  return CUDAFFT_STATUS_OK;
}
