/* gstcudaconvolvekernel.c: cudaconvolve's kernel and engine: which kernel is in force (the
 * ir-location file's or the kernel property's), the engine (cudafft/convolve.h) made from it with
 * the stream's format, mix and block size, and its latency, announced where it changes. The
 * element's properties, caps and events are gstcudaconvolve.c's, the runs through the engine
 * gstcudaconvolverun.c's; both call this file, which calls neither. */
#include "gstcudaconvolveprivate.h"

#include <string.h>

#define GST_CAT_DEFAULT gst_cuda_convolve_debug

/* The kernel in force ------------------------------------------------------------------------ */

/* Which kernel is in force: *ir, the impulse response file's, where ir-location is set (READY,
 * or PENDING while its decode has not finished; with `wait` that waits for it), else (NONE) the
 * kernel property's. */
GstCudafftResponseFileState
gst_cuda_convolve_kernel_source(GstCudaConvolve *self, gboolean wait,
                                GstCudafftResponseSource *source, GstCudafftResponseFileResult **ir)
{
  const GstCudafftResponseFileState state =
      gst_cudafft_response_file_get(self->ir, wait, ir, &source->ir_request);
  GST_OBJECT_LOCK(self);
  source->serial = self->settings.serial;
  GST_OBJECT_UNLOCK(self);
  return state;
}

/* The kernel for the stream's channels from the decoded response `ir`, or from the kernel
 * property where `ir` is NULL. A response that cannot be used is posted (an ERROR where `fatal`,
 * else a WARNING naming the file) and gives FALSE. */
gboolean
gst_cuda_convolve_make_kernel(GstCudaConvolve *self, const GstCudafftResponseFileResult *ir,
                              gboolean fatal, Kernel *kernel)
{
  memset(kernel, 0, sizeof *kernel);
  if (!ir) {
    GST_OBJECT_LOCK(self);
    kernel->data = g_memdup2(self->settings.kernel, self->settings.taps * sizeof(gdouble));
    kernel->taps = self->settings.taps;
    kernel->rows = 1;
    GST_OBJECT_UNLOCK(self);
    return TRUE;
  }
  if (!ir->data) {
    gst_cudafft_response_file_problem_post(&ir->problem, GST_ELEMENT(self), fatal);
    return FALSE;
  }
  const guint channels = GST_AUDIO_INFO_CHANNELS(&self->info);
  GstCudafftResponseFileProblem problem = {0};
  if (ir->channels != 1 && ir->channels != channels) {
    problem.domain = GST_STREAM_ERROR;
    problem.code = GST_STREAM_ERROR_FORMAT;
    problem.text = g_strdup_printf(
        "The impulse response \"%s\" (ir-location) has %u channels but the stream has %u: use a "
        "mono response (for every channel) or one with %u channels (one per channel).",
        ir->location, ir->channels, channels, channels);
  } else if (!(kernel->data = g_try_new(gdouble, ir->channels * ir->frames))) {
    problem.domain = GST_RESOURCE_ERROR;
    problem.code = GST_RESOURCE_ERROR_NO_SPACE_LEFT;
    problem.text = g_strdup_printf("Out of memory for the impulse response \"%s\" (ir-location), "
                                   "%" G_GSIZE_FORMAT " samples x %u channels.",
                                   ir->location, ir->frames, ir->channels);
  }
  if (problem.text) {
    gst_cudafft_response_file_problem_post(&problem, GST_ELEMENT(self), fatal);
    gst_cudafft_response_file_problem_clear(&problem);
    return FALSE;
  }
  const guint rows = ir->channels;
  const gsize taps = ir->frames;
  for (guint r = 0; r < rows; r++)
    for (gsize t = 0; t < taps; t++)
      kernel->data[r * taps + t] = ir->data[t * rows + r];
  kernel->taps = taps;
  kernel->rows = rows;
  return TRUE;
}

CudafftConvolveKernel
gst_cuda_convolve_engine_kernel(const Kernel *kernel)
{
  const CudafftConvolveKernel k = {
      .taps_data = kernel->data, .taps = kernel->taps, .rows = kernel->rows};
  return k;
}

/* The engine --------------------------------------------------------------------------------- */

GST_CUDAFFT_DEFINE_ENGINE(convolve_engine, convolve, CudafftConvolve, CudafftConvolveConfig,
                          "the convolution");

gdouble
gst_cuda_convolve_current_mix(GstCudaConvolve *self)
{
  GST_OBJECT_LOCK(self);
  const gdouble mix = self->settings.mix;
  GST_OBJECT_UNLOCK(self);
  return mix;
}

guint
gst_cuda_convolve_current_block_size(GstCudaConvolve *self)
{
  GST_OBJECT_LOCK(self);
  const guint size = self->settings.block_size;
  GST_OBJECT_UNLOCK(self);
  return size;
}

/* Makes the engine for self->info and the kernel from `source` (`ir`: see
 * gst_cuda_convolve_make_kernel); a kernel that cannot be used is an ERROR. */
gboolean
gst_cuda_convolve_open_engine(GstCudaConvolve *self, const GstCudafftResponseSource *source,
                              const GstCudafftResponseFileResult *ir)
{
  GstCudafftAudioFilter *filter = GST_CUDAFFT_AUDIO_FILTER(self);
  Kernel kernel;
  if (!gst_cuda_convolve_make_kernel(self, ir, TRUE, &kernel))
    return FALSE;
  const CudafftConvolveConfig config = {
      .channels = GST_AUDIO_INFO_CHANNELS(&self->info),
      .format = gst_cudafft_sample_format(GST_AUDIO_INFO_FORMAT(&self->info)),
      .kernel = gst_cuda_convolve_engine_kernel(&kernel),
      .mix = gst_cuda_convolve_current_mix(self),
  };
  const gboolean ok = gst_cudafft_audio_filter_open_engine(filter, &convolve_engine, &config);
  g_free(kernel.data);
  if (!ok)
    return FALSE;
  /* Before the first frame the engine takes the block size at once, without a crossover, so the
   * first output already has its latency. A size it cannot take (out of memory for the split
   * path's buffers) fails the start like a kernel too large: the user asked for that latency. */
  const guint block_size = gst_cuda_convolve_current_block_size(self);
  const CudafftStatus status =
      cudafft_convolve_set_block_size(gst_cuda_convolve_engine(self), block_size);
  if (status != CUDAFFT_STATUS_OK) {
    gst_cudafft_audio_filter_post_error(filter, status, "cudafft_convolve_set_block_size");
    gst_cudafft_audio_filter_close_engine(filter);
    return FALSE;
  }
  self->engine_block_size = block_size;
  self->engine_source = *source;
  self->engine_mix = config.mix;
  GST_INFO_OBJECT(self,
                  "%" G_GSIZE_FORMAT " taps x %u rows, %u channels, block size %u, latency %zu "
                  "samples",
                  kernel.taps, kernel.rows, config.channels, block_size,
                  cudafft_convolve_latency(gst_cuda_convolve_engine(self)));
  gst_cuda_convolve_update_latency(self);
  return TRUE;
}

/* Latency ------------------------------------------------------------------------------------ */

/* Records the engine's latency and tells the pipeline when it changed: a kernel change across the
 * direct path and the others, or a block-size change (at once where the new size is larger: during
 * a crossover the engine reports the larger of the two; once the crossover has ended where it is
 * smaller). */
void
gst_cuda_convolve_update_latency(GstCudaConvolve *self)
{
  if (!gst_cuda_convolve_engine(self))
    return;
  const gint frames = (gint)cudafft_convolve_latency(gst_cuda_convolve_engine(self));
  const gint rate = GST_AUDIO_INFO_RATE(&self->info);
  if (gst_cudafft_latency_update(&self->latency, GST_ELEMENT(self), frames, rate))
    GST_DEBUG_OBJECT(self, "latency %d samples at %d Hz", frames, rate);
}

GstClockTime
gst_cuda_convolve_get_latency(GstCudafftAudioFilter *filter)
{
  return gst_cudafft_latency_get(&GST_CUDA_CONVOLVE(filter)->latency);
}
