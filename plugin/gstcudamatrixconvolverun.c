/* gstcudamatrixconvolverun.c: cudamatrixconvolve's runs through the engine: the input pushed
 * through cudafft/matrix.h in pushes of bounded size (read in place where it is CUDA memory), the
 * output (the matrix's channel count) in buffers of the base class's pool or in CUDA memory,
 * stamped from the run's sample count; the drain with zeros at EOS and new segments (the tail as
 * drain-tail says); new responses (file or property) applied at buffer boundaries, crossfaded by
 * the engine. The element's properties, caps and events are gstcudamatrixconvolve.c's (which calls
 * this file), the responses in force, the engine made from them and its latency
 * gstcudamatrixconvolveresponses.c's (which this file calls). */
#include "gstcudamatrixconvolveprivate.h"

#include "gstcudafftproperties.h"
#include "gstcudafftrun.h"

#include <string.h>

#define GST_CAT_DEFAULT gst_cuda_matrix_convolve_debug

/* Applies a matrix or ir-location change made while streaming: the new responses cross over at
 * the engine's next block boundary. Responses that cannot be used, or that would change the
 * number of outputs, leave the old ones with a WARNING, and are not retried at every buffer. */
static void
apply_settings(GstCudaMatrixConvolve *self)
{
  GstCudafftResponseSource source;
  GstCudafftResponseFileResult *ir = NULL;
  const GstCudafftResponseFileState state =
      gst_cuda_matrix_convolve_responses_source(self, FALSE, &source, &ir);
  if (state == GST_CUDAFFT_RESPONSE_FILE_PENDING ||
      gst_cudafft_response_source_equal(&source, &self->engine_source)) {
    gst_cudafft_response_file_result_unref(ir);
    return;
  }
  const guint inputs = GST_AUDIO_INFO_CHANNELS(&self->info);
  /* a refused matrix property reads back as the matrix in force (not a file's or a SOFA set's) */
  const gboolean from_matrix = !ir && !gst_cuda_matrix_convolve_sofa_in_force(self);
  gboolean refused = TRUE;
  GstCudafftResponseFileProblem problem = {0};
  Responses r = {NULL, 0, 0, 0};
  if (!gst_cuda_matrix_convolve_make_responses(self, ir, inputs, &problem, &r)) {
    if (!problem.text) { /* stopped while the HRTF set was read: read again at the next start */
      gst_cudafft_response_file_result_unref(ir);
      return;
    }
    gchar *text = g_strdup_printf("%s Keeping the previous matrix.", problem.text);
    g_free(problem.text);
    problem.text = text;
    gst_cudafft_response_file_problem_post(&problem, GST_ELEMENT(self), FALSE);
    gst_cudafft_response_file_problem_clear(&problem);
  } else if (r.outputs != self->engine_outputs) {
    gst_cudafft_refuse_value_full(GST_ELEMENT(self), GST_STREAM_ERROR, GST_STREAM_ERROR_FORMAT,
                                  NULL,
                                  "The new matrix has %u outputs for %u input channels, but the "
                                  "stream has %u: the output count cannot change while playing; "
                                  "keeping the previous matrix (set it in the READY state).",
                                  r.outputs, inputs, self->engine_outputs);
  } else {
    const CudafftMatrixResponses responses = {.taps_data = r.data, .taps = r.taps};
    const CudafftStatus status =
        cudafft_matrix_set_responses(gst_cuda_matrix_convolve_engine(self), &responses);
    refused = status != CUDAFFT_STATUS_OK;
    if (!refused) {
      GST_DEBUG_OBJECT(self, "new matrix of %" G_GSIZE_FORMAT " taps", r.taps);
      gst_cuda_matrix_convolve_keep_matrix_in_force(self, ir, &r);
    } else
      gst_cudafft_refuse_value_full(GST_ELEMENT(self), GST_RESOURCE_ERROR,
                                    GST_RESOURCE_ERROR_NO_SPACE_LEFT, cudafft_status_name(status),
                                    "Cannot use the new matrix (%" G_GSIZE_FORMAT
                                    " taps); keeping the previous one: %s",
                                    r.taps, cudafft_last_error_message());
  }
  if (refused && from_matrix)
    gst_cuda_matrix_convolve_restore_matrix_in_force(self, source.serial);
  g_free(r.data);
  gst_cudafft_response_file_result_unref(ir);
  self->engine_source = source;
}

static gsize
in_bpf(const GstCudaMatrixConvolve *self)
{
  return GST_AUDIO_INFO_BPF(&self->info);
}

static gsize
out_bpf(const GstCudaMatrixConvolve *self)
{
  return GST_AUDIO_INFO_BPF(&self->out_info);
}

/* Input frames per engine push: its output (the frames and the lag, under a block) stays within
 * GST_CUDAFFT_MAX_OUTPUT_BYTES. */
static gsize
frames_per_push(const GstCudaMatrixConvolve *self)
{
  const gsize most = GST_CUDAFFT_MAX_OUTPUT_BYTES / MAX(in_bpf(self), out_bpf(self));
  return most > 2 * CUDAFFT_MATRIX_BLOCK ? most - CUDAFFT_MATRIX_BLOCK : CUDAFFT_MATRIX_BLOCK;
}

/* Stamps `buffer` (taken: count output frames, the run's next, from its start) and pushes it. */
static GstFlowReturn
push_output(GstCudaMatrixConvolve *self, GstBuffer *buffer, gsize count)
{
  GstCudafftRun *run = GST_CUDAFFT_AUDIO_FILTER_RUN(self);
  buffer = gst_cudafft_audio_filter_trim_output(GST_CUDAFFT_AUDIO_FILTER(self), buffer, 0,
                                                count * out_bpf(self));
  if (!buffer)
    return GST_FLOW_ERROR; /* posted */
  gst_cudafft_run_stamp(run, buffer, run->produced, count);
  GST_BUFFER_OFFSET(buffer) = run->produced;
  GST_BUFFER_OFFSET_END(buffer) = run->produced + count;
  if (run->produced == 0)
    GST_BUFFER_FLAG_SET(buffer, GST_BUFFER_FLAG_DISCONT);
  run->produced += count;
  return gst_pad_push(GST_BASE_TRANSFORM_SRC_PAD(self), buffer);
}

/* Pushes `frames` input frames at `data` (device memory where the base class says the input is)
 * through the engine, and the output that comes out downstream (in CUDA memory where the src caps
 * say so). */
static GstFlowReturn
push_through_engine(GstCudaMatrixConvolve *self, const void *data, gsize frames)
{
  GstCudafftAudioFilter *filter = GST_CUDAFFT_AUDIO_FILTER(self);
  CudafftMatrix *engine = gst_cuda_matrix_convolve_engine(self);
  /* exactly what this push will produce (a buffer of CUDA memory must hold exactly its frames) */
  const size_t most = cudafft_matrix_output_frames(engine, frames);
  const unsigned on_device =
      (gst_cudafft_audio_filter_input_on_device(filter) ? CUDAFFT_IN_DEVICE : 0) |
      (self->cuda_out ? CUDAFFT_OUT_DEVICE : 0);
  GstMapInfo map = GST_MAP_INFO_INIT;
  GstBuffer *buffer = most > 0 ? gst_cudafft_audio_filter_map_output(
                                     filter, most * out_bpf(self),
                                     CUDAFFT_MATRIX_BLOCK * out_bpf(self), self->cuda_out, &map)
                               : NULL;
  if (most > 0 && !buffer)
    return GST_FLOW_ERROR;
  size_t produced = 0;
  /* the engine's output is complete when its push returns (cudafft/matrix.h): its fence is
   * zeroed, and the buffer goes on as it is */
  CudafftFence *done =
      buffer ? gst_cudafft_audio_filter_output_fence(filter, self->cuda_out) : NULL;
  const CudafftStatus status =
      cudafft_matrix_push_device(engine, data, frames, map.data, &produced, on_device,
                                 gst_cudafft_audio_filter_input_fence(filter), done);
  if (buffer)
    gst_cudafft_audio_filter_unmap_output(buffer, &map);
  if (status != CUDAFFT_STATUS_OK) {
    gst_cudafft_audio_filter_post_error(filter, status, "cudafft_matrix_push");
    if (buffer)
      gst_buffer_unref(buffer);
    return GST_FLOW_ERROR;
  }
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
  return push_output(self, buffer, produced);
}

static GstFlowReturn
push_silence(gpointer self, const void *data, gsize frames)
{
  return push_through_engine(self, data, frames);
}

/* Ends the run: the rest of the output as if zeros followed the input, up to its last sample, or
 * with `tail` up to the end of the responses to it (zeros pushed through the engine in pieces of
 * bounded output, then a drain of what still lags). Then the engine starts afresh. */
GstFlowReturn
gst_cuda_matrix_convolve_end_run(GstCudaMatrixConvolve *self, gboolean tail)
{
  GstCudafftRun *run = GST_CUDAFFT_AUDIO_FILTER_RUN(self);
  CudafftMatrix *engine = gst_cuda_matrix_convolve_engine(self);
  GstFlowReturn ret = GST_FLOW_OK;
  if (run->active && engine && run->samples > 0) {
    const guint64 zeros =
        tail ? cudafft_matrix_drain_frames(engine, 1) - cudafft_matrix_drain_frames(engine, 0) : 0;
    ret = gst_cudafft_run_push_silence(GST_ELEMENT(self), "the responses' tail", zeros,
                                       frames_per_push(self), in_bpf(self), push_silence, self);
    const gsize lag = cudafft_matrix_drain_frames(engine, 0);
    if (ret == GST_FLOW_OK && lag > 0) {
      GstMapInfo map = GST_MAP_INFO_INIT;
      GstBuffer *buffer = gst_cudafft_audio_filter_map_output(
          GST_CUDAFFT_AUDIO_FILTER(self), lag * out_bpf(self), CUDAFFT_MATRIX_BLOCK * out_bpf(self),
          self->cuda_out, &map);
      if (!buffer) {
        ret = GST_FLOW_ERROR; /* posted */
      } else {
        size_t produced = 0;
        const CudafftStatus status =
            self->cuda_out ? cudafft_matrix_drain_device(engine, 0, map.data, &produced)
                           : cudafft_matrix_drain(engine, 0, map.data, &produced);
        gst_cudafft_audio_filter_unmap_output(buffer, &map);
        if (status != CUDAFFT_STATUS_OK) {
          gst_cudafft_audio_filter_post_error(GST_CUDAFFT_AUDIO_FILTER(self), status,
                                              "cudafft_matrix_drain");
          gst_buffer_unref(buffer);
          ret = GST_FLOW_ERROR;
        } else if (produced == 0) {
          gst_buffer_unref(buffer);
        } else {
          ret = push_output(self, buffer, produced);
        }
      }
    }
    GST_DEBUG_OBJECT(self,
                     "run of %" G_GUINT64_FORMAT " samples ends%s: %" G_GUINT64_FORMAT
                     " output samples in all",
                     run->samples, tail ? " with the tail" : "", run->produced);
  }
  gst_cudafft_audio_filter_reset_run(GST_CUDAFFT_AUDIO_FILTER(self));
  return ret;
}

/* The engine is made here where set_caps left it to the first buffer: the responses were still
 * being decoded, and are waited for now. */
GstFlowReturn
gst_cuda_matrix_convolve_prepare(GstCudafftAudioFilter *filter)
{
  GstCudaMatrixConvolve *self = GST_CUDA_MATRIX_CONVOLVE(filter);
  if (!gst_cuda_matrix_convolve_engine(self)) {
    if (GST_AUDIO_INFO_RATE(&self->info) == 0)
      return GST_FLOW_NOT_NEGOTIATED;
    GstCudafftResponseSource source;
    GstCudafftResponseFileResult *ir = NULL;
    if (gst_cuda_matrix_convolve_responses_source(self, TRUE, &source, &ir) ==
        GST_CUDAFFT_RESPONSE_FILE_PENDING)
      return GST_FLOW_FLUSHING; /* stopped while waiting */
    const GstFlowReturn ret = gst_cuda_matrix_convolve_open_engine(self, &source, ir);
    gst_cudafft_response_file_result_unref(ir);
    if (ret != GST_FLOW_OK)
      return ret;
  }
  apply_settings(self);
  return GST_FLOW_OK;
}

GstFlowReturn
gst_cuda_matrix_convolve_process(GstCudafftAudioFilter *filter, GstBuffer *inbuf,
                                 const GstMapInfo *map, GstBuffer **outbuf)
{
  GstCudaMatrixConvolve *self = GST_CUDA_MATRIX_CONVOLVE(filter);
  (void)inbuf;
  (void)outbuf; /* the output goes out from here, in buffers of bounded size */
  const guint8 *data = map->data;
  gsize frames = map->size / in_bpf(self);
  const gsize piece = frames_per_push(self);
  GstFlowReturn ret = GST_FLOW_OK;
  while (ret == GST_FLOW_OK && frames > 0) {
    const gsize n = MIN(frames, piece);
    ret = push_through_engine(self, data, n);
    GST_CUDAFFT_AUDIO_FILTER_RUN(self)->samples += n;
    data += n * in_bpf(self);
    frames -= n;
  }
  return ret;
}
