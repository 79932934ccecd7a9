/* test_executor.c: the executor's host logic (lib/executor/executor.c) on the test device
 * (executor_test_device.c: host memory, a worker thread with random delays), with kinds of work
 * that run on the CPU the way the engines' kinds will run on the GPU: per-job descriptors and a
 * unit -> job map in the batch's auxiliary data, per-owner state in device memory that each job
 * reads and updates (so a job's output depends on its owner's earlier jobs having run, in order).
 *
 * What it checks:
 * - every output byte against an independent computation of the same job (outputs poisoned with
 *   the complement of the expected bytes beforehand, guard bytes after them);
 * - per owner: its jobs in increasing batches (one per batch, in order), and on the "device" the
 *   kinds count two jobs of an owner in one batch or out of order;
 * - group commit: a lone submission goes out at once, in its own batch; submissions made while two
 *   batches are in flight go out together; a job that does not fit stops its slot taking more;
 *   under load, batches hold several jobs;
 * - limits and errors: too large jobs, misuse, out of device memory (naming what), an injected
 *   launch, upload or device failure poisoning exactly its batch, later batches unaffected;
 * - owners made and destroyed while others stream, acquire/release from several threads, the
 *   last release with work still queued (it runs, nothing hangs, everything is freed).
 * Random data from CUDAFFT_TEST_SEED or /dev/urandom (the seed is printed).
 *
 * Length: past the ~800 lines a file usually keeps, as one test program (meson runs each as one
 * test of its suite) whose cases share one harness and one independent reference model; split,
 * each part would be a program of its own rebuilding the same setup. */
#define _POSIX_C_SOURCE 200809L

#include "errors.h"
#include "executor_test_device.h"
#include "test_util.h"
#include "worker_util.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_OWNERS 256
#define AHEAD 6  /* jobs an owner submits before it waits, at most */
#define GUARD 64 /* bytes after each output that must stay untouched */
#define UNIT 64  /* output bytes of one work unit of the "units" kind */
#define TAG_BYTES 1
#define TAG_UNITS 2

/* ---- the owners' device state, and what the "device" counts ---- */

typedef struct {
  uint64_t sum;        /* hash of everything the owner's jobs read, in order */
  uint64_t last_seq;   /* the owner's job number of its last job run */
  uint64_t last_batch; /* the device batch that ran it */
  uint64_t jobs;
} OwnerState;

static atomic_long same_batch_violations; /* two jobs of one owner in one device batch */
static atomic_long order_violations;      /* an owner's job run after a later one */
static atomic_long kind_owner_violations; /* a kind's launch got two jobs of one owner */
static atomic_long executed[MAX_OWNERS];  /* jobs run, per owner id */

static uint64_t
initial_sum(unsigned owner_id)
{
  return 0x9e3779b97f4a7c15u * (owner_id + 1u);
}

/* ---- the test's job and its descriptor on the device ---- */

typedef struct {
  CudafftJob job;    /* first: kinds cast the CudafftJob pointers back */
  OwnerState *state; /* device memory; NULL: a stateless job (it only counts) */
  uint64_t seq;      /* the owner's job number, from 1 */
  unsigned owner_id;
  uint8_t a, b;
  int reset; /* the job starts its owner's state afresh */
} TestJob;

typedef struct {
  const uint8_t *in;
  uint8_t *out;
  OwnerState *state;
  uint64_t in_bytes, out_bytes, seq;
  uint32_t owner_id;
  uint8_t a, b, reset, pad;
} Desc;

typedef struct {
  const void *aux;
  size_t count, units;
} KernelArgs;

static void
describe(const CudafftJob *job, Desc *d)
{
  const TestJob *t = (const TestJob *)job;
  *d = (Desc){.in = job->device_in,
              .out = job->device_out,
              .state = t->state,
              .in_bytes = job->in_bytes,
              .out_bytes = job->out_bytes,
              .seq = t->seq,
              .owner_id = t->owner_id,
              .a = t->a,
              .b = t->b,
              .reset = (uint8_t)t->reset};
}

static void
check_distinct_owners(CudafftJob *const *jobs, size_t count)
{
  for (size_t i = 0; i < count; i++)
    for (size_t j = i + 1; j < count; j++)
      if (jobs[i]->owner == jobs[j]->owner)
        atomic_fetch_add(&kind_owner_violations, 1);
}

/* On the device: the state before the job. */
static uint64_t
sum_before(const Desc *d)
{
  if (d->reset)
    return initial_sum(d->owner_id);
  return d->state ? d->state->sum : 0;
}

static uint64_t
fnv1a(const uint8_t *data, size_t bytes)
{
  uint64_t h = 0xcbf29ce484222325u;
  for (size_t i = 0; i < bytes; i++)
    h = (h ^ (data ? data[i] : 0)) * 0x100000001b3u;
  return h;
}

/* On the device, after the job's outputs: its owner's state moves on. */
static void
update_state(const Desc *d, uint64_t tag)
{
  atomic_fetch_add(&executed[d->owner_id], 1);
  OwnerState *s = d->state;
  if (!s)
    return;
  const uint64_t batch = atomic_load(&executor_test_device.current_batch);
  if (s->last_batch == batch)
    atomic_fetch_add(&same_batch_violations, 1);
  if (!d->reset && d->seq <= s->last_seq)
    atomic_fetch_add(&order_violations, 1);
  s->sum = (sum_before(d) ^ fnv1a(d->in, d->in_bytes)) * 0x100000001b3u + d->out_bytes + tag;
  s->last_seq = d->seq;
  s->last_batch = batch;
  s->jobs++;
}

/* Kind "bytes": a header (the job count) and one descriptor per job; one "kernel" over all. */

static size_t
bytes_aux_bytes(CudafftJob *const *jobs, size_t count)
{
  (void)jobs;
  return sizeof(uint64_t) + count * sizeof(Desc);
}

static void
bytes_prepare(CudafftJob *const *jobs, size_t count, void *host_aux, void *device_aux)
{
  (void)device_aux;
  const uint64_t header = count;
  memcpy(host_aux, &header, sizeof header);
  Desc *descs = (Desc *)((uint8_t *)host_aux + sizeof header);
  for (size_t i = 0; i < count; i++)
    describe(jobs[i], &descs[i]);
}

static void
bytes_kernel(const void *args)
{
  const KernelArgs *k = args;
  const uint64_t count = *(const uint64_t *)k->aux;
  const Desc *descs = (const Desc *)((const uint8_t *)k->aux + sizeof(uint64_t));
  for (uint64_t j = 0; j < count; j++) {
    const Desc *d = &descs[j];
    const uint64_t sum = sum_before(d);
    for (uint64_t i = 0; i < d->out_bytes; i++) {
      const uint8_t x = d->in_bytes ? d->in[i % d->in_bytes] : 0;
      d->out[i] = (uint8_t)(d->a * x + d->b + (uint8_t)(sum >> ((i & 7) * 8)) + (uint8_t)i);
    }
    update_state(d, TAG_BYTES);
  }
}

static CudafftStatus
bytes_launch(CudafftJob *const *jobs, size_t count, void *device_aux, void *stream)
{
  check_distinct_owners(jobs, count);
  const KernelArgs k = {.aux = device_aux, .count = count};
  executor_test_stream_launch(stream, bytes_kernel, &k, sizeof k);
  return CUDAFFT_STATUS_OK;
}

static const CudafftWorkKind bytes_kind = {
    .name = "bytes kind",
    .aux_bytes = bytes_aux_bytes,
    .prepare = bytes_prepare,
    .launch = bytes_launch,
};

/* Kind "units": descriptors, then a map from each 64-byte unit of output to (job, unit of the
 * job), as the engines' kernels will take one block per unit; two "kernels": the outputs by unit,
 * then the owners' states by job. */

static size_t
units_of(const CudafftJob *job)
{
  return (job->out_bytes + UNIT - 1) / UNIT;
}

static size_t
units_aux_bytes(CudafftJob *const *jobs, size_t count)
{
  size_t units = 0;
  for (size_t i = 0; i < count; i++)
    units += units_of(jobs[i]);
  return count * sizeof(Desc) + units * 2 * sizeof(uint32_t);
}

static void
units_prepare(CudafftJob *const *jobs, size_t count, void *host_aux, void *device_aux)
{
  (void)device_aux;
  Desc *descs = host_aux;
  uint32_t *map = (uint32_t *)(descs + count);
  for (size_t i = 0; i < count; i++) {
    describe(jobs[i], &descs[i]);
    for (size_t u = 0; u < units_of(jobs[i]); u++) {
      *map++ = (uint32_t)i;
      *map++ = (uint32_t)u;
    }
  }
}

static void
units_output_kernel(const void *args)
{
  const KernelArgs *k = args;
  const Desc *descs = k->aux;
  const uint32_t *map = (const uint32_t *)(descs + k->count);
  for (size_t u = 0; u < k->units; u++) {
    const Desc *d = &descs[map[2 * u]];
    const uint64_t first = (uint64_t)map[2 * u + 1] * UNIT;
    const uint64_t sum = sum_before(d);
    for (uint64_t i = first; i < first + UNIT && i < d->out_bytes; i++) {
      const uint8_t x = d->in_bytes ? d->in[d->in_bytes - 1 - i % d->in_bytes] : 0;
      d->out[i] = x ^ (uint8_t)(d->a + (uint8_t)(sum >> ((i & 7) * 8))) ^ (uint8_t)(i >> 6);
    }
  }
}

static void
units_state_kernel(const void *args)
{
  const KernelArgs *k = args;
  const Desc *descs = k->aux;
  for (size_t j = 0; j < k->count; j++)
    update_state(&descs[j], TAG_UNITS);
}

/* The outputs' "kernel" alone (the ahead kind's launch). */
static CudafftStatus
units_outputs_launch(CudafftJob *const *jobs, size_t count, void *device_aux, void *stream)
{
  check_distinct_owners(jobs, count);
  size_t units = 0;
  for (size_t i = 0; i < count; i++)
    units += units_of(jobs[i]);
  const KernelArgs k = {.aux = device_aux, .count = count, .units = units};
  executor_test_stream_launch(stream, units_output_kernel, &k, sizeof k);
  return CUDAFFT_STATUS_OK;
}

/* The states' "kernel" alone (the ahead kind's work ahead). */
static CudafftStatus
units_states_launch(CudafftJob *const *jobs, size_t count, void *device_aux, void *stream)
{
  (void)jobs;
  const KernelArgs k = {.aux = device_aux, .count = count};
  executor_test_stream_launch(stream, units_state_kernel, &k, sizeof k);
  return CUDAFFT_STATUS_OK;
}

static CudafftStatus
units_launch(CudafftJob *const *jobs, size_t count, void *device_aux, void *stream)
{
  units_outputs_launch(jobs, count, device_aux, stream);
  return units_states_launch(jobs, count, device_aux, stream);
}

static const CudafftWorkKind units_kind = {
    .name = "units kind",
    .aux_bytes = units_aux_bytes,
    .prepare = units_prepare,
    .launch = units_launch,
};

/* Kind "failing": its launch fails, as a launch with a bad configuration would. */
static CudafftStatus
failing_launch(CudafftJob *const *jobs, size_t count, void *device_aux, void *stream)
{
  (void)jobs, (void)count, (void)device_aux, (void)stream;
  return cudafft_fail(CUDAFFT_STATUS_CUDA_ERROR, "failing_kernel<<<>>>: refused (injected)");
}

static const CudafftWorkKind failing_kind = {.name = "failing kind", .launch = failing_launch};

/* Kind "ahead": the units kind with the owners' states moved on by its work ahead (launch_ahead,
 * after the batch's marker) instead of by its launch, as the convolution's next MAC share goes:
 * each job's output reads the state its owner's previous job's work ahead left. */
static const CudafftWorkKind ahead_kind = {
    .name = "ahead kind",
    .aux_bytes = units_aux_bytes,
    .prepare = units_prepare,
    .launch = units_outputs_launch,
    .launch_ahead = units_states_launch,
};

static const CudafftWorkKind failing_ahead_kind = {
    .name = "failing ahead kind",
    .aux_bytes = units_aux_bytes,
    .prepare = units_prepare,
    .launch = units_outputs_launch,
    .launch_ahead = failing_launch, /* the executor's message names the work ahead */
};

/* ---- owners and their jobs on the host, with the reference ---- */

typedef struct {
  TestJob t;
  uint8_t *in;       /* the input given to submit; NULL: zeros */
  uint8_t *in_buf;   /* max bytes */
  uint8_t *out;      /* max + GUARD bytes */
  uint8_t *expected; /* max bytes */
} Pending;

typedef struct {
  CudafftJobOwner owner;
  OwnerState *state;
  unsigned id;
  uint64_t seq;
  uint64_t sum; /* the reference: the owner's state after its jobs so far */
  int fresh;    /* its next job starts the state afresh */
  uint64_t last_batch;
  Pending pending[AHEAD];
} Owner;

static void
owner_init(Owner *o, unsigned id, size_t max)
{
  memset(o, 0, sizeof *o);
  o->id = id;
  o->fresh = 1;
  for (int i = 0; i < AHEAD; i++) {
    o->pending[i].in_buf = test_malloc(max + 1);
    o->pending[i].out = test_malloc(max + GUARD);
    o->pending[i].expected = test_malloc(max + 1);
  }
}

static void
owner_clear(Owner *o)
{
  for (int i = 0; i < AHEAD; i++) {
    free(o->pending[i].in_buf);
    free(o->pending[i].out);
    free(o->pending[i].expected);
  }
}

/* Device state for the owner (a fresh engine object): its next job resets it. */
static CudafftStatus
owner_attach(Owner *o, CudafftExecutor *ex)
{
  memset(&o->owner, 0, sizeof o->owner);
  o->fresh = 1;
  o->last_batch = 0;
  return cudafft_executor_alloc(ex, sizeof(OwnerState), "a test owner's state", (void **)&o->state);
}

static void
owner_detach(Owner *o, CudafftExecutor *ex)
{
  cudafft_executor_free(ex, o->state);
  o->state = NULL;
}

static size_t
aux_alone(const CudafftWorkKind *kind, size_t out_bytes)
{
  if (kind == &bytes_kind)
    return sizeof(uint64_t) + sizeof(Desc);
  return sizeof(Desc) + (out_bytes + UNIT - 1) / UNIT * 2 * sizeof(uint32_t);
}

/* A size for a job: 0, near max, or small, at random. */
static size_t
random_size(Rng *r, size_t max)
{
  const unsigned pick = (unsigned)rng_range(r, 0, 9);
  if (pick < 2)
    return 0;
  if (pick == 2)
    return max - rng_range(r, 0, max < 300 ? max : 300);
  return rng_range(r, 1, max < 2048 ? max : 2048);
}

/* The reference of one job: its expected output, and the owner's state after it. */
static void
reference(const Owner *o, const Pending *p, uint64_t *sum)
{
  const TestJob *t = &p->t;
  const size_t in_bytes = t->job.in_bytes, out_bytes = t->job.out_bytes;
  const uint64_t before = t->reset ? initial_sum(o->id) : t->state ? *sum : 0;
  for (size_t i = 0; i < out_bytes; i++) {
    const unsigned shift = (unsigned)(i % 8) * 8;
    const uint8_t state_byte = (uint8_t)(before >> shift);
    if (t->job.kind == &bytes_kind) {
      const uint8_t x = in_bytes && p->in ? p->in[i % in_bytes] : 0;
      p->expected[i] = (uint8_t)(t->a * x + t->b + state_byte + (uint8_t)(i & 0xff));
    } else {
      const uint8_t x = in_bytes && p->in ? p->in[in_bytes - 1 - i % in_bytes] : 0;
      p->expected[i] = (uint8_t)(x ^ (uint8_t)(t->a + state_byte) ^ (uint8_t)((i / UNIT) & 0xff));
    }
  }
  uint64_t h = 0xcbf29ce484222325u;
  for (size_t i = 0; i < in_bytes; i++)
    h = (h ^ (p->in ? p->in[i] : 0)) * 0x100000001b3u;
  if (t->state)
    *sum = (before ^ h) * 0x100000001b3u + out_bytes +
           (t->job.kind == &bytes_kind ? TAG_BYTES : TAG_UNITS);
}

/* Fills pending job p of owner o with the given kind and sizes (random parameters and input),
 * its poisoned output and its reference. */
static void
make_sized_job(Owner *o, Pending *p, Rng *r, const CudafftWorkKind *kind, size_t in_bytes,
               size_t out_bytes, int stateless)
{
  TestJob *t = &p->t;
  memset(&t->job, 0, sizeof t->job);
  t->job.kind = kind;
  t->job.owner = &o->owner;
  t->job.in_bytes = in_bytes;
  t->job.out_bytes = out_bytes;
  t->state = stateless ? NULL : o->state;
  t->seq = ++o->seq;
  t->owner_id = o->id;
  t->a = (uint8_t)(rng_next(r) | 1);
  t->b = (uint8_t)rng_next(r);
  t->reset = !stateless && o->fresh;
  o->fresh = 0;
  p->in = rng_range(r, 0, 9) == 0 ? NULL : p->in_buf;
  for (size_t i = 0; i < in_bytes; i++)
    p->in_buf[i] = (uint8_t)rng_next(r);
  reference(o, p, &o->sum);
  for (size_t i = 0; i < out_bytes; i++)
    p->out[i] = (uint8_t)~p->expected[i];
  memset(p->out + out_bytes, 0xa5, GUARD);
}

/* The same with a random kind and random sizes up to max. */
static void
make_job(Owner *o, Pending *p, Rng *r, size_t max, int stateless)
{
  const CudafftWorkKind *kind = rng_next(r) & 1 ? &bytes_kind : &units_kind;
  const size_t out_bytes = random_size(r, max);
  const size_t in_bytes = random_size(r, max - aux_alone(kind, out_bytes));
  make_sized_job(o, p, r, kind, in_bytes, out_bytes, stateless);
}

/* Checks a collected job; returns 1 if its output and batch order are right. */
static int
verify_job(Owner *o, const Pending *p, CudafftStatus status, const char *where)
{
  const CudafftJob *job = &p->t.job;
  if (status != CUDAFFT_STATUS_OK) {
    worker_fail("%s: owner %u job %llu: %s (%s)", where, o->id, (unsigned long long)p->t.seq,
                cudafft_status_name(status), cudafft_last_error_message());
    return 0;
  }
  if (job->batch <= o->last_batch) {
    worker_fail("%s: owner %u job %llu ran in batch %llu, its previous job in batch %llu", where,
                o->id, (unsigned long long)p->t.seq, (unsigned long long)job->batch,
                (unsigned long long)o->last_batch);
    return 0;
  }
  o->last_batch = job->batch;
  for (size_t i = 0; i < job->out_bytes; i++)
    if (p->out[i] != p->expected[i]) {
      worker_fail("%s: owner %u job %llu (%s, %zu in, %zu out, batch %llu): byte %zu is 0x%02x, "
                  "expected 0x%02x",
                  where, o->id, (unsigned long long)p->t.seq, job->kind->name, job->in_bytes,
                  job->out_bytes, (unsigned long long)job->batch, i, p->out[i], p->expected[i]);
      return 0;
    }
  for (size_t i = 0; i < GUARD; i++)
    if (p->out[job->out_bytes + i] != 0xa5) {
      worker_fail("%s: owner %u job %llu: guard byte %zu after the output was written", where,
                  o->id, (unsigned long long)p->t.seq, i);
      return 0;
    }
  return 1;
}

/* ---- helpers for the main thread ---- */

/* Polls (the test may; the library may not) until *counter reaches value, or gives up. */
static int
await_counter(atomic_uint_fast64_t *counter, uint64_t value)
{
  for (int i = 0; i < 10000; i++) {
    if (atomic_load(counter) >= value)
      return 1;
    sleep_ms(1);
  }
  return 0;
}

static void
reset_device_counters(void)
{
  atomic_store(&same_batch_violations, 0);
  atomic_store(&order_violations, 0);
  atomic_store(&kind_owner_violations, 0);
  for (int i = 0; i < MAX_OWNERS; i++)
    atomic_store(&executed[i], 0);
}

static void
set_limits(size_t max_job_bytes, unsigned slots, unsigned in_flight, size_t max_jobs,
           unsigned delay_us)
{
  executor_test_device_reset();
  executor_test_device.limits = (CudafftExecutorLimits){.max_job_bytes = max_job_bytes,
                                                        .slots = slots,
                                                        .max_in_flight = in_flight,
                                                        .max_jobs = max_jobs,
                                                        .max_slots = slots};
  atomic_store(&executor_test_device.delay_us, delay_us);
  executor_test_device.memory_bytes = (size_t)256 << 20;
  reset_device_counters();
}

static CudafftExecutor *
acquire(int device)
{
  CudafftExecutor *ex = NULL;
  const CudafftStatus status =
      cudafft_executor_acquire_on(&executor_test_device_table, device, &ex);
  if (status != CUDAFFT_STATUS_OK)
    test_abort("acquiring the test executor %d: %s (%s)", device, cudafft_status_name(status),
               cudafft_last_error_message());
  return ex;
}

/* After an executor's last release: everything it had is freed, and the device saw no misuse. */
static void
check_released(const char *what)
{
  test_check(
      atomic_load(&executor_test_device.opens) == atomic_load(&executor_test_device.closes) &&
          atomic_load(&executor_test_device.live_slots) == 0 &&
          atomic_load(&executor_test_device.live_allocs) == 0,
      "%s: after the last release, %d executors made, %d stopped, %d slots and %ld "
      "allocations left",
      what, atomic_load(&executor_test_device.opens), atomic_load(&executor_test_device.closes),
      atomic_load(&executor_test_device.live_slots),
      atomic_load(&executor_test_device.live_allocs));
  test_check(atomic_load(&executor_test_device.misuse) == 0 &&
                 atomic_load(&same_batch_violations) == 0 && atomic_load(&order_violations) == 0 &&
                 atomic_load(&kind_owner_violations) == 0,
             "%s: device calls in the contract's order (%d misuses%s%s), no two jobs of an owner "
             "in a batch (%ld on the device, %ld in launches), none out of order (%ld)",
             what, atomic_load(&executor_test_device.misuse),
             atomic_load(&executor_test_device.misuse_first) ? ", the first: " : "",
             atomic_load(&executor_test_device.misuse_first)
                 ? atomic_load(&executor_test_device.misuse_first)
                 : "",
             atomic_load(&same_batch_violations), atomic_load(&kind_owner_violations),
             atomic_load(&order_violations));
}

/* Submits pending job p of o (made by make_job) and reports a refusal. */
static int
submit(CudafftExecutor *ex, Pending *p, const char *where)
{
  const CudafftStatus status = cudafft_executor_submit(ex, &p->t.job, p->in, p->out);
  if (status != CUDAFFT_STATUS_OK)
    worker_fail("%s: submit: %s (%s)", where, cudafft_status_name(status),
                cudafft_last_error_message());
  return status == CUDAFFT_STATUS_OK;
}

static int
collect(CudafftExecutor *ex, Owner *o, Pending *p, const char *where)
{
  const CudafftStatus status = cudafft_executor_wait(ex, &p->t.job);
  return verify_job(o, p, status, where);
}

/* Makes and attaches owners 0 .. count - 1 (4096-byte jobs at most). */
static void
owners_attach(CudafftExecutor *ex, Owner *owners, unsigned count, const char *what)
{
  for (unsigned i = 0; i < count; i++) {
    owner_init(&owners[i], i, 4096);
    if (owner_attach(&owners[i], ex) != CUDAFFT_STATUS_OK)
      test_abort("%s: owner state: %s", what, cudafft_last_error_message());
  }
}

static void
owners_detach(CudafftExecutor *ex, Owner *owners, unsigned count)
{
  for (unsigned i = 0; i < count; i++) {
    owner_detach(&owners[i], ex);
    owner_clear(&owners[i]);
  }
}

/* ---- 1. the API's rules ---- */

static void
test_api(Rng *r)
{
  set_limits(4096, 4, 2, 8, 0);
  CudafftExecutor *ex = acquire(1), *again = acquire(1);
  test_check(ex == again && cudafft_executor_device(ex) == 1 &&
                 cudafft_executor_max_job_bytes(ex) == 4096 &&
                 atomic_load(&executor_test_device.opens) == 1,
             "api: a second acquire of a device shares its executor (device %d, %zu bytes a job, "
             "%d made)",
             cudafft_executor_device(ex), cudafft_executor_max_job_bytes(ex),
             atomic_load(&executor_test_device.opens));
  cudafft_executor_release(again);

  Owner o;
  owner_init(&o, 0, 4096);
  test_check(owner_attach(&o, ex) == CUDAFFT_STATUS_OK, "api: owner state allocated");

  /* The largest jobs there are, and one byte more of each part. */
  Pending *p = &o.pending[0];
  make_sized_job(&o, p, r, &bytes_kind, 4096 - aux_alone(&bytes_kind, 0), 4096, 0);
  p->in = p->in_buf;
  o.sum = 0;
  reference(&o, p, &o.sum); /* again, with the input given (make_sized_job may pick zeros) */
  TestJob big = p->t;
  big.job.in_bytes++;
  const CudafftStatus too_big_in = cudafft_executor_submit(ex, &big.job, p->in_buf, p->out);
  test_check(too_big_in == CUDAFFT_STATUS_INVALID_VALUE &&
                 strstr(cudafft_last_error_message(), "bytes kind"),
             "api: a job one input byte over the limit is refused: %s (%s)",
             cudafft_status_name(too_big_in), cudafft_last_error_message());
  big.job.in_bytes--;
  big.job.out_bytes++;
  const CudafftStatus too_big_out = cudafft_executor_submit(ex, &big.job, p->in_buf, p->out);
  test_check(too_big_out == CUDAFFT_STATUS_INVALID_VALUE,
             "api: a job one output byte over the limit is refused: %s",
             cudafft_status_name(too_big_out));
  test_check(submit(ex, p, "api largest job"), "api: the largest job is taken");
  const CudafftStatus twice = cudafft_executor_submit(ex, &p->t.job, p->in_buf, p->out);
  test_check(twice == CUDAFFT_STATUS_INVALID_VALUE,
             "api: submitting an outstanding job again is refused: %s", cudafft_status_name(twice));
  collect(ex, &o, p, "api largest job");
  report_worker_failures("api: the largest job's every output byte");
  const CudafftStatus again_wait = cudafft_executor_wait(ex, &p->t.job);
  test_check(again_wait == CUDAFFT_STATUS_INVALID_VALUE,
             "api: waiting for a collected job is refused: %s", cudafft_status_name(again_wait));

  CudafftJob blank = {0};
  test_check(cudafft_executor_submit(ex, &blank, NULL, NULL) == CUDAFFT_STATUS_NULL_POINTER &&
                 cudafft_executor_submit(NULL, &p->t.job, NULL, NULL) ==
                     CUDAFFT_STATUS_NULL_POINTER &&
                 cudafft_executor_wait(ex, NULL) == CUDAFFT_STATUS_NULL_POINTER,
             "api: NULL executor, job or kind refused");

  /* Device memory: 0 bytes, too much (naming what), and the others unaffected. */
  void *none = (void *)1;
  test_check(cudafft_executor_alloc(ex, 0, "nothing", &none) == CUDAFFT_STATUS_OK && !none,
             "api: allocating 0 bytes gives NULL");
  void *huge = (void *)1;
  const CudafftStatus oom =
      cudafft_executor_alloc(ex, (size_t)1 << 30, "a convolution's 1 GB delay line", &huge);
  test_check(oom == CUDAFFT_STATUS_DEVICE_OUT_OF_MEMORY && !huge &&
                 strstr(cudafft_last_error_message(), "1 GB delay line"),
             "api: too large an allocation fails naming it: %s (%s)", cudafft_status_name(oom),
             cudafft_last_error_message());
  for (int i = 0; i < 3; i++) {
    make_job(&o, &o.pending[i], r, 4096, 0);
    submit(ex, &o.pending[i], "api after oom");
  }
  for (int i = 0; i < 3; i++)
    collect(ex, &o, &o.pending[i], "api after oom");
  report_worker_failures("api: jobs after a failed allocation");

  owner_detach(&o, ex);
  owner_clear(&o);
  cudafft_executor_release(ex);
  cudafft_executor_release(NULL);
  check_released("api");
}

/* ---- 2. group commit, in-flight limit, full slots, queued jobs: deterministic ---- */

static void
test_group_commit(Rng *r)
{
  set_limits(4096, 4, 2, 16, 0);
  CudafftExecutor *ex = acquire(2);
  Owner owners[5];
  owners_attach(ex, owners, 5, "group commit");
  /* A small job of owner i in its pending[k]. */
#define SMALL(i, k)                                                                                \
  do {                                                                                             \
    make_job(&owners[i], &owners[i].pending[k], r, 200, 0);                                        \
    submit(ex, &owners[i].pending[k], "group commit");                                             \
  } while (0)

  executor_test_device_pause(1);
  SMALL(0, 0);
  const int first_out = await_counter(&executor_test_device.uploads, 1);
  SMALL(1, 0);
  const int second_out = await_counter(&executor_test_device.uploads, 2);
  test_check(first_out && second_out,
             "group commit: a lone submission goes out at once, and another while one batch is "
             "in flight (%llu uploads)",
             (unsigned long long)atomic_load(&executor_test_device.uploads));
  SMALL(2, 0);
  SMALL(3, 0);
  SMALL(4, 0);
  SMALL(0, 1); /* its first job is in flight: it may join the collecting batch */
  SMALL(2, 1); /* its first job is in the collecting batch: it must go in the next */
  sleep_ms(50);
  test_check(atomic_load(&executor_test_device.uploads) == 2,
             "group commit: with two batches in flight the third waits (%llu uploads)",
             (unsigned long long)atomic_load(&executor_test_device.uploads));
  executor_test_device_pause(0);
  collect(ex, &owners[0], &owners[0].pending[0], "group commit");
  collect(ex, &owners[1], &owners[1].pending[0], "group commit");
  for (unsigned i = 2; i < 5; i++)
    collect(ex, &owners[i], &owners[i].pending[0], "group commit");
  collect(ex, &owners[0], &owners[0].pending[1], "group commit");
  collect(ex, &owners[2], &owners[2].pending[1], "group commit");
  report_worker_failures("group commit: outputs");
  uint64_t b[7] = {owners[0].pending[0].t.job.batch, owners[1].pending[0].t.job.batch,
                   owners[2].pending[0].t.job.batch, owners[3].pending[0].t.job.batch,
                   owners[4].pending[0].t.job.batch, owners[0].pending[1].t.job.batch,
                   owners[2].pending[1].t.job.batch};
  test_check(b[0] == 1 && b[1] == 2 && b[2] == 3 && b[3] == 3 && b[4] == 3 && b[5] == 3 &&
                 b[6] == 4,
             "group commit: the five submissions made while two batches ran went out together, "
             "an owner's second job in the next (batches %llu %llu | %llu %llu %llu %llu | %llu)",
             (unsigned long long)b[0], (unsigned long long)b[1], (unsigned long long)b[2],
             (unsigned long long)b[3], (unsigned long long)b[4], (unsigned long long)b[5],
             (unsigned long long)b[6]);

  /* A job without room in the collecting batch stops it taking more: a smaller later job goes
   * after it, not before. */
  const uint64_t base = atomic_load(&executor_test_device.uploads);
  executor_test_device_pause(1);
  SMALL(0, 0);
  await_counter(&executor_test_device.uploads, base + 1);
  SMALL(1, 0);
  await_counter(&executor_test_device.uploads, base + 2);
  Pending *big3 = &owners[2].pending[0], *big4 = &owners[3].pending[0];
  make_sized_job(&owners[2], big3, r, &bytes_kind, 3000, 100, 0);
  submit(ex, big3, "full slot");
  make_sized_job(&owners[3], big4, r, &bytes_kind, 3000, 100, 0);
  submit(ex, big4, "full slot");
  SMALL(4, 0);
  executor_test_device_pause(0);
  for (unsigned i = 0; i < 5; i++)
    collect(ex, &owners[i], &owners[i].pending[0], "full slot");
  report_worker_failures("full slot: outputs");
  test_check(big3->t.job.batch == base + 3 && big4->t.job.batch == base + 4 &&
                 owners[4].pending[0].t.job.batch == base + 4,
             "group commit: a job without room closes the collecting batch; later jobs follow it "
             "(batches %llu, %llu, %llu after %llu)",
             (unsigned long long)big3->t.job.batch, (unsigned long long)big4->t.job.batch,
             (unsigned long long)owners[4].pending[0].t.job.batch, (unsigned long long)base);

  /* One owner submits more jobs than there are slots before it waits: the rest queue and run in
   * later batches, in order. */
  const uint64_t queue_base = atomic_load(&executor_test_device.uploads);
  executor_test_device_pause(1);
  for (int k = 0; k < AHEAD; k++)
    SMALL(0, k);
  sleep_ms(20);
  const uint64_t queued_uploads = atomic_load(&executor_test_device.uploads);
  executor_test_device_pause(0);
  for (int k = 0; k < AHEAD; k++)
    collect(ex, &owners[0], &owners[0].pending[k], "queued jobs");
  test_check(report_worker_failures("group commit: one owner's 6 jobs before a wait, 4 slots") &&
                 queued_uploads - queue_base == 2,
             "group commit: an owner's jobs beyond the slots queue (2 batches in flight while "
             "held: %llu)",
             (unsigned long long)(queued_uploads - queue_base));

  /* A lone submitter: every job goes out at once, in a batch of its own. */
  const uint64_t lone_base = atomic_load(&executor_test_device.uploads);
  for (int k = 0; k < 100; k++) {
    SMALL(1, 0);
    collect(ex, &owners[1], &owners[1].pending[0], "lone submitter");
  }
  report_worker_failures("group commit: a lone submitter's outputs");
  test_check(atomic_load(&executor_test_device.uploads) - lone_base == 100,
             "group commit: a lone submitter's 100 jobs went out in 100 batches (%llu)",
             (unsigned long long)(atomic_load(&executor_test_device.uploads) - lone_base));
#undef SMALL
  owners_detach(ex, owners, 5);
  cudafft_executor_release(ex);
  check_released("group commit");
}

/* ---- 2b. a job alone: its own threads launch and complete its batch ---- */

static void
test_lone_round_trip(Rng *r)
{
  set_limits(4096, 4, 2, 16, 20);
  CudafftExecutor *ex = acquire(3);
  Owner owners[2];
  owners_attach(ex, owners, 2, "lone round trip");
  for (int k = 0; k < 100; k++) {
    make_job(&owners[0], &owners[0].pending[0], r, 1000, 0);
    submit(ex, &owners[0].pending[0], "lone round trip");
    collect(ex, &owners[0], &owners[0].pending[0], "lone round trip");
  }
  report_worker_failures("lone round trip: outputs");
  test_check(
      atomic_load(&executor_test_device.uploads) == 100 &&
          atomic_load(&executor_test_device.launcher_uploads) == 0 &&
          atomic_load(&executor_test_device.completer_waits) == 0,
      "lone round trip: 100 jobs alone, each launched by its submitting thread and completed "
      "by its waiting one (%llu batches, %llu launched by the launcher thread, %llu "
      "completed by the completion thread)",
      (unsigned long long)atomic_load(&executor_test_device.uploads),
      (unsigned long long)atomic_load(&executor_test_device.launcher_uploads),
      (unsigned long long)atomic_load(&executor_test_device.completer_waits));

  /* Owner 0's lone job is waited for late: owner 1's round trips go on meanwhile (the completion
   * thread takes the older batch), and owner 0 finds its output when it comes. */
  make_job(&owners[0], &owners[0].pending[0], r, 1000, 0);
  submit(ex, &owners[0].pending[0], "late waiter");
  for (int k = 0; k < 20; k++) {
    make_job(&owners[1], &owners[1].pending[0], r, 1000, 0);
    submit(ex, &owners[1].pending[0], "beside a late waiter");
    collect(ex, &owners[1], &owners[1].pending[0], "beside a late waiter");
  }
  collect(ex, &owners[0], &owners[0].pending[0], "late waiter");
  test_check(report_worker_failures("lone round trip: a late waiter's job and 20 of another "
                                    "owner's meanwhile, every output byte") &&
                 atomic_load(&executor_test_device.completer_waits) >= 1,
             "lone round trip: a batch alone whose waiter comes late is completed by the "
             "completion thread (%llu batches there)",
             (unsigned long long)atomic_load(&executor_test_device.completer_waits));
  owners_detach(ex, owners, 2);
  cudafft_executor_release(ex);
  check_released("lone round trip");
}

/* Work ahead: each owner's state moves on after its job's batch is done, and its next job reads
 * it; a failed work ahead fails its batch. */
static void
test_work_ahead(Rng *r)
{
  set_limits(4096, 4, 2, 16, 20);
  CudafftExecutor *ex = acquire(3);
  enum { AHEAD_OWNERS = 4 };
  Owner owners[AHEAD_OWNERS];
  owners_attach(ex, owners, AHEAD_OWNERS, "work ahead");
  for (int k = 0; k < 50; k++) {
    for (unsigned i = 0; i < AHEAD_OWNERS; i++) {
      const size_t out_bytes = random_size(r, 2048);
      make_sized_job(&owners[i], &owners[i].pending[0], r, &ahead_kind,
                     random_size(r, 4096 - aux_alone(&ahead_kind, out_bytes)), out_bytes, 0);
      submit(ex, &owners[i].pending[0], "work ahead");
    }
    for (unsigned i = 0; i < AHEAD_OWNERS; i++)
      collect(ex, &owners[i], &owners[i].pending[0], "work ahead");
  }
  report_worker_failures("work ahead: 50 rounds of 4 owners whose jobs read the state their "
                         "previous jobs' work ahead left, every output byte");

  Owner *o = &owners[0];
  make_sized_job(o, &o->pending[0], r, &failing_ahead_kind, 100, 100, 0);
  submit(ex, &o->pending[0], "failing work ahead");
  const CudafftStatus status = cudafft_executor_wait(ex, &o->pending[0].t.job);
  test_check(status == CUDAFFT_STATUS_CUDA_ERROR &&
                 strstr(cudafft_last_error_message(), "work ahead") &&
                 strstr(cudafft_last_error_message(), "refused (injected)"),
             "work ahead: a failed work ahead fails its batch's job, naming it (%s: %s)",
             cudafft_status_name(status), cudafft_last_error_message());
  o->fresh = 1; /* its state did not move on: the next job starts it again */
  make_sized_job(o, &o->pending[0], r, &ahead_kind, 100, 100, 0);
  submit(ex, &o->pending[0], "after a failed work ahead");
  collect(ex, o, &o->pending[0], "after a failed work ahead");
  report_worker_failures("work ahead: the owner's next job after the failure");
  owners_detach(ex, owners, AHEAD_OWNERS);
  cudafft_executor_release(ex);
  check_released("work ahead");
}

/* ---- 3. outputs nobody collects yet: the launcher delivers them ---- */

static void
test_eviction(Rng *r)
{
  set_limits(4096, 4, 2, 16, 0);
  CudafftExecutor *ex = acquire(7);
  Owner a, b, c;
  owner_init(&a, 0, 4096);
  owner_init(&b, 1, 4096);
  owner_init(&c, 2, 4096);
  if (owner_attach(&a, ex) != CUDAFFT_STATUS_OK || owner_attach(&b, ex) != CUDAFFT_STATUS_OK ||
      owner_attach(&c, ex) != CUDAFFT_STATUS_OK)
    test_abort("eviction: owner state: %s", cudafft_last_error_message());
  /* Owners a and c submit six jobs each, which need six batches, with four slots: their fifth
   * and sixth can only run once slots holding their first ones are free. c collects its jobs in
   * order and frees each (as an engine object may, once its job is waited for) while a's jobs of
   * the same batches are not collected: a waits for its last job first. b's failing job, alone in
   * the first batch, is collected last. */
  executor_test_device_pause(1);
  make_sized_job(&b, &b.pending[0], r, &failing_kind, 100, 100, 0);
  submit(ex, &b.pending[0], "eviction");
  await_counter(&executor_test_device.uploads, 1);
  Pending *heap[AHEAD];
  for (int k = 0; k < AHEAD; k++) {
    make_job(&a, &a.pending[k], r, 4096, 0);
    submit(ex, &a.pending[k], "eviction");
    heap[k] = test_malloc(sizeof *heap[k]);
    *heap[k] = c.pending[k];
    make_job(&c, heap[k], r, 4096, 0);
    submit(ex, heap[k], "eviction");
  }
  executor_test_device_pause(0);
  for (int k = 0; k < AHEAD; k++) {
    collect(ex, &c, heap[k], "eviction: collected and freed at once");
    free(heap[k]);
  }
  CudafftStatus status[AHEAD];
  for (int k = AHEAD - 1; k >= 0; k--)
    status[k] = cudafft_executor_wait(ex, &a.pending[k].t.job);
  for (int k = 0; k < AHEAD; k++)
    verify_job(&a, &a.pending[k], status[k], "eviction");
  report_worker_failures("eviction: an owner waiting for its 6th job first (4 slots), another "
                         "freeing its jobs as it collects them: every output byte, delivered by "
                         "the launcher where nobody collected");
  const CudafftStatus failed = cudafft_executor_wait(ex, &b.pending[0].t.job);
  test_check(failed == CUDAFFT_STATUS_CUDA_ERROR && b.pending[0].t.job.batch == 1 &&
                 a.pending[AHEAD - 1].t.job.batch >
                     4 && /* past the four slots: batch 1's was reused */
                 strstr(cudafft_last_error_message(), "failing kind"),
             "eviction: a failed job collected after its slot was reused (batch %llu) still "
             "reports its batch's failure: %s (%s)",
             (unsigned long long)a.pending[AHEAD - 1].t.job.batch, cudafft_status_name(failed),
             cudafft_last_error_message());
  owner_detach(&a, ex);
  owner_detach(&b, ex);
  owner_detach(&c, ex);
  owner_clear(&a);
  owner_clear(&b);
  owner_clear(&c); /* the buffers the heap jobs used */
  cudafft_executor_release(ex);
  check_released("eviction");
}

/* ---- 3b. slots made when none is free ---- */

/* An owner's six jobs with output to copy out, each submitted once the batch before it went out
 * and none collected until all six are (a batch alone is completed by its waiter, or by the
 * completion thread once later work needs the device): 3 slots hold the first three batches, and
 * the fourth and fifth find no free slot. With room to grow to 5 (and a slot budget of `budget`),
 * the executor makes a slot for each; past max_slots, or once a slot cannot be made, the launcher
 * delivers the oldest done batch's outputs itself. Every output byte either way. */
static void
growth_case(Rng *r, int budget, int slots_expected, const char *what)
{
  set_limits(4096, 3, 2, 16, 0);
  executor_test_device.limits.max_slots = 5;
  atomic_store(&executor_test_device.slot_budget, budget);
  CudafftExecutor *ex = acquire(8);
  Owner a;
  owner_init(&a, 0, 4096);
  if (owner_attach(&a, ex) != CUDAFFT_STATUS_OK)
    test_abort("growth: owner state: %s", cudafft_last_error_message());
  int awaited = 1;
  for (int k = 0; k < AHEAD; k++) {
    /* output to copy out: a job without is delivered as its batch completes (no slot held) */
    const size_t out_bytes = 1 + random_size(r, 4095);
    make_sized_job(&a, &a.pending[k], r, &bytes_kind,
                   random_size(r, 4096 - aux_alone(&bytes_kind, out_bytes)), out_bytes, 0);
    submit(ex, &a.pending[k], what);
    awaited &= await_counter(&executor_test_device.uploads, (uint64_t)k + 1);
  }
  const int slots = atomic_load(&executor_test_device.live_slots);
  for (int k = 0; k < AHEAD; k++)
    collect(ex, &a, &a.pending[k], what);
  report_worker_failures(what);
  test_check(awaited && slots == slots_expected && a.pending[AHEAD - 1].t.job.batch == AHEAD,
             "%s: %d slots after six batches of which none was collected (expected %d), the "
             "sixth in batch %llu",
             what, slots, slots_expected, (unsigned long long)a.pending[AHEAD - 1].t.job.batch);
  owner_detach(&a, ex);
  owner_clear(&a);
  cudafft_executor_release(ex);
  check_released(what);
}

static void
test_growth(Rng *r)
{
  growth_case(r, -1, 5, "growth: 3 slots grow to their limit of 5, then eviction");
  growth_case(r, 4, 4, "growth: a slot that cannot be made (test budget of 4): eviction instead");
}

/* ---- 4. many owners on many threads ---- */

#define THREADS 8
#define OWNERS_PER_THREAD 8

typedef struct {
  CudafftExecutor *ex;
  Rng rng;
  unsigned first_id;
  int rounds;
  size_t max;
  Owner owners[OWNERS_PER_THREAD];
  long jobs;
} StressWorker;

static void *
stress_main(void *arg)
{
  StressWorker *w = arg;
  const char *where = "stress";
  for (unsigned i = 0; i < OWNERS_PER_THREAD; i++)
    if (owner_attach(&w->owners[i], w->ex) != CUDAFFT_STATUS_OK) {
      worker_fail("stress: owner state: %s", cudafft_last_error_message());
      return NULL;
    }
  struct {
    Owner *o;
    Pending *p;
    CudafftStatus status;
  } order[OWNERS_PER_THREAD * AHEAD];
  for (int round = 0; round < w->rounds; round++) {
    /* Now and then an engine object goes and a new one comes in its place. */
    if (round % 10 == 9) {
      Owner *o = &w->owners[rng_range(&w->rng, 0, OWNERS_PER_THREAD - 1)];
      owner_detach(o, w->ex);
      if (owner_attach(o, w->ex) != CUDAFFT_STATUS_OK) {
        worker_fail("stress: new owner state: %s", cudafft_last_error_message());
        return NULL;
      }
    }
    size_t n = 0;
    const unsigned start = (unsigned)rng_range(&w->rng, 0, OWNERS_PER_THREAD - 1);
    for (unsigned k = 0; k < OWNERS_PER_THREAD; k++) {
      Owner *o = &w->owners[(start + k) % OWNERS_PER_THREAD];
      const size_t jobs = rng_range(&w->rng, 1, AHEAD);
      for (size_t j = 0; j < jobs; j++) {
        Pending *p = &o->pending[j];
        make_job(o, p, &w->rng, w->max, 0);
        if (!submit(w->ex, p, where))
          return NULL;
        order[n].o = o;
        order[n].p = p;
        n++;
      }
    }
    /* Waits in submission order mostly; in some rounds in a random order, or only after a
     * while (the slots then fill with uncollected batches that the launcher must deliver). */
    const unsigned how = (unsigned)rng_range(&w->rng, 0, 3);
    if (how == 0) {
      for (size_t i = 0; i < n; i++)
        if (!collect(w->ex, order[i].o, order[i].p, where))
          return NULL;
    } else {
      size_t shuffled[OWNERS_PER_THREAD * AHEAD];
      for (size_t i = 0; i < n; i++)
        shuffled[i] = i;
      if (how == 1)
        for (size_t i = n; i > 1; i--) {
          const size_t j = rng_range(&w->rng, 0, i - 1), t = shuffled[i - 1];
          shuffled[i - 1] = shuffled[j];
          shuffled[j] = t;
        }
      if (how == 2)
        sleep_ms(2);
      for (size_t i = 0; i < n; i++)
        order[shuffled[i]].status = cudafft_executor_wait(w->ex, &order[shuffled[i]].p->t.job);
      for (size_t i = 0; i < n; i++)
        if (!verify_job(order[i].o, order[i].p, order[i].status, where))
          return NULL;
    }
    w->jobs += (long)n;
  }
  for (unsigned i = 0; i < OWNERS_PER_THREAD; i++)
    owner_detach(&w->owners[i], w->ex);
  return NULL;
}

/* Takes and gives back references while the others stream: always the same executor. */
typedef struct {
  int device;
  CudafftExecutor *expected;
  atomic_int stop;
  long cycles;
} RefCycler;

static void *
ref_cycler_main(void *arg)
{
  RefCycler *c = arg;
  while (!atomic_load(&c->stop)) {
    CudafftExecutor *ex = NULL;
    if (cudafft_executor_acquire_on(&executor_test_device_table, c->device, &ex) !=
            CUDAFFT_STATUS_OK ||
        ex != c->expected)
      worker_fail("stress: acquire while others stream gave %p, expected %p", (void *)ex,
                  (void *)c->expected);
    cudafft_executor_release(ex);
    c->cycles++;
    sleep_ms(1);
  }
  return NULL;
}

static void
test_stress(Rng *r, const char *name, size_t max, unsigned slots, unsigned max_slots,
            size_t max_jobs, unsigned delay_us, int rounds)
{
  set_limits(max, slots, 2, max_jobs, delay_us);
  executor_test_device.limits.max_slots = max_slots;
  CudafftExecutor *ex = acquire(3);
  static StressWorker workers[THREADS];
  pthread_t threads[THREADS];
  for (unsigned t = 0; t < THREADS; t++) {
    StressWorker *w = &workers[t];
    w->ex = ex;
    w->rng.state = rng_next(r);
    w->rounds = rounds;
    w->max = max;
    w->jobs = 0;
    for (unsigned i = 0; i < OWNERS_PER_THREAD; i++)
      owner_init(&w->owners[i], t * OWNERS_PER_THREAD + i, max);
  }
  RefCycler cycler = {.device = 3, .expected = ex};
  pthread_t cycler_thread;
  const double start = test_seconds();
  for (unsigned t = 0; t < THREADS; t++)
    if (pthread_create(&threads[t], NULL, stress_main, &workers[t]) != 0)
      test_abort("cannot start a thread");
  if (pthread_create(&cycler_thread, NULL, ref_cycler_main, &cycler) != 0)
    test_abort("cannot start a thread");
  long jobs = 0;
  for (unsigned t = 0; t < THREADS; t++) {
    pthread_join(threads[t], NULL);
    jobs += workers[t].jobs;
  }
  atomic_store(&cycler.stop, 1);
  pthread_join(cycler_thread, NULL);
  const double seconds = test_seconds() - start;
  const uint64_t batches = atomic_load(&executor_test_device.uploads);
  char what[200];
  snprintf(what, sizeof what,
           "stress %s: %d owners on %d threads, %ld jobs of 0..%zu bytes, every output byte, "
           "batches in order per owner (%.2f s)",
           name, THREADS * OWNERS_PER_THREAD, THREADS, jobs, max, seconds);
  report_worker_failures(what);
  test_check(jobs > 0 && batches > 0 && jobs > (long)batches,
             "stress %s: group commit under load: %ld jobs in %llu batches (%.1f a batch), %d "
             "waits found the batch still running, %ld acquire/release cycles alongside",
             name, jobs, (unsigned long long)batches, batches ? (double)jobs / batches : 0.0,
             atomic_load(&executor_test_device.unfinished_waits), cycler.cycles);
  for (unsigned t = 0; t < THREADS; t++)
    for (unsigned i = 0; i < OWNERS_PER_THREAD; i++)
      owner_clear(&workers[t].owners[i]);
  cudafft_executor_release(ex);
  check_released(name);
}

/* ---- 5. group commit under load: many live streams, one buffer each at a time ---- */

typedef struct {
  CudafftExecutor *ex;
  Rng rng;
  Owner owners[OWNERS_PER_THREAD];
  int rounds;
  long jobs;
} StreamWorker;

static void *
streams_main(void *arg)
{
  StreamWorker *w = arg;
  for (unsigned i = 0; i < OWNERS_PER_THREAD; i++)
    if (owner_attach(&w->owners[i], w->ex) != CUDAFFT_STATUS_OK) {
      worker_fail("streams: owner state: %s", cudafft_last_error_message());
      return NULL;
    }
  for (int round = 0; round < w->rounds; round++) {
    for (unsigned i = 0; i < OWNERS_PER_THREAD; i++) {
      Owner *o = &w->owners[i];
      make_sized_job(o, &o->pending[0], &w->rng, rng_next(&w->rng) & 1 ? &bytes_kind : &units_kind,
                     rng_range(&w->rng, 0, 1024), rng_range(&w->rng, 0, 1024), 0);
      if (!submit(w->ex, &o->pending[0], "streams"))
        return NULL;
    }
    for (unsigned i = 0; i < OWNERS_PER_THREAD; i++)
      if (!collect(w->ex, &w->owners[i], &w->owners[i].pending[0], "streams"))
        return NULL;
    w->jobs += OWNERS_PER_THREAD;
  }
  for (unsigned i = 0; i < OWNERS_PER_THREAD; i++)
    owner_detach(&w->owners[i], w->ex);
  return NULL;
}

/* launch_us: each launch's time on its thread (the test device's launch_us). Slow launches let
 * submitters and waiters come while a batch goes out (a design where submitters launch must still
 * complete every batch whose waiters came before it went out). */
static void
test_streams(Rng *r, unsigned launch_us)
{
  set_limits(65536, 4, 2, 256, 300);
  atomic_store(&executor_test_device.launch_us, launch_us);
  CudafftExecutor *ex = acquire(8);
  static StreamWorker workers[THREADS];
  pthread_t threads[THREADS];
  for (unsigned t = 0; t < THREADS; t++) {
    StreamWorker *w = &workers[t];
    w->ex = ex;
    w->rng.state = rng_next(r);
    w->rounds = 50;
    w->jobs = 0;
    for (unsigned i = 0; i < OWNERS_PER_THREAD; i++)
      owner_init(&w->owners[i], t * OWNERS_PER_THREAD + i, 2048);
    if (pthread_create(&threads[t], NULL, streams_main, w) != 0)
      test_abort("cannot start a thread");
  }
  long jobs = 0;
  for (unsigned t = 0; t < THREADS; t++) {
    pthread_join(threads[t], NULL);
    jobs += workers[t].jobs;
  }
  const uint64_t batches = atomic_load(&executor_test_device.uploads);
  char what[160];
  snprintf(what, sizeof what,
           "streams: 64 owners on 8 threads, one job each at a time, launches of %u us, every "
           "output byte",
           launch_us);
  report_worker_failures(what);
  test_check(batches > 0 && (double)jobs / (double)batches >= 4.0,
             "streams: group commit under load: %ld jobs in %llu batches (%.1f a batch, at least "
             "4 expected while the device is the bottleneck), launches of %u us",
             jobs, (unsigned long long)batches, batches ? (double)jobs / batches : 0.0, launch_us);
  for (unsigned t = 0; t < THREADS; t++)
    for (unsigned i = 0; i < OWNERS_PER_THREAD; i++)
      owner_clear(&workers[t].owners[i]);
  cudafft_executor_release(ex);
  check_released("streams");
}

/* ---- 6. failures poison exactly their batch ---- */

#define FAIL_THREADS 4
#define FAIL_OWNERS 4
#define FAIL_MAX_BATCHES 100000

static atomic_uchar failed_batch[FAIL_MAX_BATCHES]; /* expected: 1 for a poisoned batch */
static atomic_uchar seen_ok[FAIL_MAX_BATCHES], seen_failed[FAIL_MAX_BATCHES];

typedef struct {
  CudafftExecutor *ex;
  Rng rng;
  Owner owners[FAIL_OWNERS];
  atomic_int *stop;
  long jobs, failed;
} FailWorker;

static void *
fail_worker_main(void *arg)
{
  FailWorker *w = arg;
  for (unsigned i = 0; i < FAIL_OWNERS; i++)
    if (owner_attach(&w->owners[i], w->ex) != CUDAFFT_STATUS_OK) {
      worker_fail("failures: owner state: %s", cudafft_last_error_message());
      return NULL;
    }
  while (!atomic_load(w->stop)) {
    for (unsigned i = 0; i < FAIL_OWNERS; i++) {
      make_job(&w->owners[i], &w->owners[i].pending[0], &w->rng, 2048, 0);
      if (!submit(w->ex, &w->owners[i].pending[0], "failures"))
        return NULL;
    }
    for (unsigned i = 0; i < FAIL_OWNERS; i++) {
      Owner *o = &w->owners[i];
      Pending *p = &o->pending[0];
      const CudafftStatus status = cudafft_executor_wait(w->ex, &p->t.job);
      const uint64_t batch = p->t.job.batch;
      if (batch == 0 || batch >= FAIL_MAX_BATCHES) {
        worker_fail("failures: batch %llu out of range", (unsigned long long)batch);
        return NULL;
      }
      w->jobs++;
      if (status == CUDAFFT_STATUS_OK) {
        atomic_store(&seen_ok[batch], 1);
        verify_job(o, p, status, "failures (a job that succeeded)");
        continue;
      }
      atomic_store(&seen_failed[batch], 1);
      w->failed++;
      const char *message = cudafft_last_error_message();
      if (status != CUDAFFT_STATUS_CUDA_ERROR || !strstr(message, "batch") ||
          !(strstr(message, "upload refused") || strstr(message, "work failed (injected)") ||
            strstr(message, "failing kind")))
        worker_fail("failures: a failed job says %s (%s)", cudafft_status_name(status), message);
      /* Its owner's state is unknown now (as an engine's after a failure): start it afresh. */
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
  set_limits(8192, 4, 2, 32, 200);
  memset(failed_batch, 0, sizeof failed_batch);
  memset(seen_ok, 0, sizeof seen_ok);
  memset(seen_failed, 0, sizeof seen_failed);
  CudafftExecutor *ex = acquire(4);
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
      owner_init(&w->owners[i], t * FAIL_OWNERS + i, 2048);
    if (pthread_create(&threads[t], NULL, fail_worker_main, w) != 0)
      test_abort("cannot start a thread");
  }
  Owner injector;
  owner_init(&injector, MAX_OWNERS - 1, 2048);
  owner_attach(&injector, ex);
  int kind_failures_named = 0, injections = 0, consumed = 0;
  for (int round = 0; round < 8; round++) {
    sleep_ms(5);
    /* A job of a kind whose launch fails. */
    Pending *p = &injector.pending[0];
    make_job(&injector, p, r, 2048, 0);
    p->t.job.kind = &failing_kind;
    injector.fresh = 1;
    submit(ex, p, "failures: failing kind");
    const CudafftStatus status = cudafft_executor_wait(ex, &p->t.job);
    kind_failures_named += status == CUDAFFT_STATUS_CUDA_ERROR &&
                           strstr(cudafft_last_error_message(), "failing kind") &&
                           strstr(cudafft_last_error_message(), "refused (injected)");
    if (p->t.job.batch < FAIL_MAX_BATCHES)
      atomic_store(&failed_batch[p->t.job.batch], 1);
    injections++;
    consumed++;
    sleep_ms(5);
    /* An upload that fails; the next injection once that batch is through. */
    atomic_store(&executor_test_device.fail_next_upload, 1);
    injections++;
    for (int i = 0; i < 5000 && atomic_load(&executor_test_device.fail_next_upload); i++)
      sleep_ms(1);
    const uint64_t upload_batch = atomic_load(&executor_test_device.failed_upload_batch);
    if (!atomic_load(&executor_test_device.fail_next_upload) && upload_batch < FAIL_MAX_BATCHES) {
      atomic_store(&failed_batch[upload_batch], 1);
      consumed++;
      await_counter(&executor_test_device.waits, upload_batch);
    }
    sleep_ms(5);
    /* The device reports an error for a batch. */
    atomic_store(&executor_test_device.fail_next_wait, 1);
    injections++;
    for (int i = 0; i < 5000 && atomic_load(&executor_test_device.fail_next_wait); i++)
      sleep_ms(1);
    const uint64_t wait_batch = atomic_load(&executor_test_device.failed_wait_batch);
    if (!atomic_load(&executor_test_device.fail_next_wait) && wait_batch < FAIL_MAX_BATCHES) {
      atomic_store(&failed_batch[wait_batch], 1);
      consumed++;
    }
  }
  sleep_ms(20);
  atomic_store(&stop, 1);
  long jobs = 0, failed = 0;
  for (unsigned t = 0; t < FAIL_THREADS; t++) {
    pthread_join(threads[t], NULL);
    jobs += workers[t].jobs;
    failed += workers[t].failed;
  }
  report_worker_failures("failures: jobs of unpoisoned batches, every output byte");
  test_check(kind_failures_named == 8,
             "failures: a failing launch's job reports CUDA_ERROR naming the kind and the call "
             "(%d of 8)",
             kind_failures_named);
  /* Every job of a poisoned batch failed and no other job did. */
  long wrong = 0, poisoned = 0, poisoned_with_workers = 0;
  for (size_t b = 1; b < FAIL_MAX_BATCHES; b++) {
    const int expect_fail = atomic_load(&failed_batch[b]);
    poisoned += expect_fail;
    poisoned_with_workers += expect_fail && atomic_load(&seen_failed[b]);
    if ((expect_fail && atomic_load(&seen_ok[b])) || (!expect_fail && atomic_load(&seen_failed[b])))
      wrong++;
  }
  test_check(consumed == injections && poisoned == injections && wrong == 0 &&
                 poisoned_with_workers >= 16,
             "failures: %d injected failures (%d taken) poisoned exactly %ld batches, %ld of "
             "them with streaming jobs; %ld batches disagree; %ld of %ld streaming jobs failed, "
             "the rest correct",
             injections, consumed, poisoned, poisoned_with_workers, wrong, failed, jobs);
  owner_detach(&injector, ex);
  owner_clear(&injector);
  for (unsigned t = 0; t < FAIL_THREADS; t++)
    for (unsigned i = 0; i < FAIL_OWNERS; i++)
      owner_clear(&workers[t].owners[i]);
  cudafft_executor_release(ex);
  check_released("failures");
}

/* ---- 7. acquire/release cycles, from several threads at once ---- */

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
  owner_init(&o, w->id, 1024);
  for (int c = 0; c < w->cycles; c++) {
    CudafftExecutor *ex = NULL;
    if (cudafft_executor_acquire_on(&executor_test_device_table, 5, &ex) != CUDAFFT_STATUS_OK) {
      worker_fail("cycles: acquire: %s", cudafft_last_error_message());
      break;
    }
    if (owner_attach(&o, ex) != CUDAFFT_STATUS_OK) {
      worker_fail("cycles: owner state: %s", cudafft_last_error_message());
      cudafft_executor_release(ex);
      break;
    }
    const size_t jobs = rng_range(&w->rng, 1, 3);
    for (size_t j = 0; j < jobs; j++) {
      make_job(&o, &o.pending[j], &w->rng, 1024, 0);
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
  set_limits(1024, 3, 2, 8, 20);
  for (int c = 0; c < 30; c++) {
    CycleWorker w = {.rng = {rng_next(r)}, .id = 0, .cycles = 1};
    cycle_main(&w);
  }
  report_worker_failures("cycles: 30 acquire, use, release cycles on one thread");
  test_check(atomic_load(&executor_test_device.opens) == 30,
             "cycles: each cycle made and stopped its own executor (%d made)",
             atomic_load(&executor_test_device.opens));
  check_released("cycles, one thread");

  set_limits(1024, 3, 2, 8, 20);
  CycleWorker workers[4];
  pthread_t threads[4];
  for (unsigned t = 0; t < 4; t++) {
    workers[t] = (CycleWorker){.rng = {rng_next(r)}, .id = t, .cycles = 40};
    if (pthread_create(&threads[t], NULL, cycle_main, &workers[t]) != 0)
      test_abort("cannot start a thread");
  }
  for (unsigned t = 0; t < 4; t++)
    pthread_join(threads[t], NULL);
  report_worker_failures("cycles: 4 threads x 40 acquire, use, release cycles on one device");
  check_released("cycles, 4 threads");
}

/* ---- 8. the last release with work still queued ---- */

static void *
unpause_later(void *arg)
{
  (void)arg;
  sleep_ms(30);
  executor_test_device_pause(0);
  return NULL;
}

static void
test_shutdown(Rng *r, int held)
{
  set_limits(4096, 3, 2, 4, held ? 0 : 100);
  CudafftExecutor *ex = acquire(6);
  enum { OWNERS = 8, JOBS = AHEAD };
  static Owner owners[OWNERS];
  for (unsigned i = 0; i < OWNERS; i++)
    owner_init(&owners[i], i, 4096);
  if (held)
    executor_test_device_pause(1);
  for (unsigned k = 0; k < JOBS; k++)
    for (unsigned i = 0; i < OWNERS; i++) {
      make_job(&owners[i], &owners[i].pending[k], r, 4096, 1);
      submit(ex, &owners[i].pending[k], "shutdown");
    }
  pthread_t unpauser;
  if (held && pthread_create(&unpauser, NULL, unpause_later, NULL) != 0)
    test_abort("cannot start a thread");
  const double start = test_seconds();
  cudafft_executor_release(ex);
  const double seconds = test_seconds() - start;
  if (held)
    pthread_join(unpauser, NULL);
  report_worker_failures("shutdown: submissions");
  long ran = 0, owners_complete = 0;
  for (unsigned i = 0; i < OWNERS; i++) {
    ran += atomic_load(&executed[i]);
    owners_complete += atomic_load(&executed[i]) == JOBS;
  }
  test_check(ran == OWNERS * JOBS && owners_complete == OWNERS,
             "shutdown%s: the last release with %d jobs never waited for (%d slots of %d jobs) "
             "ran every one (%ld) and returned in %.3f s",
             held ? " (device held at first)" : "", OWNERS * JOBS, 3, 4, ran, seconds);
  check_released(held ? "shutdown, device held" : "shutdown");
  for (unsigned i = 0; i < OWNERS; i++)
    owner_clear(&owners[i]);
}

int
main(int argc, char **argv)
{
  test_begin_every_backend(argc, argv); /* no backend argument: the host logic alone */
  TestRng seed = test_rng("executor");
  Rng r = {test_rng_u64(&seed)};
  test_api(&r);
  test_group_commit(&r);
  test_lone_round_trip(&r);
  test_work_ahead(&r);
  test_eviction(&r);
  test_growth(&r);
  test_stress(&r, "small slots", 8192, 4, 4, 16, 50, 40);
  test_stress(&r, "small slots growing", 8192, 3, 6, 16, 50, 40);
  test_stress(&r, "roomy slots", 32768, 3, 3, 256, 200, 25);
  test_streams(&r, 0);
  test_streams(&r, 200);
  test_failures(&r);
  test_cycles(&r);
  test_shutdown(&r, 1);
  test_shutdown(&r, 0);
  return test_finish();
}
