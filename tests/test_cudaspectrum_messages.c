/* test_cudaspectrum_messages.c: how cudaspectrum posts its messages, on the backend
 * named by argv[1] (cpu|cuda):
 *
 * - hundreds of instances in one pipeline, on a machine with two busy threads beside them, finish
 *   within a bound, and every instance posts all its messages, in order, with the times of the same
 *   chain run alone and the levels of its own input. Streaming threads that posted on the bus
 *   themselves stalled each other there for minutes (GstBus's lock-free queue: a writer spins
 *   until every writer before it has finished; one preempted writer holds them all): on two cores
 *   with that load, these 256 chains ran past 90 s in two of three runs where the streaming
 *   threads posted at once, and take seconds where they post one at a time; GStreamer's own
 * `spectrum` still stalls (256 chains at 60 messages a second, past 300 s);
 * - no two instances post at once (a streaming thread that finds another posting sleeps): the
 *   mechanism itself, which no timing can show;
 * - message-lists=false: the same float32 fields as the default message's, bit for bit, on the
 *   same buffers, and no `magnitude` or `phase` list.
 *
 * Suite 'load': alone (its bound is a wall-clock time), and not under AddressSanitizer. */
#include "element_util.h"

#include <stdio.h>
#include <string.h>

#define RATE 48000
#define FRAMES 480 /* per buffer: 10 ms, a live source's */
#define BANDS 129  /* nfft 256: bins of 187.5 Hz */
#define BIN_HZ 187.5
#define HISTORY_MESSAGES 6 /* 256 samples: the first intervals' FFTs reach before the start */
#define INTERVAL 1000000   /* 1000 messages a second: many posts, where the stalls came */
#define CHAINS 256
#define BUFFERS 100       /* 1 s of audio each */
#define BOUND_SECONDS 120 /* healthy: seconds on two loaded cores; a stall: minutes */

/* One chain's messages: (timestamp, duration) pairs, and how many had their peak elsewhere than
 * at the bin of its tone. */
typedef struct {
  guint bin;
  GArray *times;
  guint wrong_peak;
} Chain;

static gchar *
chains_line(guint first, guint count, const Chain *chains)
{
  GString *line = g_string_new(NULL);
  for (guint i = first; i < first + count; i++)
    g_string_append_printf(line,
                           "audiotestsrc samplesperbuffer=%d num-buffers=%d wave=sine freq=%g ! "
                           "audio/x-raw,format=F32LE,rate=%d,channels=2 ! cudaspectrum name=s%u "
                           "backend=%s bands=%d interval=%d ! fakesink sync=false ",
                           FRAMES, BUFFERS, chains[i].bin * BIN_HZ, RATE, i, eu_backend, BANDS,
                           INTERVAL);
  return g_string_free(line, FALSE);
}

/* The band of the highest level in a spectrum message's magnitude-data. */
static guint
peak_band(const GstStructure *s)
{
  const GValue *v = gst_structure_get_value(s, "magnitude-data");
  fail_unless(v && G_VALUE_HOLDS(v, G_TYPE_BYTES), "no magnitude-data");
  gsize size = 0;
  const float *levels = g_bytes_get_data(g_value_get_boxed(v), &size);
  fail_unless_equals_int(size, BANDS * sizeof(float));
  guint peak = 0;
  for (guint b = 1; b < BANDS; b++)
    if (levels[b] > levels[peak])
      peak = b;
  return peak;
}

/* Runs the pipeline of chains [first, first + count) to EOS (failing on an ERROR or past the
 * bound) and records each chain's messages. */
static void
run_chains(guint first, guint count, Chain *chains)
{
  gchar *line = chains_line(first, count, chains);
  GError *error = NULL;
  GstElement *pipeline = gst_parse_launch(line, &error);
  fail_unless(pipeline && !error, "the pipeline: %s", error ? error->message : "?");
  g_free(line);
  GstBus *bus = gst_element_get_bus(pipeline);
  const gint64 deadline = g_get_monotonic_time() + BOUND_SECONDS * G_TIME_SPAN_SECOND;
  fail_if(gst_element_set_state(pipeline, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE);
  gboolean eos = FALSE;
  while (!eos) {
    const gint64 left = deadline - g_get_monotonic_time();
    fail_unless(left > 0, "%u chains did not finish within %d s: stalled", count, BOUND_SECONDS);
    GstMessage *msg = gst_bus_timed_pop_filtered(
        bus, left * GST_USECOND, GST_MESSAGE_ELEMENT | GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
    if (!msg)
      continue;
    if (GST_MESSAGE_TYPE(msg) == GST_MESSAGE_ERROR) {
      GError *err = NULL;
      gst_message_parse_error(msg, &err, NULL);
      fail("ERROR from %s: %s", GST_MESSAGE_SRC_NAME(msg), err ? err->message : "?");
    }
    eos = GST_MESSAGE_TYPE(msg) == GST_MESSAGE_EOS;
    const GstStructure *s = gst_message_get_structure(msg);
    if (!eos && s && gst_structure_has_name(s, "spectrum")) {
      guint i = 0;
      fail_unless(sscanf(GST_MESSAGE_SRC_NAME(msg), "s%u", &i) == 1 && i >= first &&
                      i < first + count,
                  "a spectrum message from %s", GST_MESSAGE_SRC_NAME(msg));
      guint64 t[2];
      fail_unless(gst_structure_get_uint64(s, "timestamp", &t[0]) &&
                  gst_structure_get_uint64(s, "duration", &t[1]));
      g_array_append_vals(chains[i].times, t, 2);
      /* the FFTs of the first intervals reach back before the tone's start */
      if (chains[i].times->len > 2 * HISTORY_MESSAGES && peak_band(s) != chains[i].bin)
        chains[i].wrong_peak++;
    }
    gst_message_unref(msg);
  }
  fail_unless(gst_element_set_state(pipeline, GST_STATE_NULL) == GST_STATE_CHANGE_SUCCESS);
  gst_object_unref(bus);
  gst_object_unref(pipeline);
}

/* Threads that keep both cores busy, as other work on a media server does. */
static volatile gint load_running;

static gpointer
burn(gpointer unused)
{
  (void)unused;
  volatile guint64 x = 0;
  while (g_atomic_int_get(&load_running))
    for (int k = 0; k < 100000; k++)
      x += (guint64)k * 2654435761u;
  return NULL;
}

GST_START_TEST(test_hundreds_in_one_pipeline)
{
  Chain *chains = g_new0(Chain, CHAINS + 1);
  TestRng rng = test_rng("hundreds of analysers");
  for (guint i = 0; i <= CHAINS; i++) {
    chains[i].bin = (guint)test_rng_range(&rng, 2, BANDS - 10);
    chains[i].times = g_array_new(FALSE, FALSE, sizeof(guint64));
  }
  /* the last chain alone first: the times every chain's messages must have */
  run_chains(CHAINS, 1, chains);
  const GArray *want = chains[CHAINS].times;
  fail_unless(want->len / 2 == BUFFERS * FRAMES * 1000 / RATE, "alone: %u messages", want->len / 2);

  g_atomic_int_set(&load_running, 1);
  GThread *load[2] = {g_thread_new("load", burn, NULL), g_thread_new("load", burn, NULL)};
  const gint64 started = g_get_monotonic_time();
  run_chains(0, CHAINS, chains);
  const double seconds = (g_get_monotonic_time() - started) / 1e6;
  g_atomic_int_set(&load_running, 0);
  for (guint k = 0; k < G_N_ELEMENTS(load); k++)
    g_thread_join(load[k]);
  g_print("%d chains of %d ms buffers, %u messages each: %.1f s with two busy threads beside\n",
          CHAINS, FRAMES * 1000 / RATE, want->len / 2, seconds);

  for (guint i = 0; i < CHAINS; i++) {
    const GArray *got = chains[i].times;
    fail_unless(got->len == want->len, "chain %u: %u messages, alone %u", i, got->len / 2,
                want->len / 2);
    for (guint k = 0; k < got->len; k += 2)
      if (g_array_index(got, guint64, k) != g_array_index(want, guint64, k) ||
          g_array_index(got, guint64, k + 1) != g_array_index(want, guint64, k + 1))
        fail("chain %u, message %u: timestamp %" G_GUINT64_FORMAT " duration %" G_GUINT64_FORMAT
             ", alone %" G_GUINT64_FORMAT " %" G_GUINT64_FORMAT,
             i, k / 2, g_array_index(got, guint64, k), g_array_index(got, guint64, k + 1),
             g_array_index(want, guint64, k), g_array_index(want, guint64, k + 1));
    fail_unless(chains[i].wrong_peak == 0,
                "chain %u: %u messages peak away from its tone's band %u", i, chains[i].wrong_peak,
                chains[i].bin);
  }
  for (guint i = 0; i <= CHAINS; i++)
    g_array_unref(chains[i].times);
  g_free(chains);
}
GST_END_TEST;

/* The sync handler runs inside the post, on the posting thread: it counts the spectrum posts
 * under way at once, staying a while in each so that posts that could overlap do. */
typedef struct {
  gint inside, most;
  guint posts;
} Overlap;

static GstBusSyncReply
count_overlap(GstBus *bus, GstMessage *msg, gpointer data)
{
  (void)bus;
  Overlap *o = data;
  const GstStructure *s = gst_message_get_structure(msg);
  if (GST_MESSAGE_TYPE(msg) != GST_MESSAGE_ELEMENT || !s || !gst_structure_has_name(s, "spectrum"))
    return GST_BUS_PASS;
  const gint now = g_atomic_int_add(&o->inside, 1) + 1;
  gint most = g_atomic_int_get(&o->most);
  while (now > most && !g_atomic_int_compare_and_exchange(&o->most, most, now))
    most = g_atomic_int_get(&o->most);
  g_usleep(50);
  g_atomic_int_inc((gint *)&o->posts);
  g_atomic_int_add(&o->inside, -1);
  return GST_BUS_PASS;
}

/* 16 instances posting 1000 messages a second each: never two posts at once (without the
 * serialisation, every run had several at once). */
GST_START_TEST(test_posts_one_at_a_time)
{
  enum { COUNT = 16 };
  Chain chains[COUNT];
  for (guint i = 0; i < COUNT; i++)
    chains[i].bin = 10 + i;
  gchar *line = chains_line(0, COUNT, chains);
  GstElement *pipeline = gst_parse_launch(line, NULL);
  g_free(line);
  fail_unless(pipeline != NULL);
  Overlap overlap = {0};
  GstBus *bus = gst_element_get_bus(pipeline);
  gst_bus_set_sync_handler(bus, count_overlap, &overlap, NULL);
  fail_if(gst_element_set_state(pipeline, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE);
  GstMessage *msg =
      gst_bus_timed_pop_filtered(bus, 120 * GST_SECOND, GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  fail_unless(msg && GST_MESSAGE_TYPE(msg) == GST_MESSAGE_EOS, "no EOS within 120 s");
  gst_message_unref(msg);
  fail_unless(gst_element_set_state(pipeline, GST_STATE_NULL) == GST_STATE_CHANGE_SUCCESS);
  gst_bus_set_sync_handler(bus, NULL, NULL, NULL);
  fail_unless(overlap.posts == COUNT * BUFFERS * FRAMES * 1000 / RATE, "%u posts", overlap.posts);
  fail_unless(overlap.most == 1, "%d spectrum posts at once", overlap.most);
  gst_object_unref(bus);
  gst_object_unref(pipeline);
}
GST_END_TEST;

/* A field's float32 bytes, or NULL. */
static GBytes *
data_field(const GstStructure *s, const char *field)
{
  const GValue *v = gst_structure_get_value(s, field);
  return v && G_VALUE_HOLDS(v, G_TYPE_BYTES) ? g_value_get_boxed(v) : NULL;
}

/* spectrum's list (or array of arrays) of `field` equals the float32 `data` values. */
static void
check_list_matches(const GstStructure *s, const char *field, GBytes *data, gboolean multi)
{
  const GValue *list = gst_structure_get_value(s, field);
  fail_unless(list != NULL, "the default message has no %s", field);
  gsize size = 0;
  const float *values = g_bytes_get_data(data, &size);
  const guint rows = multi ? gst_value_array_get_size(list) : 1;
  fail_unless_equals_int(size, (gsize)rows * BANDS * sizeof(float));
  for (guint r = 0; r < rows; r++) {
    const GValue *row = multi ? gst_value_array_get_value(list, r) : list;
    for (guint b = 0; b < BANDS; b++) {
      const GValue *v =
          multi ? gst_value_array_get_value(row, b) : gst_value_list_get_value(row, b);
      if (g_value_get_float(v) != values[r * BANDS + b])
        fail("%s row %u band %u: list %g, data %g", field, r, b, g_value_get_float(v),
             values[r * BANDS + b]);
    }
  }
}

/* Two analysers on the same buffers, the second with message-lists=false: the same messages
 * without the lists. */
GST_START_TEST(test_message_lists_off)
{
  const gboolean multi = __i__ == 1;
  gchar *line = g_strdup_printf(
      "audiotestsrc samplesperbuffer=%d num-buffers=50 wave=white-noise ! "
      "audio/x-raw,format=F32LE,rate=%d,channels=3 ! "
      "cudaspectrum name=a backend=%s bands=%d interval=10000000 message-phase=true "
      "multi-channel=%d ! cudaspectrum name=b backend=%s bands=%d interval=10000000 "
      "message-phase=true multi-channel=%d message-lists=false ! fakesink sync=false",
      FRAMES, RATE, eu_backend, BANDS, multi, eu_backend, BANDS, multi);
  GstElement *pipeline = gst_parse_launch(line, NULL);
  fail_unless(pipeline != NULL, "%s", line);
  GstBus *bus = gst_element_get_bus(pipeline);
  fail_if(gst_element_set_state(pipeline, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE);
  GPtrArray *got[2] = {g_ptr_array_new_with_free_func((GDestroyNotify)gst_message_unref),
                       g_ptr_array_new_with_free_func((GDestroyNotify)gst_message_unref)};
  for (;;) {
    GstMessage *msg = gst_bus_timed_pop_filtered(
        bus, 60 * GST_SECOND, GST_MESSAGE_ELEMENT | GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
    fail_unless(msg != NULL, "no EOS within 60 s");
    fail_if(GST_MESSAGE_TYPE(msg) == GST_MESSAGE_ERROR, "an ERROR");
    if (GST_MESSAGE_TYPE(msg) == GST_MESSAGE_EOS) {
      gst_message_unref(msg);
      break;
    }
    g_ptr_array_add(got[strcmp(GST_MESSAGE_SRC_NAME(msg), "a") == 0 ? 0 : 1], msg);
  }
  fail_unless(gst_element_set_state(pipeline, GST_STATE_NULL) == GST_STATE_CHANGE_SUCCESS);
  fail_unless(got[0]->len == 50 && got[1]->len == got[0]->len, "%u and %u messages", got[0]->len,
              got[1]->len);
  static const char *const kept[] = {"endtime",  "timestamp", "stream-time", "running-time",
                                     "duration", "bands",     "channels"};
  for (guint k = 0; k < got[0]->len; k++) {
    const GstStructure *a = gst_message_get_structure(g_ptr_array_index(got[0], k));
    const GstStructure *b = gst_message_get_structure(g_ptr_array_index(got[1], k));
    for (guint f = 0; f < G_N_ELEMENTS(kept); f++)
      fail_unless(gst_value_compare(gst_structure_get_value(a, kept[f]),
                                    gst_structure_get_value(b, kept[f])) == GST_VALUE_EQUAL,
                  "message %u: %s differs", k, kept[f]);
    fail_if(gst_structure_has_field(b, "magnitude") || gst_structure_has_field(b, "phase"),
            "message %u: message-lists=false posted a list", k);
    fail_unless_equals_int(gst_structure_n_fields(b), G_N_ELEMENTS(kept) + 2);
    for (guint f = 0; f < 2; f++) {
      const char *list = f ? "phase" : "magnitude";
      const char *field = f ? "phase-data" : "magnitude-data";
      GBytes *da = data_field(a, field), *db = data_field(b, field);
      fail_unless(da && db, "message %u: no %s", k, field);
      fail_unless(g_bytes_equal(da, db), "message %u: %s differs from the default message's", k,
                  field);
      check_list_matches(a, list, da, multi);
    }
  }
  g_ptr_array_unref(got[0]);
  g_ptr_array_unref(got[1]);
  gst_object_unref(bus);
  gst_object_unref(pipeline);
  g_free(line);
}
GST_END_TEST;

static Suite *
cudaspectrum_messages_suite(void)
{
  TCase *tc;
  Suite *s = eu_suite("cudaspectrum-messages", &tc);
  tcase_add_test(tc, test_hundreds_in_one_pipeline);
  tcase_add_test(tc, test_posts_one_at_a_time);
  tcase_add_loop_test(tc, test_message_lists_off, 0, 2);
  return s;
}

EU_MAIN(cudaspectrum_messages_suite)
