/* gstcudaconvolverun.c: cudaconvolve's runs through the engine: the input pushed through
 * cudafft/convolve.h in pushes of bounded size, the output in buffers from the base class's pool
 * (or in CUDA memory, fenced), stamped from the run's sample count; the drain with zeros at EOS and
 * new segments (the tail as drain-tail says), and the settings (kernel, ir-location file, mix,
 * block size) applied at buffer boundaries, crossfaded by the engine. The element's properties,
 * caps and events are gstcudaconvolve.c's (which calls this file), the kernel in force, the engine
 * made from it and its latency gstcudaconvolvekernel.c's (which this file calls). */
#include "gstcudaconvolveprivate.h"

#include "gstcudafftproperties.h"
#include "gstcudafftrun.h"

#include <string.h>

#define GST_CAT_DEFAULT gst_cuda_convolve_debug

static gsize
frame_bytes(const GstCudaConvolve *self)
{
  return GST_AUDIO_INFO_BPF(&self->info);
}

/* Equal input buffers give this many frames give or take a block: the pool keeps that to spare. */
static gsize
spare_bytes(const GstCudaConvolve *self)
{
  return CUDAFFT_CONVOLVE_BLOCK * frame_bytes(self);
}

/* `buffer` holds output frames [filtered, filtered + count) of the run (the engine's numbering):
 * drops what is still to drop of the latency property's samples, stamps the rest and counts it.
 * Returns the buffer, or NULL (unreffed) when nothing is left. */
static GstBuffer *
finish_output(GstCudaConvolve *self, GstBuffer *buffer, guint64 filtered, guint64 count)
{
  GstCudafftRun *run = GST_CUDAFFT_AUDIO_FILTER_RUN(self);
  const guint64 skip = self->run_latency > filtered ? MIN(self->run_latency - filtered, count) : 0;
  count -= skip;
  if (count == 0) {
    gst_buffer_unref(buffer);
    return NULL;
  }
  const gsize bpf = frame_bytes(self);
  buffer = gst_cudafft_audio_filter_trim_output(GST_CUDAFFT_AUDIO_FILTER(self), buffer, skip * bpf,
                                                count * bpf);
  if (!buffer)
    return NULL; /* posted */
  gst_cudafft_run_stamp(run, buffer, run->produced, count);
  GST_BUFFER_OFFSET(buffer) = run->produced;
  GST_BUFFER_OFFSET_END(buffer) = run->produced + count;
  if (run->produced == 0)
    GST_BUFFER_FLAG_SET(buffer, GST_BUFFER_FLAG_DISCONT);
  run->produced += count;
  return buffer;
}

/* Input frames per engine push: its output (the frames and the lag, under a block) stays within
 * GST_CUDAFFT_MAX_OUTPUT_BYTES. */
static gsize
frames_per_push(const GstCudaConvolve *self)
{
  const gsize most = GST_CUDAFFT_MAX_OUTPUT_BYTES / frame_bytes(self);
  return most > 2 * CUDAFFT_CONVOLVE_BLOCK ? most - CUDAFFT_CONVOLVE_BLOCK : CUDAFFT_CONVOLVE_BLOCK;
}

/* Pushes `frames` input frames at `data` (device memory where the base class says the input is)
 * through the engine and the output that comes out (stamped, the latency property's samples
 * dropped) downstream. */
static GstFlowReturn
push_through_engine(GstCudaConvolve *self, const void *data, gsize frames)
{
  GstCudafftAudioFilter *filter = GST_CUDAFFT_AUDIO_FILTER(self);
  CudafftConvolve *engine = gst_cuda_convolve_engine(self);
  /* a buffer of CUDA memory must hold exactly its frames (GStreamer 1.22's host copy of one takes
   * its whole allocation): what this push will produce */
  const size_t most = self->cuda_out ? cudafft_convolve_output_frames(engine, frames)
                                     : cudafft_convolve_max_output(engine, frames);
  const unsigned on_device =
      (gst_cudafft_audio_filter_input_on_device(filter) ? CUDAFFT_IN_DEVICE : 0) |
      (self->cuda_out ? CUDAFFT_OUT_DEVICE : 0);
  GstMapInfo map = GST_MAP_INFO_INIT;
  GstBuffer *buffer =
      most > 0 ? gst_cudafft_audio_filter_map_output(filter, most * frame_bytes(self),
                                                     spare_bytes(self), self->cuda_out, &map)
               : NULL;
  if (most > 0 && !buffer)
    return GST_FLOW_ERROR;
  size_t produced = 0;
  /* into one of our elements, the output goes on before the device has written it */
  CudafftFence *done =
      buffer ? gst_cudafft_audio_filter_output_fence(filter, self->cuda_out) : NULL;
  const CudafftStatus status =
      cudafft_convolve_push_device(engine, data, frames, map.data, &produced, on_device,
                                   gst_cudafft_audio_filter_input_fence(filter), done);
  if (buffer)
    gst_cudafft_audio_filter_unmap_output(buffer, &map);
  if (status != CUDAFFT_STATUS_OK) {
    gst_cudafft_audio_filter_post_error(filter, status, "cudafft_convolve_push");
    if (buffer)
      gst_buffer_unref(buffer);
    return GST_FLOW_ERROR;
  }
  const guint64 first = self->filtered;
  self->filtered += produced;
  if (!buffer)
    return GST_FLOW_OK;
  if (produced == 0) {
    gst_buffer_unref(buffer); /* no work wrote it */
    return GST_FLOW_OK;
  }
  if (!gst_cudafft_audio_filter_fence_output(filter, buffer)) {
    gst_buffer_unref(buffer);
    return GST_FLOW_ERROR;
  }
  buffer = finish_output(self, buffer, first, produced);
  return buffer ? gst_pad_push(GST_BASE_TRANSFORM_SRC_PAD(self), buffer) : GST_FLOW_OK;
}

/* An output buffer of `frames` frames that the host writes (a plain map of CUDA memory is its host
 * copy, taken up to the device at unmap): for the zeros and the drained lag at the end of a run. */
static GstBuffer *
host_written_output(GstCudaConvolve *self, gsize frames)
{
  GstCudafftAudioFilter *filter = GST_CUDAFFT_AUDIO_FILTER(self);
  const gsize bytes = frames * frame_bytes(self);
  return self->cuda_out ? gst_cudafft_audio_filter_cuda_output(filter, bytes)
                        : gst_cudafft_audio_filter_output_buffer(filter, bytes, spare_bytes(self));
}

/* Pushes `count` output frames of zeros (past the kernel's response, where the latency property
 * reaches beyond it), in buffers of a few blocks. */
static GstFlowReturn
push_zeros(GstCudaConvolve *self, guint64 count)
{
  GstFlowReturn ret = GST_FLOW_OK;
  while (count > 0 && ret == GST_FLOW_OK) {
    const gsize n = (gsize)MIN(count, (guint64)16 * CUDAFFT_CONVOLVE_BLOCK);
    GstBuffer *buffer = host_written_output(self, n);
    if (!buffer)
      return GST_FLOW_ERROR;
    gst_buffer_memset(buffer, 0, 0, n * frame_bytes(self));
    /* frames past the latency property's: none is dropped */
    buffer = finish_output(self, buffer, self->run_latency, n);
    if (buffer)
      ret = gst_pad_push(GST_BASE_TRANSFORM_SRC_PAD(self), buffer);
    count -= n;
  }
  return ret;
}

static GstFlowReturn
push_silence(gpointer self, const void *data, gsize frames)
{
  return push_through_engine(self, data, frames);
}

/* Takes the engine's output up to its frame `end` (>= the input's length): zeros pushed through
 * it where `end` lies past the input (the kernel's response to its last samples), in pieces of
 * bounded output, then a drain of what still lags. */
static GstFlowReturn
drain_engine(GstCudaConvolve *self, guint64 end)
{
  CudafftConvolve *engine = gst_cuda_convolve_engine(self);
  const guint64 length = GST_CUDAFFT_AUDIO_FILTER_RUN(self)->samples;
  const GstFlowReturn ret = gst_cudafft_run_push_silence(
      GST_ELEMENT(self), "the kernel's tail", end > length ? end - length : 0,
      frames_per_push(self), frame_bytes(self), push_silence, self);
  const gsize lag = cudafft_convolve_drain_frames(engine, 0);
  if (ret != GST_FLOW_OK || lag == 0)
    return ret;
  GstMapInfo map;
  GstBuffer *buffer = host_written_output(self, lag);
  if (!buffer)
    return GST_FLOW_ERROR;
  if (!gst_buffer_map(buffer, &map, GST_MAP_WRITE)) {
    gst_buffer_unref(buffer);
    GST_ELEMENT_ERROR(self, RESOURCE, WRITE, ("Cannot map the output buffer."), (NULL));
    return GST_FLOW_ERROR;
  }
  size_t produced = 0;
  const CudafftStatus status = cudafft_convolve_drain(engine, 0, map.data, &produced);
  gst_buffer_unmap(buffer, &map);
  if (status != CUDAFFT_STATUS_OK) {
    gst_cudafft_audio_filter_post_error(GST_CUDAFFT_AUDIO_FILTER(self), status,
                                        "cudafft_convolve_drain");
    gst_buffer_unref(buffer);
    return GST_FLOW_ERROR;
  }
  const guint64 first = self->filtered;
  self->filtered += produced;
  buffer = finish_output(self, buffer, first, produced);
  return buffer ? gst_pad_push(GST_BASE_TRANSFORM_SRC_PAD(self), buffer) : GST_FLOW_OK;
}

/* Ends the run with audiofirfilter's rule, the same for every value of the latency property: the
 * output has as many samples as the input (the filtered signal from sample `latency` on, zeros
 * past the end of the kernel's response), or with `tail` the whole response where that is longer
 * (input length + taps - 1 - latency samples). Then the engine starts afresh. */
GstFlowReturn
gst_cuda_convolve_end_run(GstCudaConvolve *self, gboolean tail)
{
  GstCudafftRun *run = GST_CUDAFFT_AUDIO_FILTER_RUN(self);
  CudafftConvolve *engine = gst_cuda_convolve_engine(self);
  GstFlowReturn ret = GST_FLOW_OK;
  if (run->active && engine && run->samples > 0) {
    const guint64 length = run->samples, latency = self->run_latency;
    /* the response to the input ends at length + taps - 1 (the kernel in force at the end) */
    const guint64 response = self->filtered + cudafft_convolve_drain_frames(engine, 1);
    const guint64 after_latency = response > latency ? response - latency : 0;
    const guint64 total = tail ? MAX(length, after_latency) : length;
    /* the engine's frames up to latency + total, no further than its response */
    const guint64 wanted = latency > G_MAXUINT64 - total ? G_MAXUINT64 : latency + total;
    ret = drain_engine(self, MIN(wanted, response));
    if (ret == GST_FLOW_OK && run->produced < total)
      ret = push_zeros(self, total - run->produced);
    GST_DEBUG_OBJECT(self,
                     "run of %" G_GUINT64_FORMAT " samples ends%s: %" G_GUINT64_FORMAT
                     " output samples in all",
                     length, tail ? " with the tail" : "", run->produced);
  }
  gst_cudafft_audio_filter_reset_run(GST_CUDAFFT_AUDIO_FILTER(self));
  self->filtered = 0;
  return ret;
}

/* Filters one input buffer's frames; the output goes downstream in buffers of bounded size. */
static GstFlowReturn
filter_frames(GstCudaConvolve *self, const guint8 *data, gsize frames)
{
  if (frames == 0)
    return GST_FLOW_OK;
  const gsize piece = frames_per_push(self);
  GstFlowReturn ret = GST_FLOW_OK;
  do {
    const gsize n = MIN(frames, piece);
    ret = push_through_engine(self, data, n);
    GST_CUDAFFT_AUDIO_FILTER_RUN(self)->samples += n;
    data += n * frame_bytes(self);
    frames -= n;
  } while (ret == GST_FLOW_OK && frames > 0);
  return ret;
}

/* After a failed kernel or block-size change: out of memory, the engine resets the filter (an
 * invalid value changes nothing), so what the run still held is lost, and the next buffer starts a
 * new run. */
static void
end_run_if_engine_reset(GstCudaConvolve *self)
{
  GstCudafftRun *run = GST_CUDAFFT_AUDIO_FILTER_RUN(self);
  if (run->active &&
      run->samples - self->filtered != cudafft_convolve_lag(gst_cuda_convolve_engine(self))) {
    gst_cudafft_run_reset(run);
    self->filtered = 0;
  }
}

/* Gives a block-size set while streaming to the engine: it crosses over like a new kernel, at a
 * block boundary of the larger of the two sizes. The engine's latency rises at once where the new
 * size is larger and falls once the crossover has ended (process calls
 * gst_cuda_convolve_update_latency after every push). A size the engine cannot take leaves the old
 * one, with a warning, and the property goes back to it. */
static void
apply_block_size(GstCudaConvolve *self, guint block_size)
{
  CudafftConvolve *engine = gst_cuda_convolve_engine(self);
  const size_t old = cudafft_convolve_get_block_size(engine);
  const CudafftStatus status = cudafft_convolve_set_block_size(engine, block_size);
  if (status == CUDAFFT_STATUS_OK) {
    GST_DEBUG_OBJECT(self, "block size %zu -> %u", old, block_size);
  } else if (status == CUDAFFT_STATUS_DEVICE_OUT_OF_MEMORY ||
             status == CUDAFFT_STATUS_HOST_OUT_OF_MEMORY) {
    gst_cudafft_refuse_value_full(
        GST_ELEMENT(self), GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_NO_SPACE_LEFT,
        cudafft_status_name(status), "Out of memory for block-size %u; keeping %zu: %s; %s.",
        block_size, old, GST_CUDAFFT_AUDIO_FILTER_GET_CLASS(self)->memory_hint,
        cudafft_last_error_message());
    end_run_if_engine_reset(self);
  } else {
    gst_cudafft_refuse_value_full(GST_ELEMENT(self), GST_LIBRARY_ERROR, GST_LIBRARY_ERROR_SETTINGS,
                                  cudafft_status_name(status),
                                  "Cannot use block-size %u; keeping %zu: %s", block_size, old,
                                  cudafft_last_error_message());
  }
  if (status != CUDAFFT_STATUS_OK) {
    /* the property reads back the size in force, where it still holds the one refused */
    const guint in_force = (guint)cudafft_convolve_get_block_size(engine);
    GST_OBJECT_LOCK(self);
    if (self->settings.block_size == block_size)
      self->settings.block_size = in_force;
    GST_OBJECT_UNLOCK(self);
    block_size = in_force;
  }
  self->engine_block_size = block_size;
  gst_cuda_convolve_update_latency(self);
}

/* Applies kernel, ir-location, block-size and mix changes made while streaming: a new kernel or
 * block size crosses over at the engine's next block boundary; one that cannot be used leaves the
 * old one with a warning. A new ir-location file takes effect once decoded; the old kernel filters
 * meanwhile. */
static void
apply_settings(GstCudaConvolve *self)
{
  GstCudafftResponseSource source;
  GstCudafftResponseFileResult *ir = NULL;
  const GstCudafftResponseFileState state =
      gst_cuda_convolve_kernel_source(self, FALSE, &source, &ir);
  if (state != GST_CUDAFFT_RESPONSE_FILE_PENDING &&
      !gst_cudafft_response_source_equal(&source, &self->engine_source)) {
    Kernel kernel;
    if (gst_cuda_convolve_make_kernel(self, ir, FALSE, &kernel)) {
      const CudafftConvolveKernel k = gst_cuda_convolve_engine_kernel(&kernel);
      CudafftConvolve *engine = gst_cuda_convolve_engine(self);
      const CudafftStatus status = cudafft_convolve_set_kernel(engine, &k);
      if (status == CUDAFFT_STATUS_OK) {
        GST_DEBUG_OBJECT(self, "new kernel of %" G_GSIZE_FORMAT " taps x %u rows", kernel.taps,
                         kernel.rows);
      } else {
        gst_cudafft_refuse_value_full(GST_ELEMENT(self), GST_RESOURCE_ERROR,
                                      GST_RESOURCE_ERROR_NO_SPACE_LEFT, cudafft_status_name(status),
                                      "Cannot use the new kernel (%" G_GSIZE_FORMAT
                                      " taps); keeping the previous one: %s",
                                      kernel.taps, cudafft_last_error_message());
        end_run_if_engine_reset(self);
      }
      gst_cuda_convolve_update_latency(self);
    }
    g_free(kernel.data);
    self->engine_source = source; /* a bad one is not retried at every buffer */
  }
  gst_cudafft_response_file_result_unref(ir);
  const guint block_size = gst_cuda_convolve_current_block_size(self);
  if (block_size != self->engine_block_size)
    apply_block_size(self, block_size);
  const gdouble mix = gst_cuda_convolve_current_mix(self);
  if (mix != self->engine_mix) {
    if (cudafft_convolve_set_mix(gst_cuda_convolve_engine(self), mix) == CUDAFFT_STATUS_OK)
      self->engine_mix = mix;
  }
}

/* The engine is made here where set_caps left it to the first buffer: the impulse response was
 * still being decoded, and is waited for now. */
static GstFlowReturn
open_engine_at_start(GstCudaConvolve *self)
{
  if (GST_AUDIO_INFO_RATE(&self->info) == 0)
    return GST_FLOW_NOT_NEGOTIATED;
  GstCudafftResponseSource source;
  GstCudafftResponseFileResult *ir = NULL;
  GST_DEBUG_OBJECT(self, "first buffer: making the engine (waiting for the impulse response)");
  if (gst_cuda_convolve_kernel_source(self, TRUE, &source, &ir) ==
      GST_CUDAFFT_RESPONSE_FILE_PENDING) {
    GST_DEBUG_OBJECT(self, "stopped while waiting for the impulse response");
    return GST_FLOW_FLUSHING;
  }
  const gboolean ok = gst_cuda_convolve_open_engine(self, &source, ir);
  gst_cudafft_response_file_result_unref(ir);
  return ok ? GST_FLOW_OK : GST_FLOW_ERROR;
}

GstFlowReturn
gst_cuda_convolve_prepare(GstCudafftAudioFilter *filter)
{
  GstCudaConvolve *self = GST_CUDA_CONVOLVE(filter);
  if (!gst_cuda_convolve_engine(self)) {
    const GstFlowReturn ret = open_engine_at_start(self);
    if (ret != GST_FLOW_OK)
      return ret;
  }
  apply_settings(self);
  return GST_FLOW_OK;
}

GstFlowReturn
gst_cuda_convolve_begin_run(GstCudafftAudioFilter *filter, GstBuffer *first)
{
  GstCudaConvolve *self = GST_CUDA_CONVOLVE(filter);
  (void)first;
  self->filtered = 0;
  GST_OBJECT_LOCK(self);
  self->run_latency = self->settings.latency;
  GST_OBJECT_UNLOCK(self);
  return GST_FLOW_OK;
}

GstFlowReturn
gst_cuda_convolve_process(GstCudafftAudioFilter *filter, GstBuffer *inbuf, const GstMapInfo *map,
                          GstBuffer **outbuf)
{
  GstCudaConvolve *self = GST_CUDA_CONVOLVE(filter);
  (void)inbuf;
  (void)outbuf; /* the output goes out from filter_frames(), in buffers of bounded size */
  const GstFlowReturn ret = filter_frames(self, map->data, map->size / frame_bytes(self));
  if (ret == GST_FLOW_OK)
    gst_cuda_convolve_update_latency(self); /* a crossover between paths ends during a push */
  return ret;
}
