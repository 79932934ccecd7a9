/* element_util.h: what the element tests share: the backend argument and its skip rule, a main()
 * around gst-check's suite runner, a seeded random source, test signals in every input format,
 * GstHarness helpers, and the FFTW (double) reference for the cudafft frames with the checker that
 * holds a stream of output buffers to the element contract (values, framing, timestamps, offsets,
 * flags, clipping meta). */
#ifndef CUDAFFT_ELEMENT_UTIL_H
#define CUDAFFT_ELEMENT_UTIL_H

#include <cudafft/stft.h>

#include <gst/audio/audio.h>
#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>
#include <gst/gst.h>
#include <stdint.h>

#define EU_EXIT_SKIP 77

/* Tolerances (see element_util.c for why). */
#define EU_FRAME_TOLERANCE 3e-6 /* relative L2 over one buffer's complex values */
#define EU_DB_TOLERANCE 1e-2    /* absolute, dB, where power > EU_DB_FLOOR x max power */
#define EU_DB_FLOOR 1e-8
#define EU_ROUNDTRIP_TOLERANCE 1e-5 /* relative L2 over all samples of a round trip */

/* "cpu" or "cuda": the element property backend= of every element under test. */
extern const char *eu_backend;

/* Reads argv[1] (cpu|cuda; exits 2 on anything else, 77 with the reason for cuda without a
 * device), runs gst_check_init, seeds the random source (printing the seed) and prints the line
 * that says what runs. */
void eu_init(int *argc, char ***argv);
/* Runs the suite (gst-check's runner: CK_FORK, GST_CHECKS, ... apply) and returns the exit
 * status: 0 when every test passed, 1 otherwise. */
int eu_run(Suite *suite, const char *name);

/* Random numbers: each test (or table row) derives its own stream from the run's seed and a label,
 * so that a row replays alone and does not depend on which tests ran before it. */
typedef struct {
  uint64_t state;
} EuRng;
uint64_t eu_seed(void);
void eu_rng_init(EuRng *rng, const char *label_format, ...) G_GNUC_PRINTF(2, 3);
uint64_t eu_rng_u64(EuRng *rng);
double eu_rng_uniform(EuRng *rng); /* [-1, 1), 24 bits */
guint eu_rng_range(EuRng *rng, guint lo, guint hi);

/* Input signals ------------------------------------------------------------------------------ */

typedef enum { EU_S16 = 0, EU_S32, EU_F32, EU_F64, EU_FORMAT_COUNT } EuFormat;
const char *eu_format_name(EuFormat format); /* "S16LE", ... */
gsize eu_format_bytes(EuFormat format);

typedef struct {
  EuFormat format;
  guint channels;
  guint rate;
  gsize samples;  /* per channel */
  guint8 *raw;    /* interleaved, in format */
  double *values; /* interleaved: the value the element must read for each raw sample */
} EuSignal;

/* Random full-scale samples. */
void eu_signal_random(EuSignal *signal, EuRng *rng, EuFormat format, guint channels, guint rate,
                      gsize samples);
/* The samples [first, first + count) as its own signal (a copy). */
void eu_signal_slice(EuSignal *slice, const EuSignal *signal, gsize first, gsize count);
void eu_signal_clear(EuSignal *signal);
/* audio/x-raw caps; more than two channels get GStreamer's fallback channel-mask (up to 8) or
 * none (0: unpositioned), as audio caps must carry one beyond stereo. */
GstCaps *eu_raw_caps(EuFormat format, guint rate, guint channels);

/* Harness helpers ---------------------------------------------------------------------------- */

/* gst_harness_new_parse() of the printf-formatted launch line; fails the test if it cannot be
 * made (element missing: is GST_PLUGIN_PATH the build's plugin folder?). */
GstHarness *eu_harness_new(const char *format, ...) G_GNUC_PRINTF(1, 2);
/* The element named `name` inside the harness (a new reference). */
GstElement *eu_harness_element(GstHarness *h, const char *name);
/* A bus on the harnessed element, so that its messages (errors) can be read. */
GstBus *eu_harness_bus(GstHarness *h);
/* The first ERROR message on the bus (NULL if none); *text receives "message | debug". */
gboolean eu_bus_pop_error(GstBus *bus, GError **error, gchar **text);

/* The timestamp of sample s of a run that started at start: start + s/rate, rounded. */
GstClockTime eu_sample_time(GstClockTime start, guint64 s, guint rate);

/* One buffer of samples [first, first + count) of signal, with PTS start + first/rate and the
 * matching duration (no timestamps when start is GST_CLOCK_TIME_NONE). */
GstBuffer *eu_signal_buffer(const EuSignal *signal, gsize first, gsize count, GstClockTime start);

/* Moves every buffer waiting on the harness sink into out. */
void eu_pull_all(GstHarness *h, GPtrArray *out);

/* Pushes samples [first, first + count) in buffers of `chunk` samples, stamped from start, pulling
 * the output after each push into out (may be NULL: output left queued). Fails the test on a flow
 * other than OK. */
void eu_push_signal(GstHarness *h, const EuSignal *signal, gsize first, gsize count, gsize chunk,
                    GstClockTime start, GPtrArray *out);
/* Pushes EOS (must be accepted) and pulls the rest. */
void eu_push_eos(GstHarness *h, GPtrArray *out);

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
 * in double precision: frames x channels x bins x (re, im). NaN/Inf samples are read as they are.
 */
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
gboolean eu_check_roundtrip(GPtrArray *bufs, const EuSignal *input, GstClockTime start,
                            double *error, GString *why);
/* The same where the input was cut into runs: run r starts at input sample first[r] (first[0] is
 * 0), at time start[r], and its samples are stamped from there (start[r] + (s - first[r])/rate).
 * No output buffer may straddle two runs. */
gboolean eu_check_roundtrip_runs(GPtrArray *bufs, const EuSignal *input, const gsize *first,
                                 const GstClockTime *start, guint n_runs, double *error,
                                 GString *why);

/* gst-inspect's view of an element: non-empty long name, klass, description and author; every
 * property with a non-empty blurb; an ALWAYS "sink" pad template whose caps include sink_media and
 * an ALWAYS "src" one with src_media. */
void eu_check_element_metadata(const char *factory_name, const char *sink_media,
                               const char *src_media);

#endif
