/* test_device_load.c: which device an object made with device id -1 goes to (lib/common/
 * devices.h: the rule and cudafft_try_devices()), without a GPU: the rule on
 * hand-written loads (ties at every key, full devices, every device tried), the table's counting
 * under many threads, the placement loop over simulated devices whose objects count themselves
 * as the CUDA backend objects do (a fit check against the device's memory, state bytes, one object
 * each), a device that failed set aside (tried after every other until it works again), and the
 * failure message naming every device tried. The table is the process's own, the
 * one the library keeps: every section leaves it empty. */
#define _POSIX_C_SOURCE 200809L

#include "backend_choice.h"
#include "devices.h"
#include "errors.h"
#include "test_harness.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define MB ((size_t)1 << 20)

static int
table_empty(int count)
{
  for (int i = 0; i < count; i++) {
    unsigned objects = 0;
    size_t bytes = 0;
    cudafft_device_load_get(i, &objects, &bytes);
    if (objects || bytes)
      return 0;
  }
  return 1;
}

/* ---- the rule on hand-written loads ---- */

static void
test_pick(void)
{
  CudafftDeviceLoad l[4];
  memset(l, 0, sizeof l);
  test_check(cudafft_device_pick(l, 0) == -1, "pick: no devices gives -1");
  test_check(cudafft_device_pick(l, 4) == 0, "pick: all equal: the lowest id");

  l[0].state_bytes = 100 * MB;
  l[1].state_bytes = 50 * MB;
  l[2].state_bytes = 50 * MB;
  l[3].state_bytes = 60 * MB;
  l[1].objects = 3;
  l[2].objects = 3;
  l[1].free_bytes = 10 * MB;
  l[2].free_bytes = 20 * MB;
  test_check(cudafft_device_pick(l, 4) == 2,
             "pick: state bytes first, then objects, then the most free memory");
  l[2].free_bytes = 10 * MB;
  test_check(cudafft_device_pick(l, 4) == 1, "pick: a tie at every key: the lowest id");
  l[2].objects = 2;
  test_check(cudafft_device_pick(l, 4) == 2, "pick: equal state, fewer objects wins");
  l[2].objects = 3;
  l[3].objects = 0;
  l[3].free_bytes = 80000 * MB;
  test_check(cudafft_device_pick(l, 4) == 1,
             "pick: fewer state bytes win over fewer objects and more free memory");

  /* a full device (no free memory) among equals goes last, but is still a candidate */
  CudafftDeviceLoad f[2] = {{.free_bytes = 0}, {.free_bytes = 70000 * MB}};
  test_check(cudafft_device_pick(f, 2) == 1, "pick: equal loads: the emptier device first");
  f[1].tried = 1;
  test_check(cudafft_device_pick(f, 2) == 0, "pick: a full device once the other was tried");
  f[0].tried = 1;
  test_check(cudafft_device_pick(f, 2) == -1, "pick: every device tried gives -1");
}

/* ---- the table ---- */

static void *
reserve_and_give_back(void *arg)
{
  (void)arg;
  for (int i = 0; i < 20000; i++) {
    CudafftDeviceLoad loads[3] = {{0}};
    const int d = cudafft_device_load_reserve(loads, 3);
    cudafft_device_load_change(d, 1, 4096);   /* made there */
    cudafft_device_load_change(d, -1, 0);     /* the reservation back */
    cudafft_device_load_change(d, -1, -4096); /* destroyed */
  }
  return NULL;
}

/* A burst from many threads: each reserves a device and keeps it (as objects still being made
 * do): the object count spreads them evenly before any state exists. */
typedef struct {
  int kept[64];
  int count;
} Burst;

static void *
reserve_and_keep(void *arg)
{
  Burst *b = arg;
  for (int i = 0; i < b->count; i++) {
    CudafftDeviceLoad loads[2] = {{0}};
    b->kept[i] = cudafft_device_load_reserve(loads, 2);
  }
  return NULL;
}

static void
test_table(void)
{
  test_check(table_empty(CUDAFFT_LOAD_DEVICES), "table: empty at the start");
  cudafft_device_load_change(1, 2, 3 * (long long)MB);
  unsigned objects = 0;
  size_t bytes = 0;
  cudafft_device_load_get(1, &objects, &bytes);
  test_check(objects == 2 && bytes == 3 * MB, "table: a change is read back (%u, %zu)", objects,
             bytes);
  cudafft_device_load_change(1, -2, -3 * (long long)MB);
  cudafft_device_load_change(-1, 1, 1);
  cudafft_device_load_change(CUDAFFT_LOAD_DEVICES, 1, 1);
  cudafft_device_load_get(CUDAFFT_LOAD_DEVICES + 5, &objects, &bytes);
  test_check(table_empty(CUDAFFT_LOAD_DEVICES) && objects == 0 && bytes == 0,
             "table: ids outside it are ignored and read as 0");

  CudafftDeviceLoad loads[2] = {{0}};
  const int first = cudafft_device_load_reserve(loads, 2);
  const int second = cudafft_device_load_reserve(loads, 2);
  const int third = cudafft_device_load_reserve(loads, 2);
  test_check(first == 0 && second == 1 && third == -1 && loads[0].tried && loads[1].tried &&
                 loads[0].objects == 1,
             "reserve: picks by the rule, counts the object, marks it tried (%d, %d, %d)", first,
             second, third);
  cudafft_device_load_get(0, &objects, NULL);
  test_check(objects == 1, "reserve: the device counts one object being made (%u)", objects);
  cudafft_device_load_change(0, -1, 0);
  cudafft_device_load_change(1, -1, 0);

  pthread_t threads[8];
  for (int i = 0; i < 8; i++)
    pthread_create(&threads[i], NULL, reserve_and_give_back, NULL);
  for (int i = 0; i < 8; i++)
    pthread_join(threads[i], NULL);
  test_check(table_empty(3), "table: 8 threads x 20000 reserve/make/destroy leave it empty");

  Burst bursts[8];
  for (int i = 0; i < 8; i++) {
    bursts[i].count = 8;
    pthread_create(&threads[i], NULL, reserve_and_keep, &bursts[i]);
  }
  for (int i = 0; i < 8; i++)
    pthread_join(threads[i], NULL);
  unsigned on[2] = {0, 0};
  for (int i = 0; i < 8; i++)
    for (int j = 0; j < bursts[i].count; j++)
      on[bursts[i].kept[j]]++;
  test_check(on[0] == 32 && on[1] == 32,
             "burst: 64 objects being made at once from 8 threads split 32/32 (%u/%u)", on[0],
             on[1]);
  cudafft_device_load_change(0, -(int)on[0], 0);
  cudafft_device_load_change(1, -(int)on[1], 0);
  test_check(table_empty(2), "burst: empty again");
}

/* ---- the placement loop over simulated devices ---- */

/* Devices with memory; an object takes `need` bytes of state on the one it is made on, counted
 * as the CUDA backends count theirs (one object, its state bytes), or fails as they do. */
typedef struct {
  pthread_mutex_t lock;
  size_t free_bytes[4];
  int calls[4];              /* tries per device */
  CudafftStatus refuse_with; /* a status every device answers (OK: none) */
  CudafftStatus broken[4];   /* a status one device answers (OK: none) */
} Sim;

typedef struct {
  Sim *sim;
  size_t need;
  int device; /* where it was made */
} SimObject;

static CudafftStatus
sim_try(void *object, const void *spec, CudafftBackend backend, int device)
{
  (void)spec;
  SimObject *o = object;
  Sim *sim = o->sim;
  if (backend != CUDAFFT_BACKEND_CUDA || device < 0 || device > 3)
    return cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE, "bad try: backend %d device %d", (int)backend,
                        device);
  pthread_mutex_lock(&sim->lock);
  sim->calls[device]++;
  const CudafftStatus refusal =
      sim->refuse_with != CUDAFFT_STATUS_OK ? sim->refuse_with : sim->broken[device];
  if (refusal != CUDAFFT_STATUS_OK) {
    pthread_mutex_unlock(&sim->lock);
    return cudafft_fail(refusal, "refused on device %d", device);
  }
  if (o->need > sim->free_bytes[device]) {
    const size_t free_mb = sim->free_bytes[device] / MB;
    pthread_mutex_unlock(&sim->lock);
    return cudafft_fail(CUDAFFT_STATUS_DEVICE_OUT_OF_MEMORY,
                        "the state needs %zu MB of GPU memory; device %d has %zu MB available",
                        o->need / MB, device, free_mb);
  }
  sim->free_bytes[device] -= o->need;
  pthread_mutex_unlock(&sim->lock);
  o->device = device;
  cudafft_device_load_change(device, 1, (long long)o->need);
  return CUDAFFT_STATUS_OK;
}

static void
sim_destroy(SimObject *o)
{
  pthread_mutex_lock(&o->sim->lock);
  o->sim->free_bytes[o->device] += o->need;
  pthread_mutex_unlock(&o->sim->lock);
  cudafft_device_load_change(o->device, -1, -(long long)o->need);
}

static CudafftStatus
sim_place(Sim *sim, int count, SimObject *o, size_t need)
{
  *o = (SimObject){.sim = sim, .need = need, .device = -1};
  size_t free_now[4];
  pthread_mutex_lock(&sim->lock);
  memcpy(free_now, sim->free_bytes, sizeof free_now);
  pthread_mutex_unlock(&sim->lock);
  int device = -1;
  const CudafftStatus status = cudafft_try_devices(count, free_now, sim_try, o, NULL, &device);
  if (status == CUDAFFT_STATUS_OK && device != o->device)
    test_check(0, "place: reported device %d, made on %d", device, o->device);
  return status;
}

static void
sim_init(Sim *sim, size_t free0, size_t free1)
{
  memset(sim, 0, sizeof *sim);
  pthread_mutex_init(&sim->lock, NULL);
  sim->free_bytes[0] = free0;
  sim->free_bytes[1] = free1;
  sim->free_bytes[2] = free0;
  sim->free_bytes[3] = free0;
}

static void
test_split(void)
{
  Sim sim;
  sim_init(&sim, 80000 * MB, 80000 * MB);
  SimObject objects[64];
  unsigned on[2] = {0, 0};
  int ok = 1;
  for (int i = 0; i < 64; i++) {
    ok = ok && sim_place(&sim, 2, &objects[i], 100 * MB) == CUDAFFT_STATUS_OK;
    if (ok)
      on[objects[i].device]++;
  }
  test_check(ok && on[0] == 32 && on[1] == 32,
             "split: 64 equal objects made one after another go 32/32 (%u/%u)", on[0], on[1]);
  /* uneven objects: the next goes where the fewest state bytes are */
  SimObject big;
  ok = sim_place(&sim, 2, &big, 1000 * MB) == CUDAFFT_STATUS_OK;
  const int big_on = big.device;
  SimObject next;
  ok = ok && sim_place(&sim, 2, &next, 100 * MB) == CUDAFFT_STATUS_OK;
  test_check(ok && next.device == 1 - big_on,
             "split: after a large object on device %d the next goes to the other (%d)", big_on,
             next.device);
  sim_destroy(&next);
  sim_destroy(&big);
  for (int i = 0; i < 64; i++)
    sim_destroy(&objects[i]);
  test_check(table_empty(4), "split: empty after every object is destroyed");

  /* four devices: the rule spreads over all of them */
  unsigned four[4] = {0, 0, 0, 0};
  ok = 1;
  for (int i = 0; i < 64; i++) {
    ok = ok && sim_place(&sim, 4, &objects[i], 10 * MB) == CUDAFFT_STATUS_OK;
    if (ok)
      four[objects[i].device]++;
  }
  test_check(ok && four[0] == 16 && four[1] == 16 && four[2] == 16 && four[3] == 16,
             "split: 64 objects over 4 devices go 16 each (%u %u %u %u)", four[0], four[1], four[2],
             four[3]);
  for (int i = 0; i < 64; i++)
    sim_destroy(&objects[i]);
  pthread_mutex_destroy(&sim.lock);
}

static void
test_full_device(void)
{
  /* device 1 filled by someone else: 50 MB left; objects of 100 MB */
  Sim sim;
  sim_init(&sim, 80000 * MB, 50 * MB);
  SimObject objects[8];
  int ok = 1, all_on_0 = 1;
  for (int i = 0; i < 8; i++) {
    ok = ok && sim_place(&sim, 2, &objects[i], 100 * MB) == CUDAFFT_STATUS_OK;
    all_on_0 = all_on_0 && objects[i].device == 0;
  }
  test_check(ok && all_on_0, "full device: every object goes to the other device");
  test_check(sim.calls[0] == 8 && sim.calls[1] == 1,
             "full device: the first by free memory (no try on the full one), the second tries "
             "the lighter full one, which is then set aside: no other tries it (tries: %d on 0, "
             "%d on 1)",
             sim.calls[0], sim.calls[1]);
  for (int i = 0; i < 8; i++)
    sim_destroy(&objects[i]);

  /* too large for both */
  SimObject huge;
  const CudafftStatus status = sim_place(&sim, 2, &huge, 100000 * MB);
  const char *message = cudafft_last_error_message();
  test_check(status == CUDAFFT_STATUS_DEVICE_OUT_OF_MEMORY, "too large: out of GPU memory (%s)",
             cudafft_status_name(status));
  test_check(strstr(message, "tried 0, 1") && strstr(message, "device 0: the state needs") &&
                 strstr(message, "device 1: the state needs") &&
                 strstr(message, "device 1 has 50 MB available"),
             "too large: the message names both devices with their own words: %s", message);
  test_check(table_empty(2), "too large: nothing left counted");

  /* a status no other device would change stops at the first */
  memset(sim.calls, 0, sizeof sim.calls);
  sim.refuse_with = CUDAFFT_STATUS_INVALID_VALUE;
  SimObject refused;
  test_check(sim_place(&sim, 2, &refused, MB) == CUDAFFT_STATUS_INVALID_VALUE &&
                 sim.calls[0] + sim.calls[1] == 1,
             "invalid value: one try, its status");
  /* every device unusable: NO_DEVICE (which AUTO takes to the CPU) */
  sim.refuse_with = CUDAFFT_STATUS_NO_DEVICE;
  test_check(sim_place(&sim, 2, &refused, MB) == CUDAFFT_STATUS_NO_DEVICE,
             "no device on every device: NO_DEVICE");
  sim.refuse_with = CUDAFFT_STATUS_OK;
  test_check(table_empty(2), "refusals: nothing left counted");
  pthread_mutex_destroy(&sim.lock);
}

/* Ends the set-aside marks that earlier sections left on the first count devices: an object made
 * and destroyed on each. */
static void
clear_marks(int count)
{
  for (int i = 0; i < count; i++) {
    cudafft_device_load_change(i, 1, 0);
    cudafft_device_load_change(i, -1, 0);
  }
}

/* A device that failed is set aside: tried after every other until it works again. */
static void
test_set_aside(void)
{
  clear_marks(2);
  Sim sim;
  sim_init(&sim, 80000 * MB, 80000 * MB);
  SimObject objects[8];
  int ok = 1;

  /* device 0 broken (a CUDA failure): one try on it, then every object goes to device 1 */
  sim.broken[0] = CUDAFFT_STATUS_CUDA_ERROR;
  for (int i = 0; i < 4; i++)
    ok = ok && sim_place(&sim, 2, &objects[i], 100 * MB) == CUDAFFT_STATUS_OK &&
         objects[i].device == 1;
  test_check(ok && sim.calls[0] == 1 && sim.calls[1] == 4,
             "set aside: a device that failed (CUDA error) is tried once, then the others take "
             "every object first although it is the lightest (tries: %d on 0, %d on 1)",
             sim.calls[0], sim.calls[1]);

  /* device 1 broken too: both tried (the set-aside one last), both named */
  sim.broken[1] = CUDAFFT_STATUS_CUDA_ERROR;
  memset(sim.calls, 0, sizeof sim.calls);
  SimObject refused;
  const CudafftStatus status = sim_place(&sim, 2, &refused, 100 * MB);
  test_check(status == CUDAFFT_STATUS_CUDA_ERROR && sim.calls[0] == 1 && sim.calls[1] == 1 &&
                 strstr(cudafft_last_error_message(), "tried 1, 0"),
             "set aside: still in the choice, tried last where the others fail too: %s",
             cudafft_last_error_message());

  /* device 0 repaired: every device set aside, the rule picks among them; a success there ends
   * its mark */
  sim.broken[0] = CUDAFFT_STATUS_OK;
  sim.broken[1] = CUDAFFT_STATUS_OK;
  memset(sim.calls, 0, sizeof sim.calls);
  ok = sim_place(&sim, 2, &objects[4], 100 * MB) == CUDAFFT_STATUS_OK && objects[4].device == 0;
  ok = ok && sim_place(&sim, 2, &objects[5], 100 * MB) == CUDAFFT_STATUS_OK &&
       objects[5].device == 0;
  test_check(ok && sim.calls[0] == 2 && sim.calls[1] == 0,
             "set aside: a device that works again (an object made there) is back by the rule, "
             "ahead of one still set aside (tries: %d on 0, %d on 1)",
             sim.calls[0], sim.calls[1]);
  for (int i = 0; i < 6; i++)
    sim_destroy(&objects[i]);

  /* out of memory: set aside until state is freed there */
  clear_marks(2);
  pthread_mutex_destroy(&sim.lock);
  sim_init(&sim, 80000 * MB, 150 * MB);
  for (int i = 0; i < 5; i++)
    ok = ok && sim_place(&sim, 2, &objects[i], 100 * MB) == CUDAFFT_STATUS_OK;
  test_check(ok && objects[1].device == 1 && sim.calls[1] == 2 && objects[3].device == 0 &&
                 objects[4].device == 0,
             "set aside: out of memory on device 1 (its second object), not tried again (tries "
             "on 1: %d)",
             sim.calls[1]);
  sim_destroy(&objects[1]);
  ok = sim_place(&sim, 2, &objects[1], 100 * MB) == CUDAFFT_STATUS_OK;
  test_check(ok && objects[1].device == 1,
             "set aside: state freed on the out-of-memory device brings it back (made on %d)",
             objects[1].device);
  for (int i = 0; i < 5; i++)
    sim_destroy(&objects[i]);
  test_check(table_empty(2), "set aside: nothing left counted");

  /* a device that cannot run one object's settings is not set aside for others */
  sim.broken[0] = CUDAFFT_STATUS_UNSUPPORTED;
  ok = sim_place(&sim, 2, &objects[0], MB) == CUDAFFT_STATUS_OK && objects[0].device == 1;
  sim.broken[0] = CUDAFFT_STATUS_OK;
  ok = ok && sim_place(&sim, 2, &objects[1], MB) == CUDAFFT_STATUS_OK && objects[1].device == 0;
  test_check(ok, "set aside: not for UNSUPPORTED (the next object goes to device 0: %d)",
             objects[1].device);
  sim_destroy(&objects[0]);
  sim_destroy(&objects[1]);
  pthread_mutex_destroy(&sim.lock);
}

/* Objects made and destroyed from 8 threads while the devices fill and empty. */
typedef struct {
  Sim *sim;
  unsigned failures;
} Churn;

static void *
churn(void *arg)
{
  Churn *c = arg;
  SimObject held[16];
  for (int round = 0; round < 200; round++) {
    for (int i = 0; i < 16; i++)
      if (sim_place(c->sim, 2, &held[i], (size_t)(1 + (round + i) % 7) * MB) != CUDAFFT_STATUS_OK)
        c->failures++, held[i].device = -1;
    for (int i = 0; i < 16; i++)
      if (held[i].device >= 0)
        sim_destroy(&held[i]);
  }
  return NULL;
}

static void
test_threads(void)
{
  Sim sim;
  sim_init(&sim, 1000 * MB, 1000 * MB);
  pthread_t threads[8];
  Churn churns[8];
  for (int i = 0; i < 8; i++) {
    churns[i] = (Churn){&sim, 0};
    pthread_create(&threads[i], NULL, churn, &churns[i]);
  }
  unsigned failures = 0;
  for (int i = 0; i < 8; i++) {
    pthread_join(threads[i], NULL);
    failures += churns[i].failures;
  }
  test_check(failures == 0 && table_empty(2) && sim.free_bytes[0] == 1000 * MB &&
                 sim.free_bytes[1] == 1000 * MB,
             "threads: 8 x 200 rounds of 16 objects made and destroyed, %u failures, the table "
             "empty after",
             failures);
  pthread_mutex_destroy(&sim.lock);
}

/* ---- the failure message ---- */

static void
test_message(void)
{
  test_check(cudafft_device_try_next(CUDAFFT_STATUS_DEVICE_OUT_OF_MEMORY) &&
                 cudafft_device_try_next(CUDAFFT_STATUS_CUDA_ERROR) &&
                 cudafft_device_try_next(CUDAFFT_STATUS_UNSUPPORTED) &&
                 cudafft_device_try_next(CUDAFFT_STATUS_NO_DEVICE) &&
                 !cudafft_device_try_next(CUDAFFT_STATUS_INVALID_VALUE) &&
                 !cudafft_device_try_next(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY) &&
                 !cudafft_device_try_next(CUDAFFT_STATUS_INVALID_SIZE),
             "try next: the device's own failures, not bad arguments or the host's memory");

  CudafftDeviceTry tries[8];
  for (int i = 0; i < 8; i++) {
    tries[i].device = 7 - i;
    tries[i].status = i == 3 ? CUDAFFT_STATUS_CUDA_ERROR : CUDAFFT_STATUS_DEVICE_OUT_OF_MEMORY;
    memset(tries[i].message, 'x', sizeof tries[i].message - 1);
    tries[i].message[sizeof tries[i].message - 1] = '\0';
  }
  CudafftStatus status = cudafft_device_tries_fail(tries, 8);
  const char *message = cudafft_last_error_message();
  int named = 1;
  for (int i = 0; i < 8; i++) {
    char word[32];
    snprintf(word, sizeof word, "device %d: x", 7 - i);
    named = named && strstr(message, word);
  }
  test_check(status == CUDAFFT_STATUS_DEVICE_OUT_OF_MEMORY && named &&
                 strstr(message, "tried 7, 6, 5, 4, 3, 2, 1, 0"),
             "message: 8 devices with long messages, each named (%zu characters): %s",
             strlen(message), message);
  status = cudafft_device_tries_fail(tries + 3, 1);
  test_check(status == CUDAFFT_STATUS_CUDA_ERROR, "message: one try: its status");
}

int
main(int argc, char **argv)
{
  test_begin_every_backend(argc, argv);
  test_pick();
  test_table();
  test_split();
  test_full_device();
  test_set_aside();
  test_threads();
  test_message();
  return test_finish();
}
