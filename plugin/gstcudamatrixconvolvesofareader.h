/* gstcudamatrixconvolvesofareader.h: how cudamatrixconvolve reads a SOFA file (sofa-location): in
 * a process of its own, the SOFA reader (gst-cudafft-sofa-reader, built and installed with the
 * plugin), started for each file with a time limit and killed where it runs over; the set comes
 * back over a pipe (gstcudamatrixconvolvesofawire.h).
 *
 * Why a process: libmysofa's parser can loop for minutes on a damaged file (Debian 12's 1.3.1
 * does on about 1 in 400 fuzzed ones) and could crash on one; in the element's process either
 * would hold the streaming thread, and a core, for good, or end the application. A thread cannot
 * be stopped from outside, and fork() without exec in a multi-threaded process (a GStreamer
 * application always is one) leaves the child only async-signal-safe calls: libmysofa allocates,
 * and a malloc lock another thread held at the fork would never be released in the child. So the
 * reader is a program of its own, started with g_spawn (fork and exec, or posix_spawn), that loads
 * the set with libmysofa and writes it to its standard output. A reader that runs past the time
 * limit is killed (SIGKILL) and reaped; one that the element's process leaves behind (killed
 * itself) dies with it (PR_SET_PDEATHSIG on Linux) or at its CPU limit (RLIMIT_CPU).
 *
 * The reader is found beside the plugin's own file (a build tree: the plugin and the reader in
 * build/plugin), else where the install puts it relative to the plugin's file (libexecdir/
 * gst-cudafft from libdir/gstreamer-1.0, so that any prefix or a staging folder works), else in
 * the configured libexecdir. Built without libmysofa, there is no reader: loading fails, saying
 * so (gstcudamatrixconvolvesofareaderstub.c). */
#ifndef GST_CUDA_MATRIX_CONVOLVE_SOFA_READER_H
#define GST_CUDA_MATRIX_CONVOLVE_SOFA_READER_H

#include "gstcudafftresponsefile.h"
#include "gstcudamatrixconvolvesofafile.h"

#include <gst/gst.h>

G_BEGIN_DECLS

/* The time a read may take: READ_LIMIT, and READ_LIMIT_PER_MIB more for each MiB of the file up
 * to 1 GiB (parsing and resampling grow with it; a legitimate set takes a small part of this). */
#define GST_CUDA_MATRIX_CONVOLVE_SOFA_READ_LIMIT (10 * GST_SECOND)
#define GST_CUDA_MATRIX_CONVOLVE_SOFA_READ_LIMIT_PER_MIB GST_SECOND

/* The reads of one element: one at a time (its streaming thread's), stoppable from another. */
typedef struct _GstCudaMatrixConvolveSofaReader GstCudaMatrixConvolveSofaReader;

GstCudaMatrixConvolveSofaReader *gst_cuda_matrix_convolve_sofa_reader_new(void);
void gst_cuda_matrix_convolve_sofa_reader_free(GstCudaMatrixConvolveSofaReader *reader);

/* With TRUE (from any thread), ends the read in progress (its reader killed) and refuses those that
 * come until it is called with FALSE. */
void gst_cuda_matrix_convolve_sofa_reader_set_stopped(GstCudaMatrixConvolveSofaReader *reader,
                                                      gboolean stopped);

/* Reads `location` for a stream of `rate` Hz in the SOFA reader, within the time limit: the set;
 * or NULL with *problem filled (its text naming the file: what is wrong with it, or that reading
 * it ran over the time limit, crashed or could not start); or NULL with problem->text NULL where
 * the reads were stopped. The caller has checked that the file is a regular file. */
GstCudaMatrixConvolveSofaSet *
gst_cuda_matrix_convolve_sofa_reader_load(GstCudaMatrixConvolveSofaReader *reader,
                                          const gchar *location, gint rate,
                                          GstCudafftResponseFileProblem *problem);

/* The same with the reader's command (its program and leading arguments, NULL-terminated; the
 * location, the rate and the limit in whole seconds are appended) and the time limit given: the
 * tests' way to run stand-ins that hang, crash or answer wrongly. */
GstCudaMatrixConvolveSofaSet *gst_cuda_matrix_convolve_sofa_reader_run(
    GstCudaMatrixConvolveSofaReader *reader, const gchar *const *command, const gchar *location,
    gint rate, GstClockTime limit, GstCudafftResponseFileProblem *problem);

G_END_DECLS

#endif /* GST_CUDA_MATRIX_CONVOLVE_SOFA_READER_H */
