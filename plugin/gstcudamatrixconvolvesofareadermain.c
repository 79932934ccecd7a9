/* gstcudamatrixconvolvesofareadermain.c: gst-cudafft-sofa-reader, the program in which
 * cudamatrixconvolve reads a SOFA file (gstcudamatrixconvolvesofareader.h says why a process of
 * its own, and how the element starts it and bounds it).
 *
 *   gst-cudafft-sofa-reader LOCATION RATE SECONDS
 *
 * reads LOCATION with libmysofa for a stream of RATE Hz (gstcudamatrixconvolvesofafile.c) and
 * writes the set, or what is wrong with the file, to its standard output
 * (gstcudamatrixconvolvesofawire.h); exit status 0 where that answer was written, 1 where it could
 * not be, 2 for arguments it does not take. SECONDS is the element's time limit: the reader's CPU
 * time is limited to a little more, and on Linux it is killed when the thread that started it
 * ends, so that a reader left behind by an element's process that died cannot spin on. */
#include "gstcudamatrixconvolvesofafile.h"
#include "gstcudamatrixconvolvesofawire.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

static gboolean
parse_positive(const char *text, gint64 most, gint64 *value)
{
  gchar *end = NULL;
  errno = 0;
  *value = g_ascii_strtoll(text, &end, 10);
  return errno == 0 && end != text && *end == '\0' && *value >= 1 && *value <= most;
}

/* Bounds this process where the element can no longer do it. The terminal's signals (Ctrl+C)
 * reach every process of the application's group, this one too: they are the application's to
 * act on, which stops its element and so this reader. */
static void
limit_self(gint64 seconds)
{
  signal(SIGINT, SIG_IGN);
  signal(SIGQUIT, SIG_IGN);
  signal(SIGHUP, SIG_IGN);
#ifdef __linux__
  prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
  /* SIGXCPU (which ends it) a second past the element's limit, SIGKILL a second later */
  struct rlimit cpu = {.rlim_cur = (rlim_t)seconds + 1, .rlim_max = (rlim_t)seconds + 2};
  setrlimit(RLIMIT_CPU, &cpu);
}

int
main(int argc, char **argv)
{
  gint64 rate = 0, seconds = 0;
  if (argc != 4 || !parse_positive(argv[2], G_MAXINT, &rate) ||
      !parse_positive(argv[3], 24 * 3600, &seconds)) {
    fprintf(stderr,
            "usage: %s LOCATION RATE SECONDS\n"
            "(cudamatrixconvolve's SOFA reader: the plugin starts it, a user need not)\n",
            argv[0]);
    return 2;
  }
  limit_self(seconds);
  GstCudafftResponseFileProblem problem = {0};
  GstCudaMatrixConvolveSofaSet *set =
      gst_cuda_matrix_convolve_sofa_file_read(argv[1], (gint)rate, &problem);
  const gboolean written =
      set ? gst_cuda_matrix_convolve_sofa_wire_write_set(STDOUT_FILENO, set)
          : gst_cuda_matrix_convolve_sofa_wire_write_problem(STDOUT_FILENO, &problem);
  gst_cuda_matrix_convolve_sofa_set_free(set);
  g_free(problem.text);
  g_free(problem.debug);
  return written ? 0 : 1;
}
