/* test_cudaspectrum_bands.c: cudaspectrum's band layouts (frequency-scale, bands-per-octave,
 * min-frequency, max-frequency, weighting) on the backend named by argv[1] (cpu|cuda): off by
 * default (no frequencies field, spectrum's bins; the cudaspectrum-element tests compare every
 * message with spectrum's); with a layout, every message against a double-precision model
 * (spectrum_reference.h without the threshold's floor, then the layout's bands by the header's
 * definition): the band count, the band centres in `frequencies`, every level and the phases of
 * the bins nearest the centres; changes while playing from the next interval; a layout without
 * bands at the stream's rate refused with a warning. */
#include "element_util.h"
#include "spectrum_reference.h"

#include <cudafft/bands.h>

#include <limits.h>
#include <math.h>
#include <string.h>

#define RATE 48000
/* dB. Bands sum the powers of many bins, each a float FFT's level (within 1e-3 dB of the double
 * model where the bin is near its row's level); the sum is within that too. Bands the model puts
 * below the threshold (+ 1 dB) must read the threshold within the same margin. */
#define BAND_TOLERANCE 0.02
/* Radians: the phase of a bin at its row's mean power or above (float against double). A float
 * FFT's error in a bin is about the same for every bin of a row, so the phase of a weaker bin is
 * off by that much more: the tolerance grows with the bin's amplitude below the mean (noise puts
 * a bin 20 dB or more below it now and then). */
#define PHASE_TOLERANCE 1e-3

static const double pi = 3.14159265358979323846;

/* One interval of the model: rows x bins levels (no floor) and phases. */
typedef struct {
  guint rows, bins;
  double *level, *phase;
} Interval;

static void
interval_clear(gpointer p)
{
  Interval *iv = p;
  g_free(iv->level);
  g_free(iv->phase);
}

static void
collect(void *context, const SpectrumRefInterval *r)
{
  const gsize n = (gsize)r->rows * r->bands;
  Interval iv = {r->rows, (guint)r->bands, g_memdup2(r->level, n * sizeof(double)),
                 g_memdup2(r->phase, n * sizeof(double))};
  g_array_append_val((GArray *)context, iv);
}

/* The model's intervals of the whole signal: spectrum's analysis without a floor. */
static GArray *
model(const TestSignal *s, guint bands, gboolean multi, guint64 interval)
{
  GArray *out = g_array_new(FALSE, TRUE, sizeof(Interval));
  g_array_set_clear_func(out, interval_clear);
  const SpectrumRefSettings settings = {bands, multi, interval, INT_MIN / 2, TRUE};
  SpectrumRef *ref = spectrum_ref_new(s->channels, s->rate, &settings, NULL);
  spectrum_ref_push(ref, s->values, s->frames, collect, out);
  spectrum_ref_free(ref);
  return out;
}

/* A band layout's expected message row from the model's bins: levels (floored) and phases (the
 * centre bin's), and each phase's tolerance (PHASE_TOLERANCE). */
static void
expected_bands(const CudafftBandLayout *layout, CudafftWeighting weighting, guint bins, guint rate,
               const double *level, const double *phase, int threshold, double *band_level,
               double *band_phase, double *phase_tolerance, gsize count)
{
  const gsize nfft = 2 * (gsize)bins - 2;
  CudafftBandBins *w = g_new(CudafftBandBins, count);
  double *centre = g_new(double, count);
  fail_unless(cudafft_band_bins(layout, nfft, rate, w) == CUDAFFT_STATUS_OK);
  cudafft_band_edges(layout, NULL, centre, NULL);
  double mean = 0.0; /* the row's mean bin power */
  for (guint k = 0; k < bins; k++)
    mean += pow(10.0, level[k] / 10.0) / bins;
  for (gsize b = 0; b < count; b++) {
    double p = 0.0;
    for (guint k = w[b].first; k <= w[b].last; k++) {
      const double a = k == w[b].first ? w[b].first_weight : k == w[b].last ? w[b].last_weight : 1;
      const double g = pow(10.0, cudafft_weighting_db(weighting, (double)k * rate / nfft) / 10.0);
      p += a * g * pow(10.0, level[k] / 10.0);
    }
    band_level[b] = fmax(p > 0.0 ? 10.0 * log10(p) : -INFINITY, threshold);
    const gsize k = (gsize)fmin(fmax(floor(centre[b] * nfft / rate + 0.5), 0.0), bins - 1);
    band_phase[b] = phase[k];
    phase_tolerance[b] = PHASE_TOLERANCE * fmax(1.0, sqrt(mean / pow(10.0, level[k] / 10.0)));
  }
  g_free(w);
  g_free(centre);
}

/* A message's float32 bytes field, copied. */
static float *
bytes_field(const GstStructure *st, const char *name, gsize *count)
{
  const GValue *v = gst_structure_get_value(st, name);
  if (!v)
    return NULL;
  gsize size = 0;
  const void *data = g_bytes_get_data(g_value_get_boxed(v), &size);
  *count = size / sizeof(float);
  return g_memdup2(data, size);
}

typedef struct {
  const char *props;
  guint bands, fft_size; /* fft_size 0: linear, spectrum's rule (nfft = 2 bands - 2) */
  CudafftFrequencyScale scale;
  CudafftWeighting weighting;
  guint bands_per_octave;
  double lo, hi;
  gboolean multi;
  guint channels;
} Row;

/* log, mel and octave analyse fft-size points (the default 4096 where the row sets none), their
 * band counts independent of it; linear keeps spectrum's rule. */
static const Row rows[] = {
    {"frequency-scale=log", 1025, 4096, CUDAFFT_SCALE_LOG, CUDAFFT_WEIGHTING_Z, 3, 0, 0, FALSE, 2},
    {"frequency-scale=log fft-size=8192", 32, 8192, CUDAFFT_SCALE_LOG, CUDAFFT_WEIGHTING_Z, 3, 0, 0,
     FALSE, 1},
    {"frequency-scale=mel weighting=c multi-channel=true fft-size=2048", 1025, 2048,
     CUDAFFT_SCALE_MEL, CUDAFFT_WEIGHTING_C, 3, 0, 0, TRUE, 2},
    {"frequency-scale=mel fft-size=1024 min-frequency=100 max-frequency=8000", 40, 1024,
     CUDAFFT_SCALE_MEL, CUDAFFT_WEIGHTING_Z, 3, 100, 8000, FALSE, 1},
    {"frequency-scale=octave bands-per-octave=3 weighting=a multi-channel=true", 1025, 4096,
     CUDAFFT_SCALE_OCTAVE, CUDAFFT_WEIGHTING_A, 3, 0, 0, TRUE, 3},
    {"frequency-scale=octave bands-per-octave=24 min-frequency=100 max-frequency=10000 "
     "fft-size=16384",
     1025, 16384, CUDAFFT_SCALE_OCTAVE, CUDAFFT_WEIGHTING_Z, 24, 100, 10000, FALSE, 1},
    {"weighting=a", 1025, 0, CUDAFFT_SCALE_LINEAR, CUDAFFT_WEIGHTING_A, 3, 0, 0, FALSE, 1},
    {"frequency-scale=linear weighting=c min-frequency=500 max-frequency=5000 fft-size=256", 1025,
     0, CUDAFFT_SCALE_LINEAR, CUDAFFT_WEIGHTING_C, 3, 500, 5000, FALSE, 2},
};

/* Noise and tones: every bin well above float rounding. */
static void
bands_signal(TestSignal *s, const char *label, guint channels, gsize frames)
{
  TestRng rng = test_rng("%s", label);
  test_signal_alloc(s, CUDAFFT_SAMPLE_F32, channels, RATE, frames, TEST_READ_POW2);
  for (guint c = 0; c < channels; c++)
    for (gsize j = 0; j < frames; j++)
      test_signal_set(s, j, c,
                      0.3 * sin(2.0 * pi * 1000.0 * (c + 1) * j / RATE) +
                          0.1 * test_rng_uniform53(&rng));
}

GST_START_TEST(test_layouts_against_model)
{
  const Row *row = &rows[__i__];
  const guint bands = row->bands, threshold = 80;
  /* the analysis's bins: fft-size / 2 + 1 for log, mel and octave, spectrum's bands for linear */
  const guint bins = row->fft_size ? row->fft_size / 2 + 1 : bands;
  const guint64 interval = 20 * GST_MSECOND;
  TestSignal s;
  bands_signal(&s, row->props, row->channels, RATE / 2);
  GstHarness *h =
      eu_harness_new("cudaspectrum name=s backend=%s bands=%u interval=%" G_GUINT64_FORMAT
                     " threshold=-%u message-phase=true %s",
                     eu_backend, bands, interval, threshold, row->props);
  GstBus *bus = eu_harness_bus(h);
  eu_harness_signal_caps(h, &s);
  eu_push_signal(h, &s, 0, s.frames, 1111, 0, NULL);
  GArray *ref = model(&s, bins, row->multi, interval);

  CudafftBandLayout layout = {row->scale, bands, row->bands_per_octave, row->lo, row->hi};
  fail_unless(cudafft_band_layout_resolve(&layout, RATE) == CUDAFFT_STATUS_OK);
  const gsize count = cudafft_band_count(&layout);
  double *centre = g_new(double, count);
  cudafft_band_edges(&layout, NULL, centre, NULL);
  double *want = g_new(double, count), *want_phase = g_new(double, count);
  double *phase_tolerance = g_new(double, count);
  guint messages = 0;
  double worst = 0.0, worst_phase = 0.0;
  GstMessage *m;
  while ((m = gst_bus_pop_filtered(bus, GST_MESSAGE_ELEMENT | GST_MESSAGE_ERROR |
                                            GST_MESSAGE_WARNING)) != NULL) {
    fail_if(GST_MESSAGE_TYPE(m) != GST_MESSAGE_ELEMENT, "%s: %s", row->props,
            GST_MESSAGE_TYPE_NAME(m));
    const GstStructure *st = gst_message_get_structure(m);
    fail_unless(messages < ref->len, "%s: more messages than the model's %u", row->props, ref->len);
    const Interval *iv = &g_array_index(ref, Interval, messages);
    guint got_bands = 0, got_rows = 0;
    fail_unless(gst_structure_get_uint(st, "bands", &got_bands) &&
                gst_structure_get_uint(st, "channels", &got_rows));
    fail_unless(got_bands == count && got_rows == iv->rows, "%s: %u bands x %u rows, want %zu x %u",
                row->props, got_bands, got_rows, count, iv->rows);
    gsize n_freq = 0, n_mag = 0, n_phase = 0;
    float *freq = bytes_field(st, "frequencies", &n_freq);
    float *mag = bytes_field(st, "magnitude-data", &n_mag);
    float *phase = bytes_field(st, "phase-data", &n_phase);
    fail_unless(freq && n_freq == count && mag && n_mag == count * iv->rows && phase &&
                    n_phase == n_mag,
                "%s: fields of %zu, %zu, %zu values", row->props, n_freq, n_mag, n_phase);
    for (gsize b = 0; b < count; b++)
      fail_unless(freq[b] == (float)centre[b], "%s: band %zu centre %g Hz, want %g", row->props, b,
                  freq[b], centre[b]);
    /* the list form holds the same values */
    const GValue *list = gst_structure_get_value(st, "magnitude");
    fail_unless(list != NULL);
    for (guint r = 0; r < iv->rows; r++) {
      expected_bands(&layout, row->weighting, bins, RATE, iv->level + (gsize)r * bins,
                     iv->phase + (gsize)r * bins, -(int)threshold, want, want_phase,
                     phase_tolerance, count);
      for (gsize b = 0; b < count; b++) {
        const float got = mag[r * count + b];
        const double d = fabs(got - want[b]);
        worst = fmax(worst, d);
        if (!(d <= BAND_TOLERANCE))
          fail("%s: message %u row %u band %zu (%.1f Hz): %.4f dB, "
               "model %.4f",
               row->props, messages, r, b, centre[b], got, want[b]);
        const double dp = fabs(phase[r * count + b] - want_phase[b]);
        const double wrapped = fmin(dp, 2 * pi - dp);
        worst_phase = fmax(worst_phase, wrapped / phase_tolerance[b]);
      }
    }
    g_free(freq);
    g_free(mag);
    g_free(phase);
    gst_message_unref(m);
    messages++;
  }
  fail_unless(messages == ref->len, "%s: %u messages, model %u", row->props, messages, ref->len);
  fail_unless(worst_phase <= 1.0, "%s: a phase %.2g times its tolerance off", row->props,
              worst_phase);
  GST_INFO("%s: %u messages, levels within %.2g dB", row->props, messages, worst);
  g_free(centre);
  g_free(want);
  g_free(want_phase);
  g_free(phase_tolerance);
  g_array_unref(ref);
  eu_harness_teardown(h, bus);
  test_signal_clear(&s);
}
GST_END_TEST;

/* With the defaults the messages are spectrum's: no frequencies field, bands bins. */
GST_START_TEST(test_off_by_default)
{
  TestSignal s;
  bands_signal(&s, "off", 1, RATE / 10);
  GstHarness *h =
      eu_harness_new("cudaspectrum name=s backend=%s bands=300 interval=10000000", eu_backend);
  GstBus *bus = eu_harness_bus(h);
  GstElement *e = eu_harness_element(h, "s");
  gint scale = -1, weighting = -1;
  g_object_get(e, "frequency-scale", &scale, "weighting", &weighting, NULL);
  fail_unless(scale == CUDAFFT_SCALE_LINEAR && weighting == CUDAFFT_WEIGHTING_Z);
  eu_harness_signal_caps(h, &s);
  eu_push_signal(h, &s, 0, s.frames, 480, 0, NULL);
  GstMessage *m;
  guint messages = 0;
  while ((m = gst_bus_pop_filtered(bus, GST_MESSAGE_ELEMENT)) != NULL) {
    const GstStructure *st = gst_message_get_structure(m);
    guint bands = 0;
    fail_unless(gst_structure_get_uint(st, "bands", &bands) && bands == 300);
    fail_if(gst_structure_has_field(st, "frequencies"), "a frequencies field without a layout");
    gst_message_unref(m);
    messages++;
  }
  fail_unless_equals_int(messages, 10);
  gst_object_unref(e);
  eu_harness_teardown(h, bus);
  test_signal_clear(&s);
}
GST_END_TEST;

/* A layout set while playing applies from the next interval, as threshold does: the interval in
 * progress keeps the old bands. */
GST_START_TEST(test_change_at_next_interval)
{
  TestSignal s;
  bands_signal(&s, "change", 1, RATE / 5);
  GstHarness *h = eu_harness_new(
      "cudaspectrum name=s backend=%s bands=513 interval=20000000 threshold=-90", eu_backend);
  GstBus *bus = eu_harness_bus(h);
  GstElement *e = eu_harness_element(h, "s");
  eu_harness_signal_caps(h, &s);
  /* 2.5 intervals, the change, the rest */
  eu_push_signal(h, &s, 0, 2400, 480, 0, NULL);
  g_object_set(e, "frequency-scale", CUDAFFT_SCALE_OCTAVE, NULL);
  eu_push_signal(h, &s, 2400, s.frames - 2400, 480, 0, NULL);
  CudafftBandLayout thirds = {CUDAFFT_SCALE_OCTAVE, 0, 3, 0.0, 0.0};
  cudafft_band_layout_resolve(&thirds, RATE);
  const guint third_octaves = (guint)cudafft_band_count(&thirds);
  GstMessage *m;
  guint messages = 0;
  while ((m = gst_bus_pop_filtered(bus, GST_MESSAGE_ELEMENT)) != NULL) {
    const GstStructure *st = gst_message_get_structure(m);
    guint bands = 0;
    gst_structure_get_uint(st, "bands", &bands);
    const gboolean layout = gst_structure_has_field(st, "frequencies");
    /* intervals 0, 1 and the open one (2) are spectrum's 513 bins; then 1/3 octaves to 24 kHz */
    if (messages < 3)
      fail_unless(bands == 513 && !layout, "message %u: %u bands", messages, bands);
    else
      fail_unless(bands == third_octaves && layout, "message %u: %u bands, want %u third octaves",
                  messages, bands, third_octaves);
    gst_message_unref(m);
    messages++;
  }
  fail_unless_equals_int(messages, 10);
  gst_object_unref(e);
  eu_harness_teardown(h, bus);
  test_signal_clear(&s);
}
GST_END_TEST;

/* A layout without bands at this rate: at the start one ERROR (the first buffer fails); while
 * playing a warning, the bands in force stay in every message, and the properties read back the
 * layout in force (test_properties.c checks the texts, for both elements with band layouts). */
GST_START_TEST(test_layout_without_bands_refused)
{
  TestSignal s;
  bands_signal(&s, "refused", 1, RATE / 10);
  GstHarness *h = eu_harness_new(
      "cudaspectrum name=s backend=%s bands=257 interval=10000000 frequency-scale=log "
      "min-frequency=30000",
      eu_backend);
  GstBus *bus = eu_harness_bus(h);
  eu_harness_signal_caps(h, &s);
  GstBuffer *first = eu_signal_buffer(&s, 0, 480, 0);
  fail_unless(gst_harness_push(h, first) != GST_FLOW_OK, "the first buffer went through");
  gchar *text = NULL;
  fail_unless(eu_bus_pop_error(bus, NULL, &text), "no ERROR at the start");
  fail_unless(strstr(text, "min-frequency=30000") != NULL, "the ERROR: %s", text);
  g_free(text);
  eu_harness_teardown(h, bus);

  h = eu_harness_new("cudaspectrum name=s backend=%s bands=257 interval=10000000 "
                     "frequency-scale=log min-frequency=100",
                     eu_backend);
  bus = eu_harness_bus(h);
  GstElement *e = eu_harness_element(h, "s");
  eu_harness_signal_caps(h, &s);
  eu_push_signal(h, &s, 0, s.frames / 2, 480, 0, NULL);
  g_object_set(e, "min-frequency", 30000.0, NULL);
  eu_push_signal(h, &s, s.frames / 2, s.frames - s.frames / 2, 480, 0, NULL);
  gdouble min_frequency = 0.0;
  g_object_get(e, "min-frequency", &min_frequency, NULL);
  fail_unless(min_frequency == 100.0, "min-frequency reads %g, the layout in force has 100",
              min_frequency);
  GstMessage *m;
  guint messages = 0, warnings = 0;
  while ((m = gst_bus_pop_filtered(bus, GST_MESSAGE_ELEMENT | GST_MESSAGE_WARNING |
                                            GST_MESSAGE_ERROR)) != NULL) {
    fail_if(GST_MESSAGE_TYPE(m) == GST_MESSAGE_ERROR, "an error");
    if (GST_MESSAGE_TYPE(m) == GST_MESSAGE_WARNING) {
      GError *err = NULL;
      gst_message_parse_warning(m, &err, NULL);
      fail_unless(err && strstr(err->message, "30000") != NULL, "the warning: %s",
                  err ? err->message : "");
      g_clear_error(&err);
      warnings++;
    } else {
      guint bands = 0;
      const GstStructure *st = gst_message_get_structure(m);
      gst_structure_get_uint(st, "bands", &bands);
      fail_unless(bands == 257 && gst_structure_has_field(st, "frequencies"),
                  "message %u: %u bands", messages, bands);
      messages++;
    }
    gst_message_unref(m);
  }
  fail_unless_equals_int(warnings, 1);
  fail_unless_equals_int(messages, 10);
  gst_object_unref(e);
  eu_harness_teardown(h, bus);
  test_signal_clear(&s);
}
GST_END_TEST;

/* A tone lands in the band that holds it, at the bottom and at the top of the range, wherever the
 * analysis resolves the bands (fft-size's text: about two bins a band): third octaves from 20 Hz
 * (min-frequency 19: the 19.95 Hz midband) at fft-size 16384 and from 100 Hz at 4096, 32 log bands
 * over the whole range with a 100 Hz tone at 4096 (before the analysis was nfft = 62 and the tone
 * read in the bands at 391-618 Hz), 32 log bands from 20 Hz at 16384, 40 mel bands from 100 Hz to 8
 * kHz at 4096. Every message, for a tone at the lowest band's centre and one in the highest band.
 */
typedef struct {
  const char *props;
  CudafftBandLayout layout;
  double low, high; /* the tones, Hz (low 0: the lowest band's centre) */
} ToneRow;

static const ToneRow tone_rows[] = {
    {"frequency-scale=octave bands-per-octave=3 min-frequency=19 fft-size=16384",
     {CUDAFFT_SCALE_OCTAVE, 0, 3, 19, 0},
     0,
     20000.0},
    {"frequency-scale=octave bands-per-octave=3 min-frequency=100",
     {CUDAFFT_SCALE_OCTAVE, 0, 3, 100, 0},
     0,
     20000.0},
    {"frequency-scale=log bands=32", {CUDAFFT_SCALE_LOG, 32, 3, 0, 0}, 100.0, 22000.0},
    {"frequency-scale=log bands=32 fft-size=16384", {CUDAFFT_SCALE_LOG, 32, 3, 0, 0}, 0, 22000.0},
    {"frequency-scale=mel bands=40 min-frequency=100 max-frequency=8000",
     {CUDAFFT_SCALE_MEL, 40, 3, 100, 8000},
     0,
     8000.0},
};

GST_START_TEST(test_tone_in_its_band)
{
  const ToneRow *row = &tone_rows[__i__ / 2];
  CudafftBandLayout layout = row->layout;
  fail_unless(cudafft_band_layout_resolve(&layout, RATE) == CUDAFFT_STATUS_OK);
  const gsize count = cudafft_band_count(&layout);
  double *lo = g_new(double, count), *hi = g_new(double, count), *centre = g_new(double, count);
  cudafft_band_edges(&layout, lo, centre, hi);
  const double tone = __i__ % 2 ? row->high : row->low > 0 ? row->low : centre[0];
  gsize want = count;
  for (gsize b = 0; b < count; b++)
    if (tone >= lo[b] && tone < hi[b])
      want = b;
  fail_unless(want < count, "%s: no band holds %g Hz", row->props, tone);
  TestSignal s;
  test_signal_alloc(&s, CUDAFFT_SAMPLE_F32, 1, RATE, 2 * RATE, TEST_READ_POW2);
  for (gsize j = 0; j < s.frames; j++)
    test_signal_set(&s, j, 0, 0.5 * sin(2.0 * pi * tone * j / RATE));
  GstHarness *h = eu_harness_new("cudaspectrum name=s backend=%s interval=500000000 %s", eu_backend,
                                 row->props);
  GstBus *bus = eu_harness_bus(h);
  eu_harness_signal_caps(h, &s);
  eu_push_signal(h, &s, 0, s.frames, 4800, 0, NULL);
  GstMessage *m;
  guint messages = 0;
  while ((m = gst_bus_pop_filtered(bus, GST_MESSAGE_ELEMENT | GST_MESSAGE_WARNING |
                                            GST_MESSAGE_ERROR)) != NULL) {
    fail_if(GST_MESSAGE_TYPE(m) != GST_MESSAGE_ELEMENT, "%s: %s", row->props,
            GST_MESSAGE_TYPE_NAME(m));
    gsize n = 0;
    float *mag = bytes_field(gst_message_get_structure(m), "magnitude-data", &n);
    fail_unless(mag && n == count, "%s: %zu bands, want %zu", row->props, n, count);
    gsize peak = 0;
    for (gsize b = 1; b < n; b++)
      if (mag[b] > mag[peak])
        peak = b;
    fail_unless(peak == want,
                "%s, %g Hz: message %u peaks in band %zu (%.1f..%.1f Hz, %.1f dB), not in band %zu "
                "(%.1f..%.1f Hz, %.1f dB)",
                row->props, tone, messages, peak, lo[peak], hi[peak], mag[peak], want, lo[want],
                hi[want], mag[want]);
    g_free(mag);
    gst_message_unref(m);
    messages++;
  }
  fail_unless(messages >= 3, "%s: %u messages", row->props, messages);
  g_free(lo);
  g_free(hi);
  g_free(centre);
  eu_harness_teardown(h, bus);
  test_signal_clear(&s);
}
GST_END_TEST;

static Suite *
cudaspectrum_bands_suite(void)
{
  TCase *tc;
  Suite *s = eu_suite("cudaspectrum-bands", &tc);
  tcase_add_loop_test(tc, test_layouts_against_model, 0, G_N_ELEMENTS(rows));
  tcase_add_loop_test(tc, test_tone_in_its_band, 0, 2 * G_N_ELEMENTS(tone_rows));
  tcase_add_test(tc, test_off_by_default);
  tcase_add_test(tc, test_change_at_next_interval);
  tcase_add_test(tc, test_layout_without_bands_refused);
  return s;
}

EU_MAIN(cudaspectrum_bands_suite)
