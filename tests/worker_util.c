/* worker_util.c: see worker_util.h. */
#define _POSIX_C_SOURCE 200809L

#include "worker_util.h"

#include "test_util.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>

uint64_t
rng_next(Rng *r)
{
  uint64_t z = (r->state += 0x9e3779b97f4a7c15u);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
  return z ^ (z >> 31);
}

size_t
rng_range(Rng *r, size_t lo, size_t hi)
{
  return lo + (size_t)(rng_next(r) % (hi - lo + 1));
}

static atomic_long failures;
static pthread_mutex_t failure_lock = PTHREAD_MUTEX_INITIALIZER;
static char first_failure[512];

void
worker_fail(const char *format, ...)
{
  if (atomic_fetch_add(&failures, 1) != 0)
    return;
  va_list args;
  va_start(args, format);
  pthread_mutex_lock(&failure_lock);
  vsnprintf(first_failure, sizeof first_failure, format, args);
  pthread_mutex_unlock(&failure_lock);
  va_end(args);
}

int
report_worker_failures(const char *what)
{
  const long count = atomic_exchange(&failures, 0);
  pthread_mutex_lock(&failure_lock);
  const int ok = test_check(count == 0, "%s: %ld failures%s%s", what, count,
                            count ? "; first: " : "", count ? first_failure : "");
  first_failure[0] = '\0';
  pthread_mutex_unlock(&failure_lock);
  return ok;
}

void
sleep_ms(unsigned ms)
{
  struct timespec t = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000};
  nanosleep(&t, NULL);
}
