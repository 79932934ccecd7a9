/* gstcudamatrixconvolvesofa.c: cudamatrixconvolve's responses from an HRTF set (sofa-location):
 * each input channel i is filtered with the left- and right-ear responses of the measurement whose
 * direction is nearest to the channel's, entries (i, 0) and (i, 1) of an inputs x 2 matrix. The
 * channel's direction is the directions property's where it is set, else the standard loudspeaker
 * direction of its channel position (the table below, as FFmpeg's sofalizer places them). The
 * nearest measurement is taken, not an interpolation of neighbours: measured sets are dense (a few
 * degrees apart), and an interpolated response would be one no measurement has (comb filtering
 * where the neighbours' delays differ); the measurement taken for each channel is logged. The set
 * is loaded at the stream's rate when the responses are made, in the SOFA reader process
 * (gstcudamatrixconvolvesofareader.h), the streaming thread waiting for it within the reader's
 * time limit, and kept until sofa-location or the rate changes. */
#include "gstcudamatrixconvolveprivate.h"

#include <math.h>
#include <string.h>

#define GST_CAT_DEFAULT gst_cuda_matrix_convolve_debug

typedef struct {
  GstAudioChannelPosition position;
  gdouble azimuth, elevation;
} DefaultDirection;

/* Degrees, SOFA's convention: azimuth counter-clockwise from the front (90 is the left), elevation
 * up from the horizontal plane. The LFE channels come from the front. */
static const DefaultDirection default_directions[] = {
    {GST_AUDIO_CHANNEL_POSITION_MONO, 0, 0},
    {GST_AUDIO_CHANNEL_POSITION_FRONT_LEFT, 30, 0},
    {GST_AUDIO_CHANNEL_POSITION_FRONT_RIGHT, -30, 0},
    {GST_AUDIO_CHANNEL_POSITION_FRONT_CENTER, 0, 0},
    {GST_AUDIO_CHANNEL_POSITION_LFE1, 0, 0},
    {GST_AUDIO_CHANNEL_POSITION_LFE2, 0, 0},
    {GST_AUDIO_CHANNEL_POSITION_REAR_LEFT, 150, 0},
    {GST_AUDIO_CHANNEL_POSITION_REAR_RIGHT, -150, 0},
    {GST_AUDIO_CHANNEL_POSITION_REAR_CENTER, 180, 0},
    {GST_AUDIO_CHANNEL_POSITION_FRONT_LEFT_OF_CENTER, 15, 0},
    {GST_AUDIO_CHANNEL_POSITION_FRONT_RIGHT_OF_CENTER, -15, 0},
    {GST_AUDIO_CHANNEL_POSITION_SIDE_LEFT, 90, 0},
    {GST_AUDIO_CHANNEL_POSITION_SIDE_RIGHT, -90, 0},
    {GST_AUDIO_CHANNEL_POSITION_WIDE_LEFT, 60, 0},
    {GST_AUDIO_CHANNEL_POSITION_WIDE_RIGHT, -60, 0},
    {GST_AUDIO_CHANNEL_POSITION_SURROUND_LEFT, 120, 0},
    {GST_AUDIO_CHANNEL_POSITION_SURROUND_RIGHT, -120, 0},
    {GST_AUDIO_CHANNEL_POSITION_TOP_FRONT_LEFT, 30, 45},
    {GST_AUDIO_CHANNEL_POSITION_TOP_FRONT_RIGHT, -30, 45},
    {GST_AUDIO_CHANNEL_POSITION_TOP_FRONT_CENTER, 0, 45},
    {GST_AUDIO_CHANNEL_POSITION_TOP_CENTER, 0, 90},
    {GST_AUDIO_CHANNEL_POSITION_TOP_REAR_LEFT, 150, 45},
    {GST_AUDIO_CHANNEL_POSITION_TOP_REAR_RIGHT, -150, 45},
    {GST_AUDIO_CHANNEL_POSITION_TOP_REAR_CENTER, 180, 45},
    {GST_AUDIO_CHANNEL_POSITION_TOP_SIDE_LEFT, 90, 45},
    {GST_AUDIO_CHANNEL_POSITION_TOP_SIDE_RIGHT, -90, 45},
    {GST_AUDIO_CHANNEL_POSITION_BOTTOM_FRONT_CENTER, 0, -45},
    {GST_AUDIO_CHANNEL_POSITION_BOTTOM_FRONT_LEFT, 30, -45},
    {GST_AUDIO_CHANNEL_POSITION_BOTTOM_FRONT_RIGHT, -30, -45},
};

gboolean
gst_cuda_matrix_convolve_default_direction(GstAudioChannelPosition position, gdouble *azimuth,
                                           gdouble *elevation)
{
  for (gsize k = 0; k < G_N_ELEMENTS(default_directions); k++)
    if (default_directions[k].position == position) {
      *azimuth = default_directions[k].azimuth;
      *elevation = default_directions[k].elevation;
      return TRUE;
    }
  return FALSE;
}

guint
gst_cuda_matrix_convolve_sofa_nearest(const GstCudaMatrixConvolveSofaSet *set, gdouble azimuth,
                                      gdouble elevation)
{
  const gdouble a = azimuth * G_PI / 180.0, e = elevation * G_PI / 180.0;
  const gdouble want[3] = {cos(e) * cos(a), cos(e) * sin(a), sin(e)};
  guint best = 0;
  gdouble best_cosine = -INFINITY;
  for (guint m = 0; m < set->measurements; m++) {
    const gdouble *d = set->directions + (gsize)m * 3;
    const gdouble cosine = d[0] * want[0] + d[1] * want[1] + d[2] * want[2];
    if (cosine > best_cosine) { /* NaN (no direction) never is */
      best_cosine = cosine;
      best = m;
    }
  }
  return best;
}

gboolean
gst_cuda_matrix_convolve_sofa_in_force(GstCudaMatrixConvolve *self)
{
  GST_OBJECT_LOCK(self);
  const gboolean set = self->settings.sofa_location != NULL;
  GST_OBJECT_UNLOCK(self);
  return set;
}

static void
problem_set(GstCudafftResponseFileProblem *problem, gint code, gchar *text)
{
  problem->domain = GST_STREAM_ERROR;
  problem->code = code;
  problem->text = text;
  problem->debug = NULL;
}

/* Each input channel's direction (inputs x <azimuth, elevation>), or FALSE with *problem. */
static gboolean
channel_directions(GstCudaMatrixConvolve *self, guint inputs, const gdouble *set_directions,
                   guint n_directions, gdouble *out, GstCudafftResponseFileProblem *problem)
{
  if (n_directions > 0) {
    if (n_directions != inputs) {
      problem_set(problem, GST_STREAM_ERROR_FORMAT,
                  g_strdup_printf("The directions property gives %u directions for the stream's "
                                  "%u input channels: give one <azimuth, elevation> per channel, "
                                  "or none for the channels' positions.",
                                  n_directions, inputs));
      return FALSE;
    }
    memcpy(out, set_directions, 2 * (gsize)inputs * sizeof *out);
    return TRUE;
  }
  const gboolean unpositioned = GST_AUDIO_INFO_IS_UNPOSITIONED(&self->info);
  for (guint i = 0; i < inputs; i++) {
    const GstAudioChannelPosition position = GST_AUDIO_INFO_POSITION(&self->info, i);
    if (unpositioned ||
        !gst_cuda_matrix_convolve_default_direction(position, &out[2 * i], &out[2 * i + 1])) {
      problem_set(problem, GST_STREAM_ERROR_FORMAT,
                  g_strdup_printf("Input channel %u of %u has no loudspeaker position (%s) to "
                                  "take a direction from: set the directions property (one "
                                  "<azimuth, elevation> per input channel), or give the caps a "
                                  "channel-mask.",
                                  i, inputs,
                                  unpositioned ? "the caps have channel-mask 0" : "NONE"));
      return FALSE;
    }
  }
  return TRUE;
}

gboolean
gst_cuda_matrix_convolve_sofa_responses(GstCudaMatrixConvolve *self, guint inputs,
                                        GstCudafftResponseFileProblem *problem, Responses *out)
{
  GST_OBJECT_LOCK(self);
  gchar *location = g_strdup(self->settings.sofa_location);
  const guint serial = self->settings.sofa_serial;
  const guint wanted_outputs = self->settings.outputs;
  const guint n_directions = self->settings.n_directions;
  gdouble *set_directions = g_new(gdouble, 2 * (gsize)MAX(n_directions, 1));
  if (n_directions > 0)
    memcpy(set_directions, self->settings.directions,
           2 * (gsize)n_directions * sizeof *set_directions);
  GST_OBJECT_UNLOCK(self);
  gdouble *directions = g_new(gdouble, 2 * (gsize)inputs);
  gboolean ok = FALSE;
  const gint rate = GST_AUDIO_INFO_RATE(&self->info);
  if (!location) {
    problem_set(problem, GST_STREAM_ERROR_FORMAT, g_strdup("sofa-location was unset."));
    goto done;
  }
  if (!self->sofa || self->sofa_loaded_serial != serial || self->sofa->rate != rate) {
    gst_cuda_matrix_convolve_sofa_set_free(self->sofa);
    self->sofa = NULL;
    /* a FIFO would block the reader (until its time limit): refused before it is opened */
    if (!gst_cudafft_response_file_check(location, "sofa-location", problem))
      goto done;
    self->sofa =
        gst_cuda_matrix_convolve_sofa_reader_load(self->sofa_reader, location, rate, problem);
    if (!self->sofa && !problem->text)
      goto done; /* stopped: read again at the next start */
    self->sofa_loaded_serial = serial;
    if (!self->sofa)
      goto done;
    GST_INFO_OBJECT(self, "\"%s\": %u measurements of %" G_GSIZE_FORMAT " taps, %d Hz (from %d)",
                    location, self->sofa->measurements, self->sofa->taps, rate,
                    self->sofa->file_rate);
  }
  const GstCudaMatrixConvolveSofaSet *set = self->sofa;
  if (wanted_outputs > 0 && wanted_outputs != set->receivers) {
    problem_set(problem, GST_STREAM_ERROR_FORMAT,
                g_strdup_printf("The HRTF set \"%s\" (sofa-location) gives %u outputs (its "
                                "receivers), but outputs=%u.",
                                location, set->receivers, wanted_outputs));
    goto done;
  }
  if (!channel_directions(self, inputs, set_directions, n_directions, directions, problem))
    goto done;
  const gsize rows = (gsize)inputs * set->receivers;
  gdouble *data = g_try_new(gdouble, rows * set->taps);
  if (!data) {
    problem->domain = GST_RESOURCE_ERROR;
    problem->code = GST_RESOURCE_ERROR_NO_SPACE_LEFT;
    problem->text =
        g_strdup_printf("Out of memory for %u channels of the HRTF set \"%s\".", inputs, location);
    goto done;
  }
  for (guint i = 0; i < inputs; i++) {
    const guint m =
        gst_cuda_matrix_convolve_sofa_nearest(set, directions[2 * i], directions[2 * i + 1]);
    const gdouble *d = set->directions + (gsize)m * 3;
    GST_INFO_OBJECT(self,
                    "input %u (azimuth %g, elevation %g): measurement %u (azimuth %.2f, "
                    "elevation %.2f)",
                    i, directions[2 * i], directions[2 * i + 1], m, atan2(d[1], d[0]) * 180 / G_PI,
                    asin(CLAMP(d[2], -1.0, 1.0)) * 180 / G_PI);
    memcpy(data + (gsize)i * set->receivers * set->taps,
           set->responses + (gsize)m * set->receivers * set->taps,
           (gsize)set->receivers * set->taps * sizeof *data);
  }
  out->data = data;
  out->rows = (guint)rows;
  out->taps = set->taps;
  out->outputs = set->receivers;
  ok = TRUE;
done:
  g_free(directions);
  g_free(set_directions);
  g_free(location);
  return ok;
}
