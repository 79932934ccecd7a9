/* test_sofa_reader.c: how cudamatrixconvolve runs its SOFA reader process
 * (plugin/gstcudamatrixconvolvesofareader.h), with stand-ins for the reader that answer, hang,
 * crash or answer wrongly: this program itself, started as `test_sofa_reader --stand-in MODE` (the
 * reader's arguments follow). Checked: a set comes back value for value (all at once, and in small
 * pieces with pauses between them); the reader's own problem comes back as it gave it; a reader
 * that hangs (before its answer, or after it without exiting) is killed at the time limit with a
 * problem naming the file; one that crashes, fails, exits without an answer, or answers with
 * garbage, a truncated answer, an answer of impossible sizes or more than one answer gives a
 * problem naming the file and what went wrong; a program that cannot start likewise; a stop from
 * another thread ends a read at once without a problem, and refuses the reads that follow until
 * it is lifted. After every case no child process is left (each reader reaped). No backend: the
 * program takes no argument. */
#include "test_harness.h"

#include "gstcudamatrixconvolvesofareader.h"
#include "gstcudamatrixconvolvesofawire.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define LOCATION "/nonexistent/stand-in.sofa"
#define RATE 48000

/* The set a stand-in answers with for a seed: both sides make it from the seed alone. */
static GstCudaMatrixConvolveSofaSet *
seeded_set(guint64 seed)
{
  GstCudaMatrixConvolveSofaSet *set = g_new0(GstCudaMatrixConvolveSofaSet, 1);
  set->measurements = 3 + (guint)(seed % 5);
  set->receivers = 2;
  set->taps = 100 + (gsize)(seed % 300);
  set->rate = RATE;
  set->file_rate = 44100;
  const gsize m = set->measurements, n = m * set->receivers * set->taps;
  set->directions = g_new(gdouble, m * 3);
  set->responses = g_new(gdouble, n);
  guint64 x = seed;
  for (gsize k = 0; k < m * 3 + n; k++) {
    x += 0x9E3779B97F4A7C15ull; /* splitmix64 */
    guint64 z = x;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    const gdouble v = (gdouble)(z >> 11) / 9007199254740992.0 * 2.0 - 1.0;
    if (k < m * 3)
      set->directions[k] = v;
    else
      set->responses[k - m * 3] = v;
  }
  set->directions[0] = NAN; /* a measurement without a direction crosses too */
  return set;
}

/* The stand-in ------------------------------------------------------------------------------- */

static gboolean
write_bytes(const void *data, gsize size)
{
  const guint8 *at = data;
  while (size > 0) {
    const ssize_t n = write(STDOUT_FILENO, at, size);
    if (n <= 0)
      return FALSE;
    at += n;
    size -= (gsize)n;
  }
  return TRUE;
}

/* The answer for `set` as the reader writes it (through a temporary file). */
static GByteArray *
answer_bytes(const GstCudaMatrixConvolveSofaSet *set)
{
  FILE *file = tmpfile();
  if (!file || !gst_cuda_matrix_convolve_sofa_wire_write_set(fileno(file), set))
    exit(4);
  GByteArray *bytes = g_byte_array_new();
  rewind(file);
  guint8 buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof buffer, file)) > 0)
    g_byte_array_append(bytes, buffer, (guint)n);
  fclose(file);
  return bytes;
}

static int
stand_in(int argc, char **argv)
{
  /* argv: self --stand-in MODE[:SEED] LOCATION RATE SECONDS */
  if (argc != 6)
    return 2;
  gchar **mode = g_strsplit(argv[2], ":", 2);
  const guint64 seed = mode[1] ? g_ascii_strtoull(mode[1], NULL, 10) : 0;
  const char *what = mode[0];
  int status = 0;
  if (strcmp(what, "set") == 0 || strcmp(what, "answer-then-fail") == 0 ||
      strcmp(what, "hang-after-answer") == 0 || strcmp(what, "extra") == 0) {
    GstCudaMatrixConvolveSofaSet *set = seeded_set(seed);
    if (!gst_cuda_matrix_convolve_sofa_wire_write_set(STDOUT_FILENO, set))
      status = 1;
    gst_cuda_matrix_convolve_sofa_set_free(set);
    if (strcmp(what, "answer-then-fail") == 0)
      status = 1;
    if (strcmp(what, "extra") == 0)
      write_bytes("x", 1);
    if (strcmp(what, "hang-after-answer") == 0)
      for (;;)
        pause();
  } else if (strcmp(what, "slowly") == 0 || strcmp(what, "truncated") == 0 ||
             strcmp(what, "crash") == 0) {
    GstCudaMatrixConvolveSofaSet *set = seeded_set(seed);
    GByteArray *bytes = answer_bytes(set);
    gst_cuda_matrix_convolve_sofa_set_free(set);
    if (strcmp(what, "slowly") == 0) {
      for (guint at = 0; at < bytes->len; at += 777) {
        write_bytes(bytes->data + at, MIN(777u, bytes->len - at));
        g_usleep(2000);
      }
    } else {
      write_bytes(bytes->data, bytes->len / 2);
      if (strcmp(what, "crash") == 0) {
        signal(SIGSEGV, SIG_DFL); /* not a sanitizer's handler: the crash itself */
        raise(SIGSEGV);
      }
    }
    g_byte_array_unref(bytes);
  } else if (strcmp(what, "problem") == 0) {
    GstCudafftResponseFileProblem problem = {
        .domain = GST_RESOURCE_ERROR,
        .code = GST_RESOURCE_ERROR_NOT_FOUND,
        .text = g_strdup_printf("The stand-in says \"%s\" at %s Hz is no set.", argv[3], argv[4]),
    };
    if (!gst_cuda_matrix_convolve_sofa_wire_write_problem(STDOUT_FILENO, &problem))
      status = 1;
    g_free(problem.text);
  } else if (strcmp(what, "hang") == 0) {
    for (;;)
      pause();
  } else if (strcmp(what, "exit3") == 0) {
    status = 3;
  } else if (strcmp(what, "garbage") == 0) {
    guint8 junk[100];
    for (guint k = 0; k < sizeof junk; k++)
      junk[k] = (guint8)(k * 37 + 11);
    write_bytes(junk, sizeof junk);
  } else if (strcmp(what, "huge") == 0) {
    /* a set's header announcing 2^31 taps a response: refused before any allocation (the
     * header's last field, gstcudamatrixconvolvesofawire.c's layout) */
    GstCudaMatrixConvolveSofaSet *set = seeded_set(seed);
    GByteArray *bytes = answer_bytes(set);
    gst_cuda_matrix_convolve_sofa_set_free(set);
    guint64 taps = (guint64)1 << 31;
    memcpy(bytes->data + 40, &taps, sizeof taps);
    write_bytes(bytes->data, bytes->len);
    g_byte_array_unref(bytes);
  } else {
    status = 2;
  }
  g_strfreev(mode);
  return status;
}

/* The checks --------------------------------------------------------------------------------- */

static gchar *self_path;

/* No child of this process is left: every reader reaped. */
static gboolean
no_children(void)
{
  return waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD;
}

static GstCudaMatrixConvolveSofaSet *
run_mode(GstCudaMatrixConvolveSofaReader *reader, const char *mode, GstClockTime limit,
         GstCudafftResponseFileProblem *problem, double *seconds)
{
  const gchar *const command[] = {self_path, "--stand-in", mode, NULL};
  const double start = test_seconds();
  GstCudaMatrixConvolveSofaSet *set =
      gst_cuda_matrix_convolve_sofa_reader_run(reader, command, LOCATION, RATE, limit, problem);
  *seconds = test_seconds() - start;
  return set;
}

static gboolean
same_set(const GstCudaMatrixConvolveSofaSet *a, const GstCudaMatrixConvolveSofaSet *b)
{
  if (a->measurements != b->measurements || a->receivers != b->receivers || a->taps != b->taps ||
      a->rate != b->rate || a->file_rate != b->file_rate)
    return FALSE;
  const gsize m = a->measurements;
  return memcmp(a->directions, b->directions, m * 3 * sizeof(gdouble)) == 0 &&
         memcmp(a->responses, b->responses, m * a->receivers * a->taps * sizeof(gdouble)) == 0;
}

static void
test_answers(GstCudaMatrixConvolveSofaReader *reader)
{
  TestRng rng = test_rng("sofa reader answers");
  for (guint k = 0; k < 2; k++) {
    const guint64 seed = test_rng_u64(&rng) % 1000000;
    gchar *mode = g_strdup_printf("%s:%" G_GUINT64_FORMAT, k ? "slowly" : "set", seed);
    GstCudafftResponseFileProblem problem = {0};
    double seconds;
    GstCudaMatrixConvolveSofaSet *got = run_mode(reader, mode, 10 * GST_SECOND, &problem, &seconds);
    GstCudaMatrixConvolveSofaSet *want = seeded_set(seed);
    test_check(got && !problem.text && same_set(got, want),
               "%s: the set comes back value for value (%u measurements of %zu taps)%s%s", mode,
               want->measurements, want->taps, problem.text ? ": " : "",
               problem.text ? problem.text : "");
    gst_cuda_matrix_convolve_sofa_set_free(got);
    gst_cuda_matrix_convolve_sofa_set_free(want);
    g_free(problem.text);
    g_free(mode);
  }
  GstCudafftResponseFileProblem problem = {0};
  double seconds;
  GstCudaMatrixConvolveSofaSet *got =
      run_mode(reader, "problem", 10 * GST_SECOND, &problem, &seconds);
  test_check(
      !got && problem.domain == GST_RESOURCE_ERROR &&
          problem.code == GST_RESOURCE_ERROR_NOT_FOUND && problem.text &&
          strcmp(problem.text, "The stand-in says \"" LOCATION "\" at 48000 Hz is no set.") == 0,
      "the reader's own problem comes back as it gave it: %s",
      problem.text ? problem.text : "(none)");
  g_free(problem.text);
  test_check(no_children(), "every reader reaped");
  test_section_done("answers");
}

/* Each answer that is not one: the problem names the file and says `words`, within the time
 * limit (and a little), the reader reaped. */
static void
test_failures(GstCudaMatrixConvolveSofaReader *reader)
{
  const GstClockTime limit = GST_SECOND;
  static const struct {
    const char *mode, *words;
    double at_least; /* seconds the read must have taken: the limit, where it ran over */
  } rows[] = {
      {"hang", "took more than 1 s and was stopped", 1.0},
      {"hang-after-answer:7", "took more than 1 s and was stopped", 1.0},
      {"crash:7", "ended on signal 11", 0.0},
      {"answer-then-fail:7", "exit status 1", 0.0},
      {"exit3", "exit status 3", 0.0},
      {"garbage", "does not begin as the reader's answer does", 0.0},
      {"truncated:7", "it ends early", 0.0},
      {"huge:7", "2147483648 taps", 0.0},
      {"extra:7", "more follows its end", 0.0},
  };
  for (guint r = 0; r < G_N_ELEMENTS(rows); r++) {
    GstCudafftResponseFileProblem problem = {0};
    double seconds;
    GstCudaMatrixConvolveSofaSet *got = run_mode(reader, rows[r].mode, limit, &problem, &seconds);
    const gboolean ok = !got && problem.text && strstr(problem.text, "\"" LOCATION "\"") &&
                        strstr(problem.text, rows[r].words) && seconds >= rows[r].at_least &&
                        seconds < 5.0;
    test_check(ok && no_children(), "%s: %s (in %.2f s)", rows[r].mode,
               problem.text ? problem.text : "no problem", seconds);
    gst_cuda_matrix_convolve_sofa_set_free(got);
    g_free(problem.text);
  }
  const gchar *const missing[] = {"/nonexistent/gst-cudafft-sofa-reader", NULL};
  GstCudafftResponseFileProblem problem = {0};
  GstCudaMatrixConvolveSofaSet *got =
      gst_cuda_matrix_convolve_sofa_reader_run(reader, missing, LOCATION, RATE, limit, &problem);
  test_check(!got && problem.text && strstr(problem.text, "\"" LOCATION "\"") &&
                 strstr(problem.text, "cannot start"),
             "a reader that cannot start: %s", problem.text ? problem.text : "no problem");
  g_free(problem.text);
  test_section_done("failures");
}

typedef struct {
  GstCudaMatrixConvolveSofaReader *reader;
  gulong delay_us;
} Stopper;

static gpointer
stop_later(gpointer data)
{
  Stopper *stopper = data;
  g_usleep(stopper->delay_us);
  gst_cuda_matrix_convolve_sofa_reader_set_stopped(stopper->reader, TRUE);
  return NULL;
}

/* A stop ends the read in progress at once, with no problem; reads are refused until it is lifted;
 * then they work again. */
static void
test_stop(GstCudaMatrixConvolveSofaReader *reader)
{
  Stopper stopper = {reader, 200 * 1000};
  GThread *thread = g_thread_new("stopper", stop_later, &stopper);
  GstCudafftResponseFileProblem problem = {0};
  double seconds;
  GstCudaMatrixConvolveSofaSet *got = run_mode(reader, "hang", 60 * GST_SECOND, &problem, &seconds);
  g_thread_join(thread);
  test_check(!got && !problem.text && seconds < 5.0 && no_children(),
             "a stop ends a hanging read at once without a problem (%.2f s of a 60 s limit)%s%s",
             seconds, problem.text ? ": " : "", problem.text ? problem.text : "");
  g_free(problem.text);
  memset(&problem, 0, sizeof problem);
  got = run_mode(reader, "set:5", 10 * GST_SECOND, &problem, &seconds);
  test_check(!got && !problem.text && seconds < 1.0,
             "while stopped, a read is refused at once without a problem");
  g_free(problem.text);
  gst_cuda_matrix_convolve_sofa_reader_set_stopped(reader, FALSE);
  memset(&problem, 0, sizeof problem);
  got = run_mode(reader, "set:5", 10 * GST_SECOND, &problem, &seconds);
  test_check(got && !problem.text, "once the stop is lifted, reads work again");
  gst_cuda_matrix_convolve_sofa_set_free(got);
  g_free(problem.text);
  test_section_done("stop");
}

int
main(int argc, char **argv)
{
  if (argc > 1 && strcmp(argv[1], "--stand-in") == 0)
    return stand_in(argc, argv);
  test_begin_every_backend(argc, argv);
  self_path = g_file_read_link("/proc/self/exe", NULL);
  if (!self_path)
    self_path = g_canonicalize_filename(argv[0], NULL);
  GstCudaMatrixConvolveSofaReader *reader = gst_cuda_matrix_convolve_sofa_reader_new();
  test_answers(reader);
  test_failures(reader);
  test_stop(reader);
  gst_cuda_matrix_convolve_sofa_reader_free(reader);
  g_free(self_path);
  return test_finish();
}
