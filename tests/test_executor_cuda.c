/* test_executor_cuda.c: the executor on its CUDA device (lib/executor/executor_cuda.cu), with the
 * affine kind's real kernels (executor_test_kind.cu: per-job descriptors, a unit -> job map, the
 * owners' counts in executor memory). What it checks:
 * - many owners (64) on many threads (8), several jobs per owner before waiting, waits in order,
 *   in random order and late, owners made and destroyed while others stream: every output value
 *   against its double-precision reference (exact: small integers), outputs NaN-poisoned with a
 *   guard after them, each owner's jobs in increasing batches;
 * - the largest job and one byte more; device memory too large for the device (naming it);
 * - a launch that fails (invalid configuration, not sticky) poisons exactly its batch while others
 *   stream, with the kind and CUDA's words in the message, and later batches run;
 * - acquire/release: shared per device, cycles from one and from several threads;
 * - the last release with jobs never waited for returns, and the device works after.
 * CUDA only: exits 77 where there is no device. Random data from CUDAFFT_TEST_SEED or
 * /dev/urandom (the seed is printed). */
#define _POSIX_C_SOURCE 200809L

#include "executor_test_kind.h"
#include "test_util.h"
#include "worker_util.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define THREADS 8
#define OWNERS_PER_THREAD 8
#define AHEAD 4               /* jobs an owner submits before it waits, at most */
#define MAX_FLOATS 65536      /* of a stress job (the largest job is tested on its own) */
#define GUARD 16              /* floats after each output that must stay poisoned */
#define MAX_BATCHES (1 << 20) /* batch serials the failure test keeps track of */

/* ---- owners and jobs on the host, with the reference ---- */

typedef struct {
  AffineJob t;
  const float *in; /* given to submit: in_buf, or NULL for zeros */
  float *in_buf;
  float *out; /* n + GUARD floats */
  size_t n;
  double count; /* the count the job must read */
  CudafftStatus status;
} Pending;

typedef struct {
  CudafftJobOwner owner;
  float *state;
  unsigned id;
  double count; /* the reference: the owner's jobs run since its reset */
  int fresh;    /* its next job resets the count */
  uint64_t last_batch;
  Pending pending[AHEAD];
} Owner;

static void
owner_init(Owner *o, unsigned id, size_t max_floats)
{
  memset(o, 0, sizeof *o);
  o->id = id;
  for (int i = 0; i < AHEAD; i++) {
    o->pending[i].in_buf = test_malloc((max_floats + 1) * sizeof(float));
    o->pending[i].out = test_malloc((max_floats + GUARD) * sizeof(float));
  }
}

static void
owner_clear(Owner *o)
{
  for (int i = 0; i < AHEAD; i++) {
    free(o->pending[i].in_buf);
    free(o->pending[i].out);
  }
}

/* A fresh engine object's state: one float of executor memory, reset by its first job. */
static CudafftStatus
owner_attach(Owner *o, CudafftExecutor *ex)
{
  memset(&o->owner, 0, sizeof o->owner);
  o->fresh = 1;
  o->last_batch = 0;
  return cudafft_executor_alloc(ex, sizeof(float), "a test owner's count", (void **)&o->state);
}

static void
owner_detach(Owner *o, CudafftExecutor *ex)
{
  cudafft_executor_free(ex, o->state);
  o->state = NULL;
}

/* Job p of o over n floats: random small integers (exact in float, and so every result), the
 * output poisoned, and the count it must read. stateless: no state, count 0. */
static void
make_job(Owner *o, Pending *p, Rng *r, const CudafftWorkKind *kind, size_t n, int stateless)
{
  memset(&p->t.job, 0, sizeof p->t.job);
  p->t.job.kind = kind;
  p->t.job.owner = &o->owner;
  p->t.job.in_bytes = p->t.job.out_bytes = n * sizeof(float);
  p->t.state = stateless ? NULL : o->state;
  p->t.a = (float)((int)rng_range(r, 0, 16) - 8);
  p->t.offset = (float)((int)rng_range(r, 0, 20000) - 10000);
  p->t.reset = !stateless && o->fresh;
  p->n = n;
  if (!stateless) {
    o->fresh = 0;
    p->count = p->t.reset ? 0.0 : o->count;
    o->count = p->count + 1.0;
  } else {
    p->count = 0.0;
  }
  p->in = rng_range(r, 0, 9) == 0 ? NULL : p->in_buf;
  for (size_t i = 0; i < n; i++)
    p->in_buf[i] = (float)((int)rng_range(r, 0, 2000) - 1000);
  test_poison(p->out, n + GUARD);
}

static size_t
random_floats(Rng *r)
{
  const unsigned pick = (unsigned)rng_range(r, 0, 9);
  if (pick == 0)
    return 0;
  if (pick == 1)
    return rng_range(r, 1, 16);
  if (pick == 2)
    return rng_range(r, 4097, MAX_FLOATS);
  return rng_range(r, 17, 4096);
}

static int
submit(CudafftExecutor *ex, Pending *p, const char *where)
{
  const CudafftStatus status = cudafft_executor_submit(ex, &p->t.job, p->in, p->out);
  if (status != CUDAFFT_STATUS_OK)
    worker_fail("%s: submit: %s (%s)", where, cudafft_status_name(status),
                cudafft_last_error_message());
  return status == CUDAFFT_STATUS_OK;
}

/* Every output value against a*x + offset + count in double (all exact), the guard untouched, the
 * batch after the owner's previous one. */
static int
verify(Owner *o, const Pending *p, CudafftStatus status, const char *where)
{
  if (status != CUDAFFT_STATUS_OK) {
    worker_fail("%s: owner %u: %s (%s)", where, o->id, cudafft_status_name(status),
                cudafft_last_error_message());
    return 0;
  }
  if (p->t.job.batch <= o->last_batch) {
    worker_fail("%s: owner %u's job ran in batch %llu, its previous one in %llu", where, o->id,
                (unsigned long long)p->t.job.batch, (unsigned long long)o->last_batch);
    return 0;
  }
  o->last_batch = p->t.job.batch;
  for (size_t i = 0; i < p->n; i++) {
    const double x = p->in ? (double)p->in[i] : 0.0;
    const double expected = (double)p->t.a * x + (double)p->t.offset + p->count;
    if ((double)p->out[i] != expected) {
      worker_fail("%s: owner %u, %zu floats, batch %llu: out[%zu] = %.9g, expected %.9g (count "
                  "%.0f)",
                  where, o->id, p->n, (unsigned long long)p->t.job.batch, i, (double)p->out[i],
                  expected, p->count);
      return 0;
    }
  }
  const size_t written = test_count_unpoisoned(p->out + p->n, GUARD);
  if (written) {
    worker_fail("%s: owner %u, %zu floats: %zu guard values after the output written", where, o->id,
                p->n, written);
    return 0;
  }
  return 1;
}

static int
collect(CudafftExecutor *ex, Owner *o, Pending *p, const char *where)
{
  return verify(o, p, cudafft_executor_wait(ex, &p->t.job), where);
}

static CudafftExecutor *
acquire(void)
{
  CudafftExecutor *ex = NULL;
  const CudafftStatus status = cudafft_executor_acquire(0, &ex);
  if (status != CUDAFFT_STATUS_OK)
    test_abort("acquiring the executor of device 0: %s (%s)", cudafft_status_name(status),
               cudafft_last_error_message());
  return ex;
}

/* ---- 1. the API on CUDA ---- */

static void
test_api(Rng *r)
{
  CudafftExecutor *ex = acquire(), *again = NULL;
  const CudafftStatus second = cudafft_executor_acquire(-1, &again);
  test_check(second == CUDAFFT_STATUS_OK && again == ex && cudafft_executor_device(ex) == 0,
             "api: device -1 and 0 share one executor (device %d, %zu bytes a job)",
             cudafft_executor_device(ex), cudafft_executor_max_job_bytes(ex));
  cudafft_executor_release(again);
  CudafftExecutor *none = (CudafftExecutor *)1;
  const CudafftStatus no_device = cudafft_executor_acquire(cudafft_cuda_device_count(), &none);
  test_check(no_device == CUDAFFT_STATUS_NO_DEVICE && !none,
             "api: a device that does not exist: %s (%s)", cudafft_status_name(no_device),
             cudafft_last_error_message());

  /* The largest job: n floats in and out, n * 4 + aux <= max; one float more is refused. */
  const size_t max = cudafft_executor_max_job_bytes(ex);
  size_t n = max / sizeof(float);
  while (n * sizeof(float) + executor_test_affine_aux_bytes(n) > max)
    n--;
  Owner o;
  owner_init(&o, 0, n + 1);
  if (owner_attach(&o, ex) != CUDAFFT_STATUS_OK)
    test_abort("api: owner state: %s", cudafft_last_error_message());
  make_job(&o, &o.pending[0], r, &executor_test_affine_kind, n + 1, 0);
  const CudafftStatus too_big =
      cudafft_executor_submit(ex, &o.pending[0].t.job, o.pending[0].in, o.pending[0].out);
  test_check(too_big == CUDAFFT_STATUS_INVALID_VALUE,
             "api: a job of %zu floats (one more than fits) is refused: %s (%s)", n + 1,
             cudafft_status_name(too_big), cudafft_last_error_message());
  o.fresh = 1;
  make_job(&o, &o.pending[0], r, &executor_test_affine_kind, n, 0);
  submit(ex, &o.pending[0], "api: largest job");
  for (int k = 1; k < AHEAD; k++) {
    make_job(&o, &o.pending[k], r, &executor_test_affine_kind, rng_range(r, 0, n), 0);
    submit(ex, &o.pending[k], "api: jobs after the largest");
  }
  for (int k = 0; k < AHEAD; k++)
    collect(ex, &o, &o.pending[k], "api: largest job and those after");
  char what[160];
  snprintf(what, sizeof what,
           "api: a job of %zu floats (%zu bytes a job at most) and %d more of "
           "its owner, every value",
           n, max, AHEAD - 1);
  report_worker_failures(what);

  void *huge = (void *)1;
  const CudafftStatus oom =
      cudafft_executor_alloc(ex, (size_t)1 << 50, "a test's petabyte of state", &huge);
  test_check(oom == CUDAFFT_STATUS_DEVICE_OUT_OF_MEMORY && !huge &&
                 strstr(cudafft_last_error_message(), "petabyte"),
             "api: more device memory than there is fails naming it: %s (%s)",
             cudafft_status_name(oom), cudafft_last_error_message());
  make_job(&o, &o.pending[0], r, &executor_test_affine_kind, 1000, 0);
  submit(ex, &o.pending[0], "api: after a failed allocation");
  collect(ex, &o, &o.pending[0], "api: after a failed allocation");
  report_worker_failures("api: a job after a failed allocation");
  owner_detach(&o, ex);
  owner_clear(&o);
  cudafft_executor_release(ex);
}

/* ---- 2. many owners on many threads ---- */

typedef struct {
  CudafftExecutor *ex;
  Rng rng;
  int rounds;
  Owner owners[OWNERS_PER_THREAD];
  long jobs;
  uint64_t first_batch, last_batch;
} Worker;

static void *
stress_main(void *arg)
{
  Worker *w = arg;
  const char *where = "stress";
  for (unsigned i = 0; i < OWNERS_PER_THREAD; i++)
    if (owner_attach(&w->owners[i], w->ex) != CUDAFFT_STATUS_OK) {
      worker_fail("stress: owner state: %s", cudafft_last_error_message());
      return NULL;
    }
  Pending *order[OWNERS_PER_THREAD * AHEAD];
  w->first_batch = UINT64_MAX;
  for (int round = 0; round < w->rounds; round++) {
    if (round % 8 == 7) { /* an engine object goes, another comes */
      Owner *o = &w->owners[rng_range(&w->rng, 0, OWNERS_PER_THREAD - 1)];
      owner_detach(o, w->ex);
      if (owner_attach(o, w->ex) != CUDAFFT_STATUS_OK) {
        worker_fail("stress: new owner state: %s", cudafft_last_error_message());
        return NULL;
      }
    }
    size_t count = 0, jobs[OWNERS_PER_THREAD];
    for (unsigned i = 0; i < OWNERS_PER_THREAD; i++) {
      Owner *o = &w->owners[i];
      jobs[i] = rng_range(&w->rng, 1, AHEAD);
      for (size_t j = 0; j < jobs[i]; j++) {
        make_job(o, &o->pending[j], &w->rng, &executor_test_affine_kind, random_floats(&w->rng), 0);
        if (!submit(w->ex, &o->pending[j], where))
          return NULL;
        order[count++] = &o->pending[j];
      }
    }
    /* Waits in submission order, in a random order, or late. */
    const unsigned how = (unsigned)rng_range(&w->rng, 0, 2);
    if (how == 2)
      sleep_ms(2);
    for (size_t i = count; how == 1 && i > 1; i--) {
      const size_t j = rng_range(&w->rng, 0, i - 1);
      Pending *t = order[i - 1];
      order[i - 1] = order[j];
      order[j] = t;
    }
    for (size_t i = 0; i < count; i++)
      order[i]->status = cudafft_executor_wait(w->ex, &order[i]->t.job);
    /* Checked per owner in submission order. */
    for (unsigned i = 0; i < OWNERS_PER_THREAD; i++) {
      Owner *o = &w->owners[i];
      for (size_t j = 0; j < jobs[i]; j++) {
        const uint64_t batch = o->pending[j].t.job.batch;
        w->first_batch = batch < w->first_batch ? batch : w->first_batch;
        w->last_batch = batch > w->last_batch ? batch : w->last_batch;
        if (!verify(o, &o->pending[j], o->pending[j].status, where))
          return NULL;
      }
    }
    w->jobs += (long)count;
  }
  for (unsigned i = 0; i < OWNERS_PER_THREAD; i++)
    owner_detach(&w->owners[i], w->ex);
  return NULL;
}

static void
test_stress(Rng *r)
{
  CudafftExecutor *ex = acquire();
  static Worker workers[THREADS];
  pthread_t threads[THREADS];
  const double start = test_seconds();
  for (unsigned t = 0; t < THREADS; t++) {
    Worker *w = &workers[t];
    w->ex = ex;
    w->rng.state = rng_next(r);
    w->rounds = 40;
    w->jobs = 0;
    w->last_batch = 0;
    for (unsigned i = 0; i < OWNERS_PER_THREAD; i++)
      owner_init(&w->owners[i], t * OWNERS_PER_THREAD + i, MAX_FLOATS);
    if (pthread_create(&threads[t], NULL, stress_main, w) != 0)
      test_abort("cannot start a thread");
  }
  long jobs = 0;
  uint64_t first = UINT64_MAX, last = 0;
  for (unsigned t = 0; t < THREADS; t++) {
    pthread_join(threads[t], NULL);
    jobs += workers[t].jobs;
    if (workers[t].first_batch < first)
      first = workers[t].first_batch;
    if (workers[t].last_batch > last)
      last = workers[t].last_batch;
  }
  const double seconds = test_seconds() - start;
  const double batches = last >= first ? (double)(last - first + 1) : 0.0;
  char what[300];
  snprintf(what, sizeof what,
           "stress: %d owners on %d threads, %ld jobs of 0..%d floats in about %.0f batches "
           "(%.1f a batch) in %.2f s, every value, batches in order per owner",
           THREADS * OWNERS_PER_THREAD, THREADS, jobs, MAX_FLOATS, batches,
           batches > 0 ? (double)jobs / batches : 0.0, seconds);
  report_worker_failures(what);
  for (unsigned t = 0; t < THREADS; t++)
    for (unsigned i = 0; i < OWNERS_PER_THREAD; i++)
      owner_clear(&workers[t].owners[i]);
  cudafft_executor_release(ex);
}

/* ---- 3. a failing launch poisons exactly its batch ---- */

#define FAIL_THREADS 4
#define FAIL_OWNERS 4

static atomic_uchar *poisoned, *seen_ok, *seen_failed; /* MAX_BATCHES each */

typedef struct {
  CudafftExecutor *ex;
  Rng rng;
  Owner owners[FAIL_OWNERS];
  atomic_int *stop;
  long jobs, failed;
} FailWorker;

static void *
fail_main(void *arg)
{
  FailWorker *w = arg;
  for (unsigned i = 0; i < FAIL_OWNERS; i++)
    if (owner_attach(&w->owners[i], w->ex) != CUDAFFT_STATUS_OK) {
      worker_fail("failures: owner state: %s", cudafft_last_error_message());
      return NULL;
    }
  while (!atomic_load(w->stop)) {
    for (unsigned i = 0; i < FAIL_OWNERS; i++) {
      Owner *o = &w->owners[i];
      make_job(o, &o->pending[0], &w->rng, &executor_test_affine_kind, rng_range(&w->rng, 0, 4096),
               0);
      if (!submit(w->ex, &o->pending[0], "failures"))
        return NULL;
    }
    for (unsigned i = 0; i < FAIL_OWNERS; i++) {
      Owner *o = &w->owners[i];
      Pending *p = &o->pending[0];
      const CudafftStatus status = cudafft_executor_wait(w->ex, &p->t.job);
      const uint64_t batch = p->t.job.batch;
      if (batch == 0 || batch >= MAX_BATCHES) {
        worker_fail("failures: batch %llu out of range", (unsigned long long)batch);
        return NULL;
      }
      w->jobs++;
      if (status == CUDAFFT_STATUS_OK) {
        atomic_store(&seen_ok[batch], 1);
        verify(o, p, status, "failures (a job that succeeded)");
        continue;
      }
      atomic_store(&seen_failed[batch], 1);
      w->failed++;
      const char *message = cudafft_last_error_message();
      if (status != CUDAFFT_STATUS_CUDA_ERROR || !strstr(message, "bad launch test kind") ||
          !strstr(message, "(cudaErrorInvalid"))
        worker_fail("failures: a failed job says %s (%s)", cudafft_status_name(status), message);
      /* Whether the batch's other kinds ran before the failing launch is not known: the count
       * starts afresh, as an engine's state would after a failure. */
      o->fresh = 1;
      o->last_batch = batch;
    }
  }
  for (unsigned i = 0; i < FAIL_OWNERS; i++)
    owner_detach(&w->owners[i], w->ex);
  return NULL;
}

static void
test_failures(Rng *r)
{
  poisoned = calloc(MAX_BATCHES, 1);
  seen_ok = calloc(MAX_BATCHES, 1);
  seen_failed = calloc(MAX_BATCHES, 1);
  if (!poisoned || !seen_ok || !seen_failed)
    test_abort("no memory");
  CudafftExecutor *ex = acquire();
  atomic_int stop = 0;
  static FailWorker workers[FAIL_THREADS];
  pthread_t threads[FAIL_THREADS];
  for (unsigned t = 0; t < FAIL_THREADS; t++) {
    FailWorker *w = &workers[t];
    w->ex = ex;
    w->rng.state = rng_next(r);
    w->stop = &stop;
    w->jobs = w->failed = 0;
    for (unsigned i = 0; i < FAIL_OWNERS; i++)
      owner_init(&w->owners[i], t * FAIL_OWNERS + i, 4096);
    if (pthread_create(&threads[t], NULL, fail_main, w) != 0)
      test_abort("cannot start a thread");
  }
  Owner injector;
  owner_init(&injector, 1000, 4096);
  if (owner_attach(&injector, ex) != CUDAFFT_STATUS_OK)
    test_abort("failures: owner state: %s", cudafft_last_error_message());
  int named = 0, injections = 0;
  for (int k = 0; k < 10; k++) {
    sleep_ms(10);
    Pending *p = &injector.pending[0];
    make_job(&injector, p, r, &executor_test_bad_launch_kind, 100, 0);
    submit(ex, p, "failures: bad launch");
    const CudafftStatus status = cudafft_executor_wait(ex, &p->t.job);
    named += status == CUDAFFT_STATUS_CUDA_ERROR &&
             strstr(cudafft_last_error_message(), "bad launch test kind") &&
             strstr(cudafft_last_error_message(), "(cudaErrorInvalid");
    if (p->t.job.batch > 0 && p->t.job.batch < MAX_BATCHES)
      atomic_store(&poisoned[p->t.job.batch], 1);
    injections++;
  }
  sleep_ms(20);
  atomic_store(&stop, 1);
  long jobs = 0, failed = 0;
  for (unsigned t = 0; t < FAIL_THREADS; t++) {
    pthread_join(threads[t], NULL);
    jobs += workers[t].jobs;
    failed += workers[t].failed;
  }
  report_worker_failures("failures: every job outside the failed batches, every value");
  test_check(named == injections,
             "failures: a failing launch reports CUDA_ERROR naming the kind and CUDA's error "
             "(%d of %d)",
             named, injections);
  long wrong = 0, poisoned_count = 0;
  for (size_t b = 1; b < MAX_BATCHES; b++) {
    poisoned_count += poisoned[b];
    if ((poisoned[b] && seen_ok[b]) || (!poisoned[b] && seen_failed[b]))
      wrong++;
  }
  test_check(poisoned_count == injections && wrong == 0 && jobs > failed,
             "failures: %d failing launches poisoned exactly their %ld batches (%ld disagree); "
             "%ld of %ld streaming jobs shared them and failed, the rest are correct",
             injections, poisoned_count, wrong, failed, jobs);
  owner_detach(&injector, ex);
  owner_clear(&injector);
  for (unsigned t = 0; t < FAIL_THREADS; t++)
    for (unsigned i = 0; i < FAIL_OWNERS; i++)
      owner_clear(&workers[t].owners[i]);
  cudafft_executor_release(ex);
  free(poisoned);
  free(seen_ok);
  free(seen_failed);
}

/* ---- 4. acquire/release cycles ---- */

typedef struct {
  Rng rng;
  unsigned id;
  int cycles;
} CycleWorker;

static void *
cycle_main(void *arg)
{
  CycleWorker *w = arg;
  Owner o;
  owner_init(&o, w->id, 4096);
  for (int c = 0; c < w->cycles; c++) {
    CudafftExecutor *ex = NULL;
    if (cudafft_executor_acquire(0, &ex) != CUDAFFT_STATUS_OK) {
      worker_fail("cycles: acquire: %s", cudafft_last_error_message());
      break;
    }
    if (owner_attach(&o, ex) != CUDAFFT_STATUS_OK) {
      worker_fail("cycles: owner state: %s", cudafft_last_error_message());
      cudafft_executor_release(ex);
      break;
    }
    const size_t jobs = rng_range(&w->rng, 1, AHEAD);
    for (size_t j = 0; j < jobs; j++) {
      make_job(&o, &o.pending[j], &w->rng, &executor_test_affine_kind, rng_range(&w->rng, 0, 4096),
               0);
      submit(ex, &o.pending[j], "cycles");
    }
    for (size_t j = 0; j < jobs; j++)
      collect(ex, &o, &o.pending[j], "cycles");
    owner_detach(&o, ex);
    cudafft_executor_release(ex);
  }
  owner_clear(&o);
  return NULL;
}

static void
test_cycles(Rng *r)
{
  for (int c = 0; c < 10; c++) {
    CycleWorker w = {.rng = {rng_next(r)}, .id = 0, .cycles = 1};
    cycle_main(&w);
  }
  report_worker_failures("cycles: 10 times an executor made, used and stopped");
  CycleWorker workers[4];
  pthread_t threads[4];
  for (unsigned t = 0; t < 4; t++) {
    workers[t] = (CycleWorker){.rng = {rng_next(r)}, .id = t, .cycles = 10};
    if (pthread_create(&threads[t], NULL, cycle_main, &workers[t]) != 0)
      test_abort("cannot start a thread");
  }
  for (unsigned t = 0; t < 4; t++)
    pthread_join(threads[t], NULL);
  report_worker_failures("cycles: 4 threads x 10 acquire, use, release");
}

/* ---- 5. the last release with work still queued ---- */

static void
test_shutdown(Rng *r)
{
  enum { OWNERS = 16 };
  static Owner owners[OWNERS];
  CudafftExecutor *ex = acquire();
  for (unsigned i = 0; i < OWNERS; i++) {
    owner_init(&owners[i], i, MAX_FLOATS);
    for (int k = 0; k < AHEAD; k++) {
      make_job(&owners[i], &owners[i].pending[k], r, &executor_test_affine_kind,
               rng_range(r, 0, MAX_FLOATS), 1);
      submit(ex, &owners[i].pending[k], "shutdown");
    }
  }
  const double start = test_seconds();
  cudafft_executor_release(ex);
  const double seconds = test_seconds() - start;
  report_worker_failures("shutdown: submissions");
  test_check(1, "shutdown: the last release with %d jobs never waited for returned in %.3f s",
             OWNERS * AHEAD, seconds);
  /* A new executor on the same device works. */
  ex = acquire();
  Owner o;
  owner_init(&o, 0, 4096);
  if (owner_attach(&o, ex) != CUDAFFT_STATUS_OK)
    test_abort("shutdown: owner state: %s", cudafft_last_error_message());
  make_job(&o, &o.pending[0], r, &executor_test_affine_kind, 4096, 0);
  submit(ex, &o.pending[0], "after shutdown");
  collect(ex, &o, &o.pending[0], "after shutdown");
  report_worker_failures("shutdown: a new executor on the device after it, every value");
  owner_detach(&o, ex);
  owner_clear(&o);
  cudafft_executor_release(ex);
  for (unsigned i = 0; i < OWNERS; i++)
    owner_clear(&owners[i]);
}

int
main(int argc, char **argv)
{
  if (test_begin(argc, argv) != CUDAFFT_BACKEND_CUDA)
    test_abort("%s runs the executor on a GPU: its argument is cuda", test_program());
  TestRng seed = test_rng("executor-cuda");
  Rng r = {test_rng_u64(&seed)};
  test_api(&r);
  test_stress(&r);
  test_failures(&r);
  test_cycles(&r);
  test_shutdown(&r);
  return test_finish();
}
