/* executor_test_device.c: see executor_test_device.h.
 *
 * What it checks of the executor's calls (counted in `misuse`): a slot's batch is uploaded or
 * finished only once its previous batch was waited for, waited for only after finish, freed only
 * when idle; and an executor is closed with no batch queued (work ahead and frees may be). The
 * flags it keeps per slot are plain ints written by the launching thread and read by the completing
 * one without a lock of the fake's own, so that ThreadSanitizer sees whether the core orders those
 * calls. */
#define _POSIX_C_SOURCE 200809L

#include "executor_test_device.h"

#include "errors.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

ExecutorTestDevice executor_test_device;

/* Counts a call out of the contract's order; the first one's description is kept for the test's
 * message. */
static void
misused(const char *what)
{
  const char *none = NULL;
  atomic_compare_exchange_strong(&executor_test_device.misuse_first, &none, what);
  atomic_fetch_add(&executor_test_device.misuse, 1);
}

#define HEADER 256 /* before each allocation: its size (and the alignment of what follows) */
#define MAX_ARGS 64

typedef enum { CMD_UPLOAD, CMD_COPY, CMD_KERNEL, CMD_MARK, CMD_FREE } CommandType;

typedef struct FakeSlot FakeSlot;

typedef struct Command {
  CommandType type;
  void *dst;
  const void *src;
  size_t bytes;
  void (*fn)(const void *args);
  unsigned char args[MAX_ARGS];
  FakeSlot *slot;
  struct Command *next;
} Command;

typedef struct {
  pthread_mutex_t lock;
  pthread_cond_t wake;   /* the worker: a command came, or stop */
  pthread_cond_t marked; /* a completion marker ran */
  Command *head, *tail;
  int stop;
  pthread_t worker;
  uint64_t random; /* the worker's */
  pthread_mutex_t memory_lock;
  size_t memory_used;
} FakeDevice;

struct FakeSlot {
  /* Launcher and completion threads (ordered by the core, see the top). */
  int in_use;   /* from the batch's first call to its wait */
  int finished; /* finish was called for the batch */
  /* Under FakeDevice.lock. */
  unsigned long marks_queued, marks_done;
};

static pthread_mutex_t pause_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pause_cond = PTHREAD_COND_INITIALIZER;
static int paused;

void
executor_test_device_reset(void)
{
  ExecutorTestDevice *t = &executor_test_device;
  t->limits = (CudafftExecutorLimits){0};
  atomic_store(&t->delay_us, 0);
  atomic_store(&t->launch_us, 0);
  t->memory_bytes = 0;
  atomic_store(&t->slot_budget, -1);
  atomic_store(&t->fail_next_upload, 0);
  atomic_store(&t->fail_next_wait, 0);
  atomic_store(&t->failed_upload_batch, 0);
  atomic_store(&t->failed_wait_batch, 0);
  atomic_store(&t->uploads, 0);
  atomic_store(&t->waits, 0);
  atomic_store(&t->launcher_uploads, 0);
  atomic_store(&t->completer_waits, 0);
  atomic_store(&t->opens, 0);
  atomic_store(&t->closes, 0);
  atomic_store(&t->live_slots, 0);
  atomic_store(&t->live_allocs, 0);
  atomic_store(&t->unfinished_waits, 0);
  atomic_store(&t->misuse, 0);
  atomic_store(&t->misuse_first, NULL);
  atomic_store(&t->current_batch, 0);
}

void
executor_test_device_pause(int on)
{
  pthread_mutex_lock(&pause_lock);
  paused = on;
  pthread_cond_broadcast(&pause_cond);
  pthread_mutex_unlock(&pause_lock);
}

static uint64_t
next_random(uint64_t *state)
{
  uint64_t z = (*state += 0x9e3779b97f4a7c15u);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
  return z ^ (z >> 31);
}

static void
sleep_us(unsigned us)
{
  struct timespec t = {.tv_sec = us / 1000000, .tv_nsec = (long)(us % 1000000) * 1000};
  nanosleep(&t, NULL);
}

/* An allocation's block (its header first) goes back to the host, and stops counting as live. */
static void
release_block(void *block)
{
  free(block);
  atomic_fetch_sub(&executor_test_device.live_allocs, 1);
}

static void
enqueue(FakeDevice *d, Command *c)
{
  c->next = NULL;
  pthread_mutex_lock(&d->lock);
  if (d->tail)
    d->tail->next = c;
  else
    d->head = c;
  d->tail = c;
  pthread_cond_signal(&d->wake);
  pthread_mutex_unlock(&d->lock);
}

static CudafftStatus
enqueue_new(FakeDevice *d, const Command *proto)
{
  Command *c = malloc(sizeof *c);
  if (!c)
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY, "test device: no memory");
  *c = *proto;
  enqueue(d, c);
  return CUDAFFT_STATUS_OK;
}

static void
run_command(FakeDevice *d, Command *c)
{
  switch (c->type) {
  case CMD_UPLOAD:
    atomic_fetch_add(&executor_test_device.current_batch, 1);
    /* fall through: then the copy */
  case CMD_COPY:
    if (c->bytes)
      memcpy(c->dst, c->src, c->bytes);
    break;
  case CMD_KERNEL:
    c->fn(c->args);
    break;
  case CMD_MARK:
    pthread_mutex_lock(&d->lock);
    c->slot->marks_done++;
    pthread_cond_broadcast(&d->marked);
    pthread_mutex_unlock(&d->lock);
    break;
  case CMD_FREE:
    release_block(c->dst);
    break;
  }
}

static void *
worker_main(void *arg)
{
  FakeDevice *d = arg;
  for (;;) {
    pthread_mutex_lock(&d->lock);
    while (!d->head && !d->stop)
      pthread_cond_wait(&d->wake, &d->lock);
    Command *c = d->head;
    if (c) {
      d->head = c->next;
      if (!d->head)
        d->tail = NULL;
    }
    pthread_mutex_unlock(&d->lock);
    if (!c)
      return NULL;
    pthread_mutex_lock(&pause_lock);
    while (paused)
      pthread_cond_wait(&pause_cond, &pause_lock);
    pthread_mutex_unlock(&pause_lock);
    const unsigned delay = atomic_load(&executor_test_device.delay_us);
    if (delay)
      sleep_us((unsigned)(next_random(&d->random) % (delay + 1)));
    run_command(d, c);
    free(c);
  }
}

/* ---- memory ---- */

static CudafftStatus
fake_alloc(void *ctx, size_t bytes, const char *what, void **ptr)
{
  FakeDevice *d = ctx;
  pthread_mutex_lock(&d->memory_lock);
  const size_t left = executor_test_device.memory_bytes - d->memory_used;
  const int fits = bytes <= left;
  if (fits)
    d->memory_used += bytes;
  pthread_mutex_unlock(&d->memory_lock);
  if (!fits)
    return cudafft_fail(CUDAFFT_STATUS_DEVICE_OUT_OF_MEMORY,
                        "%s needs %zu bytes of test-device memory; %zu of %zu are left", what,
                        bytes, left, executor_test_device.memory_bytes);
  unsigned char *block = NULL;
  if (posix_memalign((void **)&block, HEADER, HEADER + bytes) != 0) {
    pthread_mutex_lock(&d->memory_lock);
    d->memory_used -= bytes;
    pthread_mutex_unlock(&d->memory_lock);
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY, "test device: no memory");
  }
  memcpy(block, &bytes, sizeof bytes);
  memset(block + HEADER, 0xcd, bytes); /* undefined content: not zeros */
  atomic_fetch_add(&executor_test_device.live_allocs, 1);
  *ptr = block + HEADER;
  return CUDAFFT_STATUS_OK;
}

/* Stream-ordered, as on CUDA: the block goes once the stream has run everything queued before
 * (a kind's work ahead may still read it); its bytes count as free at once. */
static void
fake_free(void *ctx, void *ptr)
{
  FakeDevice *d = ctx;
  unsigned char *block = (unsigned char *)ptr - HEADER;
  size_t bytes;
  memcpy(&bytes, block, sizeof bytes);
  pthread_mutex_lock(&d->memory_lock);
  d->memory_used -= bytes;
  pthread_mutex_unlock(&d->memory_lock);
  const Command c = {.type = CMD_FREE, .dst = block};
  if (enqueue_new(d, &c) != CUDAFFT_STATUS_OK)
    release_block(block); /* no memory for the command: nothing can run on the stream after all */
}

/* ---- the table ---- */

static void
fake_close(void *ctx)
{
  FakeDevice *d = ctx;
  pthread_mutex_lock(&d->lock);
  /* No batch may still be queued (its upload, copy or marker: a batch nobody waited for). Work
   * ahead may (kernels queued after the last batch's marker, which no wait covers), and frees:
   * they are stream-ordered after it, and the worker runs both before it stops, as the CUDA
   * device's close waits for its frees, which wait for the compute stream. Under load the worker
   * may still have them when the executor stops. */
  for (const Command *c = d->head; c; c = c->next)
    if (c->type != CMD_FREE && c->type != CMD_KERNEL)
      misused("close with a batch's upload, copy or marker queued");
  d->stop = 1;
  pthread_cond_signal(&d->wake);
  pthread_mutex_unlock(&d->lock);
  pthread_join(d->worker, NULL);
  if (d->memory_used != 0)
    misused("close with device memory allocated");
  pthread_cond_destroy(&d->marked);
  pthread_cond_destroy(&d->wake);
  pthread_mutex_destroy(&d->lock);
  pthread_mutex_destroy(&d->memory_lock);
  free(d);
  atomic_fetch_add(&executor_test_device.closes, 1);
}

static CudafftStatus
fake_open(int device, void **ctx, CudafftExecutorLimits *limits)
{
  FakeDevice *d = calloc(1, sizeof *d);
  if (!d)
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY, "test device: no memory");
  d->random = 0x1234567u + (uint64_t)device;
  pthread_mutex_init(&d->lock, NULL);
  pthread_mutex_init(&d->memory_lock, NULL);
  pthread_cond_init(&d->wake, NULL);
  pthread_cond_init(&d->marked, NULL);
  if (pthread_create(&d->worker, NULL, worker_main, d) != 0) {
    pthread_cond_destroy(&d->marked);
    pthread_cond_destroy(&d->wake);
    pthread_mutex_destroy(&d->lock);
    pthread_mutex_destroy(&d->memory_lock);
    free(d);
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY, "test device: no thread");
  }
  *ctx = d;
  *limits = executor_test_device.limits;
  atomic_fetch_add(&executor_test_device.opens, 1);
  return CUDAFFT_STATUS_OK;
}

static void
fake_slot_free(void *ctx, CudafftSlotMemory *mem)
{
  FakeSlot *slot = mem->handle;
  if (slot) {
    if (slot->in_use)
      misused("slot freed while its batch was in use");
    free(slot);
    atomic_fetch_sub(&executor_test_device.live_slots, 1);
  }
  free(mem->host_in);
  free(mem->host_out);
  if (mem->device_in)
    fake_free(ctx, mem->device_in);
  if (mem->device_out)
    fake_free(ctx, mem->device_out);
  *mem = (CudafftSlotMemory){0};
}

static CudafftStatus
fake_slot_alloc(void *ctx, size_t in_bytes, size_t out_bytes, CudafftSlotMemory *mem)
{
  *mem = (CudafftSlotMemory){0};
  int budget = atomic_load(&executor_test_device.slot_budget);
  while (budget > 0 &&
         !atomic_compare_exchange_weak(&executor_test_device.slot_budget, &budget, budget - 1))
    ;
  if (budget == 0)
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY,
                        "test device: no staging memory for another slot (the test's budget)");
  mem->handle = calloc(1, sizeof(FakeSlot));
  if (mem->handle)
    atomic_fetch_add(&executor_test_device.live_slots, 1);
  if (!mem->handle || posix_memalign(&mem->host_in, HEADER, in_bytes) != 0 ||
      posix_memalign(&mem->host_out, HEADER, out_bytes) != 0) {
    fake_slot_free(ctx, mem);
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY, "test device: no staging memory");
  }
  CudafftStatus status = fake_alloc(ctx, in_bytes, "the executor's input staging", &mem->device_in);
  if (status == CUDAFFT_STATUS_OK)
    status = fake_alloc(ctx, out_bytes, "the executor's output staging", &mem->device_out);
  if (status != CUDAFFT_STATUS_OK)
    fake_slot_free(ctx, mem);
  return status;
}

static void *
fake_stream(void *ctx)
{
  return ctx;
}

/* Whether the calling thread is the one the executor named `name`. */
static int
on_thread(const char *name)
{
  char own[16] = "";
  prctl(PR_GET_NAME, (unsigned long)own, 0UL, 0UL, 0UL);
  return strcmp(own, name) == 0;
}

static void
begin_batch(FakeSlot *slot)
{
  /* Not yet in use, or in use by this batch already (finish after upload). */
  slot->in_use = 1;
}

static CudafftStatus
fake_upload(void *ctx, CudafftSlotMemory *mem, size_t bytes)
{
  FakeSlot *slot = mem->handle;
  if (slot->in_use)
    misused("upload before the slot's last batch was waited for");
  begin_batch(slot);
  const unsigned launch_us = atomic_load(&executor_test_device.launch_us);
  if (launch_us)
    sleep_us(launch_us);
  const uint64_t batch = atomic_fetch_add(&executor_test_device.uploads, 1) + 1;
  if (on_thread("cudafft-launch"))
    atomic_fetch_add(&executor_test_device.launcher_uploads, 1);
  /* The batch is recorded before the flag is cleared: the test reads it once the flag is. */
  if (atomic_load(&executor_test_device.fail_next_upload)) {
    atomic_store(&executor_test_device.failed_upload_batch, batch);
    atomic_store(&executor_test_device.fail_next_upload, 0);
    return cudafft_fail(CUDAFFT_STATUS_CUDA_ERROR, "test device: upload refused (injected)");
  }
  const Command c = {
      .type = CMD_UPLOAD, .dst = mem->device_in, .src = mem->host_in, .bytes = bytes};
  return enqueue_new(ctx, &c);
}

static CudafftStatus
fake_finish(void *ctx, CudafftSlotMemory *mem, size_t bytes)
{
  FakeDevice *d = ctx;
  FakeSlot *slot = mem->handle;
  if (slot->finished)
    misused("finish twice without a wait");
  begin_batch(slot);
  slot->finished = 1;
  const Command copy = {
      .type = CMD_COPY, .dst = mem->host_out, .src = mem->device_out, .bytes = bytes};
  CudafftStatus status = enqueue_new(d, &copy);
  pthread_mutex_lock(&d->lock);
  slot->marks_queued++;
  pthread_mutex_unlock(&d->lock);
  const Command mark = {.type = CMD_MARK, .slot = slot};
  if (status == CUDAFFT_STATUS_OK)
    status = enqueue_new(d, &mark);
  if (status != CUDAFFT_STATUS_OK) {
    pthread_mutex_lock(&d->lock);
    slot->marks_queued--;
    pthread_mutex_unlock(&d->lock);
  }
  return status;
}

static CudafftStatus
fake_wait(void *ctx, CudafftSlotMemory *mem)
{
  FakeDevice *d = ctx;
  FakeSlot *slot = mem->handle;
  if (!slot->in_use || !slot->finished)
    misused(!slot->in_use ? "wait for a slot not in use" : "wait before finish");
  /* Whether this batch fails is settled before it is counted: the test sets the flag for a later
   * batch once the count shows this one. */
  const int fail = atomic_load(&executor_test_device.fail_next_wait);
  const uint64_t batch = atomic_fetch_add(&executor_test_device.waits, 1) + 1;
  if (on_thread("cudafft-done"))
    atomic_fetch_add(&executor_test_device.completer_waits, 1);
  pthread_mutex_lock(&d->lock);
  if (slot->marks_done < slot->marks_queued)
    atomic_fetch_add(&executor_test_device.unfinished_waits, 1);
  while (slot->marks_done < slot->marks_queued)
    pthread_cond_wait(&d->marked, &d->lock);
  pthread_mutex_unlock(&d->lock);
  slot->in_use = 0;
  slot->finished = 0;
  if (fail) {
    atomic_store(&executor_test_device.failed_wait_batch, batch);
    atomic_store(&executor_test_device.fail_next_wait, 0);
    return cudafft_fail(CUDAFFT_STATUS_CUDA_ERROR,
                        "test device: the batch's work failed (injected)");
  }
  return CUDAFFT_STATUS_OK;
}

void
executor_test_stream_launch(void *stream, void (*fn)(const void *args), const void *args,
                            size_t args_bytes)
{
  Command c = {.type = CMD_KERNEL, .fn = fn};
  if (args_bytes > MAX_ARGS) {
    misused("kernel arguments too large");
    return;
  }
  memcpy(c.args, args, args_bytes);
  if (enqueue_new(stream, &c) != CUDAFFT_STATUS_OK)
    misused("kernel launch without memory for it");
}

const CudafftExecutorDevice executor_test_device_table = {
    .open = fake_open,
    .close = fake_close,
    .slot_alloc = fake_slot_alloc,
    .slot_free = fake_slot_free,
    .stream = fake_stream,
    .upload = fake_upload,
    .finish = fake_finish,
    .wait = fake_wait,
    .alloc = fake_alloc,
    .free = fake_free,
};
