/* streams_util.c: see streams_util.h. */
#define _POSIX_C_SOURCE 200809L

#include "streams_util.h"

#include "cudafft_config.h"
#include "test_util.h"
#include "worker_util.h"

#if CUDAFFT_HAVE_CUDA
#include "executor.h"
#endif

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

pthread_rwlock_t streams_create_lock = PTHREAD_RWLOCK_INITIALIZER;
static atomic_uint sessions_done, threads_done;

/* A thread of streams_run: its function and argument; counts itself done at the end. */
typedef struct {
  void *(*main)(void *);
  void *arg;
} Thread;

static void *
thread_main(void *data)
{
  const Thread *t = data;
  t->main(t->arg);
  atomic_fetch_add(&threads_done, 1);
  return NULL;
}

void
streams_session_done(void)
{
  atomic_fetch_add(&sessions_done, 1);
}

#if CUDAFFT_HAVE_CUDA
#define FILL_BLOCKS 4096

static void
check_too_large(const StreamsTooLarge *too_large)
{
  CudafftExecutor *ex = NULL;
  CudafftStatus status = cudafft_executor_acquire(-1, &ex);
  if (!test_check(status == CUDAFFT_STATUS_OK, "the executor for the memory check: %s",
                  cudafft_status_name(status)))
    return;
  static void *blocks[FILL_BLOCKS];
  size_t count = 0;
  void *object = NULL;
  char message[512] = "";
  int attempts = 0;
  pthread_rwlock_wrlock(&streams_create_lock);
  /* Blocks of 1 GB, then 64 MB, while the pool gives them; the last 64 MB back. Other processes
   * on the device (the suite runs tests side by side) may free memory between the filling and
   * the creation, and the object then fits: fill what they freed and try again. */
  const size_t sizes[] = {(size_t)1 << 30, (size_t)64 << 20};
  do {
    if (object)
      too_large->destroy(object);
    object = NULL;
    for (size_t s = 0; s < 2; s++)
      while (count < FILL_BLOCKS && cudafft_executor_alloc(ex, sizes[s], "the test's filler",
                                                           &blocks[count]) == CUDAFFT_STATUS_OK)
        count++;
    if (count > 0)
      cudafft_executor_free(ex, blocks[--count]);
    status = too_large->create(&object);
    snprintf(message, sizeof message, "%s", cudafft_last_error_message());
  } while (status == CUDAFFT_STATUS_OK && ++attempts < 5);
  test_check(status == CUDAFFT_STATUS_DEVICE_OUT_OF_MEMORY && !object && strstr(message, "MB") &&
                 strstr(message, too_large->word),
             "%s with the device's memory taken (%zu blocks, %d refills) while the others "
             "stream: %s (want %s), message \"%s\"",
             too_large->what, count, attempts, cudafft_status_name(status),
             cudafft_status_name(CUDAFFT_STATUS_DEVICE_OUT_OF_MEMORY), message);
  if (object)
    too_large->destroy(object);
  while (count > 0)
    cudafft_executor_free(ex, blocks[--count]);
  pthread_rwlock_unlock(&streams_create_lock);
  object = NULL;
  status = too_large->create(&object);
  test_check(status == CUDAFFT_STATUS_OK && object, "%s once the memory is back: %s%s%s",
             too_large->what, cudafft_status_name(status), status ? ": " : "",
             status ? cudafft_last_error_message() : "");
  if (object)
    too_large->destroy(object);
  cudafft_executor_release(ex);
}
#endif

/* A streaming thread: its objects, their sessions, the sessions each has left. */
typedef struct {
  const StreamsEngine *engine;
  unsigned id, objects;
  unsigned char *object, *session;
  unsigned *left;
  unsigned made;
} Streamer;

static void *
streamer_main(void *arg)
{
  Streamer *t = arg;
  const StreamsEngine *e = t->engine;
  for (unsigned i = 0; i < t->objects; i++) {
    void *object = t->object + i * e->object_size;
    t->left[i] = e->make(object, t->id, i);
    t->made += t->left[i] > 0;
    if (t->left[i])
      e->start(t->session + i * e->session_size, object, e->label(object), 0);
  }
  for (int active = 1; active;) {
    active = 0;
    for (unsigned i = 0; i < t->objects; i++) {
      if (t->left[i] == 0)
        continue;
      active = 1;
      void *session = t->session + i * e->session_size, *object = t->object + i * e->object_size;
      if (!e->step(session) || --t->left[i] == 0)
        continue;
      char label[320];
      snprintf(label, sizeof label, "%s, %u sessions left", e->label(object), t->left[i]);
      e->start(session, object, label, 0);
    }
  }
  for (unsigned i = 0; i < t->objects; i++)
    e->destroy(t->object + i * e->object_size);
  return NULL;
}

typedef struct {
  const StreamsEngine *engine;
  unsigned cycles, completed;
} Cycler;

static void *
cycler_main(void *arg)
{
  Cycler *c = arg;
  const StreamsEngine *e = c->engine;
  void *object = test_malloc(e->object_size), *session = test_malloc(e->session_size);
  for (unsigned cycle = 0; cycle < c->cycles; cycle++) {
    if (!e->make_small(object, cycle))
      continue;
    char label[320];
    snprintf(label, sizeof label, "cycle %u %s", cycle, e->label(object));
    e->start(session, object, label, 1);
    while (!e->step(session))
      ;
    e->destroy(object);
    c->completed++;
  }
  free(object);
  free(session);
  return NULL;
}

void
streams_run(CudafftBackend backend, const StreamsEngine *engine, unsigned threads, unsigned objects,
            unsigned cycles, const StreamsTooLarge *too_large)
{
  Streamer *streamers = test_malloc(threads * sizeof *streamers);
  Cycler cycler = {engine, cycles, 0};
  pthread_t *ids = test_malloc((threads + 1) * sizeof *ids);
  Thread *starts = test_malloc((threads + 1) * sizeof *starts);
  for (unsigned t = 0; t <= threads; t++) {
    if (t < threads) {
      Streamer *s = &streamers[t];
      *s = (Streamer){engine,
                      t,
                      objects,
                      test_malloc(objects * engine->object_size),
                      test_malloc(objects * engine->session_size),
                      test_malloc(objects * sizeof(unsigned)),
                      0};
      starts[t] = (Thread){streamer_main, s};
    } else {
      starts[t] = (Thread){cycler_main, &cycler};
    }
    if (pthread_create(&ids[t], NULL, thread_main, &starts[t]) != 0)
      test_abort("cannot start a thread");
  }
#if CUDAFFT_HAVE_CUDA
  if (backend == CUDAFFT_BACKEND_CUDA) {
    /* while the streams are under way (or at the latest once they have ended) */
    while (atomic_load(&sessions_done) < threads * objects && atomic_load(&threads_done) <= threads)
      sleep_ms(10);
    check_too_large(too_large);
  }
#else
  (void)backend;
  (void)too_large;
#endif
  unsigned made = 0;
  for (unsigned t = 0; t <= threads; t++)
    pthread_join(ids[t], NULL);
  for (unsigned t = 0; t < threads; t++) {
    made += streamers[t].made;
    free(streamers[t].object);
    free(streamers[t].session);
    free(streamers[t].left);
  }
  test_check(made == threads * objects, "%u of %u streaming objects made", made, threads * objects);
  test_check(cycler.completed == cycles, "%u of %u create / session / destroy cycles completed",
             cycler.completed, cycles);
  free(streamers);
  free(ids);
  free(starts);
}
