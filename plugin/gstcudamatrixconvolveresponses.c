/* gstcudamatrixconvolveresponses.c: cudamatrixconvolve's responses and engine: which source is in
 * force (the sofa-location set, the ir-location(s) file, or the matrix property), the inputs x
 * outputs rows made from it and checked against the stream (entry count, outputs, taps, finite
 * values), the engine (cudafft/matrix.h) made from them, and its latency (the engine's block
 * size), announced where it changes. The properties, caps and events are
 * gstcudamatrixconvolve.c's, the runs through the engine gstcudamatrixconvolverun.c's; both call
 * this file, which calls neither (its HRTF sets are gstcudamatrixconvolvesofa.c's). */
#include "gstcudamatrixconvolveprivate.h"

#include "gstcudafftbackend.h"

#include <float.h>
#include <math.h>
#include <string.h>

#define GST_CAT_DEFAULT gst_cuda_matrix_convolve_debug

/* The responses in force -------------------------------------------------------------------- */

/* Which responses are in force: the SOFA set's where sofa-location is set (NONE: made from the
 * settings), else the file's (READY, or PENDING while it is decoded; with `wait` that waits) where
 * ir-location is set, else (NONE) the matrix property's. */
GstCudafftResponseFileState
gst_cuda_matrix_convolve_responses_source(GstCudaMatrixConvolve *self, gboolean wait,
                                          GstCudafftResponseSource *source,
                                          GstCudafftResponseFileResult **ir)
{
  GstCudafftResponseFileState state = GST_CUDAFFT_RESPONSE_FILE_NONE;
  source->ir_request = 0;
  *ir = NULL;
  if (!gst_cuda_matrix_convolve_sofa_in_force(self))
    state = gst_cudafft_response_file_get(self->ir, wait, ir, &source->ir_request);
  GST_OBJECT_LOCK(self);
  source->serial = self->settings.serial;
  GST_OBJECT_UNLOCK(self);
  return state;
}

static void
problem_set(GstCudafftResponseFileProblem *problem, GQuark domain, gint code, gchar *text)
{
  problem->domain = domain;
  problem->code = code;
  problem->text = text;
}

/* The entry count the responses of `source` have without reading them (0 where unknown). */
static guint
entries_of(GstCudaMatrixConvolve *self, const GstCudafftResponseFileResult *ir)
{
  if (ir)
    return ir->data ? ir->channels : 0;
  GST_OBJECT_LOCK(self);
  const guint rows = self->settings.matrix ? self->settings.rows : 0;
  GST_OBJECT_UNLOCK(self);
  return rows;
}

/* The number of outputs for `inputs` input channels: the outputs property, 2 for a SOFA set, else
 * the entries' count / inputs; 0 where that is not known or not whole. */
guint
gst_cuda_matrix_convolve_outputs_for(GstCudaMatrixConvolve *self, guint inputs,
                                     const GstCudafftResponseFileResult *ir)
{
  GST_OBJECT_LOCK(self);
  const guint outputs = self->settings.outputs;
  const gboolean sofa = self->settings.sofa_location != NULL;
  GST_OBJECT_UNLOCK(self);
  if (outputs > 0)
    return outputs;
  if (sofa)
    return 2; /* the ears: SOFA's SimpleFreeFieldHRIR has two receivers */
  const guint entries = entries_of(self, ir);
  return inputs > 0 && entries % inputs == 0 ? entries / inputs : 0;
}

/* Whether every tap of `r` is finite (and within the float range on an F32 stream, which the
 * engine filters in single precision: a tap beyond it would be Inf); if not, fills *problem and
 * frees r's data. `what` names the responses. */
static gboolean
responses_finite(GstCudaMatrixConvolve *self, const gchar *what, Responses *r,
                 GstCudafftResponseFileProblem *problem)
{
  const gboolean f32 = GST_AUDIO_INFO_FORMAT(&self->info) == GST_AUDIO_FORMAT_F32LE;
  const gsize count = (gsize)r->rows * r->taps;
  for (gsize k = 0; k < count; k++) {
    const gdouble x = r->data[k];
    if (!isfinite(x) || (f32 && fabs(x) > FLT_MAX)) {
      problem_set(problem, GST_STREAM_ERROR, GST_STREAM_ERROR_FORMAT,
                  g_strdup_printf("%s has a tap that is %s (entry %u, tap %" G_GSIZE_FORMAT
                                  "): every tap must be a finite number%s.",
                                  what, isfinite(x) ? "beyond the float range" : "not finite",
                                  (guint)(k / r->taps), k % r->taps,
                                  f32 ? " within the float range on an F32 stream" : ""));
      g_free(r->data);
      memset(r, 0, sizeof *r);
      return FALSE;
    }
  }
  return TRUE;
}

/* The responses for `inputs` input channels from the decoded file `ir`, or from the matrix
 * property where `ir` is NULL. */
static gboolean
responses_from_file_or_matrix(GstCudaMatrixConvolve *self, const GstCudafftResponseFileResult *ir,
                              guint inputs, GstCudafftResponseFileProblem *problem, Responses *out)
{
  GST_OBJECT_LOCK(self);
  const gboolean listed = self->settings.ir_locations != NULL;
  GST_OBJECT_UNLOCK(self);
  const gchar *what_name = !ir ? "matrix" : listed ? "ir-locations" : "ir-location";
  gchar *what = ir ? g_strdup_printf("The impulse responses \"%s\" (%s)", ir->location, what_name)
                   : g_strdup("The matrix property");
  gboolean ok = FALSE;
  if (ir && !ir->data) {
    problem_set(problem, ir->problem.domain, ir->problem.code, g_strdup(ir->problem.text));
    problem->debug = g_strdup(ir->problem.debug);
    goto done;
  }
  GST_OBJECT_LOCK(self);
  const guint wanted_outputs = self->settings.outputs;
  const gboolean have_matrix = self->settings.matrix != NULL;
  const gsize matrix_taps = self->settings.taps;
  GST_OBJECT_UNLOCK(self);
  if (!ir && !have_matrix) {
    problem_set(problem, GST_LIBRARY_ERROR, GST_LIBRARY_ERROR_SETTINGS,
                g_strdup("No responses: set ir-location (an audio file of inputs x outputs "
                         "channels) or matrix."));
    goto done;
  }
  const guint entries = entries_of(self, ir);
  if (entries % inputs != 0) {
    problem_set(problem, GST_STREAM_ERROR, GST_STREAM_ERROR_FORMAT,
                g_strdup_printf("%s has %u entries (channels), not a multiple of the stream's %u "
                                "input channels: it needs inputs x outputs entries, input-major "
                                "(entry i * outputs + j from input i to output j).",
                                what, entries, inputs));
    goto done;
  }
  const guint outputs = entries / inputs;
  if (outputs == 0 || outputs > CUDAFFT_MATRIX_MAX_CHANNELS) {
    problem_set(problem, GST_STREAM_ERROR, GST_STREAM_ERROR_FORMAT,
                g_strdup_printf("%s gives %u outputs for %u input channels: 1 to %d are "
                                "possible.",
                                what, outputs, inputs, CUDAFFT_MATRIX_MAX_CHANNELS));
    goto done;
  }
  if (wanted_outputs > 0 && outputs != wanted_outputs) {
    problem_set(problem, GST_STREAM_ERROR, GST_STREAM_ERROR_FORMAT,
                g_strdup_printf("%s has %u entries, but outputs=%u with %u input channels needs "
                                "%u.",
                                what, entries, wanted_outputs, inputs, wanted_outputs * inputs));
    goto done;
  }
  const gsize taps = ir ? ir->frames : matrix_taps;
  if (taps == 0 || taps > CUDAFFT_MATRIX_MAX_TAPS) {
    problem_set(problem, GST_STREAM_ERROR, GST_STREAM_ERROR_FORMAT,
                g_strdup_printf("%s has %" G_GSIZE_FORMAT " taps: 1 to %u are possible.", what,
                                taps, CUDAFFT_MATRIX_MAX_TAPS));
    goto done;
  }
  gdouble *data = g_try_new(gdouble, (gsize)entries * taps);
  if (!data) {
    problem_set(problem, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_NO_SPACE_LEFT,
                g_strdup_printf("Out of memory for %s: %u entries of %" G_GSIZE_FORMAT " taps.",
                                what_name, entries, taps));
    goto done;
  }
  if (ir) { /* interleaved channels to rows */
    for (guint r = 0; r < entries; r++)
      for (gsize t = 0; t < taps; t++)
        data[(gsize)r * taps + t] = ir->data[t * entries + r];
  } else {
    GST_OBJECT_LOCK(self);
    const gboolean same =
        self->settings.matrix && self->settings.rows == entries && self->settings.taps == taps;
    if (same)
      memcpy(data, self->settings.matrix, (gsize)entries * taps * sizeof(gdouble));
    GST_OBJECT_UNLOCK(self);
    if (!same) { /* changed since it was measured: read again at the next buffer */
      g_free(data);
      problem_set(problem, GST_LIBRARY_ERROR, GST_LIBRARY_ERROR_SETTINGS,
                  g_strdup("The matrix changed while it was read."));
      goto done;
    }
  }
  out->data = data;
  out->taps = taps;
  out->rows = entries;
  out->outputs = outputs;
  ok = responses_finite(self, what, out, problem);
done:
  g_free(what);
  return ok;
}

/* The responses for `inputs` input channels: the sofa-location set's where it is set; else from
 * the decoded file `ir`, or from the matrix property where `ir` is NULL; checked against the
 * stream: FALSE with *problem filled where they cannot be used. */
gboolean
gst_cuda_matrix_convolve_make_responses(GstCudaMatrixConvolve *self,
                                        const GstCudafftResponseFileResult *ir, guint inputs,
                                        GstCudafftResponseFileProblem *problem, Responses *out)
{
  memset(out, 0, sizeof *out);
  if (ir || !gst_cuda_matrix_convolve_sofa_in_force(self))
    return responses_from_file_or_matrix(self, ir, inputs, problem, out);
  if (!gst_cuda_matrix_convolve_sofa_responses(self, inputs, problem, out))
    return FALSE;
  GST_OBJECT_LOCK(self);
  gchar *what = g_strdup_printf("The HRTF set \"%s\" (sofa-location)",
                                GST_STR_NULL(self->settings.sofa_location));
  GST_OBJECT_UNLOCK(self);
  gboolean ok = TRUE;
  if (out->taps > CUDAFFT_MATRIX_MAX_TAPS) { /* its delays included */
    problem_set(problem, GST_STREAM_ERROR, GST_STREAM_ERROR_FORMAT,
                g_strdup_printf("%s has responses of %" G_GSIZE_FORMAT " taps (their delays "
                                "included): 1 to %u are possible.",
                                what, out->taps, CUDAFFT_MATRIX_MAX_TAPS));
    g_free(out->data);
    memset(out, 0, sizeof *out);
    ok = FALSE;
  }
  ok = ok && responses_finite(self, what, out, problem);
  g_free(what);
  return ok;
}

/* The engine ---------------------------------------------------------------------------------- */

GST_CUDAFFT_DEFINE_ENGINE(matrix_engine, matrix, CudafftMatrix, CudafftMatrixConfig,
                          "the matrix convolution");

/* Makes the engine for self->info and the responses of `source` (`ir`: see
 * gst_cuda_matrix_convolve_make_responses); a matrix that cannot be used, or one whose output count
 * is not the negotiated one, is an ERROR. */
GstFlowReturn
gst_cuda_matrix_convolve_open_engine(GstCudaMatrixConvolve *self,
                                     const GstCudafftResponseSource *source,
                                     const GstCudafftResponseFileResult *ir)
{
  GstCudafftAudioFilter *filter = GST_CUDAFFT_AUDIO_FILTER(self);
  const guint inputs = GST_AUDIO_INFO_CHANNELS(&self->info);
  GstCudafftResponseFileProblem problem = {0};
  Responses r;
  if (!gst_cuda_matrix_convolve_make_responses(self, ir, inputs, &problem, &r)) {
    if (!problem.text)
      return GST_FLOW_FLUSHING; /* stopped while the HRTF set was read */
    gst_cudafft_response_file_problem_post(&problem, GST_ELEMENT(self), TRUE);
    gst_cudafft_response_file_problem_clear(&problem);
    return GST_FLOW_ERROR;
  }
  if (r.outputs != (guint)GST_AUDIO_INFO_CHANNELS(&self->out_info)) {
    GST_ELEMENT_ERROR(self, CORE, NEGOTIATION,
                      ("The matrix has %u outputs for %u input channels, but %d output channels "
                       "were negotiated: set outputs=%u, or let downstream take %u channels.",
                       r.outputs, inputs, GST_AUDIO_INFO_CHANNELS(&self->out_info), r.outputs,
                       r.outputs),
                      (NULL));
    g_free(r.data);
    return GST_FLOW_ERROR;
  }
  GST_OBJECT_LOCK(self);
  const guint block_size = self->settings.block_size;
  GST_OBJECT_UNLOCK(self);
  const CudafftMatrixConfig config = {
      .inputs = inputs,
      .outputs = r.outputs,
      .format = gst_cudafft_sample_format(GST_AUDIO_INFO_FORMAT(&self->info)),
      .block_size = block_size,
      .responses = {.taps_data = r.data, .taps = r.taps},
  };
  if (!gst_cudafft_audio_filter_open_engine(filter, &matrix_engine, &config)) {
    g_free(r.data);
    return GST_FLOW_ERROR;
  }
  gst_cuda_matrix_convolve_keep_matrix_in_force(self, ir, &r);
  g_free(r.data);
  self->engine_source = *source;
  self->engine_outputs = r.outputs;
  GST_INFO_OBJECT(self, "%u x %u matrix of %" G_GSIZE_FORMAT " taps, block size %u", inputs,
                  r.outputs, r.taps, block_size);
  gst_cuda_matrix_convolve_update_latency(self);
  return GST_FLOW_OK;
}

void
gst_cuda_matrix_convolve_keep_matrix_in_force(GstCudaMatrixConvolve *self,
                                              const GstCudafftResponseFileResult *ir,
                                              const Responses *r)
{
  g_clear_pointer(&self->engine_matrix, g_free);
  self->engine_matrix_rows = 0;
  self->engine_matrix_taps = 0;
  if (ir || gst_cuda_matrix_convolve_sofa_in_force(self))
    return;
  const gsize bytes = (gsize)r->rows * r->taps * sizeof(gdouble);
  self->engine_matrix = g_malloc(bytes);
  memcpy(self->engine_matrix, r->data, bytes);
  self->engine_matrix_rows = r->rows;
  self->engine_matrix_taps = r->taps;
}

void
gst_cuda_matrix_convolve_restore_matrix_in_force(GstCudaMatrixConvolve *self, guint serial)
{
  Settings *s = &self->settings;
  GST_OBJECT_LOCK(self);
  if (s->serial == serial) {
    const gsize bytes =
        (gsize)self->engine_matrix_rows * self->engine_matrix_taps * sizeof(gdouble);
    g_free(s->matrix);
    s->matrix = self->engine_matrix ? g_malloc(bytes) : NULL;
    if (s->matrix)
      memcpy(s->matrix, self->engine_matrix, bytes);
    s->rows = self->engine_matrix_rows;
    s->taps = self->engine_matrix_taps;
  }
  GST_OBJECT_UNLOCK(self);
}

/* Latency ------------------------------------------------------------------------------------ */

/* Records the engine's latency (its block size) and tells the pipeline when it changed. */
void
gst_cuda_matrix_convolve_update_latency(GstCudaMatrixConvolve *self)
{
  CudafftMatrix *engine = gst_cuda_matrix_convolve_engine(self);
  const gint frames = engine ? (gint)cudafft_matrix_get_block_size(engine) : 0;
  const gint rate = GST_AUDIO_INFO_RATE(&self->info);
  if (gst_cudafft_latency_update(&self->latency, GST_ELEMENT(self), frames, rate))
    GST_DEBUG_OBJECT(self, "latency %d samples at %d Hz", frames, rate);
}

GstClockTime
gst_cuda_matrix_convolve_get_latency(GstCudafftAudioFilter *filter)
{
  return gst_cudafft_latency_get(&GST_CUDA_MATRIX_CONVOLVE(filter)->latency);
}
