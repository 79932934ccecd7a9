/* worker_util.h: what the multi-threaded tests share: a random source per thread (test_util's is
 * one global state) and failures noted on worker threads, reported by the main thread as checks
 * (test_check counts without a lock). */
#ifndef CUDAFFT_WORKER_UTIL_H
#define CUDAFFT_WORKER_UTIL_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
  uint64_t state;
} Rng;

uint64_t rng_next(Rng *r);
/* Uniform in [lo, hi]. */
size_t rng_range(Rng *r, size_t lo, size_t hi);

/* Notes a failure on any thread; the first one's text is kept. */
void worker_fail(const char *format, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 1, 2)))
#endif
    ;

/* On the main thread: one check, "<what>: N failures; first: ...", and the count starts again.
 * Returns whether there were none. */
int report_worker_failures(const char *what);

/* Sleeps (tests may poll; the library may not). */
void sleep_ms(unsigned ms);

#endif
