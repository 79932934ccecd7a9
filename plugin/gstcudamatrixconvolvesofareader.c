/* gstcudamatrixconvolvesofareader.c: see the header. */
#define _GNU_SOURCE /* dladdr */
#include "gstcudamatrixconvolvesofareader.h"

#include "gstcudamatrixconvolvesofawire.h"

#include <glib-unix.h>
#include <glib/gstdio.h>

#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

GST_DEBUG_CATEGORY_STATIC(gst_cuda_matrix_convolve_sofa_reader_debug);
#define GST_CAT_DEFAULT gst_cuda_matrix_convolve_sofa_reader_debug

struct _GstCudaMatrixConvolveSofaReader {
  GMutex lock;
  /* under lock */
  gboolean stopped;
  GPid running;    /* the reader process of the read in progress; 0: none */
  gboolean killed; /* it was killed by a stop */
};

/* Finding the reader ------------------------------------------------------------------------- */

typedef struct {
  gchar *program; /* NULL: not found */
  gchar *places;  /* where it was looked for */
} Found;

static gpointer
find_program(gpointer unused)
{
  (void)unused;
  GPtrArray *places = g_ptr_array_new_with_free_func(g_free);
  Dl_info info;
  if (dladdr((const void *)gst_cuda_matrix_convolve_sofa_reader_new, &info) && info.dli_fname &&
      strchr(info.dli_fname, '/')) {
    gchar *dir = g_path_get_dirname(info.dli_fname);
    g_ptr_array_add(places, g_build_filename(dir, GST_CUDAFFT_SOFA_READER, NULL));
    if (*GST_CUDAFFT_SOFA_READER_FROM_PLUGIN)
      g_ptr_array_add(places, g_build_filename(dir, GST_CUDAFFT_SOFA_READER_FROM_PLUGIN,
                                               GST_CUDAFFT_SOFA_READER, NULL));
    g_free(dir);
  }
  g_ptr_array_add(places,
                  g_build_filename(GST_CUDAFFT_SOFA_READER_DIR, GST_CUDAFFT_SOFA_READER, NULL));
  Found *found = g_new0(Found, 1);
  for (guint k = 0; k < places->len && !found->program; k++) {
    const gchar *place = g_ptr_array_index(places, k);
    if (g_file_test(place, G_FILE_TEST_IS_REGULAR) && access(place, X_OK) == 0)
      found->program = g_canonicalize_filename(place, NULL);
  }
  g_ptr_array_add(places, NULL);
  found->places = g_strjoinv(", ", (gchar **)places->pdata);
  g_ptr_array_unref(places);
  if (found->program)
    GST_INFO("SOFA reader: %s", found->program);
  else
    GST_WARNING("no SOFA reader in %s", found->places);
  return found;
}

/* The reader program, looked for once per process. */
static const Found *
reader_program(void)
{
  static GOnce once = G_ONCE_INIT;
  return g_once(&once, find_program, NULL);
}

/* The object --------------------------------------------------------------------------------- */

GstCudaMatrixConvolveSofaReader *
gst_cuda_matrix_convolve_sofa_reader_new(void)
{
  static gsize category = 0;
  if (g_once_init_enter(&category)) {
    GST_DEBUG_CATEGORY_INIT(gst_cuda_matrix_convolve_sofa_reader_debug, "cudamatrixconvolvesofa", 0,
                            "cudamatrixconvolve's SOFA reader process");
    g_once_init_leave(&category, 1);
  }
  GstCudaMatrixConvolveSofaReader *reader = g_new0(GstCudaMatrixConvolveSofaReader, 1);
  g_mutex_init(&reader->lock);
  return reader;
}

void
gst_cuda_matrix_convolve_sofa_reader_free(GstCudaMatrixConvolveSofaReader *reader)
{
  if (!reader)
    return;
  g_mutex_clear(&reader->lock);
  g_free(reader);
}

void
gst_cuda_matrix_convolve_sofa_reader_set_stopped(GstCudaMatrixConvolveSofaReader *reader,
                                                 gboolean stopped)
{
  g_mutex_lock(&reader->lock);
  reader->stopped = stopped;
  /* not yet reaped (that clears `running` first, under the lock): the pid is still this one's */
  if (stopped && reader->running) {
    kill(reader->running, SIGKILL);
    reader->killed = TRUE;
  }
  g_mutex_unlock(&reader->lock);
}

/* Reading the answer ------------------------------------------------------------------------- */

/* The pipe from the reader: reads block (in poll) until the bytes come, the pipe ends (the
 * reader exited, or was killed) or the deadline passes. */
typedef struct {
  int fd;
  gint64 deadline; /* monotonic, microseconds */
  gboolean ended, timed_out;
  int error; /* errno of a failed read */
} Pipe;

static gboolean
pipe_read(gpointer source, void *data, gsize size)
{
  Pipe *pipe = source;
  guint8 *at = data;
  while (size > 0) {
    const ssize_t n = read(pipe->fd, at, size);
    if (n > 0) {
      at += n;
      size -= (gsize)n;
      continue;
    }
    if (n == 0) {
      pipe->ended = TRUE;
      return FALSE;
    }
    if (errno == EINTR)
      continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) {
      pipe->error = errno;
      return FALSE;
    }
    const gint64 left = pipe->deadline - g_get_monotonic_time();
    if (left <= 0) {
      pipe->timed_out = TRUE;
      return FALSE;
    }
    struct pollfd wait = {.fd = pipe->fd, .events = POLLIN};
    if (poll(&wait, 1, (int)MIN((left + 999) / 1000, G_MAXINT)) < 0 && errno != EINTR) {
      pipe->error = errno;
      return FALSE;
    }
  }
  return TRUE;
}

static void
problem_set(GstCudafftResponseFileProblem *problem, GQuark domain, gint code, const gchar *location,
            gchar *why)
{
  problem->domain = domain;
  problem->code = code;
  problem->text =
      g_strdup_printf("Cannot read the SOFA file \"%s\" (sofa-location): %s.", location, why);
  problem->debug = NULL;
  g_free(why);
}

static void
answer_clear(GstCudafftResponseFileProblem *answer)
{
  g_free(answer->text);
  g_free(answer->debug);
  memset(answer, 0, sizeof *answer);
}

/* How the reader ended, where that is not an answer: the problem (`why`, taken, says what is wrong
 * with an answer); FALSE where it is one. `status` is the reader's where it was `reaped` and not
 * killed here (where it had not ended). */
static gboolean
reader_failed(const gchar *program, const gchar *location, GstClockTime limit, const Pipe *pipe,
              gboolean answered, gchar *why, gboolean reaped, int status,
              GstCudafftResponseFileProblem *problem)
{
  reaped = reaped && pipe->ended;
  if (pipe->timed_out) {
    g_free(why);
    problem_set(problem, GST_STREAM_ERROR, GST_STREAM_ERROR_DECODE, location,
                g_strdup_printf("reading it took more than %" G_GUINT64_FORMAT " s and was "
                                "stopped (libmysofa can loop on a damaged file)",
                                (guint64)(limit / GST_SECOND)));
    return TRUE;
  }
  if (reaped && WIFSIGNALED(status)) {
    g_free(why);
    problem_set(problem, GST_STREAM_ERROR, GST_STREAM_ERROR_DECODE, location,
                g_strdup_printf("the SOFA reader (%s) ended on signal %d (%s) while reading it "
                                "(libmysofa can crash on a damaged file)",
                                program, WTERMSIG(status), g_strsignal(WTERMSIG(status))));
    return TRUE;
  }
  if (reaped && WIFEXITED(status) && WEXITSTATUS(status) != 0) {
    g_free(why);
    problem_set(problem, GST_CORE_ERROR, GST_CORE_ERROR_FAILED, location,
                g_strdup_printf("the SOFA reader (%s) failed (exit status %d; its messages, if "
                                "any, are on standard error)",
                                program, WEXITSTATUS(status)));
    return TRUE;
  }
  if (answered) {
    g_free(why);
    return FALSE;
  }
  gchar *what = why ? why
                : pipe->error
                    ? g_strdup_printf("it could not be read (%s)", g_strerror(pipe->error))
                    : g_strdup("it ends early");
  problem_set(
      problem, GST_CORE_ERROR, GST_CORE_ERROR_FAILED, location,
      g_strdup_printf("the answer of the SOFA reader (%s) is not one it gives: %s", program, what));
  g_free(what);
  return TRUE;
}

GstCudaMatrixConvolveSofaSet *
gst_cuda_matrix_convolve_sofa_reader_run(GstCudaMatrixConvolveSofaReader *reader,
                                         const gchar *const *command, const gchar *location,
                                         gint rate, GstClockTime limit,
                                         GstCudafftResponseFileProblem *problem)
{
  memset(problem, 0, sizeof *problem);
  GPtrArray *argv = g_ptr_array_new_with_free_func(g_free);
  for (const gchar *const *c = command; *c; c++)
    g_ptr_array_add(argv, g_strdup(*c));
  g_ptr_array_add(argv, g_strdup(location));
  g_ptr_array_add(argv, g_strdup_printf("%d", rate));
  g_ptr_array_add(argv, g_strdup_printf("%" G_GUINT64_FORMAT,
                                        (guint64)((limit + GST_SECOND - 1) / GST_SECOND)));
  g_ptr_array_add(argv, NULL);

  /* started under the lock, so that a stop finds it running or refuses it */
  g_mutex_lock(&reader->lock);
  if (reader->stopped) {
    g_mutex_unlock(&reader->lock);
    g_ptr_array_unref(argv);
    return NULL;
  }
  GPid pid = 0;
  gint out = -1;
  GError *error = NULL;
  /* its standard input /dev/null, its standard error the application's; no other descriptor of
   * this process goes to it, and this end of the pipe goes to no other child */
  const gboolean started = g_spawn_async_with_pipes(
      NULL, (gchar **)argv->pdata, NULL, G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_CLOEXEC_PIPES, NULL,
      NULL, &pid, NULL, &out, NULL, &error);
  reader->running = started ? pid : 0;
  reader->killed = FALSE;
  g_mutex_unlock(&reader->lock);
  if (!started) {
    problem_set(
        problem, GST_CORE_ERROR, GST_CORE_ERROR_FAILED, location,
        g_strdup_printf("the SOFA reader (%s) cannot start: %s", command[0], error->message));
    g_clear_error(&error);
    g_ptr_array_unref(argv);
    return NULL;
  }
  g_ptr_array_unref(argv);
  GST_DEBUG("reading %s at %d Hz in process %d (at most %" GST_TIME_FORMAT ")", location, rate,
            (int)pid, GST_TIME_ARGS(limit));

  Pipe pipe = {.fd = out, .deadline = g_get_monotonic_time() + (gint64)(limit / GST_USECOND)};
  g_unix_set_fd_nonblocking(out, TRUE, NULL);
  GstCudaMatrixConvolveSofaSet *set = NULL;
  GstCudafftResponseFileProblem answer = {0};
  gchar *why = NULL;
  gboolean answered =
      gst_cuda_matrix_convolve_sofa_wire_read(pipe_read, &pipe, &set, &answer, &why);
  if (answered) { /* the answer is all: the pipe ends after it */
    guint8 more;
    if (pipe_read(&pipe, &more, 1))
      why = g_strdup("more follows its end");
    answered = pipe.ended;
  }

  /* the reader ends: killed where it has not closed the pipe (it ran over, or more follows its
   * answer); `running` cleared before it is reaped, so that a stop never signals a pid used
   * again. A pipe that ended is a reader that exits (it never closes its standard output
   * itself). */
  g_mutex_lock(&reader->lock);
  const gboolean stopped = reader->killed;
  if (!pipe.ended)
    kill(pid, SIGKILL);
  reader->running = 0;
  reader->killed = FALSE;
  g_mutex_unlock(&reader->lock);
  close(out);
  int status = 0;
  pid_t waited;
  while ((waited = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
    ;
  /* not reaped where the application has children reaped for it (SIGCHLD ignored): the answer
   * stands on its own then */
  const gboolean reaped = waited == pid;
  g_spawn_close_pid(pid);

  if (stopped ||
      reader_failed(command[0], location, limit, &pipe, answered, why, reaped, status, problem)) {
    if (stopped)
      g_free(why);
    gst_cuda_matrix_convolve_sofa_set_free(set);
    answer_clear(&answer);
    GST_DEBUG("%s: %s", location, stopped ? "stopped" : problem->text);
    return NULL;
  }
  if (!set) /* the reader's own answer: what is wrong with the file */
    *problem = answer;
  return set;
}

GstCudaMatrixConvolveSofaSet *
gst_cuda_matrix_convolve_sofa_reader_load(GstCudaMatrixConvolveSofaReader *reader,
                                          const gchar *location, gint rate,
                                          GstCudafftResponseFileProblem *problem)
{
  const Found *found = reader_program();
  if (!found->program) {
    memset(problem, 0, sizeof *problem);
    problem_set(problem, GST_CORE_ERROR, GST_CORE_ERROR_MISSING_PLUGIN, location,
                g_strdup_printf("the plugin's SOFA reader (%s) is not installed (looked for %s): "
                                "reinstall the plugin",
                                GST_CUDAFFT_SOFA_READER, found->places));
    return NULL;
  }
  GStatBuf st;
  /* no set is larger than its values as doubles (1 GiB at most): a larger file earns no more */
  const guint64 mib = g_stat(location, &st) == 0 ? MIN((guint64)st.st_size >> 20, 1024) : 0;
  const GstClockTime limit = GST_CUDA_MATRIX_CONVOLVE_SOFA_READ_LIMIT +
                             mib * GST_CUDA_MATRIX_CONVOLVE_SOFA_READ_LIMIT_PER_MIB;
  const gchar *const command[] = {found->program, NULL};
  return gst_cuda_matrix_convolve_sofa_reader_run(reader, command, location, rate, limit, problem);
}
