/* bench_util.h: what the GStreamer benches (convolve-bench, spectrum-bench, element-bench...)
 * share on top of bench_common.h: the runs' lengths capped by a calibration run, the comma lists
 * of the command line, input buffers, waiting on the bus and the machine line with GStreamer's
 * version. */
#ifndef CUDAFFT_BENCH_UTIL_H
#define CUDAFFT_BENCH_UTIL_H

#include "bench_common.h"

#include <gst/app/gstappsrc.h>
#include <gst/gst.h>

/* How many buffers of `frames` frames at `rate` hold `seconds` of audio (at least one). */
guint64 bench_buffers_for(double seconds, gint rate, guint frames);

/* The buffers to time for `seconds` of audio when a run may take about max_wall seconds, at the
 * speed a calibration run of `calibration` buffers in `calibration_wall` seconds showed: all of
 * bench_buffers_for(seconds) where they fit, else fewer, but at least least_s seconds of audio. */
guint64 bench_capped_buffers(double seconds, double max_wall, guint64 calibration,
                             double calibration_wall, double least_s, gint rate, guint frames);

/* Parses a comma list of numbers into values (at most max); the count, 0 on a bad list. */
int bench_parse_list(const char *text, double *values, int max);

/* Parses --elements: a comma list of the keys of n elements, each a struct whose `const char *`
 * key stands `stride` bytes after the previous one's (first: the first element's). Sets wanted[e]
 * for each element named; FALSE where the list names an unknown one. */
gboolean bench_parse_elements(const char *value, const char *const *first, size_t stride, int n,
                              gboolean *wanted);

/* `count` random samples in [-1, 1): in page-locked memory where `pinned` asks for it and a CUDA
 * device can give it (as an upstream element gets them from what our elements propose in the
 * allocation query), in plain memory otherwise. */
GstBuffer *bench_random_input(gsize count, gboolean pinned);

/* Pushes `data` again as the `frames` frames from first_frame on, timestamped at `rate`; the memory
 * is shared, only the metadata is new. */
GstFlowReturn bench_push(GstAppSrc *src, GstBuffer *data, guint64 first_frame, guint frames,
                         gint rate);

/* Pops the next message of `type` or an error; prints the error. */
gboolean bench_wait_for(GstBus *bus, GstMessageType type, GstClockTime timeout, const char *what);

/* Prints the GPU (named through the CUDA runtime where the CUDA backend is built) and the host;
 * `cuda_element` is what the table leaves out where there is no CUDA device. */
void bench_print_machine(const char *cuda_element);

#endif
