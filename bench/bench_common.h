/* bench_common.h: what every benchmark shares, GStreamer or not: sorting doubles, the median, and
 * the machine line at the top of each table. Plain C on the library's public headers, so that
 * latency-bench, which needs no GStreamer, builds wherever the library does; bench_util.h adds
 * what the GStreamer benches share. */
#ifndef CUDAFFT_BENCH_COMMON_H
#define CUDAFFT_BENCH_COMMON_H

#include <stddef.h>

/* qsort's comparison for doubles, ascending. */
int bench_compare_doubles(const void *a, const void *b);

/* The median of n values (n > 0); sorts them in place. */
double bench_median(double *values, int n);

/* The CPU threads this process may run on (its affinity; what nproc prints). */
int bench_host_threads(void);

/* Prints the GPU (named through the CUDA runtime where the CUDA backend is built) and the host:
 * its CPU model, its threads and `software` (NULL: nothing); `cuda_part` is what the tables leave
 * out where there is no CUDA device. */
void bench_print_host(const char *cuda_part, const char *software);

/* Each CUDA device's load now, into text: "0: 32 objects, 1.20 GB; 1: ..."
 * (cudafft_cuda_device_load: its objects and their state); "" without a device. */
void bench_format_device_load(char *text, size_t size);

#endif
