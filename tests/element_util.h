/* element_util.h: what the element tests share beyond the harness, random streams and signals of
 * the library tests (test_harness.h, test_random.h, test_signal.h): a main() around gst-check's
 * suite runner that reports through test_harness.h, GstHarness helpers, and the checker that holds
 * a stream of cudafft output buffers to the element contract (values against stft_reference.h,
 * framing, timestamps, offsets, flags, clipping meta). */
#ifndef CUDAFFT_ELEMENT_UTIL_H
#define CUDAFFT_ELEMENT_UTIL_H

#include "test_harness.h"
#include "test_random.h"
#include "test_signal.h"

#include <cudafft/features.h>
#include <cudafft/stft.h>

#include <gst/audio/audio.h>
#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>
#include <gst/gst.h>
#include <stdint.h>

/* Tolerances (see element_util.c for why). */
#define EU_FRAME_TOLERANCE 3e-6 /* relative L2 over one buffer's complex values */
#define EU_DB_TOLERANCE 1e-2    /* absolute, dB, where power > EU_DB_FLOOR x max power */
#define EU_DB_FLOOR 1e-8
#define EU_ROUNDTRIP_TOLERANCE 1e-5 /* relative L2 over all samples of a round trip */

/* "cpu" or "cuda": the element property backend= of every element under test. */
extern const char *eu_backend;

/* test_begin() (the backend argument, the skip rule, the seed), then gst_check_init. */
void eu_init(int *argc, char ***argv);
/* A suite of one test case named `name` (each test may take 300 s); *tc receives the case. */
Suite *eu_suite(const char *name, TCase **tc);
/* Runs the suite (gst-check's runner: CK_FORK, GST_CHECKS, GST_CHECK_XML... apply), counts its
 * tests into the harness and returns test_finish(). */
int eu_run(Suite *suite);
/* The main() of an element test: its suite, built by `make_suite`. */
#define EU_MAIN(make_suite)                                                                        \
  int main(int argc, char **argv)                                                                  \
  {                                                                                                \
    eu_init(&argc, &argv);                                                                         \
    return eu_run(make_suite());                                                                   \
  }

/* 1 where this build runs under AddressSanitizer (which reserves terabytes of address space and
 * keeps freed memory in a quarantine), else 0. */
#if defined(__SANITIZE_ADDRESS__)
#define EU_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define EU_SANITIZED 1
#endif
#endif
#ifndef EU_SANITIZED
#define EU_SANITIZED 0
#endif

/* NULL-PLAYING cycles a state-cycle test runs: CUDAFFT_TEST_STATE_CYCLES, else `default_cycles`.
 */
guint eu_state_cycles(guint default_cycles);
/* Limits this test's address space to `gib` GiB where that is safe and meaningful: on the CPU
 * backend, in a forked test (CK_FORK is not "no": the limit stays with the test's own process),
 * and not under AddressSanitizer (which reserves terabytes of address space for itself, so a
 * sanitized run relies on the engine's own memory check alone). An allocation the engine's check
 * should have refused then fails at once instead of being granted lazily. */
void eu_limit_address_space(guint gib);

/* Runs func on each of count items (item_size bytes apart from items on) in threads of their own,
 * all at once, and returns when every one has returned. */
void eu_run_threads(GThreadFunc func, gpointer items, gsize item_size, guint count);

/* Sets cudaconvolve's kernel property to these taps (a GValueArray of gdouble, as
 * audiofirfilter's). */
void eu_set_kernel(GstElement *e, const double *taps, gsize n);

/* audio/x-raw caps; more than two channels get GStreamer's fallback channel-mask (up to 8) or
 * none (0: unpositioned), as audio caps must carry one beyond stereo. */
GstCaps *eu_raw_caps(CudafftSampleFormat format, guint rate, guint channels);

/* Harness helpers ---------------------------------------------------------------------------- */

/* gst_harness_new_parse() of the printf-formatted launch line; fails the test if it cannot be
 * made (element missing: is GST_PLUGIN_PATH the build's plugin folder?). */
GstHarness *eu_harness_new(const char *format, ...) G_GNUC_PRINTF(1, 2);
/* The element named `name` inside the harness (a new reference). */
GstElement *eu_harness_element(GstHarness *h, const char *name);
/* A bus on the harnessed element, so that its messages (errors) can be read. */
GstBus *eu_harness_bus(GstHarness *h);
/* Detaches and drops the bus of eu_harness_bus(), then tears the harness down. */
void eu_harness_teardown(GstHarness *h, GstBus *bus);
/* The first ERROR message on the bus (NULL if none); *text receives "message | debug". */
gboolean eu_bus_pop_error(GstBus *bus, GError **error, gchar **text);

/* The timestamp of sample s of a run that started at start: start + s/rate, rounded. */
GstClockTime eu_sample_time(GstClockTime start, guint64 s, guint rate);

/* One buffer of samples [first, first + count) of signal (count may be 0), with PTS
 * start + first/rate and the matching duration (no timestamps when start is GST_CLOCK_TIME_NONE),
 * OFFSET first and OFFSET_END first + count. */
GstBuffer *eu_signal_buffer(const TestSignal *signal, gsize first, gsize count, GstClockTime start);

/* An empty array that owns the buffers put in it. */
GPtrArray *eu_buffer_list(void);
/* Sets the harness's source caps to the signal's (eu_raw_caps). */
void eu_harness_signal_caps(GstHarness *h, const TestSignal *signal);

/* A flush: FLUSH_START, FLUSH_STOP (both must be accepted), what comes out meanwhile into out
 * (may be NULL: dropped), then a new TIME segment from 0. */
void eu_flush(GstHarness *h, GPtrArray *out);

/* Moves every buffer waiting on the harness sink into out. */
void eu_pull_all(GstHarness *h, GPtrArray *out);

/* Pushes samples [first, first + count) in buffers of `chunk` samples, stamped from start, pulling
 * the output after each push into out (may be NULL: output left queued). Fails the test on a flow
 * other than OK. */
void eu_push_signal(GstHarness *h, const TestSignal *signal, gsize first, gsize count, gsize chunk,
                    GstClockTime start, GPtrArray *out);
/* Pushes EOS (must be accepted) and pulls the rest. */
void eu_push_eos(GstHarness *h, GPtrArray *out);

/* Pushes `size` bytes at `data` in buffers of 1 to max_piece bytes each (sizes from rng, which
 * split frames anywhere), untimestamped, pulling the output after each push into out (may be
 * NULL). Fails the test on a flow other than OK. */
void eu_push_bytes(GstHarness *h, const guint8 *data, gsize size, TestRng *rng, gsize max_piece,
                   GPtrArray *out);

/* Errors of a whole pipeline ---------------------------------------------------------------- */

/* What a pipeline posted: the ERRORs of the element named `name` ("message | debug" each), how
 * many ERRORs came from other elements, whether going to PLAYING failed at once, and whether EOS
 * came. */
typedef struct {
  GPtrArray *errors;
  guint others;
  gboolean start_failed;
  gboolean eos;
} EuErrors;

/* Runs the launch line `description` until EOS, or until no message has come for a second after
 * an ERROR (so that repeated ERRORs are seen too), at most `seconds` in all; then NULL, and
 * counts what the bus holds. Fails the test if the line does not parse or link. */
void eu_collect_errors(const char *description, const char *name, guint seconds, EuErrors *out);
/* The same for a pipeline already made (taken: it is freed). */
void eu_collect_pipeline_errors(GstElement *pipeline, const char *name, guint seconds,
                                EuErrors *out);
void eu_errors_clear(EuErrors *errors);

/* One failure, one ERROR: checks that a run posted exactly one ERROR in the whole pipeline, from
 * the element collected (none from the others: the "Internal data stream error" a source or a
 * queue posts for the same failure is a second one), holding each of the NULL-terminated `words`
 * in its text; `what` names the run in the failure messages. */
void eu_check_errors_one(const EuErrors *got, const char *what, const char *const *words);
/* Runs `description`, whose element under test is named "e", `runs` times and checks each run
 * with eu_check_errors_one (the same failure, one ERROR every time). */
void eu_check_one_error(const char *description, guint runs, const char *const *words);

/* The checks every element shares (name: its factory name; upstream: a launch line, possibly
 * empty, that turns audiotestsrc's F32 audio into what it takes):
 * - a start that cannot run (backend=cuda on a device that does not exist) posts exactly one
 *   ERROR in the whole pipeline, from the element, and fails the change to PLAYING;
 * - a stream of 1025 channels links and is refused with one ERROR in the whole pipeline, from the
 *   element, that names the limit and the count; no EOS;
 * - raw audio in a BYTES segment (filesrc's, straight into the element) is refused with one ERROR
 *   in the whole pipeline, from the element, that says it needs TIME.
 * Three runs each. */
void eu_check_one_error_at_start(const char *name, const char *upstream);
void eu_check_channel_limit(const char *name, const char *upstream);
void eu_check_time_segment(const char *name);

/* The cudafft contract ---------------------------------------------------------------------- */

typedef struct {
  guint fft_size;
  guint hop; /* effective hop (never 0) */
  CudafftWindow window;
  CudafftRepresentation representation;
} EuFft;

const char *eu_window_nick(CudafftWindow window);
const char *eu_representation_nick(CudafftRepresentation representation);
guint eu_bins(guint fft_size);
/* Floats of one output frame: channels x bins x (2 for complex, else 1). */
gsize eu_frame_floats(const EuFft *fft, guint channels);
/* fft_size - hop: the zero samples in front of every run. */
guint eu_lead(const EuFft *fft);
/* Frames of a run of L samples once drained: floor((L - 1 + lead)/hop) + 1, 0 for L = 0. */
gsize eu_frames_drained(const EuFft *fft, gsize samples);
/* Frames complete after L samples without draining: floor(L / hop). */
gsize eu_frames_complete(const EuFft *fft, gsize samples);
/* Zeros appended at EOS: (frames - 1) hop + fft_size - lead - L. */
gsize eu_tail_zeros(const EuFft *fft, gsize samples);

/* The complex spectra of the first `frames` frames of a run over values (interleaved, channels),
 * in double precision (stft_reference_frames with the run's lead): frames x channels x bins x
 * (re, im). NaN/Inf samples are read as they are. */
double *eu_reference_frames(const EuFft *fft, const double *values, guint channels, gsize samples,
                            gsize frames);

/* Compares `frames` output frames (got, in the element's layout for fft->representation) with
 * reference spectra ref. Returns TRUE when they agree; else FALSE with the reason in why. *error
 * (may be NULL) receives the relative L2 error (complex, magnitude, power) or the worst dB
 * difference (db). */
gboolean eu_compare_frames(const EuFft *fft, guint channels, const float *got, const double *ref,
                           gsize frames, double *error, GString *why);

/* One run of the element: the samples it read (values of a signal) and where it began. drained:
 * whether the run ended (EOS, a discontinuity, a settings change), so that all its frames and the
 * clipping end are expected; otherwise only its complete frames. */
typedef struct {
  const double *values;
  gsize samples;
  GstClockTime start;
  gboolean drained;
} EuRun;

/* Checks that bufs[*index...] are exactly the output of these runs, in order, and advances
 * *index past them: values, frame count, whole frames per buffer, OFFSET/OFFSET_END, PTS,
 * duration, DISCONT on (only) the first buffer of each run, clipping meta start = lead on the
 * first and end = eu_tail_zeros() on the last buffer of a drained run. */
gboolean eu_check_fft_runs(GPtrArray *bufs, guint *index, const EuFft *fft, guint channels,
                           guint rate, const EuRun *runs, guint n_runs, GString *why);

/* Round trips: the F32 samples of raw output buffers, checked against the input: all of them, in
 * order, within EU_ROUNDTRIP_TOLERANCE, each buffer stamped start + s/rate. */
gboolean eu_check_roundtrip(GPtrArray *bufs, const TestSignal *input, GstClockTime start,
                            double *error, GString *why);
/* The same where the input was cut into runs: run r starts at input sample first[r] (first[0] is
 * 0), at time start[r], and its samples are stamped from there (start[r] + (s - first[r])/rate).
 * No output buffer may straddle two runs. */
gboolean eu_check_roundtrip_runs(GPtrArray *bufs, const TestSignal *input, const gsize *first,
                                 const GstClockTime *start, guint n_runs, double *error,
                                 GString *why);

/* The cudamelspectrogram contract ------------------------------------------------------------- */

/* The features engine (cudafft/features.h) run directly over `frames` samples per channel of raw
 * (interleaved, c->format) on the backend under test: one push, then finish. Returns its outputs
 * one after another (g_free), *outputs their number, *bytes each one's size; NULL, with the
 * library's message in why, where the engine fails. */
guint8 *eu_features_run(const CudafftFeaturesConfig *c, const void *raw, gsize frames,
                        gsize *outputs, gsize *bytes, GString *why);

/* Checks that bufs[*index...] are that run's outputs, in order, and advances *index: one tensor
 * per buffer, byte for byte; PTS start + k step / rate and the duration to the next one's (step:
 * hop, window-stride x hop or chunk-samples); OFFSET k, OFFSET_END k + 1; DISCONT on the first
 * only. */
gboolean eu_check_features(GPtrArray *bufs, guint *index, const CudafftFeaturesConfig *c,
                           const guint8 *want, gsize outputs, gsize bytes, GstClockTime start,
                           GString *why);

/* gst-inspect's view of an element: non-empty long name, klass, description and author; every
 * property with a non-empty blurb; an ALWAYS "sink" pad template whose caps include sink_media and
 * an ALWAYS "src" one with src_media. */
void eu_check_element_metadata(const char *factory_name, const char *sink_media,
                               const char *src_media);

#endif
