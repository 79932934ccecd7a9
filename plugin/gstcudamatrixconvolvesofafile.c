/* gstcudamatrixconvolvesofafile.c: see the header; built into the SOFA reader only (the one file
 * that calls libmysofa, whose parser can spin on a damaged file, or crash: in the reader's process
 * either ends there, stopped by the element's time limit). libmysofa reads the file (mysofa_load),
 * checks it against the SimpleFreeFieldHRIR convention (mysofa_check: "SOFA", "FIR", one emitter,
 * two receivers), resamples it (mysofa_resample, its Speex resampler; the responses then scaled so
 * that they keep their gain, whichever way the library's release treats it) and converts the
 * source positions to cartesian coordinates. Its convenience layer (mysofa_open) is not used: it
 * normalises the loudness of the whole set, and the responses here stay as the file has them. */
#include "gstcudamatrixconvolvesofafile.h"

#include <math.h>
#include <mysofa.h>
#include <stdlib.h>
#include <string.h>

#define MAX_VALUES GST_CUDA_MATRIX_CONVOLVE_SOFA_MAX_VALUES

/* The lowest rate mysofa_resample resamples to: it refuses lower ones (MYSOFA_INVALID_FORMAT). */
#define MYSOFA_LOWEST_RATE 8000

static const gchar *
mysofa_error_name(int err)
{
  switch (err) {
  case MYSOFA_INVALID_FORMAT:
    return "not an HDF5 file of SOFA's layout";
  case MYSOFA_UNSUPPORTED_FORMAT:
    return "an HDF5 feature libmysofa does not read";
  case MYSOFA_NO_MEMORY:
    return "out of memory";
  case MYSOFA_READ_ERROR:
    return "a read error";
  case MYSOFA_INVALID_ATTRIBUTES:
    return "its attributes are not SimpleFreeFieldHRIR's (Conventions \"SOFA\", DataType "
           "\"FIR\", RoomType \"free field\")";
  case MYSOFA_INVALID_DIMENSIONS:
    return "its dimensions are not an HRTF set's (two receivers, one emitter, at least one "
           "measurement)";
  case MYSOFA_INVALID_DIMENSION_LIST:
    return "a variable has dimensions SOFA does not allow";
  case MYSOFA_INVALID_COORDINATE_TYPE:
    return "a position is neither cartesian nor spherical";
  case MYSOFA_ONLY_EMITTER_WITH_ECI_SUPPORTED:
    return "emitter positions other than one per set";
  case MYSOFA_ONLY_DELAYS_WITH_IR_OR_MR_SUPPORTED:
    return "delays other than one per receiver or per measurement and receiver";
  case MYSOFA_ONLY_THE_SAME_SAMPLING_RATE_SUPPORTED:
    return "more than one sampling rate";
  case MYSOFA_RECEIVERS_WITH_RCI_SUPPORTED:
  case MYSOFA_RECEIVERS_WITH_CARTESIAN_SUPPORTED:
  case MYSOFA_INVALID_RECEIVER_POSITIONS:
    return "receiver positions that are not two ears";
  case MYSOFA_ONLY_SOURCES_WITH_MC_SUPPORTED:
    return "source positions other than one per measurement";
  default:
    return "an internal error of libmysofa";
  }
}

/* Why mysofa_resample failed, where the rates were ones it takes (MYSOFA_LOWEST_RATE and up): it
 * returns its own codes, and the Speex resampler's (1 to 5) as they are. */
static gchar *
resample_error_text(int err)
{
  if (err > 0 && err < MYSOFA_INVALID_FORMAT)
    return g_strdup_printf("its Speex resampler refused the rates (Speex error %d)", err);
  if (err == MYSOFA_INVALID_FORMAT)
    return g_strdup("libmysofa refused the set's sampling rate or response count (libmysofa "
                    "error 10000)");
  return g_strdup_printf("%s (libmysofa error %d)", mysofa_error_name(err), err);
}

static GstCudaMatrixConvolveSofaSet *
fail(GstCudafftResponseFileProblem *problem, GQuark domain, gint code, gchar *text,
     struct MYSOFA_HRTF *hrtf)
{
  problem->domain = domain;
  problem->code = code;
  problem->text = text;
  problem->debug = NULL;
  if (hrtf)
    mysofa_free(hrtf);
  return NULL;
}

/* The factor that gives responses resampled by libmysofa from `from` to `to` Hz the gain they had:
 * a response keeps its frequency response only if its taps are scaled by from / to (a response
 * of twice the taps, each as large, has twice the gain), and libmysofa's releases differ in
 * whether mysofa_resample does that. A constant response resampled the same way tells which: its
 * taps come out near 1 (amplitudes kept: the factor is from / to) or near from / to (gain kept:
 * 1). 0 where the probe cannot be made. mysofa_resample reads and replaces only the fields set
 * here. */
static double
gain_kept_factor(double from, double to)
{
  enum { PROBE_TAPS = 256 };
  struct MYSOFA_HRTF probe;
  memset(&probe, 0, sizeof probe);
  probe.M = probe.R = 1;
  probe.N = PROBE_TAPS;
  probe.DataSamplingRate.elements = 1;
  probe.DataSamplingRate.values = malloc(sizeof(float));
  probe.DataIR.elements = PROBE_TAPS;
  probe.DataIR.values = malloc(PROBE_TAPS * sizeof(float)); /* libmysofa free()s it */
  double factor = 0.0;
  if (probe.DataSamplingRate.values && probe.DataIR.values) {
    probe.DataSamplingRate.values[0] = (float)from;
    for (guint k = 0; k < PROBE_TAPS; k++)
      probe.DataIR.values[k] = 1.0f;
    if (mysofa_resample(&probe, (float)to) == MYSOFA_OK && probe.N > 2) {
      const double middle = probe.DataIR.values[probe.N / 2], ratio = from / to;
      factor = fabs(middle - 1.0) < fabs(middle - ratio) ? ratio : 1.0;
    }
  }
  free(probe.DataIR.values);
  free(probe.DataSamplingRate.values);
  return factor;
}

GstCudaMatrixConvolveSofaSet *
gst_cuda_matrix_convolve_sofa_file_read(const gchar *location, gint rate,
                                        GstCudafftResponseFileProblem *problem)
{
  int err = MYSOFA_OK;
  struct MYSOFA_HRTF *hrtf = mysofa_load(location, &err);
  if (!hrtf)
    return fail(problem, GST_STREAM_ERROR, GST_STREAM_ERROR_WRONG_TYPE,
                g_strdup_printf("\"%s\" (sofa-location) is not a SOFA file: %s (libmysofa error "
                                "%d).",
                                location, mysofa_error_name(err), err),
                NULL);
  err = mysofa_check(hrtf);
  if (err != MYSOFA_OK)
    return fail(problem, GST_STREAM_ERROR, GST_STREAM_ERROR_FORMAT,
                g_strdup_printf("\"%s\" (sofa-location) is not an HRTF set of SOFA's "
                                "SimpleFreeFieldHRIR convention: %s (libmysofa error %d).",
                                location, mysofa_error_name(err), err),
                hrtf);
  /* what the code below reads, whatever a file that passed the check holds */
  if (hrtf->DataSamplingRate.elements < 1 || hrtf->SourcePosition.elements != hrtf->M * 3 ||
      hrtf->DataIR.elements != hrtf->M * hrtf->R * hrtf->N)
    return fail(problem, GST_STREAM_ERROR, GST_STREAM_ERROR_FORMAT,
                g_strdup_printf("\"%s\" (sofa-location) is not an HRTF set: its sampling rate, "
                                "source positions or responses do not match its dimensions.",
                                location),
                hrtf);
  const double file_rate = hrtf->DataSamplingRate.values[0];
  if (!(file_rate >= 1.0 && file_rate <= G_MAXINT))
    return fail(problem, GST_STREAM_ERROR, GST_STREAM_ERROR_FORMAT,
                g_strdup_printf("\"%s\" (sofa-location) has a sampling rate of %g Hz.", location,
                                file_rate),
                hrtf);
  double gain = 1.0;
  if (lround(file_rate) != rate) {
    if (rate < MYSOFA_LOWEST_RATE)
      return fail(problem, GST_STREAM_ERROR, GST_STREAM_ERROR_FORMAT,
                  g_strdup_printf("Cannot resample \"%s\" (sofa-location) from %g Hz to the "
                                  "stream's %d Hz: libmysofa resamples only to %d Hz or more. "
                                  "Resample the stream to %d Hz or more before the element "
                                  "(audioresample), or use a set measured at %d Hz.",
                                  location, file_rate, rate, MYSOFA_LOWEST_RATE, MYSOFA_LOWEST_RATE,
                                  rate),
                  hrtf);
    /* refused before resampling: a set of a few Hz (a damaged rate) would be resampled to more
     * values than any set may have */
    const double resampled = ceil(hrtf->N * ((double)rate / file_rate));
    if (resampled * hrtf->M * hrtf->R > (double)MAX_VALUES)
      return fail(problem, GST_STREAM_ERROR, GST_STREAM_ERROR_FORMAT,
                  g_strdup_printf("Cannot resample \"%s\" (sofa-location) from %g Hz to the "
                                  "stream's %d Hz: its %u measurements would have %.0f taps, more "
                                  "than %" G_GSIZE_FORMAT " values in all.",
                                  location, file_rate, rate, (guint)hrtf->M, resampled, MAX_VALUES),
                  hrtf);
    gain = gain_kept_factor(file_rate, rate);
    gchar *why = gain > 0.0 ? NULL
                            : g_strdup("libmysofa's resampler failed on a test response of the "
                                       "same rates");
    err = why ? MYSOFA_OK : mysofa_resample(hrtf, (float)rate);
    if (err != MYSOFA_OK)
      why = resample_error_text(err);
    if (why) {
      gchar *text = g_strdup_printf("Cannot resample \"%s\" (sofa-location) from %g Hz to the "
                                    "stream's %d Hz: %s.",
                                    location, file_rate, rate, why);
      g_free(why);
      return fail(problem, GST_STREAM_ERROR, GST_STREAM_ERROR_FORMAT, text, hrtf);
    }
  }
  mysofa_tocartesian(hrtf);

  const guint m_count = hrtf->M, r_count = hrtf->R;
  const gsize n = hrtf->N;
  /* Data.Delay, in samples: one per receiver (I x R) or per measurement and receiver (M x R) */
  const gboolean per_measurement = hrtf->DataDelay.elements == (gsize)m_count * r_count;
  gsize most_delay = 0;
  for (gsize k = 0; k < hrtf->DataDelay.elements; k++) {
    const float d = hrtf->DataDelay.values[k];
    if (!(d >= 0.0f && d < 1e6f))
      return fail(problem, GST_STREAM_ERROR, GST_STREAM_ERROR_FORMAT,
                  g_strdup_printf("\"%s\" (sofa-location) has a delay of %g samples (Data.Delay): "
                                  "0 to a million are possible.",
                                  location, (double)d),
                  hrtf);
    most_delay = MAX(most_delay, (gsize)lround(d));
  }
  const gsize taps = n + most_delay;
  if (taps == 0 || (gsize)m_count * r_count > MAX_VALUES / taps)
    return fail(problem, GST_STREAM_ERROR, GST_STREAM_ERROR_FORMAT,
                g_strdup_printf("\"%s\" (sofa-location) has %u measurements of %" G_GSIZE_FORMAT
                                " taps: at most %" G_GSIZE_FORMAT " values are read.",
                                location, m_count, taps, MAX_VALUES),
                hrtf);

  GstCudaMatrixConvolveSofaSet *set = g_new0(GstCudaMatrixConvolveSofaSet, 1);
  set->measurements = m_count;
  set->receivers = r_count;
  set->taps = taps;
  set->rate = rate;
  set->file_rate = (gint)lround(file_rate);
  set->directions = g_new(gdouble, (gsize)m_count * 3);
  set->responses = g_try_new0(gdouble, (gsize)m_count * r_count * taps);
  if (!set->responses) {
    gst_cuda_matrix_convolve_sofa_set_free(set);
    return fail(problem, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_NO_SPACE_LEFT,
                g_strdup_printf("Out of memory for \"%s\" (sofa-location): %u measurements of "
                                "%" G_GSIZE_FORMAT " taps.",
                                location, m_count, taps),
                hrtf);
  }
  for (guint m = 0; m < m_count; m++) {
    const float *p = hrtf->SourcePosition.values + (gsize)m * 3;
    const double length = sqrt((double)p[0] * p[0] + (double)p[1] * p[1] + (double)p[2] * p[2]);
    for (guint c = 0; c < 3; c++)
      set->directions[(gsize)m * 3 + c] = length > 0.0 ? p[c] / length : NAN;
    for (guint r = 0; r < r_count; r++) {
      const gsize delay =
          hrtf->DataDelay.elements == 0
              ? 0
              : (gsize)lround(
                    hrtf->DataDelay.values[per_measurement ? (gsize)m * r_count + r
                                                           : r % hrtf->DataDelay.elements]);
      const float *ir = hrtf->DataIR.values + ((gsize)m * r_count + r) * n;
      gdouble *out = set->responses + ((gsize)m * r_count + r) * taps + delay;
      for (gsize k = 0; k < n; k++)
        out[k] = gain * ir[k];
    }
  }
  mysofa_free(hrtf);
  return set;
}
