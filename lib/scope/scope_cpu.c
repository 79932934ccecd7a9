/* scope_cpu.c: the spectrum scope's CPU backend, on FFTW single precision and the formulas of
 * scope_values.h: the same pixels as the CUDA backend (cudafft/scope.h), drawn on the host. The
 * spectrogram keeps its columns both as levels and as pixels, so that a frame costs one new column
 * and two copies per row; the columns are recoloured only when the colours change. */
#include "errors.h"
#include "fftw_planner.h"
#include "scope_backend.h"
#include "scope_values.h"

#include <fftw3.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  CudafftScopeSpec spec;
  size_t bpp;
  CudafftScopeOffsets offsets;
  float *history; /* channels rows of spec.history samples, a ring */
  size_t newest;  /* ring position after the newest sample (counts on; masked on use) */
  fftwf_plan plan;
  float *real;
  fftwf_complex *spectrum;
  float *power; /* channels x max_ffts rows of bins */

  /* The display state of the layout in use: lanes x bands cells. */
  size_t cells;
  unsigned hold;
  float *smoothed, *level, *decayed, *peak, *held; /* held: hold rows of cells */
  float *columns;                                  /* spectrogram: rows x width levels */
  uint8_t *column_pixels;                          /* and their pixels */
  float *row_rgb;                                  /* bars: lane_height colours */
} CpuScope;

static void
free_state(CpuScope *s)
{
  free(s->smoothed);
  free(s->level);
  free(s->decayed);
  free(s->peak);
  free(s->held);
  free(s->columns);
  free(s->column_pixels);
  free(s->row_rgb);
  s->smoothed = s->level = s->decayed = s->peak = s->held = s->columns = s->row_rgb = NULL;
  s->column_pixels = NULL;
  s->cells = 0;
}

static void
cpu_destroy(void *impl)
{
  CpuScope *s = impl;
  if (!s)
    return;
  if (s->plan) {
    cudafft_fftw_planner_lock();
    fftwf_destroy_plan(s->plan);
    cudafft_fftw_planner_unlock();
  }
  fftwf_free(s->real);
  fftwf_free(s->spectrum);
  free(s->history);
  free(s->power);
  free_state(s);
  free(s);
}

static CudafftStatus
cpu_create(const CudafftScopeSpec *spec, void **impl)
{
  *impl = NULL;
  CpuScope *s = calloc(1, sizeof *s);
  if (!s)
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY, "CPU scope: cannot allocate a scope");
  s->spec = *spec;
  s->bpp = cudafft_scope_pixel_bytes(spec->pixels);
  s->offsets = cudafft_scope_offsets(spec->pixels);
  s->history = calloc((size_t)spec->channels * spec->history, sizeof *s->history);
  s->power = malloc((size_t)spec->channels * spec->max_ffts * spec->bins * sizeof *s->power);
  s->real = fftwf_malloc(spec->fft_size * sizeof *s->real);
  s->spectrum = fftwf_malloc(spec->bins * sizeof *s->spectrum);
  if (!s->history || !s->power || !s->real || !s->spectrum) {
    cpu_destroy(s);
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY,
                        "CPU scope: cannot allocate the history of %u channels of %zu samples",
                        spec->channels, spec->history);
  }
  cudafft_fftw_planner_lock();
  s->plan = fftwf_plan_dft_r2c_1d((int)spec->fft_size, s->real, s->spectrum, FFTW_ESTIMATE);
  cudafft_fftw_planner_unlock();
  if (!s->plan) {
    cpu_destroy(s);
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY,
                        "CPU scope: FFTW could not plan a %zu-point real transform",
                        spec->fft_size);
  }
  *impl = s;
  return CUDAFFT_STATUS_OK;
}

static void
fill(float *p, size_t n, float v)
{
  for (size_t i = 0; i < n; i++)
    p[i] = v;
}

/* Allocates and resets the display state for a layout. */
static CudafftStatus
start_layout(CpuScope *s, const CudafftScopeLayout *layout)
{
  free_state(s);
  const size_t cells = (size_t)layout->lanes * layout->bands;
  const size_t rows = (size_t)layout->lanes * layout->lane_height;
  s->smoothed = calloc(cells, sizeof *s->smoothed);
  s->level = malloc(cells * sizeof *s->level);
  if (layout->style == CUDAFFT_SCOPE_BARS) {
    s->decayed = malloc(cells * sizeof *s->decayed);
    s->peak = malloc(cells * sizeof *s->peak);
    s->held = malloc(cells * layout->hold * sizeof *s->held);
    s->row_rgb = malloc((size_t)layout->lane_height * 3 * sizeof *s->row_rgb);
  } else {
    s->columns = malloc(rows * s->spec.width * sizeof *s->columns);
    s->column_pixels = malloc(rows * s->spec.width * s->bpp);
  }
  const int bars = layout->style == CUDAFFT_SCOPE_BARS;
  if (!s->smoothed || !s->level ||
      (bars ? !s->decayed || !s->peak || !s->held || !s->row_rgb
            : !s->columns || !s->column_pixels)) {
    free_state(s);
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY,
                        "CPU scope: cannot allocate the state of %zu bands", cells);
  }
  s->cells = cells;
  s->hold = layout->hold;
  fill(s->level, cells, CUDAFFT_SCOPE_FLOOR_DB);
  if (bars) {
    fill(s->decayed, cells, CUDAFFT_SCOPE_FLOOR_DB);
    fill(s->peak, cells, CUDAFFT_SCOPE_FLOOR_DB);
    fill(s->held, cells * layout->hold, CUDAFFT_SCOPE_FLOOR_DB);
  } else {
    fill(s->columns, rows * s->spec.width, CUDAFFT_SCOPE_FLOOR_DB);
  }
  return CUDAFFT_STATUS_OK;
}

static void
append(CpuScope *s, const CudafftScopeJob *job)
{
  const CudafftScopeSpec *spec = &s->spec;
  const size_t mask = spec->history - 1;
  for (size_t j = 0; j < job->frames; j++)
    for (unsigned c = 0; c < spec->channels; c++)
      s->history[c * spec->history + ((s->newest + j) & mask)] = cudafft_sample_float(
          spec->format, job->in, j * spec->channels + c, CUDAFFT_INT_SCALE_POW2);
  s->newest += job->frames;
}

/* Every channel's FFTs: power rows c ffts + j. */
static void
transform(CpuScope *s, const CudafftScopeJob *job)
{
  const CudafftScopeSpec *spec = &s->spec;
  const size_t n = spec->fft_size, mask = spec->history - 1;
  for (unsigned c = 0; c < spec->channels; c++) {
    const float *row = s->history + c * spec->history;
    for (unsigned j = 0; j < job->ffts; j++) {
      const size_t start = cudafft_scope_fft_start(s->newest, job->frames, job->ffts, j, n, mask);
      for (size_t i = 0; i < n; i++)
        s->real[i] = row[(start + i) & mask] * spec->window[i];
      fftwf_execute(s->plan);
      float *power = s->power + ((size_t)c * job->ffts + j) * spec->bins;
      for (size_t k = 0; k < spec->bins; k++)
        power[k] = cudafft_scope_bin_power(s->spectrum[k][0], s->spectrum[k][1], spec->norm);
    }
  }
}

/* Each lane's bands: power, smoothing, level, and (bars) peak. */
static void
update_bands(CpuScope *s, const CudafftScopeJob *job)
{
  const CudafftScopeLayout *layout = job->layout;
  const unsigned slot = (unsigned)(job->frame % layout->hold);
  const unsigned count = layout->per_lane * job->ffts;
  for (unsigned lane = 0; lane < layout->lanes; lane++) {
    const float *power = s->power + (size_t)lane * count * s->spec.bins;
    for (unsigned b = 0; b < layout->bands; b++) {
      const size_t cell = (size_t)lane * layout->bands + b;
      const float p = cudafft_scope_lane_power(&layout->band_bins[b], layout->gains, power,
                                               s->spec.bins, count, job->inv_count);
      s->smoothed[cell] = cudafft_scope_smooth(s->smoothed[cell], p, job->alpha);
      s->level[cell] = cudafft_scope_level(s->smoothed[cell]);
      if (layout->style == CUDAFFT_SCOPE_BARS)
        s->peak[cell] = cudafft_scope_peak(s->level[cell], s->held + cell, s->cells, layout->hold,
                                           slot, &s->decayed[cell], job->decay);
    }
  }
}

static void
black_rows(CpuScope *s, uint8_t *pixels, unsigned first)
{
  const float black[3] = {0.0f, 0.0f, 0.0f};
  for (unsigned y = first; y < s->spec.height; y++)
    for (unsigned x = 0; x < s->spec.width; x++)
      cudafft_scope_store(pixels + y * s->spec.stride + x * s->bpp, s->offsets, black);
}

static void
colour_cell(CpuScope *s, const CudafftScopeJob *job, size_t i)
{
  float rgb[3];
  cudafft_scope_colour(job->colormap,
                       cudafft_scope_fraction(s->columns[i], job->db_min, job->db_max), rgb);
  cudafft_scope_store(s->column_pixels + i * s->bpp, s->offsets, rgb);
}

static void
draw_spectrogram(CpuScope *s, const CudafftScopeJob *job)
{
  const CudafftScopeLayout *layout = job->layout;
  const size_t width = s->spec.width, rows = (size_t)layout->lanes * layout->lane_height;
  const size_t column = job->frame % width;
  if (job->new_layout || job->recolour)
    for (size_t i = 0; i < rows * width; i++)
      colour_cell(s, job, i);
  for (size_t y = 0; y < rows; y++) {
    const size_t lane = y / layout->lane_height;
    const int band = layout->map[y - lane * layout->lane_height];
    s->columns[y * width + column] = s->level[lane * layout->bands + (size_t)band];
    colour_cell(s, job, y * width + column);
  }
  /* the newest column at the right: columns column + 1 .. width - 1, then 0 .. column */
  uint8_t *pixels = job->pixels;
  const size_t older = width - 1 - column, bpp = s->bpp;
  for (size_t y = 0; y < rows; y++) {
    const uint8_t *from = s->column_pixels + y * width * bpp;
    uint8_t *to = pixels + y * s->spec.stride;
    memcpy(to, from + (column + 1) * bpp, older * bpp);
    memcpy(to + older * bpp, from, (column + 1) * bpp);
  }
  black_rows(s, pixels, (unsigned)rows);
}

static void
draw_bars(CpuScope *s, const CudafftScopeJob *job)
{
  const CudafftScopeLayout *layout = job->layout;
  const unsigned h = layout->lane_height;
  const float black[3] = {0.0f, 0.0f, 0.0f};
  for (unsigned r = 0; r < h; r++)
    cudafft_scope_colour(job->colormap, ((float)r + 0.5f) / (float)h, s->row_rgb + 3 * r);
  uint8_t *pixels = job->pixels;
  for (unsigned lane = 0; lane < layout->lanes; lane++) {
    for (unsigned x = 0; x < s->spec.width; x++) {
      const int band = layout->map[x];
      float bar = 0.0f, peak = 0.0f;
      if (band >= 0) {
        const size_t cell = (size_t)lane * layout->bands + (size_t)band;
        bar = cudafft_scope_fraction(s->level[cell], job->db_min, job->db_max) * (float)h;
        peak = cudafft_scope_fraction(s->peak[cell], job->db_min, job->db_max) * (float)h;
      }
      for (unsigned r = 0; r < h; r++) {
        const size_t y = (size_t)lane * h + (h - 1 - r);
        uint8_t *p = pixels + y * s->spec.stride + (size_t)x * s->bpp;
        if (band < 0) {
          cudafft_scope_store(p, s->offsets, black);
          continue;
        }
        float rgb[3];
        cudafft_scope_bar_rgb(bar, peak, layout->marker, r, s->row_rgb + 3 * r, rgb);
        cudafft_scope_store(p, s->offsets, rgb);
      }
    }
  }
  black_rows(s, pixels, layout->lanes * h);
}

static CudafftStatus
cpu_run(void *impl, const CudafftScopeJob *job)
{
  CpuScope *s = impl;
  if (job->device_pitch) /* the front end stops these first; a backend table may not assume it */
    return cudafft_fail(CUDAFFT_STATUS_UNSUPPORTED,
                        "the scope's CPU backend draws into host memory only");
  if (job->new_layout || s->cells == 0) {
    const CudafftStatus status = start_layout(s, job->layout);
    if (status != CUDAFFT_STATUS_OK)
      return status;
  }
  append(s, job);
  transform(s, job);
  update_bands(s, job);
  if (job->layout->style == CUDAFFT_SCOPE_SPECTROGRAM)
    draw_spectrogram(s, job);
  else
    draw_bars(s, job);
  return CUDAFFT_STATUS_OK;
}

static CudafftStatus
cpu_reset(void *impl)
{
  CpuScope *s = impl;
  memset(s->history, 0, (size_t)s->spec.channels * s->spec.history * sizeof *s->history);
  s->newest = 0;
  return CUDAFFT_STATUS_OK;
}

static void *
cpu_stream(const void *impl)
{
  (void)impl;
  return NULL;
}

const CudafftScopeBackend cudafft_scope_cpu_backend = {
    .create = cpu_create,
    .destroy = cpu_destroy,
    .run = cpu_run,
    .reset = cpu_reset,
    .stream = cpu_stream,
};
