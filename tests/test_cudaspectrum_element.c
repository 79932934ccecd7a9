/* test_cudaspectrum_element.c: the cudaspectrum element against its contract (a drop-in
 * replacement for GStreamer's `spectrum`), through GstHarness, on the backend named by argv[1]
 * (cpu|cuda): metadata and properties against spectrum's, passthrough, levels of tones and of every
 * format against the double-precision model of spectrum's analysis (spectrum_reference.h, which
 * the library's test_spectrum shares), multi-channel, message fields and times with a non-zero
 * segment, spectrum's interval remainder carry, settings changed while playing, GStreamer's real
 * `spectrum` run side by side on the same input, the deliberate differences (partial interval at
 * EOS, DISCONT, untimestamped input, NaN), odd buffers, state cycles, two instances, and a settings
 * error. One behaviour per test.
 *
 * Length: past the ~800 lines a file usually keeps, as one test program (meson runs each as one
 * test of its suite) whose cases share one harness and one independent reference model; split,
 * each part would be a program of its own rebuilding the same setup. */
#include "element_util.h"
#include "spectrum_reference.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DB_TOLERANCE 0.05     /* dB, where the reference is above threshold + 1 dB */
#define PHASE_TOLERANCE 0.02  /* radians, where every FFT of the interval has a high level */
#define PHASE_MIN_LEVEL -100. /* dB: the lowest single-FFT level whose phase is compared */
#define TONE_DB (20 * log10(0.53836 / 2))      /* -11.3995 dB: a full-scale sine at a bin centre */
#define TONE_SIDE_DB (20 * log10(0.46164 / 4)) /* -18.755 dB: the bins next to it */
/* The value spectrum reads from each sample: integers divided by 2^(bits-1) - 1, F64 rounded to
 * float (cudafft/spectrum.h). */
#define READ (TEST_READ_SPECTRUM | TEST_READ_F64_AS_FLOAT)

/* Signals ----------------------------------------------------------------------------------- */

/* noise (uniform, amplitude noise_amp) plus, on channel c, a sine of tone_hz[c] Hz with amplitude
 * tone_amp and a random phase. */
static void
sp_signal_tones(TestSignal *s, TestRng *rng, CudafftSampleFormat format, guint channels, guint rate,
                gsize frames, double noise_amp, const double *tone_hz, double tone_amp)
{
  test_signal_alloc(s, format, channels, rate, frames, READ);
  double phase[64] = {0};
  for (guint c = 0; c < channels && c < 64; c++)
    phase[c] = G_PI * test_rng_uniform(rng);
  for (gsize f = 0; f < frames; f++)
    for (guint c = 0; c < channels; c++) {
      double x = noise_amp * test_rng_uniform53(rng);
      if (tone_hz[c] > 0)
        x += tone_amp * sin(2 * G_PI * tone_hz[c] * (double)f / rate + phase[c % 64]);
      test_signal_set(s, f, c, x);
    }
}

/* Noise of amplitude noise_amp. */
static void
sp_signal_noise(TestSignal *s, TestRng *rng, CudafftSampleFormat format, guint channels, guint rate,
                gsize frames, double noise_amp)
{
  test_signal_noise(s, rng, format, channels, rate, frames, READ, noise_amp);
}

/* The settings of an analysis. */
typedef struct {
  guint bands;
  guint64 interval;
  gint threshold;
  gboolean phase, multi;
} SpSettings;

/* The reference: spectrum_reference.h's model over a signal --------------------------------- */

/* One interval: frames [first, first + frames) of the signal. */
typedef struct {
  gsize first, frames, ffts;
  gboolean partial; /* ended by EOS */
  SpSettings settings;
  guint rows;
  double *mag;       /* rows x bands: mean level, dB (NaN where a window held NaN/Inf) */
  double *phase;     /* rows x bands: mean phase */
  double *min_level; /* rows x bands: the lowest unclamped level of the interval's FFTs */
} SpInterval;

/* Settings given while the frame `at` is the next to come: they apply from the first interval
 * that starts at or after it. */
typedef struct {
  gsize at;
  SpSettings settings;
} SpChange;

static void
sp_interval_clear(gpointer p)
{
  SpInterval *iv = p;
  g_free(iv->mag);
  g_free(iv->phase);
  g_free(iv->min_level);
}

static SpectrumRefSettings
sp_ref_settings(const SpSettings *st)
{
  const SpectrumRefSettings settings = {st->bands, st->multi, st->interval, st->threshold,
                                        st->phase};
  return settings;
}

/* Where the model's intervals go: an array of SpInterval, frames counted from `first`. */
typedef struct {
  GArray *out;
  gsize first;
} SpCollect;

static void
sp_collect_interval(void *context, const SpectrumRefInterval *r)
{
  SpCollect *collect = context;
  const gsize count = (gsize)r->rows * r->bands;
  SpInterval iv = {
      .first = collect->first + r->first,
      .frames = r->frames,
      .ffts = r->ffts,
      .partial = r->partial,
      .settings = {(guint)r->bands, r->settings.interval_ns, r->settings.threshold,
                   r->settings.phase, r->settings.multi_channel},
      .rows = r->rows,
      .mag = g_memdup2(r->level, count * sizeof(double)),
      .phase = g_memdup2(r->phase, count * sizeof(double)),
      .min_level = g_memdup2(r->min_level, count * sizeof(double)),
  };
  g_array_append_val(collect->out, iv);
}

/* Spectrum's analysis of frames [first, first + count) of sig as one fresh run (zeros before
 * first), with settings changes; finish: EOS ends a partial interval. Returns an array of
 * SpInterval. */
static GArray *
sp_reference(const TestSignal *sig, gsize first, gsize count, const SpSettings *initial,
             const SpChange *changes, guint n_changes, gboolean finish)
{
  GArray *out = g_array_new(FALSE, TRUE, sizeof(SpInterval));
  g_array_set_clear_func(out, sp_interval_clear);
  SpCollect collect = {out, first};
  SpectrumRefSettings settings = sp_ref_settings(initial);
  SpectrumRef *ref = spectrum_ref_new(sig->channels, sig->rate, &settings, NULL);
  const gsize end = first + count;
  gsize at = first;
  for (guint c = 0; c <= n_changes; c++) {
    const gsize until = c < n_changes ? CLAMP(changes[c].at, at, end) : end;
    spectrum_ref_push(ref, sig->values + at * sig->channels, until - at, sp_collect_interval,
                      &collect);
    at = until;
    if (c < n_changes) {
      settings = sp_ref_settings(&changes[c].settings);
      spectrum_ref_set_settings(ref, &settings);
    }
  }
  if (finish)
    spectrum_ref_finish(ref, sp_collect_interval, &collect);
  spectrum_ref_free(ref);
  return out;
}

/* Pushing ------------------------------------------------------------------------------------ */

/* A buffer as pushed: frames [first, first + count), its PTS (NONE: none). */
typedef struct {
  gsize first, count;
  GstClockTime pts;
} SpPushed;

/* Random buffer sizes lo..hi frames covering `total` frames. */
static GArray *
sp_random_sizes(TestRng *rng, gsize total, guint lo, guint hi)
{
  GArray *sizes = g_array_new(FALSE, FALSE, sizeof(gsize));
  for (gsize done = 0; done < total;) {
    const gsize r = test_rng_range(rng, lo, hi); /* not inside MIN: evaluated twice */
    const gsize n = MIN(r, total - done);
    g_array_append_val(sizes, n);
    done += n;
  }
  return sizes;
}

/* Pushes frames [first, first + sum(sizes)) in buffers of those sizes stamped from start into
 * each of the n harnesses (the same data, a buffer each), recording them in pushed (may be NULL),
 * dropping the output. */
static void
sp_push_sizes(GstHarness **h, guint n, const TestSignal *s, gsize first, const GArray *sizes,
              GstClockTime start, GArray *pushed)
{
  gsize at = first;
  for (guint b = 0; b < sizes->len; b++) {
    const gsize count = g_array_index(sizes, gsize, b);
    for (guint i = 0; i < n; i++) {
      GstBuffer *buf = eu_signal_buffer(s, at, count, start);
      const GstFlowReturn flow = gst_harness_push(h[i], buf);
      fail_unless(flow == GST_FLOW_OK, "push of frames %zu..%zu: %s", at, at + count,
                  gst_flow_get_name(flow));
      eu_pull_all(h[i], NULL);
    }
    if (pushed) {
      SpPushed p = {at, count,
                    GST_CLOCK_TIME_IS_VALID(start) ? eu_sample_time(start, at, s->rate)
                                                   : GST_CLOCK_TIME_NONE};
      g_array_append_val(pushed, p);
    }
    at += count;
  }
}

/* The timestamps spectrum gives the intervals: the PTS of a buffer that starts where the interval
 * starts (the last such buffer), else the previous interval's timestamp + its frames / rate
 * (rounded down); an unstamped stream counts from 0. */
static GstClockTime *
sp_expected_timestamps(const GArray *pushed, const GArray *intervals, guint rate)
{
  GstClockTime *ts = g_new(GstClockTime, intervals->len + 1);
  for (guint j = 0; j < intervals->len; j++) {
    const SpInterval *iv = &g_array_index(intervals, SpInterval, j);
    GstClockTime t = GST_CLOCK_TIME_NONE;
    for (guint b = 0; b < pushed->len; b++) {
      const SpPushed *p = &g_array_index(pushed, SpPushed, b);
      if (p->first == iv->first)
        t = p->pts;
    }
    if (!GST_CLOCK_TIME_IS_VALID(t)) {
      if (j == 0)
        t = 0;
      else
        t = ts[j - 1] + gst_util_uint64_scale(g_array_index(intervals, SpInterval, j - 1).frames,
                                              GST_SECOND, rate);
    }
    ts[j] = t;
  }
  return ts;
}

/* Messages ----------------------------------------------------------------------------------- */

typedef struct {
  GstClockTime timestamp, stream_time, running_time, duration, endtime;
  gboolean multi;
  guint rows, bands;
  float *mag;   /* rows x bands, NULL when absent */
  float *phase; /* rows x bands, NULL when absent */
} SpMsg;

static void
sp_msg_clear(gpointer p)
{
  SpMsg *m = p;
  g_free(m->mag);
  g_free(m->phase);
}

static GArray *
sp_msgs_new(void)
{
  GArray *a = g_array_new(FALSE, TRUE, sizeof(SpMsg));
  g_array_set_clear_func(a, sp_msg_clear);
  return a;
}

static gboolean
get_u64(const GstStructure *s, const char *field, GstClockTime *v, GString *why)
{
  const GValue *value = gst_structure_get_value(s, field);
  if (!value || !G_VALUE_HOLDS_UINT64(value)) {
    g_string_append_printf(why, "field %s missing or not a guint64 (%s)", field,
                           value ? G_VALUE_TYPE_NAME(value) : "absent");
    return FALSE;
  }
  *v = g_value_get_uint64(value);
  return TRUE;
}

static gboolean
float_same(float a, float b)
{
  return (isnan(a) && isnan(b)) || memcmp(&a, &b, sizeof a) == 0;
}

/* Reads magnitude or phase: a GstValueList of gfloat, or with multi-channel a GstValueArray of
 * per-channel GstValueArrays; with extra (cudaspectrum) the `NAME-data` GBytes must hold the same
 * floats. */
static gboolean
get_values(const GstStructure *s, const char *field, gboolean extra, SpMsg *m, float **out,
           GString *why)
{
  const GValue *v = gst_structure_get_value(s, field);
  gchar *data_field = g_strdup_printf("%s-data", field);
  const GValue *dv = gst_structure_get_value(s, data_field);
  gboolean ok = FALSE;
  *out = NULL;
  if (!v) {
    if (extra && dv)
      g_string_append_printf(why, "%s present without %s", data_field, field);
    else
      ok = TRUE;
    goto done;
  }
  guint rows, bands;
  if (GST_VALUE_HOLDS_LIST(v)) {
    rows = 1;
    bands = gst_value_list_get_size(v);
    if (m->rows && (m->multi || m->rows != 1 || m->bands != bands)) {
      g_string_append_printf(why, "%s: a list while the other field differs", field);
      goto done;
    }
    m->multi = FALSE;
  } else if (GST_VALUE_HOLDS_ARRAY(v)) {
    rows = gst_value_array_get_size(v);
    if (rows == 0) {
      g_string_append_printf(why, "%s: an empty array", field);
      goto done;
    }
    const GValue *r0 = gst_value_array_get_value(v, 0);
    if (!GST_VALUE_HOLDS_ARRAY(r0)) {
      g_string_append_printf(why, "%s: an array of %s, not of arrays", field,
                             G_VALUE_TYPE_NAME(r0));
      goto done;
    }
    bands = gst_value_array_get_size(r0);
    if (m->rows && (!m->multi || m->rows != rows || m->bands != bands)) {
      g_string_append_printf(why, "%s: shape differs from the other field", field);
      goto done;
    }
    m->multi = TRUE;
  } else {
    g_string_append_printf(why, "%s is a %s, not a GstValueList or GstValueArray", field,
                           G_VALUE_TYPE_NAME(v));
    goto done;
  }
  m->rows = rows;
  m->bands = bands;
  float *vals = g_new(float, (gsize)rows *bands + 1);
  for (guint r = 0; r < rows; r++) {
    const GValue *row = m->multi ? gst_value_array_get_value(v, r) : v;
    if (m->multi && (!GST_VALUE_HOLDS_ARRAY(row) || gst_value_array_get_size(row) != bands)) {
      g_string_append_printf(why, "%s: row %u is not an array of %u", field, r, bands);
      g_free(vals);
      goto done;
    }
    for (guint k = 0; k < bands; k++) {
      const GValue *x =
          m->multi ? gst_value_array_get_value(row, k) : gst_value_list_get_value(row, k);
      if (!G_VALUE_HOLDS_FLOAT(x)) {
        g_string_append_printf(why, "%s[%u][%u] is a %s, not a gfloat", field, r, k,
                               G_VALUE_TYPE_NAME(x));
        g_free(vals);
        goto done;
      }
      vals[(gsize)r * bands + k] = g_value_get_float(x);
    }
  }
  *out = vals;
  if (extra) {
    if (!dv || !G_VALUE_HOLDS(dv, G_TYPE_BYTES)) {
      g_string_append_printf(why, "%s missing or not GBytes (%s)", data_field,
                             dv ? G_VALUE_TYPE_NAME(dv) : "absent");
      goto done;
    }
    GBytes *bytes = g_value_get_boxed(dv);
    gsize size = 0;
    const float *data = bytes ? g_bytes_get_data(bytes, &size) : NULL;
    if (size != (gsize)rows * bands * sizeof(float)) {
      g_string_append_printf(why, "%s: %zu bytes, expected %u x %u floats", data_field, size, rows,
                             bands);
      goto done;
    }
    for (gsize q = 0; q < (gsize)rows * bands; q++) {
      float d;
      memcpy(&d, (const guint8 *)data + q * sizeof(float), sizeof d);
      if (!float_same(d, vals[q])) {
        g_string_append_printf(why, "%s[%zu] = %g but %s has %g", data_field, q, d, field, vals[q]);
        goto done;
      }
    }
  }
  ok = TRUE;
done:
  g_free(data_field);
  return ok;
}

/* Parses a "spectrum" element message (extra: cudaspectrum's added fields are required). */
static gboolean
sp_msg_parse(GstMessage *msg, gboolean extra, SpMsg *m, GString *why)
{
  memset(m, 0, sizeof *m);
  const GstStructure *s = gst_message_get_structure(msg);
  if (GST_MESSAGE_TYPE(msg) != GST_MESSAGE_ELEMENT || !s ||
      !gst_structure_has_name(s, "spectrum")) {
    g_string_append_printf(why, "not a spectrum element message");
    return FALSE;
  }
  if (!get_u64(s, "endtime", &m->endtime, why) || !get_u64(s, "timestamp", &m->timestamp, why) ||
      !get_u64(s, "stream-time", &m->stream_time, why) ||
      !get_u64(s, "running-time", &m->running_time, why) ||
      !get_u64(s, "duration", &m->duration, why))
    return FALSE;
  if (!get_values(s, "magnitude", extra, m, &m->mag, why) ||
      !get_values(s, "phase", extra, m, &m->phase, why))
    return FALSE;
  if (extra) {
    guint bands = 0, channels = 0;
    if (!gst_structure_get_uint(s, "bands", &bands) ||
        !gst_structure_get_uint(s, "channels", &channels)) {
      g_string_append_printf(why, "bands or channels missing or not a guint");
      return FALSE;
    }
    if (m->rows && bands != m->bands) {
      g_string_append_printf(why, "bands = %u but the values have %u", bands, m->bands);
      return FALSE;
    }
    /* channels: the rows of magnitude-data (1 for the mean of the channels) */
    if (m->rows && channels != m->rows) {
      g_string_append_printf(why, "channels = %u but the values have %u rows", channels, m->rows);
      return FALSE;
    }
    if (!m->rows) {
      m->bands = bands;
      m->rows = channels;
    }
  }
  return TRUE;
}

/* Pops every message on bus: spectrum messages from `src` parsed into msgs; fails the test on an
 * error or warning, or a malformed message. */
static void
sp_collect(GstBus *bus, GstElement *src, gboolean extra, GArray *msgs)
{
  GstMessage *msg;
  while ((msg = gst_bus_pop_filtered(bus, GST_MESSAGE_ELEMENT | GST_MESSAGE_ERROR |
                                              GST_MESSAGE_WARNING)) != NULL) {
    if (GST_MESSAGE_TYPE(msg) == GST_MESSAGE_ERROR ||
        GST_MESSAGE_TYPE(msg) == GST_MESSAGE_WARNING) {
      GError *err = NULL;
      gchar *debug = NULL;
      if (GST_MESSAGE_TYPE(msg) == GST_MESSAGE_ERROR)
        gst_message_parse_error(msg, &err, &debug);
      else
        gst_message_parse_warning(msg, &err, &debug);
      fail("%s from %s: %s (%s)", GST_MESSAGE_TYPE_NAME(msg), GST_MESSAGE_SRC_NAME(msg),
           err ? err->message : "?", debug ? debug : "");
    }
    const GstStructure *s = gst_message_get_structure(msg);
    if (s && gst_structure_has_name(s, "spectrum")) {
      fail_unless(GST_MESSAGE_SRC(msg) == GST_OBJECT(src), "spectrum message from %s, not %s",
                  GST_MESSAGE_SRC_NAME(msg), GST_OBJECT_NAME(src));
      SpMsg m;
      GString *why = g_string_new(NULL);
      gboolean ok = sp_msg_parse(msg, extra, &m, why);
      fail_unless(ok, "message %u: %s", msgs->len, why->str);
      g_string_free(why, TRUE);
      g_array_append_val(msgs, m);
    }
    gst_message_unref(msg);
  }
}

/* Comparisons -------------------------------------------------------------------------------- */

/* got against ref (rows x bands): within DB_TOLERANCE where ref > threshold + 1 dB, in
 * [threshold, threshold + 1 + tolerance] elsewhere, NaN exactly where ref is NaN. */
static gboolean
compare_levels(const float *got, const double *ref, gsize count, gint threshold, guint bands,
               double tolerance, GString *why)
{
  for (gsize q = 0; q < count; q++) {
    const double g = got[q], r = ref[q];
    gboolean ok;
    if (isnan(r))
      ok = isnan(g);
    else if (r > threshold + 1.0)
      ok = fabs(g - r) <= tolerance;
    else
      ok = g >= threshold - 1e-3 && g <= threshold + 1.0 + tolerance;
    if (!ok) {
      g_string_append_printf(why, "row %zu band %zu: %.4f dB, expected %.4f (threshold %d)",
                             q / bands, q % bands, g, r, threshold);
      return FALSE;
    }
  }
  return TRUE;
}

/* Phases: where every FFT of the interval had a level above PHASE_MIN_LEVEL, the difference is a
 * multiple of 2 pi / ffts (one FFT's phase wrapping across +-pi) within PHASE_TOLERANCE. */
static gboolean
compare_phases(const float *got, const double *ref, const double *min_level, gsize count,
               gsize ffts, guint bands, GString *why)
{
  const double step = 2 * G_PI / (double)ffts;
  for (gsize q = 0; q < count; q++) {
    if (isnan(ref[q])) {
      if (!isnan(got[q])) {
        g_string_append_printf(why, "row %zu band %zu: phase %g, expected NaN", q / bands,
                               q % bands, got[q]);
        return FALSE;
      }
      continue;
    }
    if (!isfinite(got[q]) || fabs(got[q]) > G_PI + 1e-5) {
      g_string_append_printf(why, "row %zu band %zu: phase %g out of [-pi, pi]", q / bands,
                             q % bands, got[q]);
      return FALSE;
    }
    if (!(min_level[q] > PHASE_MIN_LEVEL))
      continue;
    const double d = remainder(got[q] - ref[q], step);
    if (fabs(d) > PHASE_TOLERANCE) {
      g_string_append_printf(why, "row %zu band %zu: phase %.5f, expected %.5f (mod 2pi/%zu)",
                             q / bands, q % bands, got[q], ref[q], ffts);
      return FALSE;
    }
  }
  return TRUE;
}

static gboolean
duration_ok(GstClockTime d, gsize frames, guint rate)
{
  const GstClockTime lo = gst_util_uint64_scale(frames, GST_SECOND, rate);
  const GstClockTime hi = gst_util_uint64_scale_ceil(frames, GST_SECOND, rate);
  return d == lo || d == hi;
}

/* Checks msgs[first...] against the reference intervals: shape, times (ts: expected timestamps;
 * segment: for the running and stream times), levels and phases. */
static void
check_messages(const char *row, const GArray *msgs, guint first, const GArray *intervals, guint n,
               const GstClockTime *ts, const GstSegment *segment, guint rate)
{
  fail_unless(msgs->len >= first + n, "%s: %u messages, expected %u", row, msgs->len - first, n);
  GString *why = g_string_new(NULL);
  for (guint j = 0; j < n; j++) {
    const SpMsg *m = &g_array_index(msgs, SpMsg, first + j);
    const SpInterval *iv = &g_array_index(intervals, SpInterval, j);
    const SpSettings *st = &iv->settings;
    fail_unless(m->bands == st->bands && m->rows == iv->rows && m->multi == st->multi,
                "%s: message %u (frames %zu+%zu): %u x %u values (%s), expected %u x %u (%s)", row,
                j, iv->first, iv->frames, m->rows, m->bands, m->multi ? "array" : "list", iv->rows,
                st->bands, st->multi ? "array" : "list");
    fail_unless(m->timestamp == ts[j],
                "%s: message %u (frames %zu+%zu): timestamp %" GST_TIME_FORMAT
                ", expected %" GST_TIME_FORMAT,
                row, j, iv->first, iv->frames, GST_TIME_ARGS(m->timestamp), GST_TIME_ARGS(ts[j]));
    const GstClockTime running = gst_segment_to_running_time(segment, GST_FORMAT_TIME, ts[j]);
    const GstClockTime stream = gst_segment_to_stream_time(segment, GST_FORMAT_TIME, ts[j]);
    fail_unless(m->running_time == running && m->stream_time == stream,
                "%s: message %u: running-time %" GST_TIME_FORMAT " stream-time %" GST_TIME_FORMAT
                ", expected %" GST_TIME_FORMAT " %" GST_TIME_FORMAT,
                row, j, GST_TIME_ARGS(m->running_time), GST_TIME_ARGS(m->stream_time),
                GST_TIME_ARGS(running), GST_TIME_ARGS(stream));
    if (iv->partial)
      fail_unless(duration_ok(m->duration, iv->frames, rate),
                  "%s: message %u (partial, %zu frames): duration %" G_GUINT64_FORMAT
                  ", expected %zu/%u s",
                  row, j, iv->frames, m->duration, iv->frames, rate);
    else
      fail_unless(m->duration == st->interval,
                  "%s: message %u: duration %" G_GUINT64_FORMAT ", expected %" G_GUINT64_FORMAT,
                  row, j, m->duration, st->interval);
    fail_unless(m->endtime == m->stream_time + m->duration,
                "%s: message %u: endtime %" G_GUINT64_FORMAT " != stream-time + duration", row, j,
                m->endtime);
    fail_unless(m->mag != NULL, "%s: message %u has no magnitude", row, j);
    const gsize count = (gsize)iv->rows * st->bands;
    fail_unless(compare_levels(m->mag, iv->mag, count, st->threshold, st->bands, DB_TOLERANCE, why),
                "%s: message %u (frames %zu+%zu, %zu FFTs): magnitude %s", row, j, iv->first,
                iv->frames, iv->ffts, why->str);
    fail_unless((m->phase != NULL) == st->phase, "%s: message %u: phase %s, message-phase %d", row,
                j, m->phase ? "present" : "absent", st->phase);
    if (m->phase)
      fail_unless(
          compare_phases(m->phase, iv->phase, iv->min_level, count, iv->ffts, st->bands, why),
          "%s: message %u (frames %zu+%zu, %zu FFTs): %s", row, j, iv->first, iv->frames, iv->ffts,
          why->str);
  }
  g_string_free(why, TRUE);
}

/* Harness ------------------------------------------------------------------------------------ */

typedef struct {
  GstHarness *h;
  GstBus *bus;
  GstElement *e;
} SpHarness;

static gchar *
settings_props(const SpSettings *st)
{
  return g_strdup_printf("bands=%u interval=%" G_GUINT64_FORMAT
                         " threshold=%d message-phase=%s multi-channel=%s",
                         st->bands, st->interval, st->threshold, st->phase ? "true" : "false",
                         st->multi ? "true" : "false");
}

/* A harness around `factory` (cudaspectrum gets backend=) with the settings (NULL: the
 * defaults, no property set), its bus, and caps set. */
static void
sp_harness_open(SpHarness *sh, const char *factory, const SpSettings *st,
                CudafftSampleFormat format, guint rate, guint channels)
{
  gchar *props = st ? settings_props(st) : g_strdup("");
  if (strcmp(factory, "cudaspectrum") == 0)
    sh->h = eu_harness_new("cudaspectrum name=s backend=%s %s", eu_backend, props);
  else
    sh->h = eu_harness_new("%s name=s %s", factory, props);
  g_free(props);
  sh->bus = eu_harness_bus(sh->h);
  sh->e = eu_harness_element(sh->h, "s");
  gst_harness_set_src_caps(sh->h, eu_raw_caps(format, rate, channels));
}

static void
sp_harness_close(SpHarness *sh)
{
  gst_object_unref(sh->e);
  eu_harness_teardown(sh->h, sh->bus);
}

static void
set_settings(GstElement *e, const SpSettings *st)
{
  g_object_set(e, "bands", st->bands, "interval", st->interval, "threshold", st->threshold,
               "message-phase", st->phase, "multi-channel", st->multi, NULL);
}

/* One whole run of cudaspectrum: signal in buffers of `sizes` from `start`, EOS (optional),
 * messages checked against the reference. */
static void
run_and_check(const char *row, const TestSignal *sig, const SpSettings *st, const GArray *sizes,
              GstClockTime start, gboolean eos)
{
  SpHarness sh;
  sp_harness_open(&sh, "cudaspectrum", st, sig->format, sig->rate, sig->channels);
  GArray *pushed = g_array_new(FALSE, FALSE, sizeof(SpPushed));
  sp_push_sizes(&sh.h, 1, sig, 0, sizes, start, pushed);
  if (eos)
    eu_push_eos(sh.h, NULL);
  GArray *msgs = sp_msgs_new();
  sp_collect(sh.bus, sh.e, TRUE, msgs);
  gsize total = 0;
  for (guint b = 0; b < sizes->len; b++)
    total += g_array_index(sizes, gsize, b);
  GArray *ref = sp_reference(sig, 0, total, st, NULL, 0, eos);
  GstClockTime *ts = sp_expected_timestamps(pushed, ref, sig->rate);
  GstSegment segment;
  gst_segment_init(&segment, GST_FORMAT_TIME);
  fail_unless(msgs->len == ref->len, "%s: %u messages, expected %u", row, msgs->len, ref->len);
  check_messages(row, msgs, 0, ref, ref->len, ts, &segment, sig->rate);
  g_free(ts);
  g_array_unref(ref);
  g_array_unref(msgs);
  g_array_unref(pushed);
  sp_harness_close(&sh);
}

/* run_and_check in random buffers of lo to hi frames. */
static void
run_random_and_check(const char *row, TestRng *rng, const TestSignal *sig, const SpSettings *st,
                     guint lo, guint hi, GstClockTime start, gboolean eos)
{
  GArray *sizes = sp_random_sizes(rng, sig->frames, lo, hi);
  run_and_check(row, sig, st, sizes, start, eos);
  g_array_unref(sizes);
}

/* Metadata and properties ------------------------------------------------------------------ */

GST_START_TEST(test_metadata)
{
  eu_check_element_metadata("cudaspectrum", "audio/x-raw", "audio/x-raw");
}
GST_END_TEST;

/* spectrum's properties, with spectrum's types, ranges, defaults and flags; spectrum's caps. */
GST_START_TEST(test_properties_and_caps_match_spectrum)
{
  GstElement *ref = gst_element_factory_make("spectrum", NULL);
  fail_unless(ref != NULL, "GStreamer's spectrum element (gst-plugins-good) is not installed");
  GstElement *e = gst_element_factory_make("cudaspectrum", NULL);
  fail_unless(e != NULL, "cannot make cudaspectrum (GST_PLUGIN_PATH=%s)",
              g_getenv("GST_PLUGIN_PATH"));
  static const char *const names[] = {
      "post-messages", "message-magnitude", "message-phase", "interval",
      "bands",         "threshold",         "multi-channel"};
  for (guint i = 0; i < G_N_ELEMENTS(names); i++) {
    GParamSpec *a = g_object_class_find_property(G_OBJECT_GET_CLASS(ref), names[i]);
    GParamSpec *b = g_object_class_find_property(G_OBJECT_GET_CLASS(e), names[i]);
    fail_unless(a != NULL, "spectrum has no %s", names[i]);
    fail_unless(b != NULL, "cudaspectrum has no property %s", names[i]);
    fail_unless(G_PARAM_SPEC_TYPE(a) == G_PARAM_SPEC_TYPE(b) && a->value_type == b->value_type,
                "%s: %s/%s, spectrum's is %s/%s", names[i], G_PARAM_SPEC_TYPE_NAME(b),
                g_type_name(b->value_type), G_PARAM_SPEC_TYPE_NAME(a), g_type_name(a->value_type));
    fail_unless((b->flags & (G_PARAM_READABLE | G_PARAM_WRITABLE)) ==
                    (G_PARAM_READABLE | G_PARAM_WRITABLE),
                "%s is not read-write", names[i]);
    fail_unless(g_param_values_cmp(a, g_param_spec_get_default_value(a),
                                   g_param_spec_get_default_value(b)) == 0,
                "%s: default differs from spectrum's", names[i]);
    if (G_IS_PARAM_SPEC_UINT(a)) {
      fail_unless_equals_uint64(G_PARAM_SPEC_UINT(b)->minimum, G_PARAM_SPEC_UINT(a)->minimum);
      fail_unless_equals_uint64(G_PARAM_SPEC_UINT(b)->maximum, G_PARAM_SPEC_UINT(a)->maximum);
    } else if (G_IS_PARAM_SPEC_UINT64(a)) {
      fail_unless_equals_uint64(G_PARAM_SPEC_UINT64(b)->minimum, G_PARAM_SPEC_UINT64(a)->minimum);
      fail_unless_equals_uint64(G_PARAM_SPEC_UINT64(b)->maximum, G_PARAM_SPEC_UINT64(a)->maximum);
    } else if (G_IS_PARAM_SPEC_INT(a)) {
      fail_unless_equals_int64(G_PARAM_SPEC_INT(b)->minimum, G_PARAM_SPEC_INT(a)->minimum);
      fail_unless_equals_int64(G_PARAM_SPEC_INT(b)->maximum, G_PARAM_SPEC_INT(a)->maximum);
    }
  }
  /* the documented values, in case spectrum itself changes */
  guint bands = 0;
  guint64 interval = 0;
  gint threshold = 0;
  gboolean post = FALSE, magnitude = FALSE, phase = TRUE, multi = TRUE;
  g_object_get(e, "bands", &bands, "interval", &interval, "threshold", &threshold, "post-messages",
               &post, "message-magnitude", &magnitude, "message-phase", &phase, "multi-channel",
               &multi, NULL);
  fail_unless_equals_int(bands, 128);
  fail_unless_equals_uint64(interval, 100 * GST_MSECOND);
  fail_unless_equals_int(threshold, -60);
  fail_unless(post && magnitude && !phase && !multi);
  GParamSpec *spec = g_object_class_find_property(G_OBJECT_GET_CLASS(e), "bands");
  fail_unless_equals_uint64(G_PARAM_SPEC_UINT(spec)->maximum, ((guint)G_MAXINT + 2) / 2);

  spec = g_object_class_find_property(G_OBJECT_GET_CLASS(e), "backend");
  fail_unless(G_IS_PARAM_SPEC_ENUM(spec), "backend is not an enum");
  GEnumClass *klass = G_PARAM_SPEC_ENUM(spec)->enum_class;
  fail_unless_equals_int(klass->n_values, 3);
  static const char *const nicks[] = {"auto", "cuda", "cpu"};
  for (guint i = 0; i < 3; i++)
    fail_unless(g_enum_get_value_by_nick(klass, nicks[i]) != NULL, "backend has no %s", nicks[i]);
  GEnumValue *def = g_enum_get_value(klass, G_PARAM_SPEC_ENUM(spec)->default_value);
  fail_unless(def && strcmp(def->value_nick, "auto") == 0, "backend default is not auto");
  spec = g_object_class_find_property(G_OBJECT_GET_CLASS(e), "cuda-device-id");
  fail_unless(G_IS_PARAM_SPEC_INT(spec), "cuda-device-id is not an int");

  /* spectrum's pad templates; channels may stop at the engine's limit (1024); where the build has
   * CUDA memory, the same again in memory:CUDAMemory after it */
  for (int p = 0; p < 2; p++) {
    const char *pad = p ? "src" : "sink";
    GstPadTemplate *ta = gst_element_class_get_pad_template(GST_ELEMENT_GET_CLASS(ref), pad);
    GstPadTemplate *tb = gst_element_class_get_pad_template(GST_ELEMENT_GET_CLASS(e), pad);
    fail_unless(ta && tb, "no %s template", pad);
    GstCaps *ca = gst_pad_template_get_caps(ta), *cb = gst_pad_template_get_caps(tb);
    gchar *sa = gst_caps_to_string(ca), *sb = gst_caps_to_string(cb);
    const guint size = gst_caps_get_size(cb);
    fail_unless((size == 1 || size == 2) && gst_caps_get_size(ca) == 1, "%s template %s", pad, sb);
    if (size == 2) {
      GstCapsFeatures *cuda = gst_caps_features_new("memory:CUDAMemory", NULL);
      fail_unless(
          gst_caps_features_is_equal(gst_caps_get_features(cb, 1), cuda) &&
              gst_structure_is_equal(gst_caps_get_structure(cb, 0), gst_caps_get_structure(cb, 1)),
          "%s template %s: the second structure is not the first in CUDA memory", pad, sb);
      gst_caps_features_free(cuda);
    }
    GstStructure *x = gst_structure_copy(gst_caps_get_structure(ca, 0));
    GstStructure *y = gst_structure_copy(gst_caps_get_structure(cb, 0));
    const GValue *channels = gst_structure_get_value(y, "channels");
    fail_unless(channels && GST_VALUE_HOLDS_INT_RANGE(channels) &&
                    gst_value_get_int_range_min(channels) == 1 &&
                    gst_value_get_int_range_max(channels) >= 1024,
                "%s template %s: channels not [1, >= 1024]", pad, sb);
    gst_structure_remove_field(x, "channels");
    gst_structure_remove_field(y, "channels");
    fail_unless(gst_structure_is_equal(x, y), "%s template %s, spectrum's %s", pad, sb, sa);
    gst_structure_free(x);
    gst_structure_free(y);
    g_free(sa);
    g_free(sb);
    gst_caps_unref(ca);
    gst_caps_unref(cb);
  }
  gst_object_unref(e);
  gst_object_unref(ref);
}
GST_END_TEST;

/* Passthrough ------------------------------------------------------------------------------ */

GST_START_TEST(test_passthrough_same_buffer)
{
  TestRng rng = test_rng("passthrough");
  TestSignal sig;
  sp_signal_noise(&sig, &rng, CUDAFFT_SAMPLE_S24, 3, 44100, 20000, 0.9);
  const SpSettings st = {512, 10 * GST_MSECOND, -60, TRUE, TRUE};
  SpHarness sh;
  sp_harness_open(&sh, "cudaspectrum", &st, sig.format, sig.rate, sig.channels);
  const gsize fb = test_signal_frame_bytes(&sig);
  for (gsize at = 0; at < sig.frames;) {
    const gsize r = test_rng_range(&rng, 1, 3000);
    const gsize n = MIN(r, sig.frames - at);
    GstBuffer *in = eu_signal_buffer(&sig, at, n, 0);
    gst_buffer_ref(in); /* kept: an in-place element must not need to copy it */
    fail_unless_equals_int(gst_harness_push(sh.h, in), GST_FLOW_OK);
    GstBuffer *out = gst_harness_try_pull(sh.h);
    fail_unless(out != NULL, "no output for frames %zu..%zu", at, at + n);
    fail_unless(out == in, "frames %zu..%zu: the output is another buffer", at, at + n);
    fail_unless(gst_buffer_memcmp(out, 0, sig.raw + at * fb, n * fb) == 0,
                "frames %zu..%zu: bytes changed", at, at + n);
    fail_unless_equals_uint64(gst_buffer_get_size(out), n * fb);
    fail_unless_equals_uint64(GST_BUFFER_PTS(out), eu_sample_time(0, at, sig.rate));
    gst_buffer_unref(out);
    gst_buffer_unref(in);
    at += n;
  }
  GArray *msgs = sp_msgs_new();
  sp_collect(sh.bus, sh.e, TRUE, msgs);
  fail_unless(msgs->len > 0, "no messages");
  g_array_unref(msgs);
  sp_harness_close(&sh);
  test_signal_clear(&sig);
}
GST_END_TEST;

/* Levels ----------------------------------------------------------------------------------- */

/* Checks one row of levels for a full-scale sine at the centre of bin k (amplitude `amp`). */
static void
check_tone_row(const float *row, guint bands, guint k, double amp, gint threshold, const char *what)
{
  const double gain = 20 * log10(amp);
  for (guint j = 0; j < bands; j++) {
    if (j == k)
      fail_unless(fabs(row[j] - (TONE_DB + gain)) <= 0.01,
                  "%s: band %u (the tone) %.4f dB, expected %.4f", what, j, row[j], TONE_DB + gain);
    else if (j + 1 == k || j == k + 1)
      fail_unless(fabs(row[j] - (TONE_SIDE_DB + gain)) <= DB_TOLERANCE,
                  "%s: band %u (next to the tone at %u) %.4f dB, expected %.4f", what, j, k, row[j],
                  TONE_SIDE_DB + gain);
    else
      fail_unless(fabs(row[j] - threshold) <= 1e-3,
                  "%s: band %u (tone at %u) %.4f dB, expected the threshold %d", what, j, k, row[j],
                  threshold);
  }
}

static const struct {
  guint rate;
  guint64 interval; /* a whole number of nfft = 4096 frames */
} tone_rows[] = {
    {32000, 128 * GST_MSECOND},
    {40960, 100 * GST_MSECOND},
    {64000, 128 * GST_MSECOND}, /* two FFTs per interval */
};

GST_START_TEST(test_tone_at_bin_centre)
{
  const guint i = __i__;
  TestRng rng = test_rng("tone %u", i);
  const guint bands = 2049, nfft = 4096;
  const guint k = test_rng_range(&rng, 2, bands - 3);
  const SpSettings st = {bands, tone_rows[i].interval, -60, FALSE, FALSE};
  const gsize fpi = gst_util_uint64_scale(st.interval, tone_rows[i].rate, GST_SECOND);
  TestSignal sig;
  test_signal_alloc(&sig, CUDAFFT_SAMPLE_F32, 1, tone_rows[i].rate, 3 * fpi, READ);
  const double phase = G_PI * test_rng_uniform(&rng);
  for (gsize f = 0; f < sig.frames; f++)
    test_signal_set(&sig, f, 0, sin(2 * G_PI * (double)k * (f % nfft) / nfft + phase));
  SpHarness sh;
  sp_harness_open(&sh, "cudaspectrum", &st, sig.format, sig.rate, 1);
  GArray *sizes = sp_random_sizes(&rng, sig.frames, 1, 5000);
  sp_push_sizes(&sh.h, 1, &sig, 0, sizes, 0, NULL);
  GArray *msgs = sp_msgs_new();
  sp_collect(sh.bus, sh.e, TRUE, msgs);
  fail_unless_equals_int(msgs->len, 3);
  for (guint m = 0; m < msgs->len; m++) {
    const SpMsg *msg = &g_array_index(msgs, SpMsg, m);
    fail_unless(msg->bands == bands && msg->rows == 1 && !msg->multi);
    gchar *what = g_strdup_printf("rate %u, tone in bin %u, message %u", sig.rate, k, m);
    check_tone_row(msg->mag, bands, k, 1.0, -60, what);
    g_free(what);
  }
  g_array_unref(sizes);
  g_array_unref(msgs);
  sp_harness_close(&sh);
  test_signal_clear(&sig);
}
GST_END_TEST;

static const struct {
  CudafftSampleFormat format;
  guint channels;
  gboolean multi;
  guint rate, bands;
  guint64 interval;
  gint threshold;
  guint lo, hi; /* buffer sizes */
} format_rows[] = {
    {CUDAFFT_SAMPLE_S16, 1, FALSE, 44100, 128, 50 * GST_MSECOND, -60, 1, 3000},
    {CUDAFFT_SAMPLE_S16, 2, FALSE, 48000, 513, 20 * GST_MSECOND, -80, 100, 2000},
    {CUDAFFT_SAMPLE_S24, 1, FALSE, 44100, 256, 30 * GST_MSECOND, -70, 1, 999},
    {CUDAFFT_SAMPLE_S24, 3, FALSE, 22050, 100, 10 * GST_MSECOND, -90, 1, 777},
    {CUDAFFT_SAMPLE_S24, 5, TRUE, 16000, 64, 7 * GST_MSECOND, -60, 1, 333},
    {CUDAFFT_SAMPLE_S32, 2, FALSE, 96000, 1025, 25 * GST_MSECOND, -80, 500, 5000},
    {CUDAFFT_SAMPLE_S32, 1, TRUE, 8000, 2, 5 * GST_MSECOND, -60, 1, 100},
    {CUDAFFT_SAMPLE_F32, 6, FALSE, 44100, 300, 15 * GST_MSECOND, -60, 1, 2000},
    {CUDAFFT_SAMPLE_F32, 2, TRUE, 44100, 1000, 40 * GST_MSECOND, -75, 1, 4000},
    {CUDAFFT_SAMPLE_F64, 2, TRUE, 48000, 4097, 200 * GST_MSECOND, -90, 1000, 9000},
    {CUDAFFT_SAMPLE_F64, 1, FALSE, 11025, 3, 3 * GST_MSECOND, -60, 1, 64},
};

/* Every format (S24 in odd sizes too) against the double-precision reference. */
GST_START_TEST(test_formats_match_reference)
{
  const guint i = __i__;
  TestRng rng = test_rng("format %u", i);
  const SpSettings st = {format_rows[i].bands, format_rows[i].interval, format_rows[i].threshold,
                         i % 2 == 0, format_rows[i].multi};
  const guint rate = format_rows[i].rate, channels = format_rows[i].channels;
  double tones[8];
  for (guint c = 0; c < channels; c++)
    tones[c] = rate * (0.02 + 0.4 * (test_rng_uniform(&rng) + 1) / 2);
  const gsize fpi = gst_util_uint64_scale(st.interval, rate, GST_SECOND);
  const gsize frames = 4 * fpi + test_rng_range(&rng, 1, (guint)fpi - 1);
  TestSignal sig;
  sp_signal_tones(&sig, &rng, format_rows[i].format, channels, rate, frames, 0.3, tones, 0.6);
  gchar *row =
      g_strdup_printf("%s x%u %s bands %u interval %" GST_TIME_FORMAT " threshold %d",
                      test_format_name(sig.format), channels, st.multi ? "multi-channel" : "mixed",
                      st.bands, GST_TIME_ARGS(st.interval), st.threshold);
  run_random_and_check(row, &rng, &sig, &st, format_rows[i].lo, format_rows[i].hi, 0, TRUE);
  g_free(row);
  test_signal_clear(&sig);
}
GST_END_TEST;

/* Channels --------------------------------------------------------------------------------- */

/* Distinct bins at least 3 apart in [2, bands - 3]. */
static void
distinct_bins(TestRng *rng, guint *k, guint n, guint bands)
{
  for (guint c = 0; c < n; c++) {
    gboolean ok;
    do {
      k[c] = test_rng_range(rng, 2, bands - 3);
      ok = TRUE;
      for (guint d = 0; d < c; d++)
        ok &= (k[c] > k[d] ? k[c] - k[d] : k[d] - k[c]) >= 3;
    } while (!ok);
  }
}

static void
tone_channels(TestSignal *sig, TestRng *rng, CudafftSampleFormat format, guint channels, guint rate,
              const guint *k, guint nfft, gsize frames)
{
  test_signal_alloc(sig, format, channels, rate, frames, READ);
  for (guint c = 0; c < channels; c++) {
    const double phase = G_PI * test_rng_uniform(rng);
    for (gsize f = 0; f < frames; f++)
      test_signal_set(sig, f, c, sin(2 * G_PI * (double)k[c] * (f % nfft) / nfft + phase));
  }
}

static const struct {
  CudafftSampleFormat format;
  guint channels;
} multi_rows[] = {{CUDAFFT_SAMPLE_F32, 4}, {CUDAFFT_SAMPLE_S16, 3}, {CUDAFFT_SAMPLE_S32, 7}};

GST_START_TEST(test_multi_channel_per_channel_tones)
{
  const guint i = __i__;
  TestRng rng = test_rng("multi %u", i);
  const guint channels = multi_rows[i].channels, bands = 1025, nfft = 2048, rate = 32000;
  guint k[8];
  distinct_bins(&rng, k, channels, bands);
  const SpSettings st = {bands, 64 * GST_MSECOND, -60, FALSE, TRUE}; /* 2048 frames */
  TestSignal sig;
  tone_channels(&sig, &rng, multi_rows[i].format, channels, rate, k, nfft, 3 * 2048);
  SpHarness sh;
  sp_harness_open(&sh, "cudaspectrum", &st, sig.format, rate, channels);
  GArray *sizes = sp_random_sizes(&rng, sig.frames, 1, 3000);
  sp_push_sizes(&sh.h, 1, &sig, 0, sizes, 0, NULL);
  GArray *msgs = sp_msgs_new();
  sp_collect(sh.bus, sh.e, TRUE, msgs);
  fail_unless_equals_int(msgs->len, 3);
  for (guint m = 0; m < msgs->len; m++) {
    const SpMsg *msg = &g_array_index(msgs, SpMsg, m);
    fail_unless(msg->multi && msg->rows == channels && msg->bands == bands,
                "message %u: %u x %u (%s), expected %u x %u arrays", m, msg->rows, msg->bands,
                msg->multi ? "arrays" : "list", channels, bands);
    for (guint c = 0; c < channels; c++) {
      gchar *what = g_strdup_printf("%s, message %u, channel %u (tone in bin %u)",
                                    test_format_name(sig.format), m, c, k[c]);
      check_tone_row(msg->mag + (gsize)c * bands, bands, k[c], 1.0, -60, what);
      g_free(what);
    }
  }
  g_array_unref(sizes);
  g_array_unref(msgs);
  sp_harness_close(&sh);
  test_signal_clear(&sig);
}
GST_END_TEST;

/* Without multi-channel: one spectrum of the mean of the channels. */
GST_START_TEST(test_mixed_channels_averaged)
{
  TestRng rng = test_rng("mixed");
  const guint channels = 4, bands = 1025, nfft = 2048, rate = 32000;
  guint k[4];
  distinct_bins(&rng, k, channels, bands);
  const SpSettings st = {bands, 64 * GST_MSECOND, -60, FALSE, FALSE};
  TestSignal sig;
  tone_channels(&sig, &rng, CUDAFFT_SAMPLE_F32, channels, rate, k, nfft, 3 * 2048);
  SpHarness sh;
  sp_harness_open(&sh, "cudaspectrum", &st, sig.format, rate, channels);
  GArray *sizes = sp_random_sizes(&rng, sig.frames, 1, 3000);
  sp_push_sizes(&sh.h, 1, &sig, 0, sizes, 0, NULL);
  GArray *msgs = sp_msgs_new();
  sp_collect(sh.bus, sh.e, TRUE, msgs);
  fail_unless_equals_int(msgs->len, 3);
  const double gain = 20 * log10(1.0 / channels);
  for (guint m = 0; m < msgs->len; m++) {
    const SpMsg *msg = &g_array_index(msgs, SpMsg, m);
    fail_unless(!msg->multi && msg->rows == 1 && msg->bands == bands);
    for (guint j = 0; j < bands; j++) {
      double want = -60;
      for (guint c = 0; c < channels; c++) {
        if (j == k[c])
          want = TONE_DB + gain;
        else if (j + 1 == k[c] || j == k[c] + 1)
          want = TONE_SIDE_DB + gain;
      }
      if (!(fabs(msg->mag[j] - want) <= (want == -60 ? 1e-3 : 0.02)))
        fail("message %u band %u: %.4f dB, expected %.4f (tones in bins %u %u %u %u)", m, j,
             msg->mag[j], want, k[0], k[1], k[2], k[3]);
    }
  }
  g_array_unref(sizes);
  g_array_unref(msgs);
  sp_harness_close(&sh);
  test_signal_clear(&sig);
}
GST_END_TEST;

/* Message fields and times ----------------------------------------------------------------- */

static const struct {
  GstClockTime start, base, time;
  gdouble rate;
  gboolean multi;
  CudafftSampleFormat format;
  guint channels;
} segment_rows[] = {
    {1 * GST_SECOND, 5 * GST_SECOND, 10 * GST_SECOND, 1.0, FALSE, CUDAFFT_SAMPLE_S16, 2},
    {2500 * GST_MSECOND, 0, 700 * GST_MSECOND, 2.0, TRUE, CUDAFFT_SAMPLE_F32, 3},
    {123456789, 987654321, 0, 0.5, TRUE, CUDAFFT_SAMPLE_S24, 2},
};

GST_START_TEST(test_message_fields_and_segment_times)
{
  const guint i = __i__;
  TestRng rng = test_rng("segment %u", i);
  const SpSettings st = {200, 30 * GST_MSECOND, -70, TRUE, segment_rows[i].multi};
  const guint rate = 44100, channels = segment_rows[i].channels;
  TestSignal sig;
  sp_signal_noise(&sig, &rng, segment_rows[i].format, channels, rate, rate / 2, 0.8);
  SpHarness sh;
  sp_harness_open(&sh, "cudaspectrum", &st, sig.format, rate, channels);
  GstSegment segment;
  gst_segment_init(&segment, GST_FORMAT_TIME);
  segment.start = segment_rows[i].start;
  segment.base = segment_rows[i].base;
  segment.time = segment_rows[i].time;
  segment.position = segment.start;
  segment.rate = segment_rows[i].rate;
  fail_unless(gst_harness_push_event(sh.h, gst_event_new_segment(&segment)));
  GArray *sizes = sp_random_sizes(&rng, sig.frames, 1, 2500);
  GArray *pushed = g_array_new(FALSE, FALSE, sizeof(SpPushed));
  sp_push_sizes(&sh.h, 1, &sig, 0, sizes, segment.start, pushed);
  eu_push_eos(sh.h, NULL);
  GArray *msgs = sp_msgs_new();
  sp_collect(sh.bus, sh.e, TRUE, msgs);
  GArray *ref = sp_reference(&sig, 0, sig.frames, &st, NULL, 0, TRUE);
  GstClockTime *ts = sp_expected_timestamps(pushed, ref, rate);
  fail_unless(msgs->len == ref->len, "%u messages, expected %u", msgs->len, ref->len);
  /* the conversions, spelled out for the first message */
  const SpMsg *m0 = &g_array_index(msgs, SpMsg, 0);
  fail_unless_equals_uint64(m0->timestamp, segment.start);
  fail_unless_equals_uint64(m0->running_time, segment.base);
  fail_unless_equals_uint64(m0->stream_time, segment.time);
  fail_unless_equals_uint64(m0->endtime, segment.time + st.interval);
  const SpMsg *m1 = &g_array_index(msgs, SpMsg, 1);
  const GstClockTime d = m1->timestamp - segment.start;
  fail_unless_equals_uint64(m1->running_time,
                            segment.base + (GstClockTime)(d / segment_rows[i].rate));
  fail_unless_equals_uint64(m1->stream_time, segment.time + d);
  gchar *row = g_strdup_printf("segment start %" GST_TIME_FORMAT " rate %g",
                               GST_TIME_ARGS(segment.start), segment.rate);
  check_messages(row, msgs, 0, ref, ref->len, ts, &segment, rate);
  g_free(row);
  g_free(ts);
  g_array_unref(ref);
  g_array_unref(pushed);
  g_array_unref(sizes);
  g_array_unref(msgs);
  sp_harness_close(&sh);
  test_signal_clear(&sig);
}
GST_END_TEST;

/* post-messages=false: none; message-magnitude=false: no magnitude (and no magnitude-data). */
GST_START_TEST(test_post_messages_and_magnitude_switches)
{
  TestRng rng = test_rng("switches");
  TestSignal sig;
  sp_signal_noise(&sig, &rng, CUDAFFT_SAMPLE_F32, 1, 48000, 48000 / 2, 0.8);
  GArray *sizes = sp_random_sizes(&rng, sig.frames, 1, 3000);
  for (int pass = 0; pass < 2; pass++) {
    const SpSettings st = {256, 10 * GST_MSECOND, -60, TRUE, FALSE};
    SpHarness sh;
    sp_harness_open(&sh, "cudaspectrum", &st, sig.format, sig.rate, 1);
    g_object_set(sh.e, pass == 0 ? "post-messages" : "message-magnitude", FALSE, NULL);
    sp_push_sizes(&sh.h, 1, &sig, 0, sizes, 0, NULL);
    GArray *msgs = sp_msgs_new();
    sp_collect(sh.bus, sh.e, TRUE, msgs);
    if (pass == 0) {
      fail_unless_equals_int(msgs->len, 0);
    } else {
      fail_unless_equals_int(msgs->len, 50);
      for (guint m = 0; m < msgs->len; m++) {
        const SpMsg *msg = &g_array_index(msgs, SpMsg, m);
        fail_unless(msg->mag == NULL, "message %u has a magnitude with message-magnitude=false", m);
        fail_unless(msg->phase != NULL, "message %u has no phase", m);
        fail_unless_equals_uint64(msg->timestamp, m * 10 * GST_MSECOND);
      }
    }
    g_array_unref(msgs);
    sp_harness_close(&sh);
  }
  g_array_unref(sizes);
  test_signal_clear(&sig);
}
GST_END_TEST;

/* 44100 Hz and 1 ms: 44.1 frames an interval; spectrum's carry gives 11 x 44, then a 45 after every
 * 9 x 44 (441 frames every 10 intervals); timestamps add frames / rate (rounded down) except where
 * a buffer starts an interval. */
GST_START_TEST(test_interval_remainder_carry)
{
  TestRng rng = test_rng("carry");
  const SpSettings st = {64, GST_MSECOND, -70, FALSE, FALSE};
  TestSignal sig;
  sp_signal_noise(&sig, &rng, CUDAFFT_SAMPLE_S16, 2, 44100, 44100 * 3 / 10, 0.9);
  GArray *ref = sp_reference(&sig, 0, sig.frames, &st, NULL, 0, FALSE);
  /* the model's carry is spectrum's */
  for (guint j = 0; j < ref->len; j++) {
    const gsize want = (j >= 11 && (j - 11) % 10 == 0) ? 45 : 44;
    fail_unless(g_array_index(ref, SpInterval, j).frames == want,
                "model: interval %u has %zu frames, expected %zu", j,
                g_array_index(ref, SpInterval, j).frames, want);
  }
  g_array_unref(ref);
  /* buffers that often start an interval and often do not */
  run_random_and_check("44100 Hz, 1 ms", &rng, &sig, &st, 1, 200, 0, FALSE);
  run_random_and_check("44100 Hz, 1 ms, buffers of 44-45", &rng, &sig, &st, 44, 45,
                       3 * GST_SECOND + 17, FALSE);
  test_signal_clear(&sig);
}
GST_END_TEST;

/* interval = 1 ns (its minimum) is shorter than a frame: every interval is one frame. */
GST_START_TEST(test_interval_shorter_than_a_frame)
{
  TestRng rng = test_rng("one frame");
  const SpSettings st = {16, 1, -60, TRUE, FALSE};
  TestSignal sig;
  sp_signal_noise(&sig, &rng, CUDAFFT_SAMPLE_S16, 2, 48000, 300, 0.9);
  run_random_and_check("interval 1 ns", &rng, &sig, &st, 1, 40, 0, TRUE);
  test_signal_clear(&sig);
}
GST_END_TEST;

/* Settings while playing ------------------------------------------------------------------- */

/* Pushes sig through cudaspectrum (initial settings) in buffers of 1 to max_buffer frames, setting
 * changes[c].settings while frame changes[c].at is the next to come, and checks every message
 * against the reference; the properties read back the last settings. */
static void
run_with_changes(const char *row, TestRng *rng, const TestSignal *sig, const SpSettings *initial,
                 const SpChange *changes, guint n_changes, guint max_buffer)
{
  SpHarness sh;
  sp_harness_open(&sh, "cudaspectrum", initial, sig->format, sig->rate, sig->channels);
  GArray *pushed = g_array_new(FALSE, FALSE, sizeof(SpPushed));
  gsize at = 0;
  for (guint c = 0; c <= n_changes; c++) {
    const gsize until = c < n_changes ? changes[c].at : sig->frames;
    GArray *sizes = sp_random_sizes(rng, until - at, 1, max_buffer);
    sp_push_sizes(&sh.h, 1, sig, at, sizes, 0, pushed);
    g_array_unref(sizes);
    at = until;
    if (c < n_changes)
      set_settings(sh.e, &changes[c].settings);
  }
  GArray *msgs = sp_msgs_new();
  sp_collect(sh.bus, sh.e, TRUE, msgs);
  GArray *ref = sp_reference(sig, 0, sig->frames, initial, changes, n_changes, FALSE);
  GstClockTime *ts = sp_expected_timestamps(pushed, ref, sig->rate);
  GstSegment segment;
  gst_segment_init(&segment, GST_FORMAT_TIME);
  fail_unless(msgs->len == ref->len, "%s: %u messages, expected %u", row, msgs->len, ref->len);
  check_messages(row, msgs, 0, ref, ref->len, ts, &segment, sig->rate);
  /* the properties read back what was set */
  const SpSettings *last = &changes[n_changes - 1].settings;
  SpSettings now;
  g_object_get(sh.e, "bands", &now.bands, "interval", &now.interval, "threshold", &now.threshold,
               "message-phase", &now.phase, "multi-channel", &now.multi, NULL);
  fail_unless(now.bands == last->bands && now.interval == last->interval &&
                  now.threshold == last->threshold && !now.phase == !last->phase &&
                  !now.multi == !last->multi,
              "%s: the properties read back bands %u interval %" G_GUINT64_FORMAT
              " threshold %d phase %d multi %d, not the last settings",
              row, now.bands, now.interval, now.threshold, now.phase, now.multi);
  g_free(ts);
  g_array_unref(ref);
  g_array_unref(msgs);
  g_array_unref(pushed);
  sp_harness_close(&sh);
}

/* bands, interval, threshold, message-phase and multi-channel set mid-interval apply from the
 * next interval. Every interval here is at least nfft frames, so that its FFTs read only its own
 * frames, whatever the element keeps of the history across a change of bands. */
GST_START_TEST(test_settings_change_at_next_interval)
{
  TestRng rng = test_rng("changes");
  const guint rate = 48000, channels = 2;
  const SpSettings initial = {256, 20 * GST_MSECOND, -60, FALSE, FALSE};
  const SpChange changes[] = {
      {1500, {256, 20 * GST_MSECOND, -80, FALSE, FALSE}},
      {2100, {256, 20 * GST_MSECOND, -80, TRUE, FALSE}},
      {3000, {129, 20 * GST_MSECOND, -80, TRUE, FALSE}},
      {4000, {129, 10 * GST_MSECOND, -80, TRUE, FALSE}},
      {5000, {129, 10 * GST_MSECOND, -80, TRUE, TRUE}},
      {5500, {513, 30 * GST_MSECOND, -70, FALSE, TRUE}},
      {7800, {513, 30 * GST_MSECOND, -70, TRUE, FALSE}},
  };
  double tones[2] = {1000, 7000};
  TestSignal sig;
  sp_signal_tones(&sig, &rng, CUDAFFT_SAMPLE_F32, channels, rate, 12000, 0.4, tones, 0.5);
  run_with_changes("settings changed while playing", &rng, &sig, &initial, changes,
                   G_N_ELEMENTS(changes), 700);
  test_signal_clear(&sig);
}
GST_END_TEST;

/* Threshold, interval and message-phase changes keep the history: intervals shorter than nfft,
 * whose one FFT reads frames of earlier intervals. */
GST_START_TEST(test_option_change_keeps_history)
{
  TestRng rng = test_rng("options");
  const SpSettings initial = {1025, 5 * GST_MSECOND, -60, FALSE, FALSE};
  const SpChange changes[] = {
      {1000, {1025, 5 * GST_MSECOND, -90, FALSE, FALSE}},
      {2000, {1025, 2 * GST_MSECOND, -90, TRUE, FALSE}},
      {3333, {1025, 7 * GST_MSECOND, -70, FALSE, FALSE}},
  };
  TestSignal sig;
  sp_signal_noise(&sig, &rng, CUDAFFT_SAMPLE_S16, 1, 48000, 6000, 0.9);
  run_with_changes("options changed while playing", &rng, &sig, &initial, changes,
                   G_N_ELEMENTS(changes), 400);
  test_signal_clear(&sig);
}
GST_END_TEST;

/* Compatibility with GStreamer's spectrum ------------------------------------------------------ */

static const struct {
  const char *name;
  gboolean defaults; /* set no property but backend */
  CudafftSampleFormat format;
  guint channels, rate;
  SpSettings st;
  double seconds;
  guint lo, hi;
  GstClockTime start;
} compat_rows[] = {
    {"default properties, F32 mono",
     TRUE,
     CUDAFFT_SAMPLE_F32,
     1,
     44100,
     {128, 100 * GST_MSECOND, -60, FALSE, FALSE},
     1.5,
     1,
     5000,
     0},
    {"bands 2049, 10 ms, S16 stereo",
     FALSE,
     CUDAFFT_SAMPLE_S16,
     2,
     48000,
     {2049, 10 * GST_MSECOND, -60, FALSE, FALSE},
     0.6,
     1,
     3000,
     0},
    {"bands 1025, 1 ms, F32 mono",
     FALSE,
     CUDAFFT_SAMPLE_F32,
     1,
     44100,
     {1025, 1 * GST_MSECOND, -60, FALSE, FALSE},
     0.25,
     1,
     1500,
     GST_SECOND},
    {"multi-channel 2, S16, threshold -90, phase",
     FALSE,
     CUDAFFT_SAMPLE_S16,
     2,
     44100,
     {256, 50 * GST_MSECOND, -90, TRUE, TRUE},
     1.0,
     1,
     3000,
     0},
    {"multi-channel 8, S24",
     FALSE,
     CUDAFFT_SAMPLE_S24,
     8,
     32000,
     {512, 30 * GST_MSECOND, -60, FALSE, TRUE},
     0.6,
     1,
     2000,
     0},
    {"multi-channel 3, S24, 1 ms, phase",
     FALSE,
     CUDAFFT_SAMPLE_S24,
     3,
     48000,
     {64, 1 * GST_MSECOND, -90, TRUE, TRUE},
     0.2,
     1,
     500,
     12345},
    {"mixed 4, S32, phase",
     FALSE,
     CUDAFFT_SAMPLE_S32,
     4,
     22050,
     {300, 20 * GST_MSECOND, -70, TRUE, FALSE},
     0.8,
     1,
     2000,
     0},
    {"mixed 2, F64, phase",
     FALSE,
     CUDAFFT_SAMPLE_F64,
     2,
     96000,
     {1000, 25 * GST_MSECOND, -60, TRUE, FALSE},
     0.5,
     1,
     6000,
     0},
    {"F32 mono, one FFT per interval, phase, threshold -90",
     FALSE,
     CUDAFFT_SAMPLE_F32,
     1,
     48000,
     {257, 5 * GST_MSECOND, -90, TRUE, FALSE},
     0.4,
     1,
     1000,
     0},
};

GST_START_TEST(test_compatible_with_spectrum)
{
  const guint i = __i__;
  TestRng rng = test_rng("compat %u", i);
  const SpSettings *st = &compat_rows[i].st;
  const guint rate = compat_rows[i].rate, channels = compat_rows[i].channels;
  double tones[8];
  for (guint c = 0; c < channels; c++)
    tones[c] = rate * (0.01 + 0.45 * (test_rng_uniform(&rng) + 1) / 2);
  TestSignal sig;
  sp_signal_tones(&sig, &rng, compat_rows[i].format, channels, rate,
                  (gsize)(compat_rows[i].seconds * rate) + test_rng_range(&rng, 0, 999), 0.5, tones,
                  0.45);
  SpHarness a, b;
  const SpSettings *props = compat_rows[i].defaults ? NULL : st;
  sp_harness_open(&a, "spectrum", props, sig.format, rate, channels);
  sp_harness_open(&b, "cudaspectrum", props, sig.format, rate, channels);
  GstHarness *hs[2] = {a.h, b.h};
  GArray *sizes = sp_random_sizes(&rng, sig.frames, compat_rows[i].lo, compat_rows[i].hi);
  GArray *pushed = g_array_new(FALSE, FALSE, sizeof(SpPushed));
  sp_push_sizes(hs, 2, &sig, 0, sizes, compat_rows[i].start, pushed);
  eu_push_eos(a.h, NULL);
  eu_push_eos(b.h, NULL);
  GArray *ma = sp_msgs_new(), *mb = sp_msgs_new();
  sp_collect(a.bus, a.e, FALSE, ma);
  sp_collect(b.bus, b.e, TRUE, mb);
  GArray *ref = sp_reference(&sig, 0, sig.frames, st, NULL, 0, TRUE);
  guint full = ref->len;
  if (full && g_array_index(ref, SpInterval, full - 1).partial)
    full--;
  const char *row = compat_rows[i].name;
  /* the model agrees with spectrum (else this test is wrong, not the element) */
  fail_unless(ma->len == full, "%s: spectrum posted %u messages, the model %u", row, ma->len, full);
  fail_unless(mb->len == ref->len,
              "%s: cudaspectrum posted %u messages, spectrum %u (+1 partial at EOS: %s)", row,
              mb->len, ma->len, ref->len > full ? "yes" : "no");
  GString *why = g_string_new(NULL);
  for (guint j = 0; j < full; j++) {
    const SpMsg *x = &g_array_index(ma, SpMsg, j), *y = &g_array_index(mb, SpMsg, j);
    const SpInterval *iv = &g_array_index(ref, SpInterval, j);
    fail_unless(x->timestamp == y->timestamp && x->stream_time == y->stream_time &&
                    x->running_time == y->running_time && x->duration == y->duration &&
                    x->endtime == y->endtime,
                "%s: message %u: cudaspectrum timestamp %" G_GUINT64_FORMAT
                " stream-time %" G_GUINT64_FORMAT " running-time %" G_GUINT64_FORMAT
                " duration %" G_GUINT64_FORMAT " endtime %" G_GUINT64_FORMAT
                "; spectrum %" G_GUINT64_FORMAT " %" G_GUINT64_FORMAT " %" G_GUINT64_FORMAT
                " %" G_GUINT64_FORMAT " %" G_GUINT64_FORMAT,
                row, j, y->timestamp, y->stream_time, y->running_time, y->duration, y->endtime,
                x->timestamp, x->stream_time, x->running_time, x->duration, x->endtime);
    fail_unless(x->multi == y->multi && x->rows == y->rows && x->bands == y->bands,
                "%s: message %u: cudaspectrum %u x %u, spectrum %u x %u", row, j, y->rows, y->bands,
                x->rows, x->bands);
    const gsize count = (gsize)x->rows * x->bands;
    double *xm = g_new(double, count);
    for (gsize q = 0; q < count; q++)
      xm[q] = x->mag[q];
    gboolean ok = compare_levels(y->mag, xm, count, st->threshold, st->bands, DB_TOLERANCE, why);
    fail_unless(ok, "%s: message %u (%zu FFTs): cudaspectrum vs spectrum: %s", row, j, iv->ffts,
                why->str);
    fail_unless((x->phase != NULL) == st->phase && (y->phase != NULL) == st->phase,
                "%s: message %u: phase present in spectrum %d, cudaspectrum %d", row, j,
                x->phase != NULL, y->phase != NULL);
    if (st->phase) {
      for (gsize q = 0; q < count; q++)
        xm[q] = x->phase[q];
      ok = compare_phases(y->phase, xm, iv->min_level, count, iv->ffts, st->bands, why);
      fail_unless(ok, "%s: message %u (%zu FFTs): cudaspectrum vs spectrum phase: %s", row, j,
                  iv->ffts, why->str);
    }
    g_free(xm);
  }
  /* and both against the model (the partial interval at EOS included for cudaspectrum) */
  GstClockTime *ts = sp_expected_timestamps(pushed, ref, rate);
  GstSegment segment;
  gst_segment_init(&segment, GST_FORMAT_TIME);
  gchar *what = g_strdup_printf("%s (spectrum vs the model)", row);
  check_messages(what, ma, 0, ref, full, ts, &segment, rate);
  g_free(what);
  what = g_strdup_printf("%s (cudaspectrum vs the model)", row);
  check_messages(what, mb, 0, ref, ref->len, ts, &segment, rate);
  g_free(what);
  g_free(ts);
  g_string_free(why, TRUE);
  g_array_unref(ref);
  g_array_unref(ma);
  g_array_unref(mb);
  g_array_unref(pushed);
  g_array_unref(sizes);
  sp_harness_close(&a);
  sp_harness_close(&b);
  test_signal_clear(&sig);
}
GST_END_TEST;

/* Stream events ---------------------------------------------------------------------------- */

static const struct {
  CudafftSampleFormat format;
  guint channels, rate, bands;
  guint64 interval;
  gsize full, extra; /* frames: full intervals, then extra */
} eos_rows[] = {
    {CUDAFFT_SAMPLE_F32, 2, 44100, 512, 50 * GST_MSECOND, 3, 700}, /* partial shorter than nfft */
    {CUDAFFT_SAMPLE_S16, 1, 48000, 128, 20 * GST_MSECOND, 5, 0}, /* no partial: no message at EOS */
    {CUDAFFT_SAMPLE_S32, 3, 48000, 256, 100 * GST_MSECOND, 2,
     1500}, /* partial with FFTs of its own */
    {CUDAFFT_SAMPLE_F64, 1, 44100, 2049, 100 * GST_MSECOND, 0, 500}, /* only a partial interval */
};

/* A partial interval at EOS is posted, with duration frames / rate (spectrum drops it). */
GST_START_TEST(test_eos_posts_partial_interval)
{
  const guint i = __i__;
  TestRng rng = test_rng("eos %u", i);
  const SpSettings st = {eos_rows[i].bands, eos_rows[i].interval, -70, TRUE, FALSE};
  const gsize fpi = gst_util_uint64_scale(st.interval, eos_rows[i].rate, GST_SECOND);
  const gsize frames = eos_rows[i].full * fpi + eos_rows[i].extra;
  TestSignal sig;
  sp_signal_noise(&sig, &rng, eos_rows[i].format, eos_rows[i].channels, eos_rows[i].rate, frames,
                  0.9);
  gchar *row = g_strdup_printf("%zu intervals of %zu + %zu frames, EOS", eos_rows[i].full, fpi,
                               eos_rows[i].extra);
  run_random_and_check(row, &rng, &sig, &st, 1, 3000, 0, TRUE);
  g_free(row);
  test_signal_clear(&sig);
}
GST_END_TEST;

/* After a DISCONT buffer the messages are those of a fresh element fed the data from there. */
GST_START_TEST(test_discont_resets_intervals_and_history)
{
  TestRng rng = test_rng("discont");
  const guint rate = 48000;
  /* 480-frame intervals, each with one FFT over the 2048 latest frames: the history shows */
  const SpSettings st = {1025, 10 * GST_MSECOND, -80, TRUE, FALSE};
  TestSignal sig;
  sp_signal_noise(&sig, &rng, CUDAFFT_SAMPLE_F32, 1, rate, 8000, 0.9);
  const gsize split = 3000; /* mid-interval */
  const GstClockTime start_b = 7 * GST_SECOND;
  GArray *sizes_a = sp_random_sizes(&rng, split, 1, 900);
  GArray *sizes_b = sp_random_sizes(&rng, sig.frames - split, 1, 900);
  SpHarness sh, fresh;
  sp_harness_open(&sh, "cudaspectrum", &st, sig.format, rate, 1);
  sp_harness_open(&fresh, "cudaspectrum", &st, sig.format, rate, 1);
  sp_push_sizes(&sh.h, 1, &sig, 0, sizes_a, 0, NULL);
  GArray *msgs = sp_msgs_new();
  sp_collect(sh.bus, sh.e, TRUE, msgs);
  const guint before = msgs->len;
  fail_unless_equals_int(before, split / 480);
  /* B: the first buffer DISCONT, stamped from start_b - split / rate so that it reads start_b */
  GArray *pushed = g_array_new(FALSE, FALSE, sizeof(SpPushed));
  const GstClockTime origin = start_b - eu_sample_time(0, split, rate);
  gsize at = split;
  for (guint b = 0; b < sizes_b->len; b++) {
    const gsize n = g_array_index(sizes_b, gsize, b);
    GstBuffer *buf = eu_signal_buffer(&sig, at, n, origin);
    if (b == 0)
      GST_BUFFER_FLAG_SET(buf, GST_BUFFER_FLAG_DISCONT);
    fail_unless_equals_int(gst_harness_push(sh.h, gst_buffer_copy(buf)), GST_FLOW_OK);
    fail_unless_equals_int(gst_harness_push(fresh.h, buf), GST_FLOW_OK);
    eu_pull_all(sh.h, NULL);
    eu_pull_all(fresh.h, NULL);
    SpPushed p = {at, n, eu_sample_time(origin, at, rate)};
    g_array_append_val(pushed, p);
    at += n;
  }
  sp_collect(sh.bus, sh.e, TRUE, msgs);
  GArray *fm = sp_msgs_new();
  sp_collect(fresh.bus, fresh.e, TRUE, fm);
  GArray *ref = sp_reference(&sig, split, sig.frames - split, &st, NULL, 0, FALSE);
  fail_unless(fm->len == ref->len, "fresh element: %u messages, expected %u", fm->len, ref->len);
  /* the interval open at the DISCONT may or may not be posted; nothing else */
  fail_unless(msgs->len == before + ref->len || msgs->len == before + 1 + ref->len,
              "%u messages before the DISCONT, %u after it; expected %u (+1 partial at most)",
              before, msgs->len - before, ref->len);
  const guint first_b = msgs->len - ref->len;
  GstClockTime *ts = sp_expected_timestamps(pushed, ref, rate);
  GstSegment segment;
  gst_segment_init(&segment, GST_FORMAT_TIME);
  check_messages("after DISCONT", msgs, first_b, ref, ref->len, ts, &segment, rate);
  check_messages("fresh element", fm, 0, ref, ref->len, ts, &segment, rate);
  for (guint j = 0; j < ref->len; j++) {
    const SpMsg *x = &g_array_index(msgs, SpMsg, first_b + j), *y = &g_array_index(fm, SpMsg, j);
    for (guint q = 0; q < x->bands; q++)
      if (!(float_same(x->mag[q], y->mag[q]) && float_same(x->phase[q], y->phase[q])))
        fail("interval %u after DISCONT, band %u: %g dB / %g rad, a fresh element %g / %g", j, q,
             x->mag[q], x->phase[q], y->mag[q], y->phase[q]);
  }
  g_free(ts);
  g_array_unref(ref);
  g_array_unref(fm);
  g_array_unref(msgs);
  g_array_unref(pushed);
  g_array_unref(sizes_a);
  g_array_unref(sizes_b);
  sp_harness_close(&sh);
  sp_harness_close(&fresh);
  test_signal_clear(&sig);
}
GST_END_TEST;

/* No PTS at all: times count from the first sample: 0, interval, 2 interval, ... */
GST_START_TEST(test_untimestamped_counts_from_zero)
{
  TestRng rng = test_rng("untimestamped");
  const SpSettings st = {256, 10 * GST_MSECOND, -60, FALSE, TRUE};
  TestSignal sig;
  sp_signal_noise(&sig, &rng, CUDAFFT_SAMPLE_S16, 2, 48000, 480 * 10 + 240, 0.9);
  GArray *sizes = sp_random_sizes(&rng, sig.frames, 1, 700);
  run_and_check("no timestamps", &sig, &st, sizes, GST_CLOCK_TIME_NONE, TRUE);
  /* spelled out */
  SpHarness sh;
  sp_harness_open(&sh, "cudaspectrum", &st, sig.format, sig.rate, 2);
  sp_push_sizes(&sh.h, 1, &sig, 0, sizes, GST_CLOCK_TIME_NONE, NULL);
  eu_push_eos(sh.h, NULL);
  GArray *msgs = sp_msgs_new();
  sp_collect(sh.bus, sh.e, TRUE, msgs);
  fail_unless_equals_int(msgs->len, 11);
  for (guint m = 0; m < msgs->len; m++) {
    const SpMsg *x = &g_array_index(msgs, SpMsg, m);
    fail_unless_equals_uint64(x->timestamp, m * 10 * GST_MSECOND);
    fail_unless_equals_uint64(x->running_time, m * 10 * GST_MSECOND);
    fail_unless_equals_uint64(x->stream_time, m * 10 * GST_MSECOND);
    fail_unless_equals_uint64(x->duration, m < 10 ? 10 * GST_MSECOND : 5 * GST_MSECOND);
  }
  g_array_unref(msgs);
  sp_harness_close(&sh);
  g_array_unref(sizes);
  test_signal_clear(&sig);
}
GST_END_TEST;

/* Untimestamped buffers after a TIME segment that starts at 10 s (a seek): the messages are timed
 * from the segment's start, as cudafft and cudaconvolve time their runs, so that they lie inside
 * it with valid running and stream times (before, they counted from 0: outside the segment, and
 * running-time and stream-time came out as GST_CLOCK_TIME_NONE). */
GST_START_TEST(test_untimestamped_after_segment_start)
{
  TestRng rng = test_rng("untimestamped segment");
  const SpSettings st = {256, 10 * GST_MSECOND, -60, FALSE, FALSE};
  TestSignal sig;
  sp_signal_noise(&sig, &rng, CUDAFFT_SAMPLE_F32, 1, 48000, 480 * 5 + 240, 0.9);
  SpHarness sh;
  sp_harness_open(&sh, "cudaspectrum", &st, sig.format, sig.rate, 1);
  GstSegment segment;
  gst_segment_init(&segment, GST_FORMAT_TIME);
  segment.start = 10 * GST_SECOND;
  segment.time = 10 * GST_SECOND;
  segment.position = segment.start;
  fail_unless(gst_harness_push_event(sh.h, gst_event_new_segment(&segment)));
  GArray *sizes = sp_random_sizes(&rng, sig.frames, 1, 700);
  sp_push_sizes(&sh.h, 1, &sig, 0, sizes, GST_CLOCK_TIME_NONE, NULL);
  eu_push_eos(sh.h, NULL);
  GArray *msgs = sp_msgs_new();
  sp_collect(sh.bus, sh.e, TRUE, msgs);
  fail_unless_equals_int(msgs->len, 6);
  for (guint m = 0; m < msgs->len; m++) {
    const SpMsg *x = &g_array_index(msgs, SpMsg, m);
    fail_unless_equals_uint64(x->timestamp, 10 * GST_SECOND + m * 10 * GST_MSECOND);
    fail_unless_equals_uint64(x->running_time, m * 10 * GST_MSECOND);
    fail_unless_equals_uint64(x->stream_time, 10 * GST_SECOND + m * 10 * GST_MSECOND);
    fail_unless_equals_uint64(x->endtime, x->stream_time + x->duration);
  }
  g_array_unref(msgs);
  g_array_unref(sizes);
  sp_harness_close(&sh);
  test_signal_clear(&sig);
}
GST_END_TEST;

/* Empty buffers change nothing. */
GST_START_TEST(test_zero_length_buffers)
{
  TestRng rng = test_rng("empty");
  const SpSettings st = {128, 20 * GST_MSECOND, -60, TRUE, FALSE};
  TestSignal sig;
  sp_signal_noise(&sig, &rng, CUDAFFT_SAMPLE_F32, 2, 44100, 44100 / 4, 0.9);
  GArray *sizes = sp_random_sizes(&rng, sig.frames, 1, 1500);
  GArray *with_empty = g_array_new(FALSE, FALSE, sizeof(gsize));
  const gsize zero = 0;
  g_array_append_val(with_empty, zero);
  for (guint b = 0; b < sizes->len; b++) {
    g_array_append_val(with_empty, g_array_index(sizes, gsize, b));
    if (test_rng_range(&rng, 0, 2) == 0)
      g_array_append_val(with_empty, zero);
  }
  run_and_check("zero-length buffers between the others", &sig, &st, with_empty, 0, TRUE);
  g_array_unref(with_empty);
  g_array_unref(sizes);
  test_signal_clear(&sig);
}
GST_END_TEST;

/* Buffers that split frames: the leftover bytes wait for the rest of their frame. */
GST_START_TEST(test_partial_frame_buffers)
{
  TestRng rng = test_rng("partial frames");
  static const struct {
    CudafftSampleFormat format;
    guint channels;
  } rows[] = {{CUDAFFT_SAMPLE_S16, 2}, {CUDAFFT_SAMPLE_S24, 3}, {CUDAFFT_SAMPLE_F64, 1}};
  for (guint r = 0; r < G_N_ELEMENTS(rows); r++) {
    const SpSettings st = {300, 10 * GST_MSECOND, -70, FALSE, FALSE};
    TestSignal sig;
    sp_signal_noise(&sig, &rng, rows[r].format, rows[r].channels, 48000, 480 * 8, 0.9);
    const gsize bytes = sig.frames * test_signal_frame_bytes(&sig);
    SpHarness odd, whole;
    sp_harness_open(&odd, "cudaspectrum", &st, sig.format, sig.rate, sig.channels);
    sp_harness_open(&whole, "cudaspectrum", &st, sig.format, sig.rate, sig.channels);
    for (gsize at = 0; at < bytes;) {
      const gsize r = test_rng_range(&rng, 1, 2000);
      const gsize n = MIN(r, bytes - at);
      GstBuffer *buf = gst_buffer_new_memdup(sig.raw + at, n);
      fail_unless_equals_int(gst_harness_push(odd.h, buf), GST_FLOW_OK);
      eu_pull_all(odd.h, NULL);
      at += n;
    }
    GArray *sizes = sp_random_sizes(&rng, sig.frames, 1, 2000);
    sp_push_sizes(&whole.h, 1, &sig, 0, sizes, GST_CLOCK_TIME_NONE, NULL);
    GArray *mo = sp_msgs_new(), *mw = sp_msgs_new();
    sp_collect(odd.bus, odd.e, TRUE, mo);
    sp_collect(whole.bus, whole.e, TRUE, mw);
    GArray *ref = sp_reference(&sig, 0, sig.frames, &st, NULL, 0, FALSE);
    fail_unless(mo->len == ref->len, "%s x%u: %u messages, expected %u",
                test_format_name(sig.format), sig.channels, mo->len, ref->len);
    GArray *none = g_array_new(FALSE, FALSE, sizeof(SpPushed));
    GstClockTime *ts = sp_expected_timestamps(none, ref, sig.rate);
    GstSegment segment;
    gst_segment_init(&segment, GST_FORMAT_TIME);
    gchar *row = g_strdup_printf("%s x%u in buffers of any byte size", test_format_name(sig.format),
                                 sig.channels);
    check_messages(row, mo, 0, ref, ref->len, ts, &segment, sig.rate);
    fail_unless_equals_int(mw->len, mo->len);
    for (guint j = 0; j < mo->len; j++) {
      const SpMsg *x = &g_array_index(mo, SpMsg, j), *y = &g_array_index(mw, SpMsg, j);
      for (guint q = 0; q < x->bands; q++)
        if (!float_same(x->mag[q], y->mag[q]))
          fail("%s: interval %u band %u: %g dB, %g dB in whole frames", row, j, q, x->mag[q],
               y->mag[q]);
    }
    g_free(row);
    g_free(ts);
    g_array_unref(none);
    g_array_unref(ref);
    g_array_unref(sizes);
    g_array_unref(mo);
    g_array_unref(mw);
    sp_harness_close(&odd);
    sp_harness_close(&whole);
    test_signal_clear(&sig);
  }
}
GST_END_TEST;

/* A NaN and an Inf sample: NaN in exactly the intervals whose FFT windows hold them. */
GST_START_TEST(test_nan_only_in_its_intervals)
{
  TestRng rng = test_rng("nan");
  const SpSettings st = {513, 10 * GST_MSECOND, -60, TRUE, FALSE}; /* nfft 1024, 480 frames */
  TestSignal sig;
  sp_signal_noise(&sig, &rng, CUDAFFT_SAMPLE_F32, 1, 48000, 480 * 20, 0.9);
  const gsize nan_at = 3000 + test_rng_range(&rng, 0, 100),
              inf_at = 7000 + test_rng_range(&rng, 0, 100);
  test_signal_set(&sig, nan_at, 0, NAN);
  test_signal_set(&sig, inf_at, 0, -INFINITY);
  GArray *ref = sp_reference(&sig, 0, sig.frames, &st, NULL, 0, FALSE);
  guint nan_intervals = 0;
  for (guint j = 0; j < ref->len; j++)
    nan_intervals += isnan(g_array_index(ref, SpInterval, j).mag[0]);
  fail_unless_equals_int(nan_intervals, 4); /* the model: 2 intervals each */
  g_array_unref(ref);
  run_random_and_check("NaN and -Inf samples", &rng, &sig, &st, 1, 1000, 0, FALSE);
  test_signal_clear(&sig);
}
GST_END_TEST;

/* New caps mid-stream (format, channels, rate): the messages after them are those of a fresh
 * element fed the new stream (the interval open at the change may or may not be posted). */
GST_START_TEST(test_caps_change_restarts)
{
  TestRng rng = test_rng("caps change");
  const SpSettings st = {256, 10 * GST_MSECOND, -70, FALSE, TRUE};
  TestSignal a, b;
  sp_signal_noise(&a, &rng, CUDAFFT_SAMPLE_S16, 2, 44100, 44100 / 10 + 200, 0.9);
  sp_signal_noise(&b, &rng, CUDAFFT_SAMPLE_F32, 3, 48000, 48000 / 10 + 100, 0.9);
  SpHarness sh;
  sp_harness_open(&sh, "cudaspectrum", &st, a.format, a.rate, a.channels);
  GArray *sizes = sp_random_sizes(&rng, a.frames, 1, 1000);
  sp_push_sizes(&sh.h, 1, &a, 0, sizes, 0, NULL);
  g_array_unref(sizes);
  GArray *msgs = sp_msgs_new();
  sp_collect(sh.bus, sh.e, TRUE, msgs);
  const guint before = msgs->len;
  fail_unless_equals_int(before, 10);
  gst_harness_set_src_caps(sh.h, eu_raw_caps(b.format, b.rate, b.channels));
  sizes = sp_random_sizes(&rng, b.frames, 1, 1000);
  GArray *pushed = g_array_new(FALSE, FALSE, sizeof(SpPushed));
  sp_push_sizes(&sh.h, 1, &b, 0, sizes, 0, pushed);
  sp_collect(sh.bus, sh.e, TRUE, msgs);
  GArray *ref = sp_reference(&b, 0, b.frames, &st, NULL, 0, FALSE);
  fail_unless(msgs->len == before + ref->len || msgs->len == before + 1 + ref->len,
              "%u messages after the caps change, expected %u (+1 partial at most)",
              msgs->len - before, ref->len);
  GstClockTime *ts = sp_expected_timestamps(pushed, ref, b.rate);
  GstSegment segment;
  gst_segment_init(&segment, GST_FORMAT_TIME);
  check_messages("after new caps", msgs, msgs->len - ref->len, ref, ref->len, ts, &segment, b.rate);
  g_free(ts);
  g_array_unref(ref);
  g_array_unref(pushed);
  g_array_unref(sizes);
  g_array_unref(msgs);
  sp_harness_close(&sh);
  test_signal_clear(&a);
  test_signal_clear(&b);
}
GST_END_TEST;

typedef struct {
  GstElement *e;
  volatile gint stop;
  guint64 seed;
} Changer;

static const guint change_bands[] = {64, 128, 1025};
static const guint64 change_intervals[] = {GST_MSECOND, 5 * GST_MSECOND, 20 * GST_MSECOND};

static gpointer
changer_thread(gpointer data)
{
  Changer *c = data;
  TestRng rng = test_rng("changer");
  while (!g_atomic_int_get(&c->stop)) {
    switch (test_rng_range(&rng, 0, 4)) {
    case 0:
      g_object_set(c->e, "bands", change_bands[test_rng_range(&rng, 0, 2)], NULL);
      break;
    case 1:
      g_object_set(c->e, "interval", change_intervals[test_rng_range(&rng, 0, 2)], NULL);
      break;
    case 2:
      g_object_set(c->e, "threshold", -(gint)test_rng_range(&rng, 40, 100), NULL);
      break;
    case 3:
      g_object_set(c->e, "multi-channel", (gboolean)test_rng_range(&rng, 0, 1), NULL);
      break;
    default:
      g_object_set(c->e, "message-phase", (gboolean)test_rng_range(&rng, 0, 1), NULL);
      break;
    }
    g_usleep(test_rng_range(&rng, 0, 2000));
  }
  return NULL;
}

/* Properties set from another thread while buffers flow: every message well formed, with one of
 * the settings given, in time order. */
GST_START_TEST(test_settings_changed_from_another_thread)
{
  TestRng rng = test_rng("threads");
  const SpSettings st = {128, 5 * GST_MSECOND, -60, FALSE, FALSE};
  TestSignal sig;
  sp_signal_noise(&sig, &rng, CUDAFFT_SAMPLE_F32, 2, 48000, 48000 * 2, 0.9);
  SpHarness sh;
  sp_harness_open(&sh, "cudaspectrum", &st, sig.format, sig.rate, sig.channels);
  Changer changer = {sh.e, 0, 0};
  GThread *thread = g_thread_new("changer", changer_thread, &changer);
  GArray *sizes = sp_random_sizes(&rng, sig.frames, 1, 500);
  GArray *msgs = sp_msgs_new();
  gsize at = 0;
  for (guint b = 0; b < sizes->len; b++) {
    const gsize n = g_array_index(sizes, gsize, b);
    fail_unless_equals_int(gst_harness_push(sh.h, eu_signal_buffer(&sig, at, n, 0)), GST_FLOW_OK);
    eu_pull_all(sh.h, NULL);
    at += n;
    if (b % 16 == 0)
      sp_collect(sh.bus, sh.e, TRUE, msgs);
  }
  g_atomic_int_set(&changer.stop, 1);
  g_thread_join(thread);
  sp_collect(sh.bus, sh.e, TRUE, msgs);
  fail_unless(msgs->len > 100, "only %u messages", msgs->len);
  GstClockTime last_end = 0;
  for (guint m = 0; m < msgs->len; m++) {
    const SpMsg *x = &g_array_index(msgs, SpMsg, m);
    gboolean known_bands = FALSE, known_interval = FALSE;
    for (guint i = 0; i < 3; i++) {
      known_bands |= x->bands == change_bands[i];
      known_interval |= x->duration == change_intervals[i];
    }
    fail_unless(known_bands && known_interval,
                "message %u: %u bands, duration %" G_GUINT64_FORMAT ": not a setting given", m,
                x->bands, x->duration);
    fail_unless(x->rows == (x->multi ? 2u : 1u), "message %u: %u rows (%s)", m, x->rows,
                x->multi ? "multi-channel" : "mixed");
    /* each interval starts where the one before ended, to the nanosecond's rounding */
    fail_unless(x->timestamp + 2 >= last_end && x->timestamp <= last_end + 2,
                "message %u: timestamp %" G_GUINT64_FORMAT
                ", the one before ended at %" G_GUINT64_FORMAT,
                m, x->timestamp, last_end);
    last_end = x->timestamp + x->duration;
    for (gsize q = 0; q < (gsize)x->rows * x->bands; q++)
      if (!(isfinite(x->mag[q]) && x->mag[q] >= -100.001 && x->mag[q] <= 10))
        fail("message %u value %zu: %g dB", m, q, x->mag[q]);
  }
  g_array_unref(sizes);
  g_array_unref(msgs);
  sp_harness_close(&sh);
  test_signal_clear(&sig);
}
GST_END_TEST;

/* Pipelines -------------------------------------------------------------------------------- */

typedef struct {
  gchar *description;
  guint cycles, frames, rate, bands, rows;
  guint64 interval;
  double tone_hz; /* 0: no peak check */
  gchar *why;
} PipelineRun;

/* Runs the pipeline to EOS `cycles` times from NULL; checks each cycle's messages from element
 * "s": count (full intervals + the partial one), shape, timestamps (interval multiples, as the
 * intervals here are whole numbers of frames), and the peak band where a tone is given. */
static gpointer
run_pipeline_cycles(gpointer data)
{
  PipelineRun *run = data;
  GError *error = NULL;
  GstElement *pipeline = gst_parse_launch(run->description, &error);
  if (!pipeline || error) {
    run->why = g_strdup_printf("cannot make it: %s", error ? error->message : "?");
    g_clear_error(&error);
    if (pipeline)
      gst_object_unref(pipeline);
    return NULL;
  }
  GstBus *bus = gst_element_get_bus(pipeline);
  const gsize fpi = gst_util_uint64_scale(run->interval, run->rate, GST_SECOND);
  const guint expected = run->frames / fpi + (run->frames % fpi != 0);
  const guint nfft = 2 * run->bands - 2;
  const guint peak = (guint)lround(run->tone_hz * nfft / run->rate);
  for (guint c = 0; c < run->cycles && !run->why; c++) {
    if (gst_element_set_state(pipeline, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE) {
      run->why = g_strdup_printf("cycle %u: PLAYING failed", c);
      break;
    }
    guint count = 0;
    for (;;) {
      GstMessage *msg = gst_bus_timed_pop_filtered(
          bus, 30 * GST_SECOND, GST_MESSAGE_EOS | GST_MESSAGE_ERROR | GST_MESSAGE_ELEMENT);
      if (!msg) {
        run->why = g_strdup_printf("cycle %u: no EOS within 30 s", c);
        break;
      }
      if (GST_MESSAGE_TYPE(msg) == GST_MESSAGE_EOS) {
        gst_message_unref(msg);
        break;
      }
      if (GST_MESSAGE_TYPE(msg) == GST_MESSAGE_ERROR) {
        GError *err = NULL;
        gchar *debug = NULL;
        gst_message_parse_error(msg, &err, &debug);
        run->why = g_strdup_printf("cycle %u: error from %s: %s (%s)", c, GST_MESSAGE_SRC_NAME(msg),
                                   err->message, debug ? debug : "");
        g_clear_error(&err);
        g_free(debug);
        gst_message_unref(msg);
        break;
      }
      const GstStructure *s = gst_message_get_structure(msg);
      if (s && gst_structure_has_name(s, "spectrum")) {
        SpMsg m;
        GString *why = g_string_new(NULL);
        if (strcmp(GST_MESSAGE_SRC_NAME(msg), "s") != 0)
          g_string_append_printf(why, "from %s", GST_MESSAGE_SRC_NAME(msg));
        else if (sp_msg_parse(msg, TRUE, &m, why)) {
          if (m.bands != run->bands || m.rows != run->rows)
            g_string_append_printf(why, "%u x %u values, expected %u x %u", m.rows, m.bands,
                                   run->rows, run->bands);
          else if (m.timestamp != count * run->interval)
            g_string_append_printf(why,
                                   "timestamp %" G_GUINT64_FORMAT ", expected %" G_GUINT64_FORMAT,
                                   m.timestamp, count * run->interval);
          else if (count + 1 < expected && m.duration != run->interval)
            g_string_append_printf(why, "duration %" G_GUINT64_FORMAT, m.duration);
          else if (count + 1 == expected && run->frames % fpi &&
                   !duration_ok(m.duration, run->frames % fpi, run->rate))
            g_string_append_printf(why, "partial interval: duration %" G_GUINT64_FORMAT,
                                   m.duration);
          for (guint r = 0; r < m.rows && run->tone_hz > 0 && !why->len; r++) {
            guint arg = 0;
            for (guint k = 1; k < m.bands; k++)
              if (m.mag[(gsize)r * m.bands + k] > m.mag[(gsize)r * m.bands + arg])
                arg = k;
            if (arg + 1 < peak || arg > peak + 1)
              g_string_append_printf(why, "row %u peaks in band %u, the tone is in band %u", r, arg,
                                     peak);
          }
          sp_msg_clear(&m);
        }
        if (why->len)
          run->why = g_strdup_printf("cycle %u, message %u: %s", c, count, why->str);
        g_string_free(why, TRUE);
        count++;
      }
      gst_message_unref(msg);
      if (run->why)
        break;
    }
    if (!run->why && count != expected)
      run->why = g_strdup_printf("cycle %u: %u messages, expected %u", c, count, expected);
    if (gst_element_set_state(pipeline, GST_STATE_NULL) == GST_STATE_CHANGE_FAILURE && !run->why)
      run->why = g_strdup_printf("cycle %u: NULL failed", c);
  }
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(bus);
  gst_object_unref(pipeline);
  return NULL;
}

GST_START_TEST(test_state_cycles)
{
  PipelineRun run = {
      .description = g_strdup_printf(
          "audiotestsrc num-buffers=4 samplesperbuffer=1024 wave=white-noise ! "
          "audio/x-raw,format=S16LE,rate=44100,channels=2 ! cudaspectrum name=s backend=%s "
          "interval=20000000 multi-channel=true ! fakesink sync=false",
          eu_backend),
      .cycles = eu_state_cycles(100),
      .frames = 4 * 1024,
      .rate = 44100,
      .bands = 128,
      .rows = 2,
      .interval = 20 * GST_MSECOND,
  };
  run_pipeline_cycles(&run);
  fail_unless(run.why == NULL, "%s: %s", run.description, run.why);
  g_free(run.description);
}
GST_END_TEST;

/* Two instances with different settings at once, in two threads: each sees its own. */
GST_START_TEST(test_two_instances_no_cross_talk)
{
  const guint cycles = MAX(5u, eu_state_cycles(100) / 10);
  PipelineRun runs[2] = {
      {.description = g_strdup_printf(
           "audiotestsrc num-buffers=8 samplesperbuffer=1024 wave=sine freq=1000 ! "
           "audio/x-raw,format=F32LE,rate=44100,channels=1 ! cudaspectrum name=s backend=%s "
           "interval=30000000 bands=128 ! fakesink sync=false",
           eu_backend),
       .cycles = cycles,
       .frames = 8 * 1024,
       .rate = 44100,
       .bands = 128,
       .rows = 1,
       .interval = 30 * GST_MSECOND,
       .tone_hz = 1000},
      {.description = g_strdup_printf(
           "audiotestsrc num-buffers=8 samplesperbuffer=1024 wave=sine freq=5000 ! "
           "audio/x-raw,format=S16LE,rate=48000,channels=2 ! cudaspectrum name=s backend=%s "
           "interval=10000000 bands=1025 multi-channel=true threshold=-90 ! fakesink sync=false",
           eu_backend),
       .cycles = cycles,
       .frames = 8 * 1024,
       .rate = 48000,
       .bands = 1025,
       .rows = 2,
       .interval = 10 * GST_MSECOND,
       .tone_hz = 5000},
  };
  eu_run_threads(run_pipeline_cycles, runs, sizeof runs[0], 2);
  for (int p = 0; p < 2; p++) {
    fail_unless(runs[p].why == NULL, "%s: %s", runs[p].description, runs[p].why);
    g_free(runs[p].description);
  }
}
GST_END_TEST;

/* Settings the engine cannot allocate: an ERROR message that says memory, and a clean NULL. */
GST_START_TEST(test_unallocatable_bands_error)
{
  /* should the engine's memory check ever let the request through, a host allocation of the whole
   * (512 GiB) fails at once instead of being granted lazily and touched */
  eu_limit_address_space(8);
  gchar *description = g_strdup_printf(
      "appsrc name=src format=time ! cudaspectrum name=s backend=%s bands=%u multi-channel=true "
      "! fakesink sync=false",
      eu_backend, 1u << 30);
  GError *error = NULL;
  GstElement *pipeline = gst_parse_launch(description, &error);
  fail_unless(pipeline != NULL && error == NULL, "%s: %s", description,
              error ? error->message : "?");
  GstElement *src = gst_bin_get_by_name(GST_BIN(pipeline), "src");
  GstCaps *caps = eu_raw_caps(CUDAFFT_SAMPLE_F32, 48000, 64);
  g_object_set(src, "caps", caps, NULL);
  gst_caps_unref(caps);
  GstBus *bus = gst_element_get_bus(pipeline);
  fail_if(gst_element_set_state(pipeline, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE);
  GstBuffer *buf = gst_buffer_new_allocate(NULL, 64 * 64 * sizeof(float), NULL);
  gst_buffer_memset(buf, 0, 0, 64 * 64 * sizeof(float));
  GST_BUFFER_PTS(buf) = 0;
  GstFlowReturn flow;
  g_signal_emit_by_name(src, "push-buffer", buf, &flow);
  gst_buffer_unref(buf);
  g_signal_emit_by_name(src, "end-of-stream", &flow);
  /* one failure, one ERROR: cudaspectrum's, none from appsrc for the same failure */
  guint from_s = 0, others = 0;
  gboolean said_memory = FALSE, errored = FALSE;
  GString *errors = g_string_new(NULL);
  for (gboolean stopped = FALSE;;) {
    GstMessage *msg = stopped
                          ? gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR)
                          : gst_bus_timed_pop_filtered(bus, errored ? GST_SECOND : 30 * GST_SECOND,
                                                       GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
    if (msg && GST_MESSAGE_TYPE(msg) == GST_MESSAGE_EOS) {
      gst_message_unref(msg);
      msg = NULL; /* the end of the stream: stop */
    }
    if (!msg && !stopped) {
      /* NULL stops the streaming threads: what they posted on the way out is counted too */
      fail_unless(gst_element_set_state(pipeline, GST_STATE_NULL) == GST_STATE_CHANGE_SUCCESS,
                  "the pipeline does not return to NULL");
      stopped = TRUE;
      continue;
    }
    if (!msg)
      break;
    GError *err = NULL;
    gchar *debug = NULL;
    gst_message_parse_error(msg, &err, &debug);
    gchar *text = g_ascii_strdown(err ? err->message : "", -1);
    gchar *dtext = g_ascii_strdown(debug ? debug : "", -1);
    g_string_append_printf(errors, "[%s: %s | %s] ", GST_MESSAGE_SRC_NAME(msg),
                           err ? err->message : "", debug ? debug : "");
    errored = TRUE;
    const gboolean ours = strcmp(GST_MESSAGE_SRC_NAME(msg), "s") == 0;
    from_s += ours;
    others += !ours;
    said_memory |= ours && (strstr(text, "memory") != NULL || strstr(dtext, "memory") != NULL);
    g_free(text);
    g_free(dtext);
    g_clear_error(&err);
    g_free(debug);
    gst_message_unref(msg);
  }
  fail_unless(errored, "bands 2^30 x 64 channels: no ERROR message (EOS or nothing instead)");
  fail_unless(said_memory, "no ERROR from cudaspectrum that mentions memory: %s", errors->str);
  fail_unless(from_s == 1 && others == 0,
              "bands 2^30 x 64 channels: %u ERRORs from cudaspectrum and %u from the others, "
              "expected one from cudaspectrum alone: %s",
              from_s, others, errors->str);
  g_string_free(errors, TRUE);
  gst_object_unref(bus);
  gst_object_unref(src);
  gst_object_unref(pipeline);
  g_free(description);
}
GST_END_TEST;

/* bands the machine cannot hold once the messages are counted: 24 bytes of GValue and 4 of float
 * per band per spectrum and field (magnitude, phase), on top of the analyser's own memory. Sized
 * from this machine's physical memory so that the analyser alone would fit (about 0.56 of it: the
 * estimate before the messages counted let it through, and the process was killed building the
 * first message) but analyser and messages do not (about 1.7 of it). The refusal must come from
 * the estimate, before anything is allocated: its message names the sizes and the machine's
 * memory. */
GST_START_TEST(test_bands_counted_with_messages)
{
  eu_limit_address_space(8); /* should the estimate let it through, allocations fail at once */
  const double physical =
      (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE); /* bytes */
  const double max_bands = (double)(((guint)G_MAXINT + 2) / 2);
  /* spectra x bands = physical / 50: the analyser keeps about 28 bytes per band and spectrum
   * (24 of them per spectrum: history, sums, results), the messages 56 more */
  double bands = MIN(max_bands, physical / (50.0 * 8));
  const guint channels = (guint)MIN(1024.0, ceil(physical / (50.0 * bands)));
  bands = floor(physical / (50.0 * channels));
  fail_unless(bands >= 2 && bands <= max_bands && channels >= 8,
              "cannot size the request for %.0f bytes of memory", physical);
  gchar *description = g_strdup_printf(
      "appsrc name=src format=time ! cudaspectrum name=s backend=%s bands=%u multi-channel=true "
      "! fakesink sync=false",
      eu_backend, (guint)bands);
  GstElement *pipeline = gst_parse_launch(description, NULL);
  fail_unless(pipeline != NULL, "%s", description);
  GstElement *src = gst_bin_get_by_name(GST_BIN(pipeline), "src");
  GstCaps *caps = eu_raw_caps(CUDAFFT_SAMPLE_F32, 48000, channels);
  g_object_set(src, "caps", caps, NULL);
  gst_caps_unref(caps);
  GstBus *bus = gst_element_get_bus(pipeline);
  fail_if(gst_element_set_state(pipeline, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE);
  const gsize bytes = (gsize)channels * 64 * sizeof(float);
  GstBuffer *buf = gst_buffer_new_allocate(NULL, bytes, NULL);
  gst_buffer_memset(buf, 0, 0, bytes);
  GST_BUFFER_PTS(buf) = 0;
  GstFlowReturn flow;
  g_signal_emit_by_name(src, "push-buffer", buf, &flow);
  gst_buffer_unref(buf);
  g_signal_emit_by_name(src, "end-of-stream", &flow);
  GstMessage *msg =
      gst_bus_timed_pop_filtered(bus, 60 * GST_SECOND, GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  fail_unless(msg && GST_MESSAGE_TYPE(msg) == GST_MESSAGE_ERROR,
              "bands=%.0f x %u channels: %s instead of an ERROR", bands, channels,
              msg ? "EOS" : "nothing");
  GError *err = NULL;
  gchar *debug = NULL;
  gst_message_parse_error(msg, &err, &debug);
  fail_unless_equals_string(GST_MESSAGE_SRC_NAME(msg), "s");
  fail_unless(strstr(err->message, "bands") != NULL, "the error does not name bands: %s",
              err->message);
  fail_unless(debug && strstr(debug, "this machine has") != NULL &&
                  strstr(debug, "copies of") != NULL,
              "not the memory estimate's refusal (with the messages counted): %s | %s",
              err->message, debug ? debug : "");
  GST_INFO("bands=%.0f x %u channels: %s | %s", bands, channels, err->message, debug);
  g_clear_error(&err);
  g_free(debug);
  gst_message_unref(msg);
  fail_unless(gst_element_set_state(pipeline, GST_STATE_NULL) == GST_STATE_CHANGE_SUCCESS);
  gst_object_unref(bus);
  gst_object_unref(src);
  gst_object_unref(pipeline);
  g_free(description);
}
GST_END_TEST;

/* The errors every element shares: one per failure, the channel limit named. */
GST_START_TEST(test_errors_a_user_sees)
{
  eu_check_one_error_at_start("cudaspectrum", "");
  eu_check_channel_limit("cudaspectrum", "");
  eu_check_time_segment("cudaspectrum");
}
GST_END_TEST;

static Suite *
cudaspectrum_suite(void)
{
  TCase *tc;
  Suite *s = eu_suite("cudaspectrum", &tc);
  tcase_add_test(tc, test_metadata);
  tcase_add_test(tc, test_properties_and_caps_match_spectrum);
  tcase_add_test(tc, test_passthrough_same_buffer);
  tcase_add_loop_test(tc, test_tone_at_bin_centre, 0, G_N_ELEMENTS(tone_rows));
  tcase_add_loop_test(tc, test_formats_match_reference, 0, G_N_ELEMENTS(format_rows));
  tcase_add_loop_test(tc, test_multi_channel_per_channel_tones, 0, G_N_ELEMENTS(multi_rows));
  tcase_add_test(tc, test_mixed_channels_averaged);
  tcase_add_loop_test(tc, test_message_fields_and_segment_times, 0, G_N_ELEMENTS(segment_rows));
  tcase_add_test(tc, test_post_messages_and_magnitude_switches);
  tcase_add_test(tc, test_interval_remainder_carry);
  tcase_add_test(tc, test_interval_shorter_than_a_frame);
  tcase_add_test(tc, test_settings_change_at_next_interval);
  tcase_add_test(tc, test_option_change_keeps_history);
  tcase_add_loop_test(tc, test_compatible_with_spectrum, 0, G_N_ELEMENTS(compat_rows));
  tcase_add_loop_test(tc, test_eos_posts_partial_interval, 0, G_N_ELEMENTS(eos_rows));
  tcase_add_test(tc, test_discont_resets_intervals_and_history);
  tcase_add_test(tc, test_untimestamped_counts_from_zero);
  tcase_add_test(tc, test_untimestamped_after_segment_start);
  tcase_add_test(tc, test_zero_length_buffers);
  tcase_add_test(tc, test_partial_frame_buffers);
  tcase_add_test(tc, test_nan_only_in_its_intervals);
  tcase_add_test(tc, test_caps_change_restarts);
  tcase_add_test(tc, test_settings_changed_from_another_thread);
  tcase_add_test(tc, test_state_cycles);
  tcase_add_test(tc, test_two_instances_no_cross_talk);
  tcase_add_test(tc, test_unallocatable_bands_error);
  tcase_add_test(tc, test_bands_counted_with_messages);
  tcase_add_test(tc, test_errors_a_user_sees);
  return s;
}

EU_MAIN(cudaspectrum_suite)
