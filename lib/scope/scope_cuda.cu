/* scope_cuda.cu: the spectrum scope's CUDA backend. The history, the analysis, the display state
 * and the frame all live on the device; a frame uploads its new samples, queues the append, FFT,
 * band and drawing kernels on the object's stream and copies the finished frame into the
 * caller's pixels (page-locked memory: one DMA at full bus speed; or device memory of the object's
 * context, one copy on the device). Device buffers are sized and
 * checked against the GPU's free memory before anything is allocated; every CUDA call is checked
 * and a failure becomes a status and a message. */
#include "backend_object.cuh"
#include "cuda_check.cuh"
#include "device_choice.cuh"
#include "scope_backend.h"
#include "scope_colormaps.h"
#include "scope_kernels.h"
#include "size_math.h"
#include "sizes.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

struct CudaScope {
  CudafftScopeSpec spec{};
  int device = 0; /* the id it was made with: a device, or an attached context (contexts.h) */
  cudaStream_t stream = nullptr;
  size_t bpp = 0;
  size_t newest = 0;

  float *d_history = nullptr;
  void *d_raw = nullptr;
  float *d_power = nullptr;
  float *d_window = nullptr;
  float2 *d_twiddles = nullptr;
  float *d_colormaps = nullptr; /* the table colormaps, 768 floats each, in CudafftColormap order */
  uint8_t *d_frame = nullptr;

  /* the layout in use and its state (made at each new layout) */
  size_t cells = 0;
  CudafftBandBins *d_band_bins = nullptr;
  float *d_gains = nullptr;
  int *d_map = nullptr;
  float *d_smoothed = nullptr, *d_level = nullptr, *d_decayed = nullptr, *d_peak = nullptr;
  float *d_held = nullptr, *d_columns = nullptr;
};

void
free_layout(CudaScope *c)
{
  void *buffers[] = {c->d_band_bins, c->d_gains, c->d_map,  c->d_smoothed, c->d_level,
                     c->d_decayed,   c->d_peak,  c->d_held, c->d_columns};
  for (void *p : buffers)
    cudaFree(p);
  c->d_band_bins = nullptr;
  c->d_gains = c->d_smoothed = c->d_level = c->d_decayed = c->d_peak = c->d_held = nullptr;
  c->d_columns = nullptr;
  c->d_map = nullptr;
  c->cells = 0;
}

/* What a scope made ready or failed on the way holds, freed (cudafft_cuda_release makes its device
 * current first and clears the errors after). */
void
release(CudaScope *c)
{
  if (c->stream)
    cudaStreamSynchronize(c->stream);
  free_layout(c);
  void *buffers[] = {c->d_history,  c->d_raw,       c->d_power, c->d_window,
                     c->d_twiddles, c->d_colormaps, c->d_frame};
  for (void *p : buffers)
    cudaFree(p);
  if (c->stream)
    cudaStreamDestroy(c->stream);
}

/* DEVICE_OUT_OF_MEMORY, with the sizes, where need bytes are more than the GPU has free. */
CudafftStatus
check_fits(const CudaScope *c, size_t need, const char *what)
{
  size_t free_bytes = 0, total_bytes = 0;
  CUDAFFT_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  if (need == SIZE_MAX)
    return cudafft_fail(CUDAFFT_STATUS_DEVICE_OUT_OF_MEMORY,
                        "the scope's %s need more GPU memory than can be addressed; GPU %d has %zu "
                        "MB free",
                        what, cudafft_context_ordinal(c->device), free_bytes >> 20);
  if (need > free_bytes)
    return cudafft_fail(CUDAFFT_STATUS_DEVICE_OUT_OF_MEMORY,
                        "the scope's %s need %zu MB of GPU memory; GPU %d has %zu MB free", what,
                        megabytes(need), cudafft_context_ordinal(c->device), free_bytes >> 20);
  return CUDAFFT_STATUS_OK;
}

CudafftStatus
upload_tables(CudaScope *c)
{
  const CudafftScopeSpec &spec = c->spec;
  CUDAFFT_CHECK(cudaMemcpyAsync(c->d_window, spec.window, spec.fft_size * sizeof(float),
                                cudaMemcpyHostToDevice, c->stream));
  CUDAFFT_CHECK(cudaMemcpyAsync(c->d_colormaps,
                                cudafft_scope_colormap_table(CUDAFFT_COLORMAP_VIRIDIS),
                                768 * sizeof(float), cudaMemcpyHostToDevice, c->stream));
  CUDAFFT_CHECK(cudaMemcpyAsync(c->d_colormaps + 768,
                                cudafft_scope_colormap_table(CUDAFFT_COLORMAP_MAGMA),
                                768 * sizeof(float), cudaMemcpyHostToDevice, c->stream));
  const size_t table_bytes = cudafft_scope_twiddle_count(spec.fft_size) * sizeof(float2);
  float *table = static_cast<float *>(malloc(table_bytes));
  if (!table)
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY, "cannot allocate a twiddle table");
  cudafft_scope_twiddles(spec.fft_size, table);
  cudaError_t error =
      cudaMemcpyAsync(c->d_twiddles, table, table_bytes, cudaMemcpyHostToDevice, c->stream);
  if (error == cudaSuccess)
    error = cudaStreamSynchronize(c->stream); /* before the table is freed */
  free(table);
  if (error != cudaSuccess)
    return cudafft_cuda_failure(error, "uploading the twiddle table", __FILE__, __LINE__);
  return CUDAFFT_STATUS_OK;
}

/* Whether an FFT of supported size n fits in `optin` bytes of a block's shared memory. */
bool
fits(size_t n, size_t optin)
{
  const size_t smem = cudafft_is_fft_size(n) ? cudafft_scope_fft_smem(n) : 0;
  return smem > 0 && smem <= optin;
}

/* UNSUPPORTED for a size whose FFT does not fit in the device's `optin` bytes of shared memory a
 * block, naming the nearest sizes that do (an odd size's FFT takes twice the points of an even
 * one's, so a larger even size may fit where an odd one does not). */
CudafftStatus
refuse_size(const CudaScope *c, int optin)
{
  const size_t n = c->spec.fft_size, bytes = (size_t)optin;
  size_t below = 0, above = 0;
  for (size_t m = n - 1; m >= CUDAFFT_MIN_SIZE && !below; m--)
    below = fits(m, bytes) ? m : 0;
  for (size_t m = n + 1; m <= CUDAFFT_MAX_SIZE && !above; m++)
    above = fits(m, bytes) ? m : 0;
  char nearest[96] = "";
  if (below && above)
    snprintf(nearest, sizeof nearest, "; the nearest sizes that fit are %zu and %zu", below, above);
  else if (below || above)
    snprintf(nearest, sizeof nearest, "; the nearest size that fits is %zu", below ? below : above);
  return cudafft_fail(CUDAFFT_STATUS_UNSUPPORTED,
                      "a %zu-point FFT needs %zu KB of shared memory per block; GPU %d offers %d "
                      "KB%s",
                      n, cudafft_scope_fft_smem(n) >> 10, cudafft_context_ordinal(c->device),
                      optin >> 10, nearest);
}

CudafftStatus
setup(CudaScope *c)
{
  const CudafftScopeSpec &spec = c->spec;
  CUDAFFT_CHECK(cudafft_use_device(c->device));
  int smem_optin = 0;
  CUDAFFT_CHECK(cudaDeviceGetAttribute(&smem_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin,
                                       cudafft_context_ordinal(c->device)));
  if (!fits(spec.fft_size, (size_t)smem_optin))
    return refuse_size(c, smem_optin);
  c->bpp = cudafft_scope_pixel_bytes(spec.pixels);

  const size_t history = sat_mul(sat_mul(spec.channels, spec.history), sizeof(float));
  const size_t raw = sat_mul(spec.max_frames, spec.frame_bytes);
  const size_t power =
      sat_mul(sat_mul(sat_mul(spec.channels, spec.max_ffts), spec.bins), sizeof(float));
  const size_t frame = sat_mul(spec.stride, spec.height);
  const size_t twiddles = cudafft_scope_twiddle_count(spec.fft_size) * sizeof(float2);
  size_t need = sat_add(sat_add(history, raw), sat_add(power, frame));
  need = sat_add(need, sat_add(twiddles, (spec.fft_size + 2 * 768) * sizeof(float)));
  CudafftStatus status = check_fits(c, need, "history and frame");
  if (status != CUDAFFT_STATUS_OK)
    return status;

  CUDAFFT_CHECK(cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking));
  CUDAFFT_CHECK(cudaMalloc(&c->d_history, history));
  CUDAFFT_CHECK(cudaMalloc(&c->d_raw, raw));
  CUDAFFT_CHECK(cudaMalloc(&c->d_power, power));
  CUDAFFT_CHECK(cudaMalloc(&c->d_window, spec.fft_size * sizeof(float)));
  CUDAFFT_CHECK(cudaMalloc(&c->d_twiddles, twiddles));
  CUDAFFT_CHECK(cudaMalloc(&c->d_colormaps, 2 * 768 * sizeof(float)));
  CUDAFFT_CHECK(cudaMalloc(&c->d_frame, frame));
  CUDAFFT_CHECK(cudafft_scope_fft_prepare(spec.fft_size));
  status = upload_tables(c);
  if (status != CUDAFFT_STATUS_OK)
    return status;
  /* zeros before the first sample; defined bytes in the frame's row padding */
  CUDAFFT_CHECK(cudaMemsetAsync(c->d_history, 0, history, c->stream));
  CUDAFFT_CHECK(cudaMemsetAsync(c->d_frame, 0, frame, c->stream));
  CUDAFFT_CHECK(cudaStreamSynchronize(c->stream));
  return CUDAFFT_STATUS_OK;
}

/* The create of the table (cudafft_cuda_create): the spec kept, its device chosen, then setup. */
CudafftStatus
scope_setup(CudaScope *c, const CudafftScopeSpec *spec)
{
  c->spec = *spec;
  const CudafftStatus status = cudafft_cuda_pick_device(spec->device_id, &c->device);
  return status == CUDAFFT_STATUS_OK ? setup(c) : status;
}

/* Makes the device copy of a layout and its state, at their starting values. */
CudafftStatus
start_layout(CudaScope *c, const CudafftScopeLayout *layout)
{
  free_layout(c);
  const CudafftScopeSpec &spec = c->spec;
  const bool bars = layout->style == CUDAFFT_SCOPE_BARS;
  const size_t cells = (size_t)layout->lanes * layout->bands;
  const size_t rows = (size_t)layout->lanes * layout->lane_height;
  const size_t map = bars ? spec.width : layout->lane_height;
  const size_t held = bars ? sat_mul(cells, layout->hold) : 0;
  const size_t columns = bars ? 0 : sat_mul(rows, spec.width);
  size_t need = sat_mul(layout->bands, sizeof(CudafftBandBins));
  need = sat_add(need, sat_mul(spec.bins, sizeof(float)) + map * sizeof(int));
  need = sat_add(
      need, sat_mul(sat_add(sat_mul(cells, bars ? 4 : 2), sat_add(held, columns)), sizeof(float)));
  CudafftStatus status = check_fits(c, need, "bands and display state");
  if (status != CUDAFFT_STATUS_OK)
    return status;
  CUDAFFT_CHECK(cudaMalloc(&c->d_band_bins, layout->bands * sizeof(CudafftBandBins)));
  CUDAFFT_CHECK(cudaMalloc(&c->d_gains, spec.bins * sizeof(float)));
  CUDAFFT_CHECK(cudaMalloc(&c->d_map, map * sizeof(int)));
  CUDAFFT_CHECK(cudaMalloc(&c->d_smoothed, cells * sizeof(float)));
  CUDAFFT_CHECK(cudaMalloc(&c->d_level, cells * sizeof(float)));
  if (bars) {
    CUDAFFT_CHECK(cudaMalloc(&c->d_decayed, cells * sizeof(float)));
    CUDAFFT_CHECK(cudaMalloc(&c->d_peak, cells * sizeof(float)));
    CUDAFFT_CHECK(cudaMalloc(&c->d_held, held * sizeof(float)));
  } else {
    CUDAFFT_CHECK(cudaMalloc(&c->d_columns, columns * sizeof(float)));
  }
  /* pageable sources: each copy has been read when it returns */
  CUDAFFT_CHECK(cudaMemcpyAsync(c->d_band_bins, layout->band_bins,
                                layout->bands * sizeof(CudafftBandBins), cudaMemcpyHostToDevice,
                                c->stream));
  CUDAFFT_CHECK(cudaMemcpyAsync(c->d_gains, layout->gains, spec.bins * sizeof(float),
                                cudaMemcpyHostToDevice, c->stream));
  CUDAFFT_CHECK(
      cudaMemcpyAsync(c->d_map, layout->map, map * sizeof(int), cudaMemcpyHostToDevice, c->stream));
  CUDAFFT_CHECK(cudaMemsetAsync(c->d_smoothed, 0, cells * sizeof(float), c->stream));
  CUDAFFT_CHECK(cudafft_scope_fill_launch(c->d_level, cells, CUDAFFT_SCOPE_FLOOR_DB, c->stream));
  if (bars) {
    CUDAFFT_CHECK(
        cudafft_scope_fill_launch(c->d_decayed, cells, CUDAFFT_SCOPE_FLOOR_DB, c->stream));
    CUDAFFT_CHECK(cudafft_scope_fill_launch(c->d_peak, cells, CUDAFFT_SCOPE_FLOOR_DB, c->stream));
    CUDAFFT_CHECK(cudafft_scope_fill_launch(c->d_held, held, CUDAFFT_SCOPE_FLOOR_DB, c->stream));
  } else {
    CUDAFFT_CHECK(
        cudafft_scope_fill_launch(c->d_columns, columns, CUDAFFT_SCOPE_FLOOR_DB, c->stream));
  }
  c->cells = cells;
  return CUDAFFT_STATUS_OK;
}

/* The device address of a job's colormap table (NULL for grey). */
const float *
device_colormap(const CudaScope *c, const float *host_table)
{
  if (!host_table)
    return nullptr;
  return host_table == cudafft_scope_colormap_table(CUDAFFT_COLORMAP_MAGMA) ? c->d_colormaps + 768
                                                                            : c->d_colormaps;
}

/* Queues the frame and its copy into the caller's pixels: host memory, or the device memory of
 * cudafft_scope_render_device() (copied from the scope's own frame, whose stride and alignment the
 * kernels rely on, whatever the caller's pitch). */
CudafftStatus
queue_frame(CudaScope *c, const CudafftScopeJob *job)
{
  const CudafftScopeSpec &spec = c->spec;
  const CudafftScopeLayout *layout = job->layout;
  if (job->new_layout || c->cells == 0) {
    const CudafftStatus status = start_layout(c, layout);
    if (status != CUDAFFT_STATUS_OK)
      return status;
  }
  if (job->frames > 0) {
    CUDAFFT_CHECK(cudaMemcpyAsync(c->d_raw, job->in, job->frames * spec.frame_bytes,
                                  cudaMemcpyHostToDevice, c->stream));
    CUDAFFT_CHECK(cudafft_scope_append_launch(spec.format, c->d_raw, job->frames, spec.channels,
                                              c->d_history, spec.history, c->newest, c->stream));
  }
  const size_t newest = c->newest + job->frames;
  CUDAFFT_CHECK(cudafft_scope_fft_launch(spec.fft_size, c->d_history, spec.history, spec.channels,
                                         newest, job->frames, job->ffts, c->d_window, spec.norm,
                                         c->d_twiddles, c->d_power, c->stream));
  const bool bars = layout->style == CUDAFFT_SCOPE_BARS;
  CudafftScopeBandArgs bands = {};
  bands.lanes = layout->lanes;
  bands.bands = layout->bands;
  bands.per_lane = layout->per_lane;
  bands.ffts = job->ffts;
  bands.bins = spec.bins;
  bands.band_bins = c->d_band_bins;
  bands.gains = c->d_gains;
  bands.inv_count = job->inv_count;
  bands.alpha = job->alpha;
  bands.bars = bars ? 1 : 0;
  bands.hold = layout->hold;
  bands.slot = (unsigned)(job->frame % layout->hold);
  bands.decay = job->decay;
  CUDAFFT_CHECK(cudafft_scope_bands_launch(&bands, c->d_power, c->d_smoothed, c->d_level, c->d_held,
                                           c->d_decayed, c->d_peak, c->stream));
  CudafftScopeDrawArgs draw = {};
  draw.width = spec.width;
  draw.height = spec.height;
  draw.lanes = layout->lanes;
  draw.lane_height = layout->lane_height;
  draw.bands = layout->bands;
  draw.stride = spec.stride;
  draw.pixels = spec.pixels;
  draw.map = c->d_map;
  draw.marker = layout->marker;
  draw.db_min = job->db_min;
  draw.db_max = job->db_max;
  draw.colormap = device_colormap(c, job->colormap);
  if (bars)
    CUDAFFT_CHECK(cudafft_scope_bars_launch(&draw, c->d_level, c->d_peak, c->d_frame, c->stream));
  else
    CUDAFFT_CHECK(cudafft_scope_spectrogram_launch(&draw, c->d_level, c->d_columns,
                                                   (unsigned)(job->frame % spec.width), c->d_frame,
                                                   c->stream));
  const size_t row = (size_t)spec.width * c->bpp;
  if (job->device_pitch)
    CUDAFFT_CHECK(cudaMemcpy2DAsync(job->pixels, job->device_pitch, c->d_frame, spec.stride, row,
                                    spec.height, cudaMemcpyDeviceToDevice, c->stream));
  else if (row == spec.stride)
    CUDAFFT_CHECK(cudaMemcpyAsync(job->pixels, c->d_frame, spec.stride * spec.height,
                                  cudaMemcpyDeviceToHost, c->stream));
  else
    CUDAFFT_CHECK(cudaMemcpy2DAsync(job->pixels, spec.stride, c->d_frame, spec.stride, row,
                                    spec.height, cudaMemcpyDeviceToHost, c->stream));
  c->newest = newest;
  return CUDAFFT_STATUS_OK;
}

CudafftStatus
cuda_run(void *impl, const CudafftScopeJob *job)
{
  CudaScope *c = static_cast<CudaScope *>(impl);
  CUDAFFT_CHECK(cudafft_use_device(c->device));
  const CudafftStatus status = queue_frame(c, job);
  if (status != CUDAFFT_STATUS_OK) {
    cudaStreamSynchronize(c->stream); /* no copy may still write into the caller's pixels */
    cudaGetLastError();
    return status;
  }
  CUDAFFT_CHECK(cudaStreamSynchronize(c->stream));
  return CUDAFFT_STATUS_OK;
}

CudafftStatus
cuda_reset(void *impl)
{
  CudaScope *c = static_cast<CudaScope *>(impl);
  CUDAFFT_CHECK(cudafft_use_device(c->device));
  c->newest = 0;
  CUDAFFT_CHECK(cudaMemsetAsync(
      c->d_history, 0, (size_t)c->spec.channels * c->spec.history * sizeof(float), c->stream));
  CUDAFFT_CHECK(cudaStreamSynchronize(c->stream));
  return CUDAFFT_STATUS_OK;
}

} // namespace

extern "C" const CudafftScopeBackend cudafft_scope_cuda_backend = {
    cudafft_keeping_caller<cudafft_cuda_create<CudaScope, CudafftScopeSpec, scope_setup, release>>,
    cudafft_keeping_caller<cudafft_cuda_destroy<CudaScope, release>>,
    cudafft_keeping_caller<cuda_run>,
    cudafft_keeping_caller<cuda_reset>,
    cudafft_cuda_stream<CudaScope>,
};
