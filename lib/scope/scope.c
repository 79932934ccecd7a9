/* scope.c: the spectrum scope's front end. It validates every argument once, here; computes the
 * window, the layouts (bands, weighting gains, which band each row or column shows) and the
 * per-frame constants; and hands each frame to its backend (scope_backend.h). */
#include "device_pointer.h"
#include "scope_backend.h"

#include "backend_choice.h"
#include "scope_colormaps.h"
#include "scope_values.h"
#include "sizes.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A layout and the arrays it points to (owned). */
typedef struct {
  CudafftScopeLayout view;
  CudafftBandBins *band_bins;
  float *gains;
  int *map;
  double *centres;
} Layout;

struct CudafftScope {
  CudafftScopeConfig config; /* config.options: the latest options, which the next render uses */
  CudafftBackend backend;
  int device; /* the CUDA device it runs on, -1 for the CPU backend */
  const CudafftScopeBackend *ops;
  void *impl;
  CudafftScopeSpec spec;
  float *window;

  Layout layout; /* in use */
  Layout next;   /* made by set_options, in use from the next render */
  int has_next;
  int new_layout;               /* the next run starts the display afresh */
  int recolour;                 /* the colours changed since the last run */
  uint64_t frame;               /* frames drawn with the layout in use */
  float alpha, decay;           /* from the latest options */
  CudafftCheckedMemory checked; /* device pixels that passed (render_device) */
};

static void
layout_free(Layout *layout)
{
  free(layout->band_bins);
  free(layout->gains);
  free(layout->map);
  free(layout->centres);
  memset(layout, 0, sizeof *layout);
}

size_t
cudafft_scope_pixel_bytes(CudafftPixelFormat pixels)
{
  switch (pixels) {
  case CUDAFFT_PIXELS_RGBX:
  case CUDAFFT_PIXELS_BGRX:
  case CUDAFFT_PIXELS_XRGB:
  case CUDAFFT_PIXELS_XBGR:
    return 4;
  case CUDAFFT_PIXELS_RGB:
  case CUDAFFT_PIXELS_BGR:
    return 3;
  default:
    return 0;
  }
}

static int
finite_at_least(double v, double min)
{
  return isfinite(v) && v >= min;
}

static CudafftStatus
check_options(const CudafftScopeOptions *o)
{
  if ((unsigned)o->style >= CUDAFFT_SCOPE_STYLE_COUNT_)
    return cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE, "scope: unknown style %d", (int)o->style);
  if ((unsigned)o->scale >= CUDAFFT_SCALE_COUNT_)
    return cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE, "scope: unknown frequency scale %d",
                        (int)o->scale);
  if ((unsigned)o->weighting >= CUDAFFT_WEIGHTING_COUNT_)
    return cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE, "scope: unknown weighting %d",
                        (int)o->weighting);
  if ((unsigned)o->colormap >= CUDAFFT_COLORMAP_COUNT_)
    return cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE, "scope: unknown colormap %d",
                        (int)o->colormap);
  const unsigned b = o->bands_per_octave;
  if (b != 1 && b != 3 && b != 6 && b != 12 && b != 24)
    return cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE,
                        "scope: %u bands per octave (1, 3, 6, 12 or 24 are possible)", b);
  if (!finite_at_least(o->min_frequency, 0.0) || !finite_at_least(o->max_frequency, 0.0))
    return cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE,
                        "scope: frequencies %g Hz and %g Hz must be finite and not negative",
                        o->min_frequency, o->max_frequency);
  if (!isfinite(o->db_min) || !isfinite(o->db_max) || !(o->db_min < o->db_max))
    return cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE,
                        "scope: the colormap's range %g dB to %g dB is empty or not finite",
                        o->db_min, o->db_max);
  if (!finite_at_least(o->smoothing_ms, 0.0) || !finite_at_least(o->peak_hold_ms, 0.0) ||
      !finite_at_least(o->peak_decay_db_per_s, 0.0))
    return cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE,
                        "scope: smoothing %g ms, peak hold %g ms and peak decay %g dB/s must be "
                        "finite and not negative",
                        o->smoothing_ms, o->peak_hold_ms, o->peak_decay_db_per_s);
  return CUDAFFT_STATUS_OK;
}

static unsigned
hold_frames(const CudafftScopeConfig *config, const CudafftScopeOptions *o)
{
  const double frames = floor(o->peak_hold_ms / 1000.0 / config->frame_seconds + 0.5);
  if (!(frames >= 1.0))
    return 1;
  return frames > CUDAFFT_SCOPE_MAX_HOLD_FRAMES ? CUDAFFT_SCOPE_MAX_HOLD_FRAMES : (unsigned)frames;
}

/* Fills the map of a layout (cudafft/scope.h's drawing rules). */
static void
fill_map(const CudafftScopeConfig *config, const CudafftScopeOptions *o, Layout *layout)
{
  const CudafftScopeLayout *v = &layout->view;
  const uint64_t n = v->bands, h = v->lane_height, w = config->width;
  const int octave = o->scale == CUDAFFT_SCALE_OCTAVE;
  if (v->style == CUDAFFT_SCOPE_SPECTROGRAM) {
    for (uint64_t r = 0; r < h; r++) {
      const uint64_t j = h - 1 - r; /* from the bottom */
      layout->map[r] = (int)(octave ? (2 * j + 1) * n / (2 * h) : j);
    }
    return;
  }
  if (!octave) {
    for (uint64_t x = 0; x < w; x++)
      layout->map[x] = (int)x;
    return;
  }
  for (uint64_t b = 0; b < n; b++) {
    const uint64_t x0 = b * w / n, x1 = (b + 1) * w / n;
    const uint64_t span = x1 - x0, gap = span / 8;
    for (uint64_t x = x0; x < x1; x++)
      layout->map[x] = x - x0 < span - gap ? (int)b : -1;
  }
}

/* Makes the layout of options o; nothing is left behind on failure. */
static CudafftStatus
build_layout(const CudafftScopeConfig *config, const CudafftScopeOptions *o, Layout *out)
{
  memset(out, 0, sizeof *out);
  const unsigned lanes = o->multi_channel ? config->channels : 1;
  if (lanes > config->height)
    return cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE,
                        "scope: %u channel lanes need a pixel row each; the frame has %u rows",
                        lanes, config->height);
  const unsigned lane_height = config->height / lanes;
  CudafftBandLayout bands = {
      .scale = o->scale,
      .bands = o->style == CUDAFFT_SCOPE_SPECTROGRAM ? lane_height : config->width,
      .bands_per_octave = o->bands_per_octave,
      .min_frequency = o->min_frequency,
      .max_frequency = o->max_frequency,
  };
  CudafftStatus status = cudafft_band_layout_resolve(&bands, (double)config->rate);
  if (status != CUDAFFT_STATUS_OK)
    return status;
  const size_t count = cudafft_band_count(&bands);
  const size_t map_size = o->style == CUDAFFT_SCOPE_SPECTROGRAM ? lane_height : config->width;
  out->band_bins = malloc(count * sizeof *out->band_bins);
  out->gains = malloc((config->fft_size / 2 + 1) * sizeof *out->gains);
  out->map = malloc(map_size * sizeof *out->map);
  out->centres = malloc(count * sizeof *out->centres);
  if (!out->band_bins || !out->gains || !out->map || !out->centres) {
    layout_free(out);
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY,
                        "scope: cannot allocate a layout of %zu "
                        "bands",
                        count);
  }
  status = cudafft_band_bins(&bands, config->fft_size, (double)config->rate, out->band_bins);
  if (status == CUDAFFT_STATUS_OK)
    status =
        cudafft_weighting_gains(o->weighting, config->fft_size, (double)config->rate, out->gains);
  if (status == CUDAFFT_STATUS_OK)
    status = cudafft_band_edges(&bands, NULL, out->centres, NULL);
  if (status != CUDAFFT_STATUS_OK) {
    layout_free(out);
    return status;
  }
  CudafftScopeLayout *v = &out->view;
  v->style = o->style;
  v->lanes = lanes;
  v->lane_height = lane_height;
  v->bands = (unsigned)count;
  v->per_lane = o->multi_channel ? 1 : config->channels;
  v->band_bins = out->band_bins;
  v->gains = out->gains;
  v->map = out->map;
  v->hold = hold_frames(config, o);
  v->marker = (float)(lane_height / 64 > 1 ? lane_height / 64 : 1);
  fill_map(config, o, out);
  return CUDAFFT_STATUS_OK;
}

static int
same_layout(const CudafftScopeConfig *config, const CudafftScopeOptions *a,
            const CudafftScopeOptions *b)
{
  return a->style == b->style && !a->multi_channel == !b->multi_channel && a->scale == b->scale &&
         a->bands_per_octave == b->bands_per_octave && a->min_frequency == b->min_frequency &&
         a->max_frequency == b->max_frequency && a->weighting == b->weighting &&
         hold_frames(config, a) == hold_frames(config, b);
}

/* alpha and decay of the latest options. */
static void
frame_constants(CudafftScope *scope)
{
  const CudafftScopeOptions *o = &scope->config.options;
  const double dt = scope->config.frame_seconds;
  scope->alpha =
      o->smoothing_ms > 0.0f ? (float)(1.0 - exp(-dt / (o->smoothing_ms / 1000.0))) : 1.0f;
  scope->decay = (float)(o->peak_decay_db_per_s * dt);
}

static CudafftStatus
check_config(const CudafftScopeConfig *c)
{
  if (c->channels < 1 || c->channels > CUDAFFT_MAX_CHANNELS)
    return cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE, "scope: %u channels (1 to %d)", c->channels,
                        CUDAFFT_MAX_CHANNELS);
  if (c->rate < 1)
    return cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE, "scope: sample rate 0");
  if ((unsigned)c->format >= CUDAFFT_SAMPLE_COUNT_)
    return cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE, "scope: unknown sample format %d",
                        (int)c->format);
  if (!cudafft_is_fused_size(c->fft_size))
    return cudafft_fail(CUDAFFT_STATUS_INVALID_SIZE,
                        "scope: fft_size %zu is not a power of two from %d to %d", c->fft_size,
                        CUDAFFT_FUSED_MIN_SIZE, CUDAFFT_MAX_SIZE);
  if (c->max_frames < 1 || c->max_frames > CUDAFFT_SCOPE_MAX_FRAMES)
    return cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE, "scope: max_frames %zu (1 to %zu)",
                        c->max_frames, CUDAFFT_SCOPE_MAX_FRAMES);
  if (c->width < 1 || c->height < 1 || c->width > CUDAFFT_SCOPE_MAX_SIDE ||
      c->height > CUDAFFT_SCOPE_MAX_SIDE)
    return cudafft_fail(CUDAFFT_STATUS_INVALID_SIZE,
                        "scope: a frame of %u x %u pixels (1 to %d "
                        "each side)",
                        c->width, c->height, CUDAFFT_SCOPE_MAX_SIDE);
  const size_t bpp = cudafft_scope_pixel_bytes(c->pixels);
  if (bpp == 0)
    return cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE, "scope: unknown pixel format %d",
                        (int)c->pixels);
  /* 4-byte pixels are written 4 bytes at a time on the device: their rows must stay aligned */
  if (c->stride < (size_t)c->width * bpp || c->stride > ((size_t)1 << 30) / c->height ||
      (bpp == 4 && c->stride % 4 != 0))
    return cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE,
                        "scope: stride %zu for rows of %u pixels of %zu bytes (a multiple of 4 "
                        "for 4-byte pixels)",
                        c->stride, c->width, bpp);
  if (!isfinite(c->frame_seconds) || c->frame_seconds <= 0.0 || c->frame_seconds > 3600.0)
    return cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE, "scope: frame duration %g s",
                        c->frame_seconds);
  return check_options(&c->options);
}

/* The periodic Hann window, computed in double and rounded once; and the power normalisation
 * 4 / (n sum w^2) from the rounded values. */
static float *
make_window(size_t n, float *norm)
{
  float *w = malloc(n * sizeof *w);
  if (!w)
    return NULL;
  const double pi = 3.14159265358979323846;
  double sum = 0.0;
  for (size_t i = 0; i < n; i++) {
    w[i] = (float)(0.5 - 0.5 * cos(2.0 * pi * (double)i / (double)n));
    sum += (double)w[i] * (double)w[i];
  }
  *norm = (float)(4.0 / ((double)n * sum));
  return w;
}

CUDAFFT_DEFINE_TRY_BACKEND(try_backend, CudafftScope, CudafftScopeSpec, cudafft_scope_cpu_backend,
                           cudafft_scope_cuda_backend)

void
cudafft_scope_destroy(CudafftScope *scope)
{
  if (!scope)
    return;
  if (scope->ops)
    scope->ops->destroy(scope->impl);
  layout_free(&scope->layout);
  layout_free(&scope->next);
  free(scope->window);
  free(scope);
}

CudafftStatus
cudafft_scope_create(CudafftScope **scope_out, CudafftBackend backend, int device_id,
                     const CudafftScopeConfig *config)
{
  if (!scope_out || !config)
    return cudafft_fail(CUDAFFT_STATUS_NULL_POINTER, "cudafft_scope_create: %s is NULL",
                        !scope_out ? "scope" : "config");
  *scope_out = NULL;
  CudafftStatus status = check_config(config);
  if (status == CUDAFFT_STATUS_OK)
    status = cudafft_check_backend(backend, device_id);
  if (status != CUDAFFT_STATUS_OK)
    return status;
  CudafftScope *scope = calloc(1, sizeof *scope);
  if (!scope)
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY, "scope: cannot allocate a scope");
  scope->config = *config;
  status = build_layout(config, &config->options, &scope->layout);
  if (status != CUDAFFT_STATUS_OK) {
    cudafft_scope_destroy(scope);
    return status;
  }
  CudafftScopeSpec *spec = &scope->spec;
  scope->window = make_window(config->fft_size, &spec->norm);
  if (!scope->window) {
    cudafft_scope_destroy(scope);
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY, "scope: cannot allocate a window");
  }
  spec->channels = config->channels;
  spec->format = config->format;
  spec->frame_bytes = config->channels * cudafft_sample_bytes(config->format);
  spec->fft_size = config->fft_size;
  spec->bins = config->fft_size / 2 + 1;
  spec->history = 1;
  while (spec->history < config->fft_size + config->max_frames)
    spec->history *= 2;
  spec->max_frames = config->max_frames;
  spec->max_ffts = cudafft_scope_fft_count(config->max_frames, config->fft_size);
  spec->width = config->width;
  spec->height = config->height;
  spec->pixels = config->pixels;
  spec->stride = config->stride;
  spec->window = scope->window;
  spec->device_id = device_id;
  status = cudafft_create_on_backend(backend, device_id, try_backend, scope, &scope->spec,
                                     &scope->backend, &scope->device);
  if (status != CUDAFFT_STATUS_OK) {
    scope->ops = NULL; /* the failed create left nothing */
    cudafft_scope_destroy(scope);
    return status;
  }
  scope->new_layout = 1;
  frame_constants(scope);
  *scope_out = scope;
  return CUDAFFT_STATUS_OK;
}

CudafftBackend
cudafft_scope_get_backend(const CudafftScope *scope)
{
  return scope ? scope->backend : CUDAFFT_BACKEND_AUTO;
}

int
cudafft_scope_get_device(const CudafftScope *scope)
{
  return scope ? scope->device : -1;
}

CudafftStatus
cudafft_scope_set_options(CudafftScope *scope, const CudafftScopeOptions *options)
{
  if (!scope || !options)
    return cudafft_fail(CUDAFFT_STATUS_NULL_POINTER, "cudafft_scope_set_options: %s is NULL",
                        !scope ? "scope" : "options");
  CudafftStatus status = check_options(options);
  if (status != CUDAFFT_STATUS_OK)
    return status;
  const CudafftScopeOptions *latest = &scope->config.options;
  if (!same_layout(&scope->config, latest, options)) {
    Layout made;
    status = build_layout(&scope->config, options, &made);
    if (status != CUDAFFT_STATUS_OK)
      return status;
    layout_free(&scope->next);
    scope->next = made;
    scope->has_next = 1;
  }
  if (latest->db_min != options->db_min || latest->db_max != options->db_max ||
      latest->colormap != options->colormap)
    scope->recolour = 1;
  scope->config.options = *options;
  frame_constants(scope);
  return CUDAFFT_STATUS_OK;
}

size_t
cudafft_scope_bands(const CudafftScope *scope, double *centres)
{
  if (!scope)
    return 0;
  const Layout *layout = scope->has_next ? &scope->next : &scope->layout;
  if (centres)
    memcpy(centres, layout->centres, layout->view.bands * sizeof *centres);
  return layout->view.bands;
}

CudafftStatus
cudafft_scope_reset(CudafftScope *scope)
{
  if (!scope)
    return cudafft_fail(CUDAFFT_STATUS_NULL_POINTER, "cudafft_scope_reset: scope is NULL");
  scope->new_layout = 1;
  scope->frame = 0;
  cudafft_checked_memory_forget(&scope->checked);
  return scope->ops->reset(scope->impl);
}

/* cudafft_scope_render() and _render_device() (`call`): the checks both share, then a frame into
 * host pixels (device_pitch 0) or device pixels. */
static CudafftStatus
render(const char *call, CudafftScope *scope, const void *in, size_t frames, void *pixels,
       size_t device_pitch)
{
  if (!scope || !pixels || (frames > 0 && !in))
    return cudafft_fail(CUDAFFT_STATUS_NULL_POINTER, "%s: %s is NULL", call,
                        !scope    ? "scope"
                        : !pixels ? "pixels"
                                  : "input");
  if (frames > scope->config.max_frames)
    return cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE, "%s: %zu frames, more than max_frames (%zu)",
                        call, frames, scope->config.max_frames);
  if (scope->has_next) {
    layout_free(&scope->layout);
    scope->layout = scope->next;
    memset(&scope->next, 0, sizeof scope->next);
    scope->has_next = 0;
    scope->new_layout = 1;
    scope->frame = 0;
  }
  const CudafftScopeOptions *o = &scope->config.options;
  const unsigned ffts = cudafft_scope_fft_count(frames, scope->config.fft_size);
  const CudafftScopeJob job = {
      .in = in,
      .frames = frames,
      .ffts = ffts,
      .layout = &scope->layout.view,
      .new_layout = scope->new_layout,
      .frame = scope->frame,
      .inv_count = 1.0f / (float)(scope->layout.view.per_lane * ffts),
      .alpha = scope->alpha,
      .decay = scope->decay,
      .db_min = o->db_min,
      .db_max = o->db_max,
      .colormap = cudafft_scope_colormap_table(o->colormap),
      .recolour = scope->recolour,
      .pixels = pixels,
      .device_pitch = device_pitch,
  };
  const CudafftStatus status = scope->ops->run(scope->impl, &job);
  if (status != CUDAFFT_STATUS_OK) {
    scope->ops->reset(scope->impl);
    scope->new_layout = 1;
    scope->frame = 0;
    return status;
  }
  scope->new_layout = 0;
  scope->recolour = 0;
  scope->frame++;
  return CUDAFFT_STATUS_OK;
}

CudafftStatus
cudafft_scope_render(CudafftScope *scope, const void *in, size_t frames, void *pixels)
{
  return render("cudafft_scope_render", scope, in, frames, pixels, 0);
}

CudafftStatus
cudafft_scope_render_device(CudafftScope *scope, const void *in, size_t frames, void *pixels,
                            size_t pitch)
{
  static const char call[] = "cudafft_scope_render_device";
  if (scope && scope->backend != CUDAFFT_BACKEND_CUDA)
    return cudafft_fail(CUDAFFT_STATUS_UNSUPPORTED,
                        "%s: the scope runs on the CPU backend, which draws into host memory only",
                        call);
  if (scope && pixels) {
    const size_t row =
        (size_t)scope->config.width * cudafft_scope_pixel_bytes(scope->config.pixels);
    if (pitch < row)
      return cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE,
                          "%s: pitch %zu is less than a row of %u pixels of %zu bytes (%zu)", call,
                          pitch, scope->config.width,
                          cudafft_scope_pixel_bytes(scope->config.pixels), row);
    const size_t rows = scope->config.height;
    if (rows > 0 && pitch > (SIZE_MAX - row) / rows)
      return cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE, "%s: pitch %zu is too large", call, pitch);
    const CudafftStatus placed =
        cudafft_device_pointer_check(&scope->checked, scope->device, pixels,
                                     rows > 0 ? (rows - 1) * pitch + row : 0, call, "pixel buffer");
    if (placed != CUDAFFT_STATUS_OK)
      return placed;
  }
  return render(call, scope, in, frames, pixels, pitch);
}
