/* test_cudamatrixconvolve_sofa.c: cudamatrixconvolve's HRTF sets (sofa-location, directions) on
 * the backend named by argv[1] (cpu|cuda), with SOFA files the test makes: random responses and
 * delays on a grid of measured directions, written by make_sofa.py (netCDF4) from data the test
 * keeps, so that every output sample is checked against a double-precision direct convolution with
 * the responses the test expects for each channel: 7.1 to binaural by the channel positions'
 * standard directions (each on the grid, the measurement named by its angles), 16 unpositioned
 * channels by random directions (the nearest measurement found here by great-circle distance), a
 * change of directions while playing (the crossover), sets of another rate (resampled: length and
 * gain kept), and the bad inputs: a file that is not SOFA, a set of one receiver, a missing file, a
 * NaN tap, directions out of range or of another count, channels without positions, a rate the
 * set cannot be resampled to. Built where the plugin reads SOFA files (libmysofa) and a python3
 * with netCDF4 and numpy is found; meson passes both paths in CUDAFFT_TEST_PYTHON and
 * CUDAFFT_TEST_MAKE_SOFA. */
#include "matrix_element_util.h"

#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define RATE 48000
#define READ TEST_READ_POW2

/* A set on a grid: azimuths every 10 degrees on the horizontal plane (index azimuth / 10), then
 * every 30 degrees at elevations +40 and -40. */
#define GRID_HORIZONTAL 36
#define GRID_MEASUREMENTS (GRID_HORIZONTAL + 2 * 12)

typedef struct {
  guint measurements, receivers;
  gsize n; /* taps of each response in the file */
  guint rate;
  double *positions; /* measurements x <azimuth, elevation, distance> */
  double *taps;      /* measurements x receivers x n */
  double delays[2];  /* per receiver, whole samples */
} SofaSet;

static void
grid_set(SofaSet *set, TestRng *rng, gsize n, guint receivers, guint rate)
{
  set->measurements = GRID_MEASUREMENTS;
  set->receivers = receivers;
  set->n = n;
  set->rate = rate;
  set->positions = g_new(double, 3 * GRID_MEASUREMENTS);
  for (guint m = 0; m < GRID_MEASUREMENTS; m++) {
    const gboolean flat = m < GRID_HORIZONTAL;
    const guint k = flat ? m : (m - GRID_HORIZONTAL) % 12;
    set->positions[3 * m] = flat ? 10.0 * k : 30.0 * k;
    set->positions[3 * m + 1] = flat ? 0.0 : m < GRID_HORIZONTAL + 12 ? 40.0 : -40.0;
    set->positions[3 * m + 2] = 1.2;
  }
  set->taps = mx_random_responses(rng, GRID_MEASUREMENTS * receivers, n, 0);
  set->delays[0] = (double)test_rng_range(rng, 0, 5);
  set->delays[1] = (double)test_rng_range(rng, 0, 5);
}

static void
sofa_set_clear(SofaSet *set)
{
  g_free(set->positions);
  g_free(set->taps);
}

/* Writes `set` as a SOFA file through make_sofa.py; the path, to g_free and unlink. */
static gchar *
write_sofa(const char *label, const SofaSet *set)
{
  const char *python = g_getenv("CUDAFFT_TEST_PYTHON");
  const char *script = g_getenv("CUDAFFT_TEST_MAKE_SOFA");
  fail_unless(python && script, "CUDAFFT_TEST_PYTHON and CUDAFFT_TEST_MAKE_SOFA are not set");
  gchar *data = g_strdup_printf("%s/cudamatrixconvolve-sofa-%d-%s.bin", g_get_tmp_dir(),
                                (int)getpid(), label);
  gchar *path = g_strdup_printf("%s/cudamatrixconvolve-sofa-%d-%s.sofa", g_get_tmp_dir(),
                                (int)getpid(), label);
  FILE *f = fopen(data, "wb");
  fail_unless(f != NULL, "cannot write %s", data);
  const gint32 header[4] = {(gint32)set->measurements, (gint32)set->receivers, (gint32)set->n,
                            (gint32)set->rate};
  fail_unless(fwrite(header, sizeof header, 1, f) == 1);
  fail_unless(fwrite(set->positions, sizeof(double), 3 * (gsize)set->measurements, f) ==
              3 * (gsize)set->measurements);
  const gsize values = (gsize)set->measurements * set->receivers * set->n;
  fail_unless(fwrite(set->taps, sizeof(double), values, f) == values);
  fail_unless(fwrite(set->delays, sizeof(double), set->receivers, f) == set->receivers);
  fclose(f);
  const gchar *argv[] = {python, script, path, data, NULL};
  gchar *err = NULL;
  gint status = 0;
  GError *error = NULL;
  fail_unless(g_spawn_sync(NULL, (gchar **)argv, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL, NULL,
                           &err, &status, &error),
              "cannot run %s: %s", script, error ? error->message : "?");
  fail_unless(g_spawn_check_wait_status(status, NULL), "%s failed: %s", script, err);
  g_free(err);
  g_unlink(data);
  g_free(data);
  return path;
}

static void
remove_file(gchar *path)
{
  g_unlink(path);
  g_free(path);
}

/* The matrix the element must use: entry (i, r) measurement m[i]'s response of receiver r,
 * delayed by the receiver's delay; rows of *taps = n + the longest delay. */
static double *
expected_matrix(const SofaSet *set, const guint *m, guint inputs, gsize *taps)
{
  const gsize most = (gsize)MAX(set->delays[0], set->receivers > 1 ? set->delays[1] : 0);
  *taps = set->n + most;
  double *h = g_new0(double, (gsize)inputs * set->receivers * *taps);
  for (guint i = 0; i < inputs; i++)
    for (guint r = 0; r < set->receivers; r++)
      memcpy(h + ((gsize)i * set->receivers + r) * *taps + (gsize)set->delays[r],
             set->taps + ((gsize)m[i] * set->receivers + r) * set->n, set->n * sizeof(double));
  return h;
}

/* The measurement nearest to a direction, by great-circle distance (the haversine formula). */
static guint
nearest_by_distance(const SofaSet *set, double azimuth, double elevation)
{
  const double a1 = azimuth * G_PI / 180, e1 = elevation * G_PI / 180;
  guint best = 0;
  double best_distance = INFINITY;
  for (guint m = 0; m < set->measurements; m++) {
    const double a2 = set->positions[3 * m] * G_PI / 180;
    const double e2 = set->positions[3 * m + 1] * G_PI / 180;
    const double h = pow(sin((e2 - e1) / 2), 2) + cos(e1) * cos(e2) * pow(sin((a2 - a1) / 2), 2);
    const double distance = 2 * asin(sqrt(MIN(h, 1.0)));
    if (distance < best_distance) {
      best_distance = distance;
      best = m;
    }
  }
  return best;
}

static void
set_directions(GstElement *e, const double *pairs, guint count)
{
  GValue value = G_VALUE_INIT;
  g_value_init(&value, GST_TYPE_ARRAY);
  for (guint c = 0; c < count; c++) {
    GValue pair = G_VALUE_INIT;
    g_value_init(&pair, GST_TYPE_ARRAY);
    for (guint k = 0; k < 2; k++) {
      GValue v = G_VALUE_INIT;
      g_value_init(&v, G_TYPE_DOUBLE);
      g_value_set_double(&v, pairs[2 * c + k]);
      gst_value_array_append_and_take_value(&pair, &v);
    }
    gst_value_array_append_and_take_value(&value, &pair);
  }
  g_object_set_property(G_OBJECT(e), "directions", &value);
  g_value_unset(&value);
}

/* Filters x (the harness's caps from it) with the set at `path` and returns the output, checked
 * for its stamps and stereo caps; *frames its length. */
static double *
run_set(const char *properties, const double *directions, guint count, const TestSignal *x,
        gsize *frames, const char *row)
{
  GstHarness *hn =
      eu_harness_new("cudamatrixconvolve name=m backend=%s %s", eu_backend, properties);
  if (directions) {
    GstElement *e = eu_harness_element(hn, "m");
    set_directions(e, directions, count);
    gst_object_unref(e);
  }
  eu_harness_signal_caps(hn, x);
  GPtrArray *out = eu_buffer_list();
  eu_push_signal(hn, x, 0, x->frames, 700, 0, out);
  eu_push_eos(hn, out);
  GstCaps *caps = gst_pad_get_current_caps(hn->sinkpad);
  GstAudioInfo info;
  fail_unless(caps && gst_audio_info_from_caps(&info, caps), "%s: no output caps", row);
  fail_unless_equals_int(GST_AUDIO_INFO_CHANNELS(&info), 2);
  fail_unless(info.position[0] == GST_AUDIO_CHANNEL_POSITION_FRONT_LEFT &&
                  info.position[1] == GST_AUDIO_CHANNEL_POSITION_FRONT_RIGHT,
              "%s: not stereo positions", row);
  gst_caps_unref(caps);
  double *got = mx_read_run(out, x->format, 2, x->rate, 0, frames, row);
  g_ptr_array_unref(out);
  gst_harness_teardown(hn);
  return got;
}

/* Filters `samples` random frames of `inputs` channels in `format` with the set at `path` and
 * checks every output sample against the direct convolution with measurements m[i]. */
static void
check_binaural(const SofaSet *set, const char *path, const guint *m, guint inputs,
               CudafftSampleFormat format, gsize samples, const char *more,
               const double *directions, TestRng *rng, const char *row)
{
  gsize taps = 0;
  double *h = expected_matrix(set, m, inputs, &taps);
  TestSignal x;
  test_signal_random(&x, rng, format, inputs, RATE, samples, READ);
  gchar *props = g_strdup_printf("%s sofa-location=%s", more, path);
  gsize frames = 0;
  double *got = run_set(props, directions, directions ? inputs : 0, &x, &frames, row);
  mx_check_with_tail(got, frames, h, taps, &x, 2, row);
  g_free(got);
  g_free(props);
  g_free(h);
  test_signal_clear(&x);
}

/* 7.1 to binaural with no setting but the file: each channel's standard direction is on the grid
 * (front +-30, center and LFE 0, rear +-150, side +-90 degrees). */
GST_START_TEST(test_seven_one_by_positions)
{
  TestRng rng = test_rng("sofa 7.1");
  SofaSet set;
  grid_set(&set, &rng, 300, 2, RATE);
  gchar *path = write_sofa("seven-one", &set);
  /* GStreamer's 7.1: FL FR FC LFE1 RL RR SL SR */
  const double azimuths[8] = {30, 330, 0, 0, 150, 210, 90, 270};
  guint m[8];
  for (guint i = 0; i < 8; i++)
    m[i] = (guint)(azimuths[i] / 10);
  check_binaural(&set, path, m, 8, CUDAFFT_SAMPLE_F32, 4000, "block-size=128", NULL, &rng,
                 "7.1 to binaural");
  remove_file(path);
  sofa_set_clear(&set);
}
GST_END_TEST;

/* 16 unpositioned channels at random directions (off the grid), F64, zero latency. */
GST_START_TEST(test_sixteen_by_directions)
{
  TestRng rng = test_rng("sofa 16x2");
  SofaSet set;
  grid_set(&set, &rng, 200, 2, RATE);
  gchar *path = write_sofa("sixteen", &set);
  double directions[32];
  guint m[16];
  for (guint i = 0; i < 16; i++) {
    directions[2 * i] = test_rng_uniform(&rng) * 360.0; /* uniform in [-1, 1) */
    directions[2 * i + 1] = test_rng_uniform(&rng) * 90.0;
    m[i] = nearest_by_distance(&set, directions[2 * i], directions[2 * i + 1]);
  }
  check_binaural(&set, path, m, 16, CUDAFFT_SAMPLE_F64, 3000, "block-size=0", directions, &rng,
                 "16 directions");
  remove_file(path);
  sofa_set_clear(&set);
}
GST_END_TEST;

/* Stereo from its positions (+-30), then directions set while playing (+-90): the new responses
 * cross over at the next block boundary. */
GST_START_TEST(test_directions_change_while_playing)
{
  TestRng rng = test_rng("sofa change");
  const guint block = 256;
  const gsize samples = 6000, first = 2100;
  SofaSet set;
  grid_set(&set, &rng, 400, 2, RATE);
  gchar *path = write_sofa("change", &set);
  const guint m_old[2] = {3, 33}, m_new[2] = {9, 27};
  gsize taps = 0;
  double *h_old = expected_matrix(&set, m_old, 2, &taps);
  double *h_new = expected_matrix(&set, m_new, 2, &taps);
  GstHarness *hn = eu_harness_new("cudamatrixconvolve name=m backend=%s block-size=%u "
                                  "sofa-location=%s",
                                  eu_backend, block, path);
  GstElement *e = eu_harness_element(hn, "m");
  TestSignal x;
  test_signal_random(&x, &rng, CUDAFFT_SAMPLE_F32, 2, RATE, samples, READ);
  eu_harness_signal_caps(hn, &x);
  GPtrArray *out = eu_buffer_list();
  eu_push_signal(hn, &x, 0, first, 700, 0, out);
  const double sides[4] = {90, 0, -90, 0};
  set_directions(e, sides, 2);
  eu_push_signal(hn, &x, first, samples - first, 700, 0, out);
  eu_push_eos(hn, out);
  gst_object_unref(e);
  gsize frames = 0;
  double *got = mx_read_run(out, x.format, 2, RATE, 0, &frames, "change");
  fail_unless_equals_uint64(frames, samples + taps - 1);
  mx_check_change(got, h_old, h_new, taps, &x, 2, frames, first, block, "directions changed");
  g_free(got);
  g_ptr_array_unref(out);
  gst_harness_teardown(hn);
  test_signal_clear(&x);
  g_free(h_old);
  g_free(h_new);
  remove_file(path);
  sofa_set_clear(&set);
}
GST_END_TEST;

/* A set measured at another rate is resampled to the stream's (upwards, and downwards to a voice
 * rate) and keeps its gain: a constant input comes out, once the response has passed, as the
 * constant times the sum of the file's taps at either ear (within 5%: the resampler's ripple and
 * the ends of the responses), not scaled by the ratio of the rates (1.09 and 1/3 here); the
 * output is as long as the input plus the responses at the stream's rate. */
typedef struct {
  guint file_rate, stream_rate;
} RateRow;

static const RateRow rate_rows[] = {{44100, 48000}, {48000, 16000}};

GST_START_TEST(test_other_rate_resampled)
{
  const RateRow *row = &rate_rows[__i__];
  TestRng rng = test_rng("sofa rate %u to %u", row->file_rate, row->stream_rate);
  SofaSet set;
  grid_set(&set, &rng, 441, 2, row->file_rate);
  set.delays[0] = set.delays[1] = 0;
  for (gsize k = 0; k < (gsize)set.measurements * set.receivers * set.n; k++)
    set.taps[k] = fabs(set.taps[k]); /* a gain well away from 0 */
  gchar *path = write_sofa("rate", &set);
  const gsize samples = 3 * row->stream_rate / 4;
  TestSignal x;
  test_signal_alloc(&x, CUDAFFT_SAMPLE_F32, 1, row->stream_rate, samples, READ);
  for (gsize n = 0; n < samples; n++) {
    ((float *)x.raw)[n] = 0.25f;
    x.values[n] = 0.25;
  }
  const double front[2] = {30, 0};
  gchar *props = g_strdup_printf("sofa-location=%s", path);
  gsize frames = 0;
  double *got = run_set(props, front, 1, &x, &frames, "resampled set");
  const double ratio = (double)row->stream_rate / row->file_rate;
  const gsize resampled = (gsize)ceil(set.n * ratio);
  fail_unless(frames + 8 >= samples + resampled - 1 && frames <= samples + resampled + 64,
              "%zu output samples for %zu input and responses of about %zu taps", frames, samples,
              resampled);
  for (guint ear = 0; ear < 2; ear++) {
    double gain = 0.0; /* measurement 3: azimuth 30 */
    for (gsize k = 0; k < set.n; k++)
      gain += set.taps[(3 * set.receivers + ear) * set.n + k];
    const double steady = got[(samples - 1) * 2 + ear] / 0.25;
    fail_unless(fabs(steady - gain) <= 0.05 * gain,
                "%u Hz set on a %u Hz stream, ear %u: gain %g, the file's %g (ratio %g)",
                row->file_rate, row->stream_rate, ear, steady, gain, steady / gain);
  }
  g_free(got);
  g_free(props);
  test_signal_clear(&x);
  remove_file(path);
  sofa_set_clear(&set);
}
GST_END_TEST;

/* Directions out of range are refused with a WARNING; the previous ones stay. */
GST_START_TEST(test_directions_refused)
{
  GstHarness *hn = eu_harness_new("cudamatrixconvolve name=m backend=%s", eu_backend);
  GstBus *bus = eu_harness_bus(hn);
  GstElement *e = eu_harness_element(hn, "m");
  const double good[4] = {45, 10, -45, 10};
  set_directions(e, good, 2);
  const double bad[3][4] = {{45, 10, -45, 91}, {400, 0, 0, 0}, {0, -90.5, 0, 0}};
  for (guint b = 0; b < 3; b++) {
    set_directions(e, bad[b], 2);
    GstMessage *msg = gst_bus_pop_filtered(bus, GST_MESSAGE_WARNING);
    fail_unless(msg != NULL, "no WARNING for directions %u", b);
    GError *err = NULL;
    gst_message_parse_warning(msg, &err, NULL);
    fail_unless(strstr(err->message, "directions") && strstr(err->message, "out of range"),
                "the warning does not say why: %s", err->message);
    g_clear_error(&err);
    gst_message_unref(msg);
    GValue got = G_VALUE_INIT;
    g_value_init(&got, GST_TYPE_ARRAY);
    g_object_get_property(G_OBJECT(e), "directions", &got);
    fail_unless_equals_int(gst_value_array_get_size(&got), 2);
    fail_unless_equals_float(
        g_value_get_double(gst_value_array_get_value(gst_value_array_get_value(&got, 1), 0)), -45);
    g_value_unset(&got);
  }
  gst_object_unref(e);
  eu_harness_teardown(hn, bus);
}
GST_END_TEST;

/* Bad sets and directions at start: one ERROR from the element, naming what is wrong. */
GST_START_TEST(test_errors_at_start)
{
  TestRng rng = test_rng("sofa errors");
  SofaSet set;
  grid_set(&set, &rng, 50, 2, RATE);
  gchar *good = write_sofa("good", &set);
  set.taps[(3 * set.receivers + 1) * set.n + 7] = NAN; /* measurement 3 (azimuth 30) */
  gchar *nan_set = write_sofa("nan", &set);
  sofa_set_clear(&set);
  grid_set(&set, &rng, 50, 1, RATE);
  gchar *one_ear = write_sofa("one-ear", &set);
  sofa_set_clear(&set);
  gchar *text =
      g_strdup_printf("%s/cudamatrixconvolve-sofa-%d-text.sofa", g_get_tmp_dir(), (int)getpid());
  fail_unless(g_file_set_contents(text, "not an HDF5 file at all", -1, NULL));
  const char *stereo = "audiotestsrc num-buffers=4 ! audio/x-raw,format=F32LE,channels=2,"
                       "rate=48000";
  const struct {
    const char *src, *file, *more;
    const char *words[4];
  } cases[] = {
      {stereo, text, "", {"not a SOFA file", "sofa-location", NULL}},
      {stereo, one_ear, "", {"SimpleFreeFieldHRIR", "sofa-location", NULL}},
      {stereo, "/nonexistent/set.sofa", "", {"not found", "sofa-location", NULL}},
      {stereo, nan_set, "", {"not finite", "sofa-location", NULL}},
      {stereo, good, "directions=\"<<30.0, 0.0>>\"", {"1 directions", "2 input channels", NULL}},
      {"audiotestsrc num-buffers=4 ! audio/x-raw,format=F32LE,channels=3,rate=48000,"
       "channel-mask=(bitmask)0",
       good,
       "",
       {"no loudspeaker position", "directions", NULL}},
      {"audiotestsrc num-buffers=4 ! audio/x-raw,format=F32LE,channels=2,rate=4000",
       good,
       "",
       {"Cannot resample", "4000 Hz", "resamples only to 8000 Hz or more", NULL}},
  };
  for (guint c = 0; c < G_N_ELEMENTS(cases); c++) {
    gchar *line = g_strdup_printf("%s ! cudamatrixconvolve name=e backend=%s sofa-location=%s %s "
                                  "! fakesink",
                                  cases[c].src, eu_backend, cases[c].file, cases[c].more);
    eu_check_one_error(line, 1, cases[c].words);
    g_free(line);
  }
  remove_file(good);
  remove_file(nan_set);
  remove_file(one_ear);
  remove_file(text);
}
GST_END_TEST;

static Suite *
sofa_suite(void)
{
  TCase *tc;
  Suite *s = eu_suite("cudamatrixconvolve-sofa", &tc);
  tcase_add_test(tc, test_seven_one_by_positions);
  tcase_add_test(tc, test_sixteen_by_directions);
  tcase_add_test(tc, test_directions_change_while_playing);
  tcase_add_loop_test(tc, test_other_rate_resampled, 0, G_N_ELEMENTS(rate_rows));
  tcase_add_test(tc, test_directions_refused);
  tcase_add_test(tc, test_errors_at_start);
  return s;
}

EU_MAIN(sofa_suite)
