/* test_executor_fences.c: the executor's device order between owners (executor.h: a job's
 * `after`, cudafft_executor_batch_of, cudafft_executor_sync, and cudafft_fence_wait over the
 * registry), on the test device (executor_test_device.c: host memory, a worker thread, a pause),
 * so that it runs in every build. A kind records the device batch each job's "kernel" ran in.
 *
 * What it checks:
 * - a job given `after` (another owner's batch that is still collecting) goes in a later batch
 *   and runs after it, where a job without it joins that batch (so the check can fail);
 * - cudafft_executor_sync returns only once the batch has run on the device, for a batch still
 *   collecting and for one launched alone whose job nobody waits for (a push that did not wait),
 *   which may then be waited for as usual;
 * - cudafft_fence_wait on a fence of a live executor waits for it, and on one of an executor that
 *   has stopped returns at once; a zeroed fence is OK;
 * - misuse: `after` or sync beyond the batches made, batch_of of a job not outstanding:
 *   INVALID_VALUE, and nothing is submitted. */
#define _POSIX_C_SOURCE 200809L

#include "errors.h"
#include "executor_test_device.h"
#include "test_util.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#define JOBS 8

typedef struct {
  CudafftJob job; /* first: the kind casts the CudafftJob pointers back */
  int id;
} FenceJob;

static atomic_uint_fast64_t ran_in[JOBS]; /* the device batch job id ran in; 0: not yet */

static void
record(const void *args)
{
  const int id = *(const int *)args;
  atomic_store(&ran_in[id], atomic_load(&executor_test_device.current_batch));
}

static CudafftStatus
launch(CudafftJob *const *jobs, size_t count, void *device_aux, void *stream)
{
  (void)device_aux;
  for (size_t i = 0; i < count; i++)
    executor_test_stream_launch(stream, record, &((FenceJob *)jobs[i])->id, sizeof(int));
  return CUDAFFT_STATUS_OK;
}

static const CudafftWorkKind fence_kind = {"fence test", NULL, NULL, launch, NULL};

static void
sleep_ms(int ms)
{
  const struct timespec t = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&t, NULL);
}

static CudafftExecutor *
acquire(int device, unsigned in_flight)
{
  executor_test_device_reset();
  executor_test_device.limits = (CudafftExecutorLimits){.max_job_bytes = 4096,
                                                        .slots = 4,
                                                        .max_in_flight = in_flight,
                                                        .max_jobs = 16,
                                                        .max_slots = 4};
  executor_test_device.memory_bytes = (size_t)16 << 20;
  for (int i = 0; i < JOBS; i++)
    atomic_store(&ran_in[i], 0);
  CudafftExecutor *ex = NULL;
  if (cudafft_executor_acquire_on(&executor_test_device_table, device, &ex) != CUDAFFT_STATUS_OK)
    test_abort("acquiring the test executor: %s", cudafft_last_error_message());
  return ex;
}

static void
submit(CudafftExecutor *ex, FenceJob *j, CudafftJobOwner *owner, int id, uint64_t after)
{
  *j = (FenceJob){.id = id};
  j->job.kind = &fence_kind;
  j->job.owner = owner;
  j->job.after = after;
  if (cudafft_executor_submit(ex, &j->job, NULL, NULL) != CUDAFFT_STATUS_OK)
    test_abort("submitting job %d: %s", id, cudafft_last_error_message());
}

static void
collect(CudafftExecutor *ex, FenceJob *j)
{
  if (cudafft_executor_wait(ex, &j->job) != CUDAFFT_STATUS_OK)
    test_check(0, "job %d: %s", j->id, cudafft_last_error_message());
}

typedef struct {
  CudafftExecutor *ex;
  CudafftFence fence;
  uint64_t batch;
  atomic_int returned;
  CudafftStatus status;
} Syncer;

static void *
sync_main(void *arg)
{
  Syncer *s = arg;
  s->status = s->ex ? cudafft_executor_sync(s->ex, s->batch) : cudafft_fence_wait(s->fence);
  atomic_store(&s->returned, 1);
  return NULL;
}

/* Runs s's wait on a thread of its own while the device is held for hold_ms, then lets the device
 * go and joins it: whether the wait returned while the device was held (it must not have). */
static int
sync_while_held(Syncer *s, int hold_ms)
{
  pthread_t thread;
  pthread_create(&thread, NULL, sync_main, s);
  sleep_ms(hold_ms);
  const int early = atomic_load(&s->returned);
  executor_test_device_pause(0);
  pthread_join(thread, NULL);
  return early;
}

/* One batch in flight at most: the first job goes out alone and holds the device (paused), so
 * that the producer's job waits in a collecting batch that others could join. */
static void
check_after(void)
{
  CudafftExecutor *ex = acquire(1, 1);
  CudafftJobOwner owners[4] = {{0}};
  FenceJob x, producer, consumer, joiner;
  executor_test_device_pause(1);
  submit(ex, &x, &owners[0], 0, 0);
  submit(ex, &producer, &owners[1], 1, 0);
  uint64_t made_in = 0;
  const CudafftStatus placed = cudafft_executor_batch_of(ex, &producer.job, &made_in);
  test_check(placed == CUDAFFT_STATUS_OK && made_in == x.job.batch + 1,
             "after: the producer's job is in the collecting batch %llu (the first is in %llu)",
             (unsigned long long)made_in, (unsigned long long)x.job.batch);
  submit(ex, &consumer, &owners[2], 2, made_in);
  submit(ex, &joiner, &owners[3], 3, 0);
  test_check(consumer.job.batch > made_in && joiner.job.batch == made_in,
             "after: the consumer goes in batch %llu, after the producer's %llu; a job without "
             "`after` joins the producer's (%llu)",
             (unsigned long long)consumer.job.batch, (unsigned long long)made_in,
             (unsigned long long)joiner.job.batch);
  /* the host waits for a batch still collecting (not yet launched) */
  Syncer open = {.ex = ex, .batch = made_in, .status = CUDAFFT_STATUS_CUDA_ERROR};
  const int early = sync_while_held(&open, 30);
  test_check(!early && open.status == CUDAFFT_STATUS_OK && atomic_load(&ran_in[1]) > 0,
             "after: sync on the collecting batch %llu returns once it ran (not before: %d)",
             (unsigned long long)made_in, early);
  collect(ex, &consumer);
  collect(ex, &joiner);
  collect(ex, &producer);
  collect(ex, &x);
  test_check(atomic_load(&ran_in[2]) > atomic_load(&ran_in[1]) && atomic_load(&ran_in[1]) > 0,
             "after: on the device the consumer ran in batch %llu, after the producer's %llu",
             (unsigned long long)atomic_load(&ran_in[2]),
             (unsigned long long)atomic_load(&ran_in[1]));

  FenceJob bad = {.id = 4};
  bad.job.kind = &fence_kind;
  bad.job.owner = &owners[0];
  bad.job.after = consumer.job.batch + 100;
  const CudafftStatus refused = cudafft_executor_submit(ex, &bad.job, NULL, NULL);
  test_check(refused == CUDAFFT_STATUS_INVALID_VALUE &&
                 cudafft_executor_wait(ex, &bad.job) == CUDAFFT_STATUS_INVALID_VALUE,
             "after: a batch not yet made is refused (%s), and the job is not submitted",
             cudafft_status_name(refused));
  uint64_t none = 0;
  test_check(cudafft_executor_batch_of(ex, &bad.job, &none) == CUDAFFT_STATUS_INVALID_VALUE &&
                 cudafft_executor_sync(ex, consumer.job.batch + 100) ==
                     CUDAFFT_STATUS_INVALID_VALUE,
             "after: batch_of of a job not outstanding, sync of a batch not made: INVALID_VALUE");
  cudafft_executor_release(ex);
}

/* A job nobody waits for yet: sync (and the fence over the registry) returns once the device ran
 * it, not before; its wait afterwards still works. */
static void
check_sync(int by_fence)
{
  const char *how = by_fence ? "cudafft_fence_wait" : "cudafft_executor_sync";
  CudafftExecutor *ex = acquire(2, 2);
  CudafftJobOwner owner = {0};
  FenceJob j;
  executor_test_device_pause(1);
  submit(ex, &j, &owner, 5, 0); /* alone on an idle device: launched by this thread */
  uint64_t batch = 0;
  cudafft_executor_batch_of(ex, &j.job, &batch);
  Syncer s = {.ex = by_fence ? NULL : ex,
              .fence = {cudafft_executor_id(ex), batch},
              .batch = batch,
              .status = CUDAFFT_STATUS_CUDA_ERROR};
  const int early = sync_while_held(&s, 50);
  test_check(!early && s.status == CUDAFFT_STATUS_OK && atomic_load(&ran_in[5]) == batch,
             "%s: returns once batch %llu ran (not while the device was held: %d), with nobody "
             "waiting for its job: %s",
             how, (unsigned long long)batch, early, cudafft_status_name(s.status));
  collect(ex, &j);
  const CudafftFence gone = {cudafft_executor_id(ex), batch};
  cudafft_executor_release(ex);
  test_check(cudafft_fence_wait(gone) == CUDAFFT_STATUS_OK &&
                 cudafft_fence_wait((CudafftFence){0, 0}) == CUDAFFT_STATUS_OK,
             "%s: a fence of a stopped executor, and a zeroed one, are reached at once", how);
}

int
main(int argc, char **argv)
{
  test_begin_every_backend(argc, argv); /* no backend argument: the host logic alone */
  check_after();
  check_sync(0);
  check_sync(1);
  return test_finish();
}
