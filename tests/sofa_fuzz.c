/* sofa_fuzz.c: see the header. */
#include "sofa_fuzz.h"

#include "element_util.h"

#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define SOFA_FUZZ_SECONDS 90 /* a case's bound */
#define SOFA_FUZZ_FRAMES 480 /* a buffer */

#define KEMAR "/usr/share/libmysofa/default.sofa"

static pid_t owner; /* the process that wrote the generated set: it removes it */
static GPtrArray *bases;

static void
remove_bases(void)
{
  if (getpid() != owner) /* a forked test's exit */
    return;
  for (guint k = 0; k < bases->len; k++) {
    const SofaFuzzBase *base = g_ptr_array_index(bases, k);
    if (base->owned)
      g_unlink(base->path);
  }
}

/* 60 directions x 2 ears x 128 taps at 48 kHz, fixed random taps, delays of 3 and 5 samples,
 * through make_sofa.py; NULL where it is not at hand or fails (*why says so). */
static gchar *
generated_set(const char **why)
{
  const char *python = g_getenv("CUDAFFT_TEST_PYTHON");
  const char *script = g_getenv("CUDAFFT_TEST_MAKE_SOFA");
  if (!python || !script) {
    *why = "no python3 with netCDF4 (CUDAFFT_TEST_PYTHON, CUDAFFT_TEST_MAKE_SOFA unset)";
    return NULL;
  }
  enum { M = 60, R = 2, N = 128, SET_RATE = 48000 };
  gchar *data = g_strdup_printf("%s/cudafft-sofa-fuzz-%d.bin", g_get_tmp_dir(), (int)getpid());
  gchar *path = g_strdup_printf("%s/cudafft-sofa-fuzz-%d.sofa", g_get_tmp_dir(), (int)getpid());
  FILE *f = fopen(data, "wb");
  gboolean ok = f != NULL;
  const gint32 header[4] = {M, R, N, SET_RATE};
  ok = ok && fwrite(header, sizeof header, 1, f) == 1;
  for (guint m = 0; ok && m < M; m++) { /* azimuths every 30 degrees at 5 elevations */
    const double position[3] = {(double)(m % 12) * 30.0, (double)(m / 12) * 30.0 - 60.0, 1.5};
    ok = fwrite(position, sizeof position, 1, f) == 1;
  }
  TestRng rng = {0x5eedf00dull};
  for (guint k = 0; ok && k < M * R * N; k++) {
    const double tap = test_rng_uniform53(&rng) * 0.5;
    ok = fwrite(&tap, sizeof tap, 1, f) == 1;
  }
  const double delays[R] = {3.0, 5.0};
  ok = ok && fwrite(delays, sizeof delays, 1, f) == 1;
  if (f)
    ok = fclose(f) == 0 && ok;
  gchar *err = NULL;
  gint status = 0;
  const gchar *argv[] = {python, script, path, data, NULL};
  ok = ok &&
       g_spawn_sync(NULL, (gchar **)argv, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL, NULL, &err,
                    &status, NULL) &&
       g_spawn_check_wait_status(status, NULL);
  if (!ok) {
    g_printerr("%s did not write a set: %s\n", script, err ? err : "");
    *why = "make_sofa.py failed";
    g_free(path);
    path = NULL;
  }
  g_free(err);
  g_unlink(data);
  g_free(data);
  return path;
}

static void
add_base(const char *name, gchar *path, guint rate, gboolean owned)
{
  gchar *contents = NULL;
  gsize size = 0;
  if (!g_file_get_contents(path, &contents, &size, NULL) || size < 64) {
    g_free(contents);
    g_free(path);
    return;
  }
  SofaFuzzBase *base = g_new0(SofaFuzzBase, 1);
  base->name = name;
  base->path = path;
  base->rate = rate;
  base->bytes = g_bytes_new_take(contents, size);
  base->owned = owned;
  g_ptr_array_add(bases, base);
}

GPtrArray *
sofa_fuzz_bases(const char **why)
{
  *why = NULL;
  if (bases)
    return bases;
  owner = getpid();
  bases = g_ptr_array_new();
  const char *no_generated = NULL;
  gchar *generated = generated_set(&no_generated);
  if (generated)
    add_base("generated", generated, 48000, TRUE);
  if (g_file_test(KEMAR, G_FILE_TEST_IS_REGULAR))
    add_base("KEMAR", g_strdup(KEMAR), 44100, FALSE);
  if (bases->len == 0)
    *why = no_generated ? no_generated : "no set to damage";
  atexit(remove_bases);
  return bases;
}

/* A damaged copy of `base`, the damage drawn from `rng`, written to a new file: its path (to
 * unlink and g_free); *what (to g_free) says what was done to it. */
static gchar *
mutant(const SofaFuzzBase *base, TestRng *rng, const char *label, gchar **what)
{
  gsize size = 0;
  const guint8 *original = g_bytes_get_data(base->bytes, &size);
  guint8 *data = g_memdup2(original, size);
  switch (test_rng_range(rng, 0, 2)) {
  case 0: { /* bit flips */
    const guint flips = (guint)test_rng_range(rng, 1, 16);
    for (guint k = 0; k < flips; k++)
      data[test_rng_range(rng, 0, size - 1)] ^= (guint8)(1u << test_rng_range(rng, 0, 7));
    *what = g_strdup_printf("%s, %u bits flipped", base->name, flips);
    break;
  }
  case 1: { /* truncated */
    const gsize keep = test_rng_range(rng, 0, size - 1);
    *what = g_strdup_printf("%s, cut to %zu of %zu bytes", base->name, keep, size);
    size = keep;
    break;
  }
  default: { /* a block overwritten: zeros, ones, random bytes, or another part of the file */
    const gsize at = test_rng_range(rng, 0, size - 1);
    const gsize length = MIN(test_rng_range(rng, 1, 4096), size - at);
    const guint fill = (guint)test_rng_range(rng, 0, 3);
    const gsize from = test_rng_range(rng, 0, size - length);
    for (gsize k = 0; k < length; k++)
      data[at + k] = fill == 0   ? 0x00
                     : fill == 1 ? 0xff
                     : fill == 2 ? (guint8)test_rng_u64(rng)
                                 : original[from + k];
    static const char *const fills[] = {"zeros", "0xff", "random bytes", "a copy of another part"};
    *what = g_strdup_printf("%s, %zu bytes at %zu overwritten with %s", base->name, length, at,
                            fills[fill]);
    break;
  }
  }
  gchar *path =
      g_strdup_printf("%s/cudafft-sofa-fuzz-%d-%s.sofa", g_get_tmp_dir(), (int)getpid(), label);
  if (!g_file_set_contents(path, (const gchar *)data, (gssize)size, NULL)) {
    g_free(path);
    path = NULL;
  }
  g_free(data);
  return path;
}

/* A case ------------------------------------------------------------------------------------- */

typedef struct {
  const SofaFuzzBase *base;
  gchar *path;
  guint rate;
  gboolean playing;
  GString *why; /* what went wrong; empty: nothing */
  gchar *outcome;
  gint done;
} SofaCase;

/* Whether `text`, an ERROR's or WARNING's, names the damaged file. */
static gboolean
names_file(const SofaCase *c, const char *text)
{
  return text && strstr(text, c->path) != NULL;
}

static void
sofa_at_start(SofaCase *c)
{
  GError *error = NULL;
  GstElement *pipeline = gst_parse_launch_full(
      "audiotestsrc name=src num-buffers=8 ! capsfilter name=caps ! cudamatrixconvolve name=e "
      "block-size=64 ! fakesink",
      NULL, GST_PARSE_FLAG_FATAL_ERRORS, &error);
  if (!pipeline) {
    g_string_append_printf(c->why, "no pipeline: %s", error ? error->message : "?");
    g_clear_error(&error);
    return;
  }
  GstElement *caps = gst_bin_get_by_name(GST_BIN(pipeline), "caps");
  GstElement *e = gst_bin_get_by_name(GST_BIN(pipeline), "e");
  GstElement *src = gst_bin_get_by_name(GST_BIN(pipeline), "src");
  GstCaps *raw = eu_raw_caps(CUDAFFT_SAMPLE_F32, c->rate, 2);
  g_object_set(caps, "caps", raw, NULL);
  g_object_set(src, "samplesperbuffer", SOFA_FUZZ_FRAMES, NULL);
  gst_util_set_object_arg(G_OBJECT(e), "backend", eu_backend);
  g_object_set(e, "sofa-location", c->path, NULL);
  gst_caps_unref(raw);
  GstBus *bus = gst_element_get_bus(pipeline);
  gst_element_set_state(pipeline, GST_STATE_PLAYING);
  GstMessage *msg = gst_bus_timed_pop_filtered(bus, SOFA_FUZZ_SECONDS * GST_SECOND,
                                               GST_MESSAGE_ERROR | GST_MESSAGE_EOS);
  if (!msg) {
    g_string_append(c->why, "neither EOS nor an ERROR (a hang)");
  } else if (GST_MESSAGE_TYPE(msg) == GST_MESSAGE_EOS) {
    c->outcome = g_strdup("EOS");
  } else {
    GError *err = NULL;
    gst_message_parse_error(msg, &err, NULL);
    if (GST_MESSAGE_SRC(msg) != GST_OBJECT(e) || !names_file(c, err->message))
      g_string_append_printf(c->why, "an ERROR from %s not naming the file: %s",
                             GST_MESSAGE_SRC_NAME(msg), err->message);
    c->outcome = g_strdup_printf("ERROR: %s", err->message);
    g_clear_error(&err);
  }
  if (msg)
    gst_message_unref(msg);
  gst_element_set_state(pipeline, GST_STATE_NULL);
  /* every streaming thread has stopped: a second ERROR for the same failure would be here */
  while ((msg = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR)) != NULL) {
    g_string_append_printf(c->why, "another ERROR, from %s; ", GST_MESSAGE_SRC_NAME(msg));
    gst_message_unref(msg);
  }
  gst_object_unref(bus);
  gst_object_unref(src);
  gst_object_unref(e);
  gst_object_unref(caps);
  gst_object_unref(pipeline);
}

static void
sofa_while_playing(SofaCase *c)
{
  GstHarness *h = eu_harness_new("cudamatrixconvolve name=e backend=%s block-size=64", eu_backend);
  GstBus *bus = eu_harness_bus(h);
  GstElement *e = eu_harness_element(h, "e");
  g_object_set(e, "sofa-location", c->base->path, NULL);
  gst_harness_set_src_caps(h, eu_raw_caps(CUDAFFT_SAMPLE_F32, c->rate, 2));
  gchar *warnings = NULL;
  for (guint k = 0; k < 8 && c->why->len == 0; k++) {
    if (k == 4)
      g_object_set(e, "sofa-location", c->path, NULL);
    GstBuffer *buffer = gst_harness_create_buffer(h, SOFA_FUZZ_FRAMES * 2 * sizeof(float));
    gst_buffer_memset(buffer, 0, 0, SOFA_FUZZ_FRAMES * 2 * sizeof(float));
    GST_BUFFER_PTS(buffer) = gst_util_uint64_scale(k * SOFA_FUZZ_FRAMES, GST_SECOND, c->rate);
    const GstFlowReturn flow = gst_harness_push(h, buffer);
    if (flow != GST_FLOW_OK)
      g_string_append_printf(c->why, "push %u returned %s", k, gst_flow_get_name(flow));
    GstBuffer *out;
    while ((out = gst_harness_try_pull(h)) != NULL)
      gst_buffer_unref(out);
  }
  if (c->why->len == 0 && !gst_harness_push_event(h, gst_event_new_eos()))
    g_string_append(c->why, "EOS refused");
  GstMessage *msg;
  while ((msg = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR | GST_MESSAGE_WARNING)) != NULL) {
    GError *err = NULL;
    const gboolean error = GST_MESSAGE_TYPE(msg) == GST_MESSAGE_ERROR;
    if (error)
      gst_message_parse_error(msg, &err, NULL);
    else
      gst_message_parse_warning(msg, &err, NULL);
    if (error || !names_file(c, err->message))
      g_string_append_printf(c->why, "%s not naming the file: %s; ",
                             error ? "an ERROR" : "a WARNING", err->message);
    else if (!warnings)
      warnings = g_strdup(err->message);
    g_clear_error(&err);
    gst_message_unref(msg);
  }
  c->outcome = warnings ? g_strdup_printf("WARNING: %s", warnings) : g_strdup("EOS, no WARNING");
  g_free(warnings);
  gst_object_unref(e);
  eu_harness_teardown(h, bus);
}

static gpointer
sofa_case_main(gpointer data)
{
  SofaCase *c = data;
  if (c->playing)
    sofa_while_playing(c);
  else
    sofa_at_start(c);
  g_atomic_int_set(&c->done, 1);
  return NULL;
}

void
sofa_fuzz_run(guint64 seed, guint index)
{
  const char *why = NULL;
  GPtrArray *bases = sofa_fuzz_bases(&why);
  fail_unless(bases->len > 0, "no SOFA set to damage: %s", why);
  /* most cases on the small generated set, every fourth on the KEMAR set where both are there */
  const SofaFuzzBase *base = g_ptr_array_index(bases, index % 4 == 3 ? bases->len - 1 : 0);
  TestRng rng = {seed ^ ((guint64)index * 0x9e3779b97f4a7c15u)};
  test_rng_u64(&rng);
  SofaCase c = {.base = base, .rate = base->rate, .playing = index % 2 == 1};
  if (test_rng_range(&rng, 0, 5) == 0) /* now and then resampled */
    c.rate = base->rate == 48000 ? 44100 : 48000;
  gchar *label = g_strdup_printf("%u", index);
  gchar *what = NULL;
  c.path = mutant(base, &rng, label, &what);
  g_free(label);
  fail_unless(c.path != NULL, "cannot write a damaged copy of %s", base->path);
  c.why = g_string_new(NULL);
  const double start = test_seconds();
  GThread *thread = g_thread_new("sofa-fuzz", sofa_case_main, &c);
  const gint64 deadline = g_get_monotonic_time() + (SOFA_FUZZ_SECONDS + 30) * G_TIME_SPAN_SECOND;
  while (!g_atomic_int_get(&c.done) && g_get_monotonic_time() < deadline)
    g_usleep(10 * 1000);
  fail_unless(g_atomic_int_get(&c.done),
              "SOFA fuzz case %u (seed 0x%" G_GINT64_MODIFIER "x, %s, %s, %u Hz): no end after %d "
              "s (a hang); the file is kept: %s",
              index, seed, what, c.playing ? "while playing" : "at start", c.rate,
              SOFA_FUZZ_SECONDS + 30, c.path);
  g_thread_join(thread);
  g_print("SOFA fuzz case %u (%s, %s, %u Hz): %.2f s, %s\n", index, what,
          c.playing ? "while playing" : "at start", c.rate, test_seconds() - start,
          c.outcome ? c.outcome : "-");
  fail_unless(c.why->len == 0,
              "SOFA fuzz case %u (seed 0x%" G_GINT64_MODIFIER "x, %s, %s, %u Hz): %s; the file is "
              "kept: %s",
              index, seed, what, c.playing ? "while playing" : "at start", c.rate, c.why->str,
              c.path);
  unlink(c.path);
  g_free(c.path);
  g_free(c.outcome);
  g_free(what);
  g_string_free(c.why, TRUE);
}
