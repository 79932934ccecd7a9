/* test_cudamatrixconvolve_element.c: the cudamatrixconvolve element against its contract, through
 * GstHarness and small pipelines, on the backend named by argv[1] (cpu|cuda): every output sample
 * against a double-precision direct matrix convolution of random inputs with random responses
 * (fresh seeds) for a true-stereo 2 x 2 matrix from a 4-channel WAV file, 4 x 2 and 8 x 2 (with
 * empty entries) from the matrix property, F32 and F64, several block sizes and 0 (zero latency),
 * with and without the tail; output caps (channels, positions); timestamps, offsets and DISCONT
 * from sample counts; the LATENCY query; a flush; a matrix change while playing against the
 * crossover of cudafft/matrix.h; a change of the output count while playing (WARNING, the old
 * matrix stays); a list of files (ir-locations); rate-changed; and the bad inputs: a file whose
 * channel count is not a multiple of the input's, no responses, outputs that do not fit, an empty
 * matrix, NaN and infinite taps, block sizes refused, undecodable response files (not decoded
 * before the element runs; the element's ERROR in every one of many runs).
 *
 * Length: past the ~800 lines a file usually keeps, as one test program (meson runs each as one
 * test of its suite) whose cases share one harness and one independent reference model; split,
 * each part would be a program of its own rebuilding the same setup. */
#include "matrix_element_util.h"

#include <cudafft/matrix.h>

#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define RATE 48000
#define READ TEST_READ_POW2

/* Helpers ------------------------------------------------------------------------------------ */

/* Writes a WAV file of IEEE float samples (channel c from row c of rows): a plain one, or with
 * `extensible` a WAVE_FORMAT_EXTENSIBLE one with channel mask 0 (no positions), as files of more
 * channels than a layout names must be for GStreamer (wavparse gives a plain file of 3, 7 or more
 * than 8 channels no channel-mask, which audioconvert refuses). */
static gchar *
write_wav_as(const char *label, const double *rows, guint channels, gsize frames,
             gboolean extensible)
{
  gchar *path = g_strdup_printf("%s/cudamatrixconvolve-test-%d-%s.wav", g_get_tmp_dir(),
                                (int)getpid(), label);
  FILE *f = fopen(path, "wb");
  fail_unless(f != NULL, "cannot write %s", path);
  const guint32 data_bytes = (guint32)(frames * channels * 4);
  const guint32 fmt_bytes = extensible ? 40 : 16;
  guint8 header[68];
  memcpy(header, "RIFF", 4);
  GST_WRITE_UINT32_LE(header + 4, 4 + 8 + fmt_bytes + 8 + data_bytes);
  memcpy(header + 8, "WAVEfmt ", 8);
  GST_WRITE_UINT32_LE(header + 16, fmt_bytes);
  GST_WRITE_UINT16_LE(header + 20, extensible ? 0xFFFE : 3); /* IEEE float */
  GST_WRITE_UINT16_LE(header + 22, channels);
  GST_WRITE_UINT32_LE(header + 24, RATE);
  GST_WRITE_UINT32_LE(header + 28, RATE * channels * 4);
  GST_WRITE_UINT16_LE(header + 32, channels * 4);
  GST_WRITE_UINT16_LE(header + 34, 32);
  guint8 *at = header + 36;
  if (extensible) {
    static const guint8 float_guid[16] = {0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10, 0x00,
                                          0x80, 0x00, 0x00, 0xAA, 0x00, 0x38, 0x9B, 0x71};
    GST_WRITE_UINT16_LE(at, 22); /* cbSize */
    GST_WRITE_UINT16_LE(at + 2, 32);
    GST_WRITE_UINT32_LE(at + 4, 0); /* no channel positions */
    memcpy(at + 8, float_guid, 16);
    at += 24;
  }
  memcpy(at, "data", 4);
  GST_WRITE_UINT32_LE(at + 4, data_bytes);
  at += 8;
  fail_unless(fwrite(header, 1, (gsize)(at - header), f) == (gsize)(at - header));
  for (gsize t = 0; t < frames; t++)
    for (guint c = 0; c < channels; c++) {
      const float v = (float)rows[(gsize)c * frames + t]; /* channel c is row c */
      fail_unless(fwrite(&v, 4, 1, f) == 1);
    }
  fclose(f);
  return path;
}

static gchar *
write_wav(const char *label, const double *rows, guint channels, gsize frames)
{
  return write_wav_as(label, rows, channels, frames, FALSE);
}

static GstHarness *
matrix_harness(const char *properties)
{
  return eu_harness_new("cudamatrixconvolve name=m backend=%s %s", eu_backend,
                        properties ? properties : "");
}

static GstClockTime
query_latency(GstHarness *h)
{
  GstQuery *query = gst_query_new_latency();
  fail_unless(gst_pad_peer_query(h->sinkpad, query), "latency query failed");
  gboolean live;
  GstClockTime min, max;
  gst_query_parse_latency(query, &live, &min, &max);
  gst_query_unref(query);
  return min;
}

/* The next WARNING on the bus (before any ERROR) says `words`. */
static void
expect_warning_saying(GstBus *bus, const char *words, const char *row)
{
  GstMessage *msg = gst_bus_pop_filtered(bus, GST_MESSAGE_WARNING | GST_MESSAGE_ERROR);
  fail_unless(msg && GST_MESSAGE_TYPE(msg) == GST_MESSAGE_WARNING, "%s: no WARNING", row);
  GError *err = NULL;
  gst_message_parse_warning(msg, &err, NULL);
  fail_unless(strstr(err->message, words) != NULL, "%s: the warning does not say \"%s\": %s", row,
              words, err->message);
  g_clear_error(&err);
  gst_message_unref(msg);
}

/* Metadata ----------------------------------------------------------------------------------- */

GST_START_TEST(test_metadata)
{
  eu_check_element_metadata("cudamatrixconvolve", "audio/x-raw", "audio/x-raw");
}
GST_END_TEST;

/* Matrices against the direct convolution ----------------------------------------------------- */

typedef struct {
  const char *name;
  guint inputs, outputs;
  gsize taps;
  guint64 empty; /* entries left empty (bit r: row r) */
  gboolean from_file;
  gboolean empty_rows; /* empty entries given as empty rows, not zeros */
  CudafftSampleFormat format;
  guint block;
  gboolean tail;
  gsize samples, chunk;
  gboolean extensible; /* the file WAVE_FORMAT_EXTENSIBLE (channel mask 0) */
} MatrixRow;

static const MatrixRow matrix_rows[] = {
    {"2x2 true stereo from a 4-channel file", 2, 2, 700, 0, TRUE, FALSE, CUDAFFT_SAMPLE_F32, 64,
     TRUE, 5000, 333, FALSE},
    {"2x2 file, F64, block 2048", 2, 2, 3000, 0, TRUE, FALSE, CUDAFFT_SAMPLE_F64, 2048, TRUE, 9000,
     4096, FALSE},
    {"4x2 from the matrix property", 4, 2, 500, 0, FALSE, FALSE, CUDAFFT_SAMPLE_F32, 128, TRUE,
     4000, 1000, FALSE},
    {"4x2 F64, block 32, no tail", 4, 2, 300, 0, FALSE, FALSE, CUDAFFT_SAMPLE_F64, 32, FALSE, 3000,
     257, FALSE},
    {"8x2 with empty entries (zeros)", 8, 2, 400, 0x8421, FALSE, FALSE, CUDAFFT_SAMPLE_F32, 256,
     TRUE, 3000, 700, FALSE},
    {"8x2 with empty entries (empty rows), F64", 8, 2, 400, 0x0c30, FALSE, TRUE, CUDAFFT_SAMPLE_F64,
     512, TRUE, 3000, 1024, FALSE},
    {"2x3 unpositioned output", 2, 3, 200, 0x4, FALSE, FALSE, CUDAFFT_SAMPLE_F32, 64, TRUE, 2000,
     500, FALSE},
    {"8x2 (7.1 to binaural) from a 16-channel file, empty entries", 8, 2, 300, 0x0a0a, TRUE, FALSE,
     CUDAFFT_SAMPLE_F32, 128, TRUE, 2500, 600, TRUE},
    /* block-size=0: zero latency (the LATENCY query answers 0) */
    {"2x2 from the matrix property, block 0", 2, 2, 500, 0, FALSE, FALSE, CUDAFFT_SAMPLE_F32, 0,
     TRUE, 3000, 333, FALSE},
    {"4x2 file with empty entries, F64, block 0, no tail", 4, 2, 200, 0x24, TRUE, FALSE,
     CUDAFFT_SAMPLE_F64, 0, FALSE, 2000, 97, TRUE},
};

GST_START_TEST(test_matches_direct_convolution)
{
  const MatrixRow *r = &matrix_rows[__i__];
  TestRng rng = test_rng("matrix %s", r->name);
  const guint rows = r->inputs * r->outputs;
  double *h = mx_random_responses(&rng, rows, r->taps, r->empty);
  gchar *path = NULL;
  gchar *props =
      g_strdup_printf("block-size=%u drain-tail=%s", r->block, r->tail ? "true" : "false");
  if (r->from_file) {
    path = write_wav_as("matrix", h, rows, r->taps, r->extensible);
    gchar *more = g_strdup_printf("%s ir-location=%s", props, path);
    g_free(props);
    props = more;
  }
  GstHarness *hn = matrix_harness(props);
  if (!r->from_file) {
    GstElement *e = eu_harness_element(hn, "m");
    gsize *lengths = g_new(gsize, rows);
    for (guint k = 0; k < rows; k++)
      lengths[k] = r->empty_rows && (r->empty >> k & 1) ? 0 : r->taps;
    mx_set_matrix(e, h, rows, r->taps, lengths);
    g_free(lengths);
    gst_object_unref(e);
  }
  TestSignal x;
  test_signal_random(&x, &rng, r->format, r->inputs, RATE, r->samples, READ);
  eu_harness_signal_caps(hn, &x);
  GPtrArray *out = eu_buffer_list();
  eu_push_signal(hn, &x, 0, x.frames, r->chunk, 0, out);
  fail_unless_equals_uint64(query_latency(hn),
                            gst_util_uint64_scale_int_round(r->block, GST_SECOND, RATE));
  eu_push_eos(hn, out);
  /* output caps: the outputs, stereo positions for 2, unpositioned otherwise */
  GstCaps *caps = gst_pad_get_current_caps(hn->sinkpad);
  GstAudioInfo info;
  fail_unless(caps && gst_audio_info_from_caps(&info, caps), "%s: no output caps", r->name);
  fail_unless_equals_int(GST_AUDIO_INFO_CHANNELS(&info), r->outputs);
  fail_unless_equals_int(GST_AUDIO_INFO_RATE(&info), RATE);
  fail_unless_equals_int(GST_AUDIO_INFO_FORMAT(&info), r->format == CUDAFFT_SAMPLE_F64
                                                           ? GST_AUDIO_FORMAT_F64LE
                                                           : GST_AUDIO_FORMAT_F32LE);
  if (r->outputs == 2)
    fail_unless(info.position[0] == GST_AUDIO_CHANNEL_POSITION_FRONT_LEFT &&
                    info.position[1] == GST_AUDIO_CHANNEL_POSITION_FRONT_RIGHT,
                "%s: not stereo positions", r->name);
  else
    fail_unless(GST_AUDIO_INFO_IS_UNPOSITIONED(&info), "%s: positioned output", r->name);
  gst_caps_unref(caps);
  gsize frames = 0;
  double *got = mx_read_run(out, r->format, r->outputs, RATE, 0, &frames, r->name);
  const gsize expected = r->tail ? r->samples + r->taps - 1 : r->samples;
  fail_unless(frames == expected, "%s: %zu output samples, expected %zu", r->name, frames,
              expected);
  double *want = mx_reference(h, r->taps, &x, r->outputs, expected);
  mx_check_values(got, want, expected * r->outputs, mx_tolerance(r->format), r->name);
  g_free(got);
  g_free(want);
  g_ptr_array_unref(out);
  gst_harness_teardown(hn);
  test_signal_clear(&x);
  if (path) {
    g_unlink(path);
    g_free(path);
  }
  g_free(props);
  g_free(h);
}
GST_END_TEST;

/* A flush forgets the input: the stream after it is filtered from silence, stamped from its own
 * segment. */
GST_START_TEST(test_flush_resets)
{
  TestRng rng = test_rng("flush");
  const gsize taps = 600;
  double *h = mx_random_responses(&rng, 4, taps, 0);
  GstHarness *hn = matrix_harness("block-size=128");
  GstElement *e = eu_harness_element(hn, "m");
  mx_set_matrix(e, h, 4, taps, NULL);
  gst_object_unref(e);
  TestSignal before, after;
  test_signal_random(&before, &rng, CUDAFFT_SAMPLE_F32, 2, RATE, 3000, READ);
  test_signal_random(&after, &rng, CUDAFFT_SAMPLE_F32, 2, RATE, 4000, READ);
  eu_harness_signal_caps(hn, &before);
  eu_push_signal(hn, &before, 0, before.frames, 1000, 0, NULL);
  eu_flush(hn, NULL);
  GPtrArray *out = eu_buffer_list();
  const GstClockTime start = 10 * GST_SECOND;
  eu_push_signal(hn, &after, 0, after.frames, 1000, start, out);
  eu_push_eos(hn, out);
  gsize frames = 0;
  double *got = mx_read_run(out, CUDAFFT_SAMPLE_F32, 2, RATE, start, &frames, "after the flush");
  mx_check_with_tail(got, frames, h, taps, &after, 2, "after the flush");
  g_free(got);
  g_ptr_array_unref(out);
  gst_harness_teardown(hn);
  test_signal_clear(&before);
  test_signal_clear(&after);
  g_free(h);
}
GST_END_TEST;

/* Changes while playing ---------------------------------------------------------------------- */

/* A new matrix set after `first` input frames takes effect at the next block boundary s (the first
 * multiple of L at or after them) and crosses over linearly during L frames, as cudafft/matrix.h
 * says: every output sample against that model, F32 and F64, at block-size 256 and 0 (zero
 * latency, where L is 32). */
GST_START_TEST(test_change_while_playing)
{
  const CudafftSampleFormat format = __i__ & 1 ? CUDAFFT_SAMPLE_F64 : CUDAFFT_SAMPLE_F32;
  const guint block = __i__ & 2 ? 0 : 256, L = block ? block : CUDAFFT_MATRIX_MIN_BLOCK;
  const guint inputs = 2, outputs = 2;
  const gsize taps = 900, samples = 6000, first = 2000;
  TestRng rng = test_rng("change %s block %u", test_format_name(format), block);
  double *h_old = mx_random_responses(&rng, inputs * outputs, taps, 0);
  double *h_new = mx_random_responses(&rng, inputs * outputs, taps, 0x2);
  gchar *props = g_strdup_printf("block-size=%u", block);
  GstHarness *hn = matrix_harness(props);
  g_free(props);
  GstElement *e = eu_harness_element(hn, "m");
  mx_set_matrix(e, h_old, inputs * outputs, taps, NULL);
  TestSignal x;
  test_signal_random(&x, &rng, format, inputs, RATE, samples, READ);
  eu_harness_signal_caps(hn, &x);
  GPtrArray *out = eu_buffer_list();
  eu_push_signal(hn, &x, 0, first, 500, 0, out);
  mx_set_matrix(e, h_new, inputs * outputs, taps, NULL);
  eu_push_signal(hn, &x, first, samples - first, 500, 0, out);
  eu_push_eos(hn, out);
  gst_object_unref(e);
  gsize frames = 0;
  double *got = mx_read_run(out, format, outputs, RATE, 0, &frames, "change");
  fail_unless_equals_uint64(frames, samples + taps - 1);
  mx_check_change(got, h_old, h_new, taps, &x, outputs, frames, first, L, "change while playing");
  g_free(got);
  g_ptr_array_unref(out);
  gst_harness_teardown(hn);
  test_signal_clear(&x);
  g_free(h_old);
  g_free(h_new);
}
GST_END_TEST;

/* A matrix of another output count while playing is refused with a WARNING; the old matrix
 * filters the whole stream, and the property reads it back. */
GST_START_TEST(test_output_count_change_refused)
{
  const gsize taps = 300, samples = 4000, first = 1500;
  TestRng rng = test_rng("output count change");
  double *h = mx_random_responses(&rng, 4, taps, 0);
  double *h3 = mx_random_responses(&rng, 6, taps, 0);
  GstHarness *hn = matrix_harness("block-size=64");
  GstBus *bus = eu_harness_bus(hn);
  GstElement *e = eu_harness_element(hn, "m");
  mx_set_matrix(e, h, 4, taps, NULL);
  TestSignal x;
  test_signal_random(&x, &rng, CUDAFFT_SAMPLE_F32, 2, RATE, samples, READ);
  eu_harness_signal_caps(hn, &x);
  GPtrArray *out = eu_buffer_list();
  eu_push_signal(hn, &x, 0, first, 500, 0, out);
  mx_set_matrix(e, h3, 6, taps, NULL); /* 2 x 3 */
  eu_push_signal(hn, &x, first, samples - first, 500, 0, out);
  eu_push_eos(hn, out);
  expect_warning_saying(bus, "cannot change while playing", "output count change");
  mx_check_matrix_reads(e, h, 4, taps, "output count change");
  gsize frames = 0;
  double *got = mx_read_run(out, CUDAFFT_SAMPLE_F32, 2, RATE, 0, &frames, "output count change");
  mx_check_with_tail(got, frames, h, taps, &x, 2, "old matrix kept");
  g_free(got);
  g_ptr_array_unref(out);
  gst_object_unref(e);
  eu_harness_teardown(hn, bus);
  test_signal_clear(&x);
  g_free(h);
  g_free(h3);
}
GST_END_TEST;

/* Waits (at most 30 s) for the end of an ir-location decode; returns how it ended. */
static GstProgressType
wait_ir_decoded(GstBus *bus)
{
  for (;;) {
    GstMessage *msg = gst_bus_timed_pop_filtered(bus, 30 * GST_SECOND, GST_MESSAGE_PROGRESS);
    fail_unless(msg != NULL, "the responses' decode did not end within 30 s");
    GstProgressType type;
    gchar *code = NULL;
    gst_message_parse_progress(msg, &type, &code, NULL);
    const gboolean ended = g_strcmp0(code, "ir-location") == 0 && type != GST_PROGRESS_TYPE_START &&
                           type != GST_PROGRESS_TYPE_CONTINUE;
    g_free(code);
    gst_message_unref(msg);
    if (ended)
      return type;
  }
}

/* ir-location replaced while playing: by a file of the same output count, which crosses over at
 * the next block boundary after the frames pushed before it was decoded (every sample against the
 * model); by one of another output count (a 2 x 3 file for the 2 x 2 stream), refused with a
 * WARNING while the first file filters the whole stream exactly. */
GST_START_TEST(test_file_change_while_playing)
{
  const gboolean other_count = __i__ == 1;
  const guint L = 128, inputs = 2, outputs = 2, new_outputs = other_count ? 3 : 2;
  const gsize taps = 500, samples = 5000, first = 1700;
  TestRng rng = test_rng("file change %d", __i__);
  double *h_old = mx_random_responses(&rng, inputs * outputs, taps, 0);
  double *h_new = mx_random_responses(&rng, inputs * new_outputs, taps, 0);
  gchar *old_path = write_wav("change-old", h_old, inputs * outputs, taps);
  gchar *new_path = write_wav("change-new", h_new, inputs * new_outputs, taps);
  gchar *props = g_strdup_printf("block-size=%u ir-location=%s", L, old_path);
  GstHarness *hn = matrix_harness(props);
  GstBus *bus = eu_harness_bus(hn);
  GstElement *e = eu_harness_element(hn, "m");
  TestSignal x;
  test_signal_random(&x, &rng, CUDAFFT_SAMPLE_F32, inputs, RATE, samples, READ);
  eu_harness_signal_caps(hn, &x);
  GPtrArray *out = eu_buffer_list();
  eu_push_signal(hn, &x, 0, first, 500, 0, out);
  fail_unless_equals_int(wait_ir_decoded(bus), GST_PROGRESS_TYPE_COMPLETE); /* the first file */
  g_object_set(e, "ir-location", new_path, NULL);
  fail_unless_equals_int(wait_ir_decoded(bus), GST_PROGRESS_TYPE_COMPLETE);
  eu_push_signal(hn, &x, first, samples - first, 500, 0, out);
  eu_push_eos(hn, out);
  if (other_count)
    expect_warning_saying(bus, "cannot change while playing", "file of 3 outputs");
  gsize frames = 0;
  double *got = mx_read_run(out, CUDAFFT_SAMPLE_F32, outputs, RATE, 0, &frames, "file change");
  fail_unless_equals_uint64(frames, samples + taps - 1);
  if (other_count) { /* refused: the first file filters the whole stream */
    double *want = mx_reference(h_old, taps, &x, outputs, frames);
    mx_check_values(got, want, frames * outputs, mx_tolerance(CUDAFFT_SAMPLE_F32), "file change");
    g_free(want);
  } else {
    mx_check_change(got, h_old, h_new, taps, &x, outputs, frames, first, L, "file change");
  }
  g_free(got);
  g_ptr_array_unref(out);
  gst_object_unref(e);
  eu_harness_teardown(hn, bus);
  test_signal_clear(&x);
  g_unlink(old_path);
  g_unlink(new_path);
  g_free(old_path);
  g_free(new_path);
  g_free(props);
  g_free(h_old);
  g_free(h_new);
}
GST_END_TEST;

/* A DISCONT buffer ends the run at its last input sample (no tail) and starts a new one at its
 * timestamp, filtered from silence: no sample lost or repeated in either. */
GST_START_TEST(test_discont_new_run)
{
  const gsize taps = 400, n1 = 2500, n2 = 3000;
  TestRng rng = test_rng("discont");
  double *h = mx_random_responses(&rng, 4, taps, 0);
  GstHarness *hn = matrix_harness("block-size=256");
  GstElement *e = eu_harness_element(hn, "m");
  mx_set_matrix(e, h, 4, taps, NULL);
  gst_object_unref(e);
  TestSignal a, b;
  test_signal_random(&a, &rng, CUDAFFT_SAMPLE_F64, 2, RATE, n1, READ);
  test_signal_random(&b, &rng, CUDAFFT_SAMPLE_F64, 2, RATE, n2, READ);
  eu_harness_signal_caps(hn, &a);
  GPtrArray *out_a = eu_buffer_list(), *out_b = eu_buffer_list();
  eu_push_signal(hn, &a, 0, n1, 700, 0, out_a);
  const GstClockTime start_b = 5 * GST_SECOND;
  GstBuffer *first_b = eu_signal_buffer(&b, 0, 600, start_b);
  GST_BUFFER_FLAG_SET(first_b, GST_BUFFER_FLAG_DISCONT);
  fail_unless_equals_int(gst_harness_push(hn, first_b), GST_FLOW_OK);
  /* what the first run still held came out before the second run's first buffer */
  GstBuffer *buf;
  while ((buf = gst_harness_try_pull(hn))) {
    const gboolean second = GST_BUFFER_PTS(buf) >= start_b;
    g_ptr_array_add(second ? out_b : out_a, buf);
  }
  eu_push_signal(hn, &b, 600, n2 - 600, 700, start_b, out_b);
  eu_push_eos(hn, out_b);
  gsize frames = 0;
  double *got =
      mx_read_run(out_a, CUDAFFT_SAMPLE_F64, 2, RATE, 0, &frames, "run before the DISCONT");
  fail_unless_equals_uint64(frames, n1);
  double *want = mx_reference(h, taps, &a, 2, frames);
  mx_check_values(got, want, frames * 2, mx_tolerance(CUDAFFT_SAMPLE_F64),
                  "run before the DISCONT");
  g_free(got);
  g_free(want);
  got = mx_read_run(out_b, CUDAFFT_SAMPLE_F64, 2, RATE, start_b, &frames, "run after the DISCONT");
  mx_check_with_tail(got, frames, h, taps, &b, 2, "run after the DISCONT");
  g_free(got);
  g_ptr_array_unref(out_a);
  g_ptr_array_unref(out_b);
  gst_harness_teardown(hn);
  test_signal_clear(&a);
  test_signal_clear(&b);
  g_free(h);
}
GST_END_TEST;

/* New caps renegotiate the output: a matrix of 6 entries is 2 x 3 for a stereo stream and 3 x 2
 * for a 3-channel one; the caps change ends the first run without the tail, and the second comes
 * out with 2 channels, every sample of both against the direct convolution. */
GST_START_TEST(test_caps_change_renegotiates)
{
  const gsize taps = 300, n1 = 2000, n2 = 2500;
  TestRng rng = test_rng("caps change");
  double *h = mx_random_responses(&rng, 6, taps, 0);
  GstHarness *hn = matrix_harness("block-size=64");
  GstElement *e = eu_harness_element(hn, "m");
  mx_set_matrix(e, h, 6, taps, NULL);
  gst_object_unref(e);
  TestSignal a, b;
  test_signal_random(&a, &rng, CUDAFFT_SAMPLE_F32, 2, RATE, n1, READ);
  test_signal_random(&b, &rng, CUDAFFT_SAMPLE_F32, 3, RATE, n2, READ);
  eu_harness_signal_caps(hn, &a);
  GPtrArray *out_a = eu_buffer_list(), *out_b = eu_buffer_list();
  eu_push_signal(hn, &a, 0, n1, 450, 0, out_a);
  GstCaps *caps = gst_pad_get_current_caps(hn->sinkpad);
  GstAudioInfo info;
  fail_unless(gst_audio_info_from_caps(&info, caps));
  fail_unless_equals_int(GST_AUDIO_INFO_CHANNELS(&info), 3);
  gst_caps_unref(caps);
  eu_harness_signal_caps(hn, &b);
  const GstClockTime start_b = 2 * GST_SECOND;
  GstBuffer *first_b = eu_signal_buffer(&b, 0, 500, start_b);
  fail_unless_equals_int(gst_harness_push(hn, first_b), GST_FLOW_OK);
  GstBuffer *buf;
  while ((buf = gst_harness_try_pull(hn)))
    g_ptr_array_add(GST_BUFFER_PTS(buf) >= start_b ? out_b : out_a, buf);
  eu_push_signal(hn, &b, 500, n2 - 500, 450, start_b, out_b);
  eu_push_eos(hn, out_b);
  caps = gst_pad_get_current_caps(hn->sinkpad);
  fail_unless(gst_audio_info_from_caps(&info, caps));
  fail_unless_equals_int(GST_AUDIO_INFO_CHANNELS(&info), 2);
  gst_caps_unref(caps);
  gsize frames = 0;
  double *got = mx_read_run(out_a, CUDAFFT_SAMPLE_F32, 3, RATE, 0, &frames, "2 x 3");
  fail_unless_equals_uint64(frames, n1);
  double *want = mx_reference(h, taps, &a, 3, frames);
  mx_check_values(got, want, frames * 3, mx_tolerance(CUDAFFT_SAMPLE_F32),
                  "2 x 3 before the caps change");
  g_free(got);
  g_free(want);
  got = mx_read_run(out_b, CUDAFFT_SAMPLE_F32, 2, RATE, start_b, &frames, "3 x 2");
  mx_check_with_tail(got, frames, h, taps, &b, 2, "3 x 2 after the caps change");
  g_free(got);
  g_ptr_array_unref(out_a);
  g_ptr_array_unref(out_b);
  gst_harness_teardown(hn);
  test_signal_clear(&a);
  test_signal_clear(&b);
  g_free(h);
}
GST_END_TEST;

/* Bad input ---------------------------------------------------------------------------------- */

/* Refused property values: a WARNING, and the value in force stays. */
GST_START_TEST(test_refused_values)
{
  GstHarness *hn = matrix_harness(NULL);
  GstBus *bus = eu_harness_bus(hn);
  GstElement *e = eu_harness_element(hn, "m");
  const double good[4] = {0.5, 0.25, 0.125, 1.0};
  mx_set_matrix(e, good, 4, 1, NULL);
  const double nan_rows[2] = {0.5, NAN}, inf_rows[2] = {INFINITY, 0.5};
  /* NaN is refused by GLib's validation of the value (a g_warning, nothing set) */
  ASSERT_WARNING(mx_set_matrix(e, nan_rows, 2, 1, NULL));
  mx_set_matrix(e, inf_rows, 2, 1, NULL);
  expect_warning_saying(bus, "not a finite number", "infinite tap");
  mx_set_matrix(e, good, 0, 1, NULL);
  expect_warning_saying(bus, "no entries", "empty matrix");
  const gsize zero_lengths[2] = {0, 0};
  mx_set_matrix(e, good, 2, 1, zero_lengths);
  expect_warning_saying(bus, "no taps", "matrix of empty rows");
  GValue got = G_VALUE_INIT;
  g_value_init(&got, GST_TYPE_ARRAY);
  g_object_get_property(G_OBJECT(e), "matrix", &got);
  fail_unless_equals_int(gst_value_array_get_size(&got), 4);
  g_value_unset(&got);
  /* within the param spec's range (GLib refuses values outside it), not powers of two */
  const guint bad_blocks[] = {1, 16, 33, 100, 1000, 2047};
  for (guint b = 0; b < G_N_ELEMENTS(bad_blocks); b++) {
    g_object_set(e, "block-size", bad_blocks[b], NULL);
    expect_warning_saying(bus, "block-size", "block size");
    guint block = 0;
    g_object_get(e, "block-size", &block, NULL);
    fail_unless_equals_int(block, CUDAFFT_MATRIX_BLOCK);
  }
  gst_object_unref(e);
  eu_harness_teardown(hn, bus);
}
GST_END_TEST;

/* ir-locations: a 2 x 2 matrix as a list of files, one per entry: three mono files of different
 * lengths (the shorter padded with zeros) and an empty entry (""), in input-major order; a missing
 * file in a list is an ERROR naming it. */
GST_START_TEST(test_file_list)
{
  TestRng rng = test_rng("file list");
  const gsize taps = 600, lengths[4] = {600, 250, 0, 431};
  double *h = mx_random_responses(&rng, 4, taps, 0x4);
  gchar *files[4] = {NULL};
  GValue list = G_VALUE_INIT;
  g_value_init(&list, GST_TYPE_ARRAY);
  for (guint k = 0; k < 4; k++) {
    for (gsize t = lengths[k]; t < taps; t++)
      h[k * taps + t] = 0.0;
    gchar *label = g_strdup_printf("entry%u", k);
    if (lengths[k] > 0)
      files[k] = write_wav(label, h + k * taps, 1, lengths[k]);
    g_free(label);
    GValue v = G_VALUE_INIT;
    g_value_init(&v, G_TYPE_STRING);
    g_value_set_string(&v, files[k] ? files[k] : "");
    gst_value_array_append_and_take_value(&list, &v);
  }
  GstHarness *hn = matrix_harness("block-size=128");
  GstElement *e = eu_harness_element(hn, "m");
  g_object_set_property(G_OBJECT(e), "ir-locations", &list);
  GValue got_list = G_VALUE_INIT;
  g_value_init(&got_list, GST_TYPE_ARRAY);
  g_object_get_property(G_OBJECT(e), "ir-locations", &got_list);
  fail_unless(gst_value_compare(&list, &got_list) == GST_VALUE_EQUAL, "ir-locations read back");
  g_value_unset(&got_list);
  gchar *single = NULL;
  g_object_get(e, "ir-location", &single, NULL);
  fail_unless(single == NULL, "ir-location is %s while a list is in force", single);
  gst_object_unref(e);
  TestSignal x;
  test_signal_random(&x, &rng, CUDAFFT_SAMPLE_F32, 2, RATE, 3000, READ);
  eu_harness_signal_caps(hn, &x);
  GPtrArray *out = eu_buffer_list();
  eu_push_signal(hn, &x, 0, x.frames, 500, 0, out);
  eu_push_eos(hn, out);
  gsize frames = 0;
  double *got = mx_read_run(out, x.format, 2, RATE, 0, &frames, "file list");
  mx_check_with_tail(got, frames, h, taps, &x, 2, "file list");
  g_free(got);
  g_ptr_array_unref(out);
  gst_harness_teardown(hn);
  test_signal_clear(&x);

  gchar *line = g_strdup_printf(
      "audiotestsrc num-buffers=4 ! audio/x-raw,format=F32LE,channels=2,rate=48000 ! "
      "cudamatrixconvolve name=e backend=%s ir-locations=\"<\\\"%s\\\", "
      "\\\"/nonexistent/entry.wav\\\">\" ! fakesink",
      eu_backend, files[0]);
  const char *const missing[] = {"/nonexistent/entry.wav", "ir-locations", NULL};
  eu_check_one_error(line, 1, missing);
  g_free(line);
  g_value_unset(&list);
  for (guint k = 0; k < 4; k++)
    if (files[k]) {
      g_unlink(files[k]);
      g_free(files[k]);
    }
  g_free(h);
}
GST_END_TEST;

/* rate-changed: emitted once the rate is known, before the responses are read, so that the matrix
 * a handler sets for that rate filters the whole stream. */
typedef struct {
  const double *h;
  gsize taps;
  gint rate;
  guint calls;
} RateHandler;

static void
on_rate_changed(GstElement *e, gint rate, gpointer data)
{
  RateHandler *handler = data;
  handler->calls++;
  handler->rate = rate;
  mx_set_matrix(e, handler->h, 4, handler->taps, NULL);
}

GST_START_TEST(test_rate_changed)
{
  TestRng rng = test_rng("rate changed");
  const gsize taps = 300;
  const guint rate = 44100;
  double *h_before = mx_random_responses(&rng, 4, taps, 0);
  double *h_rate = mx_random_responses(&rng, 4, taps, 0x1);
  GstHarness *hn = matrix_harness("block-size=64");
  GstElement *e = eu_harness_element(hn, "m");
  mx_set_matrix(e, h_before, 4, taps, NULL);
  RateHandler handler = {.h = h_rate, .taps = taps};
  g_signal_connect(e, "rate-changed", G_CALLBACK(on_rate_changed), &handler);
  TestSignal x;
  test_signal_random(&x, &rng, CUDAFFT_SAMPLE_F32, 2, rate, 2000, READ);
  eu_harness_signal_caps(hn, &x);
  GPtrArray *out = eu_buffer_list();
  eu_push_signal(hn, &x, 0, x.frames, 300, 0, out);
  eu_push_eos(hn, out);
  fail_unless_equals_int(handler.calls, 1);
  fail_unless_equals_int(handler.rate, rate);
  gsize frames = 0;
  double *got = mx_read_run(out, x.format, 2, rate, 0, &frames, "rate-changed");
  mx_check_with_tail(got, frames, h_rate, taps, &x, 2, "the handler's matrix");
  g_free(got);
  g_ptr_array_unref(out);
  gst_object_unref(e);
  gst_harness_teardown(hn);
  test_signal_clear(&x);
  g_free(h_before);
  g_free(h_rate);
}
GST_END_TEST;

/* The checks every element shares: a start that cannot run (a CUDA device that does not exist), a
 * stream of 1025 channels, a BYTES segment: one ERROR each, from the element. */
GST_START_TEST(test_shared_errors)
{
  const char *element = "cudamatrixconvolve matrix=\"<<1.0, 0.5>>\"";
  eu_check_one_error_at_start(element, "");
  eu_check_channel_limit(element, "");
  eu_check_time_segment(element);
}
GST_END_TEST;

/* Errors at start: one ERROR in the whole pipeline, from the element, naming what is wrong. */
GST_START_TEST(test_errors_at_start)
{
  TestRng rng = test_rng("errors");
  double *h3 = mx_random_responses(&rng, 5, 10, 0);
  gchar *three = write_wav("three", h3, 5, 10); /* 5: a count with positions */
  gchar *mono = write_wav("mono", h3, 1, 10);
  const char *src = "audiotestsrc num-buffers=4 ! audio/x-raw,format=F32LE,channels=2,rate=48000";
  gchar *line = g_strdup_printf("%s ! cudamatrixconvolve name=e backend=%s ir-location=%s ! "
                                "fakesink",
                                src, eu_backend, three);
  const char *const not_multiple[] = {"5 entries", "2 input channels", NULL};
  eu_check_one_error(line, 2, not_multiple);
  g_free(line);
  line = g_strdup_printf("%s ! cudamatrixconvolve name=e backend=%s ! fakesink", src, eu_backend);
  const char *const none[] = {"No responses", NULL};
  eu_check_one_error(line, 2, none);
  g_free(line);
  line = g_strdup_printf(
      "%s ! cudamatrixconvolve name=e backend=%s outputs=3 matrix=\"<<1.0>,<1.0>,<1.0>,<1.0>>\" ! "
      "fakesink",
      src, eu_backend);
  const char *const outputs[] = {"outputs=3", "4 entries", NULL};
  eu_check_one_error(line, 2, outputs);
  g_free(line);
  line = g_strdup_printf("%s ! cudamatrixconvolve name=e backend=%s ir-location=%s ! fakesink", src,
                         eu_backend, mono);
  const char *const one[] = {"1 entries", "2 input channels", NULL};
  eu_check_one_error(line, 1, one);
  g_free(line);
  double nan_rows[4 * 10] = {0};
  nan_rows[2 * 10 + 7] = NAN; /* entry 2, tap 7 */
  gchar *nan_file = write_wav("nan", nan_rows, 4, 10);
  line = g_strdup_printf("%s ! cudamatrixconvolve name=e backend=%s ir-location=%s ! fakesink", src,
                         eu_backend, nan_file);
  const char *const nan_words[] = {"not finite", "entry 2, tap 7", NULL};
  eu_check_one_error(line, 1, nan_words);
  g_free(line);
  g_unlink(nan_file);
  g_free(nan_file);
  g_unlink(three);
  g_unlink(mono);
  g_free(three);
  g_free(mono);
  g_free(h3);
}
GST_END_TEST;

/* Undecodable response files ------------------------------------------------------------- */

/* The undecodable responses of the tests below: a text file, a WAV file whose header is damaged
 * (its format fields overwritten), and a list of a good file and the text file. */
typedef struct {
  gchar *text, *damaged, *good;
  gchar *lines[3];      /* launch lines, the element named "e" */
  const char *named[3]; /* the file each line's ERROR names */
} Undecodable;

static void
undecodable_files(Undecodable *u)
{
  TestRng rng = test_rng("undecodable");
  double *h = mx_random_responses(&rng, 4, 64, 0);
  u->good = write_wav("good", h, 4, 64);
  u->damaged = write_wav("damaged", h, 4, 64);
  gchar *bytes = NULL;
  gsize size = 0;
  fail_unless(g_file_get_contents(u->damaged, &bytes, &size, NULL) && size > 36);
  memset(bytes + 20, 0xff, 16); /* format tag, channels, rate, byte rate, alignment, depth */
  fail_unless(g_file_set_contents(u->damaged, bytes, (gssize)size, NULL));
  g_free(bytes);
  u->text =
      g_strdup_printf("%s/cudamatrixconvolve-test-%d-notes.txt", g_get_tmp_dir(), (int)getpid());
  fail_unless(g_file_set_contents(u->text, "these are notes, not audio\n", -1, NULL));
  const char *head = "audiotestsrc num-buffers=20 ! audio/x-raw,format=F32LE,rate=48000,channels=2 "
                     "! cudamatrixconvolve name=e";
  u->lines[0] =
      g_strdup_printf("%s backend=%s ir-location=%s ! fakesink", head, eu_backend, u->text);
  u->lines[1] =
      g_strdup_printf("%s backend=%s ir-location=%s ! fakesink", head, eu_backend, u->damaged);
  u->lines[2] =
      g_strdup_printf("%s backend=%s ir-locations=\"<\\\"%s\\\", \\\"%s\\\">\" ! fakesink", head,
                      eu_backend, u->good, u->text);
  u->named[0] = u->text;
  u->named[1] = u->damaged;
  u->named[2] = u->text;
  g_free(h);
}

static void
undecodable_clear(Undecodable *u)
{
  for (guint k = 0; k < G_N_ELEMENTS(u->lines); k++)
    g_free(u->lines[k]);
  g_unlink(u->text);
  g_unlink(u->damaged);
  g_unlink(u->good);
  g_free(u->text);
  g_free(u->damaged);
  g_free(u->good);
}

/* A pipeline linked in NULL (gst_parse_launch links as it parses) does not decode its response
 * file: nothing is posted until it starts. A decode at the link, on the application's thread, had
 * its failure known before the pipeline started, and the ERROR then came the moment the stream
 * did, before gst-launch-1.0's main loop ran to see it (it hung in about one run of three on a
 * loaded machine). Started, the element decodes the file, says so, and posts its ERROR. */
GST_START_TEST(test_no_decode_before_start)
{
  Undecodable u;
  undecodable_files(&u);
  for (guint k = 0; k < G_N_ELEMENTS(u.lines); k++) {
    GError *error = NULL;
    GstElement *pipeline = gst_parse_launch(u.lines[k], &error);
    fail_unless(pipeline && !error, "%s: %s", u.lines[k], error ? error->message : "no pipeline");
    GstBus *bus = gst_element_get_bus(pipeline);
    g_usleep(200 * 1000); /* time for a decode a link would have started */
    GstMessage *early = gst_bus_pop(bus);
    fail_unless(early == NULL, "%s: a %s message before the pipeline starts", u.lines[k],
                early ? GST_MESSAGE_TYPE_NAME(early) : "");
    gst_object_unref(bus);
    EuErrors got;
    eu_collect_pipeline_errors(pipeline, "e", 20, &got);
    const char *const words[] = {u.named[k], "Cannot use", NULL};
    eu_check_errors_one(&got, u.lines[k], words);
    eu_errors_clear(&got);
  }
  undecodable_clear(&u);
}
GST_END_TEST;

/* Each undecodable file, many times over: every run ends in the element's ERROR naming the file
 * within 10 s (the pipeline never stays PREROLLING), seen by an application that waits on its bus.
 */
#define UNDECODABLE_RUNS (EU_SANITIZED ? 50 : 200) /* under ASan a run takes 8 times as long */

GST_START_TEST(test_undecodable_every_run)
{
  Undecodable u;
  undecodable_files(&u);
  for (guint k = 0; k < G_N_ELEMENTS(u.lines); k++) {
    for (guint run = 0; run < UNDECODABLE_RUNS; run++) {
      GError *error = NULL;
      GstElement *pipeline = gst_parse_launch(u.lines[k], &error);
      fail_unless(pipeline && !error, "%s: %s", u.lines[k], error ? error->message : "no pipeline");
      GstBus *bus = gst_element_get_bus(pipeline);
      gst_element_set_state(pipeline, GST_STATE_PLAYING);
      GstMessage *msg =
          gst_bus_timed_pop_filtered(bus, 10 * GST_SECOND, GST_MESSAGE_ERROR | GST_MESSAGE_EOS);
      gchar *text = NULL;
      const gboolean ours = msg && GST_MESSAGE_TYPE(msg) == GST_MESSAGE_ERROR &&
                            g_strcmp0(GST_OBJECT_NAME(GST_MESSAGE_SRC(msg)), "e") == 0;
      if (ours) {
        GError *err = NULL;
        gst_message_parse_error(msg, &err, NULL);
        text = g_strdup(err->message);
        g_clear_error(&err);
      }
      if (!ours || !strstr(text, u.named[k]))
        fail("%s, run %u of %u: %s", u.lines[k], run + 1, UNDECODABLE_RUNS,
             !msg    ? "neither ERROR nor EOS within 10 s"
             : !ours ? "not the element's ERROR"
                     : text);
      g_free(text);
      gst_message_unref(msg);
      gst_element_set_state(pipeline, GST_STATE_NULL);
      gst_object_unref(bus);
      gst_object_unref(pipeline);
    }
  }
  undecodable_clear(&u);
}
GST_END_TEST;

static Suite *
cudamatrixconvolve_suite(void)
{
  TCase *tc;
  Suite *s = eu_suite("cudamatrixconvolve", &tc);
  tcase_add_test(tc, test_metadata);
  tcase_add_loop_test(tc, test_matches_direct_convolution, 0, G_N_ELEMENTS(matrix_rows));
  tcase_add_test(tc, test_flush_resets);
  tcase_add_loop_test(tc, test_change_while_playing, 0, 4);
  tcase_add_test(tc, test_output_count_change_refused);
  tcase_add_loop_test(tc, test_file_change_while_playing, 0, 2);
  tcase_add_test(tc, test_discont_new_run);
  tcase_add_test(tc, test_caps_change_renegotiates);
  tcase_add_test(tc, test_refused_values);
  tcase_add_test(tc, test_errors_at_start);
  tcase_add_test(tc, test_file_list);
  tcase_add_test(tc, test_rate_changed);
  tcase_add_test(tc, test_shared_errors);
  tcase_add_test(tc, test_no_decode_before_start);
  tcase_add_test(tc, test_undecodable_every_run);
  return s;
}

EU_MAIN(cudamatrixconvolve_suite)
