/* latency-bench: the convolution's time per block at live block sizes, for one element of many
 * channels and for many stereo instances, on the GPU and on the CPU backend in one run, through the
 * library's API alone (cudafft/convolve.h: no GStreamer, so it builds wherever the library does).
 *
 * Issue 16 asks for short blocks with long responses: a live source pushes one block of L frames
 * each period (L / 48000 s), and the filter must give it back well within the period. For every
 * block size L (--blocks, set with cudafft_convolve_set_block_size()), response of T seconds
 * (--ir-seconds: uniform noise under exp(-6.9 t / T), -60 dB at the end like a room's reverb; by
 * default one kernel row per channel, so that every channel's spectra are read as in a real
 * multichannel reverb; --kernel one: one row for every channel, as audiofirfilter's `kernel`
 * property gives) and backend (--backends):
 *  1. One element with C channels (--channels): one object of C channels. The library takes at most
 *     CUDAFFT_MAX_CHANNELS (1024) an object, so a larger C runs as ceil(C / 1024) objects of up to
 *     1024 channels pushed at once, one thread each, as an element would have to split them.
 *  2. M stereo instances (--instances), as a media server runs them: a pool of worker threads, each
 *     pushing one block to each object of its share in turn (round robin). The pool has min(M, 64)
 *     threads on the GPU, where a push mostly waits for the device and more threads let the shared
 *     executor batch more streams' blocks into each launch, and min(M, host threads) on the CPU
 *     backend, where a push is all computation and more threads than cores would time the
 *     scheduler's preemption instead of the filter.
 *  3. The most channels (and instances) that stay real time: the largest C (M) of the list whose
 *     row is real time.
 *
 * Each push is one block of random F32 interleaved samples (page-locked where the cuda backend
 * runs, as the elements' allocator gives them to upstream), timed alone with CLOCK_MONOTONIC: one
 * block's time through the element. Two ways to push:
 *  - flat out (the default): the threads push as fast as they can, so that each call is timed under
 *    full load and audio seconds per wall second show the headroom. The composed split path's far
 *    tail (2048 frames, filtered a block behind on a worker thread: the CPU backend, F64) then has
 *    the wall time of the next 2048 / L - 1 pushes to be done in, not their audio time: a far tail
 *    slower than those pushes shows as a wait.
 *  - --paced: each thread pushes one round a period, at the period's start (an absolute clock
 *    deadline, as a live source's buffers come), and at once where it is behind. This is the live
 *    use the real-time criterion is about: the far tail has its audio time, and the device
 *    is idle between blocks. x real time is then 1.00 for every stream that keeps up.
 * First 2 x 2048 / L blocks an object (at least 8, at most --max-wall seconds' worth) go
 * untimed: the engines warm up and, at short blocks, the split path's tail blocks (2048 frames)
 * come round twice. Then as many blocks as cover
 * --seconds of audio, at least 200, cut once the row has run --max-wall seconds, and below 200 only
 * where it has fallen behind real time (its p99.9 is then a verdict, not a figure).
 *
 * Per row: the median, p99.9 (nearest rank) and worst call in ms over every timed call of every
 * object, p99.9 apart for the calls whose block completes a 2048-frame block of the stream ("at
 * ends": below 2048, the split path transforms that block in them, and the composed one filters
 * its near tail there too, so that they carry that spike) and for the others ("between"), the
 * block's period, p99.9 as % of the period, audio
 * seconds per wall second of the slowest stream (and, for instances, of all M together), and
 * whether the row is real time: p99.9 under half the period (the criterion: the other half
 * is the rest of a live pipeline's).
 *
 * With --paced, a last table gives the host's own floor under those tails: how late a thread that
 * sleeps to a deadline each block's period wakes (median, p99.9, worst over 2 s), nothing else
 * running.
 *
 * Run time: a row takes about max(--max-wall, 200 blocks at real time), plus making its objects. A
 * backend stops growing C (or M) at a block size and response once a row ran below half real time,
 * or once its objects did not fit in memory; the table says so.
 *
 * A block size the library refuses gets one row with its reason and is skipped. Without a CUDA
 * device (or the CUDA backend) the cuda rows are skipped, saying why.
 *
 * Usage: latency-bench [--blocks L,..] [--ir-seconds T,..] [--channels C,..] [--instances M,..]
 *                      [--backends cuda,cpu] [--format f32|f64] [--kernel channel|one]
 *                      [--seconds S] [--max-wall W] [--paced] [--devices D,..]
 *   --format: the samples' (F64 filters in double precision: its speed against F32's).
 *   --kernel: a response row per channel (the default) or one for all.
 *   --devices: the cuda rows once for each D, named "cuda D=..": on the first D devices (D equal to
 *     the host's count: device id -1, the library's own spread; fewer: the first D in turn, pinned;
 *     more: skipped, saying why), so that one run compares D = 1 and D = 2; their note gives each
 *     device's load (objects, state) while the row runs.
 *   Defaults: L = 64,128,256,2048; T = 1,10; C = 1,16,64,256,1024,4096; M = 1,16,64,256,1024;
 *   both backends; S = 10, W = 5.
 * Exit status: 0; 1 when a push failed or gave other than L frames (blocks pushed whole from the
 * start: produced + lag = frames pushed with 0 <= lag < L, and output comes in whole blocks, so
 * each push gives back exactly L), or an object could not be made for another reason than memory;
 * 2 on a bad command line.
 *
 * Length: past the ~800 lines a file usually keeps, as one benchmark program: its cases, their
 * timing and the report read together, and bench/ keeps one program per measurement. */
#define _POSIX_C_SOURCE 200809L
#include "bench_common.h"

#include <cudafft/convolve.h>

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define RATE 48000
#define MAX_LIST 16
#define MIN_TIMED 200 /* blocks timed a stream, at least, unless it fell behind */
#define MIN_WARMUP 8  /* untimed blocks an object, at least */
/* Random input frames, pushed a block at a time in turn: four of the largest blocks, so that
 * pushes in a row carry different samples. */
#define INPUT_FRAMES (4 * CUDAFFT_CONVOLVE_BLOCK)
#define MAX_GPU_WORKERS 64 /* the instances' pool on the GPU (the header says why) */
#define FAR_BEHIND 0.5     /* x real time below which a backend stops growing C or M */
#define INSTANCE_CHANNELS 2
#define WHY_BYTES 384

typedef struct {
  char name[16];
  CudafftBackend backend;
  int devices; /* --devices: the first D devices (0: device id -1, the library's choice) */
} Backend;

/* cuda and cpu; with --devices, a cuda entry for each D ("cuda D=2") before cpu. */
#define MAX_BACKENDS (MAX_LIST + 1)
static Backend backends[MAX_BACKENDS] = {{"cuda", CUDAFFT_BACKEND_CUDA, 0},
                                         {"cpu", CUDAFFT_BACKEND_CPU, 0}};
static int n_backends = 2;

typedef struct {
  double blocks[MAX_LIST], ir_seconds[MAX_LIST], channels[MAX_LIST], instances[MAX_LIST];
  int n_blocks, n_ir, n_channels, n_instances;
  int wanted[MAX_BACKENDS];
  double devices[MAX_LIST];
  int n_devices;
  double seconds, max_wall;
  int paced;
} Options;

static double
now_s(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* The samples pushed (--format). */
static CudafftSampleFormat sample_format = CUDAFFT_SAMPLE_F32;
static size_t sample_bytes = sizeof(float);
/* Whether every channel has a response row of its own (--kernel channel) or shares the first. */
static int row_per_channel = 1;

/* splitmix64: a fast, seedable source for the gigabytes of a 10 s response on 1024 rows. */
static uint64_t
next_random(uint64_t *state)
{
  uint64_t z = (*state += 0x9e3779b97f4a7c15u);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
  return z ^ (z >> 31);
}

/* Uniform in [-1, 1). */
static double
random_sample(uint64_t *state)
{
  return (double)(next_random(state) >> 11) * 0x1p-52 - 1.0;
}

/* ---- the response and the input ---- */

/* `rows` rows of `taps` taps: uniform noise under exp(-6.9 k / taps), each row of about unit energy
 * (uniform noise's mean square is 1/3) so that the output keeps the input's level. NULL when out of
 * memory. */
static double *
make_response(size_t taps, unsigned rows)
{
  double *h = malloc(taps * rows * sizeof(double));
  double *envelope = malloc(taps * sizeof(double));
  if (!h || !envelope) {
    free(h);
    free(envelope);
    return NULL;
  }
  double energy = 0.0;
  for (size_t k = 0; k < taps; k++) {
    envelope[k] = exp(-6.9 * (double)k / (double)taps);
    energy += envelope[k] * envelope[k] / 3.0;
  }
  const double scale = 1.0 / sqrt(energy);
  uint64_t state = 1234;
  for (size_t r = 0; r < rows; r++)
    for (size_t k = 0; k < taps; k++)
      h[r * taps + k] = random_sample(&state) * envelope[k] * scale;
  free(envelope);
  return h;
}

/* The device id an object of b is made with: -1 (the library's choice, cudafft/common.h, Devices)
 * without --devices, and where D is every device of the host; below that, the first D devices in
 * turn (pinned: the library's choice would spread over all of them). */
static int
object_device(const Backend *b)
{
  static unsigned next;
  if (b->backend != CUDAFFT_BACKEND_CUDA || b->devices == 0 ||
      b->devices >= cudafft_cuda_device_count())
    return -1;
  return (int)(next++ % (unsigned)b->devices);
}

/* The load on each device now, for the note column of the cuda rows with --devices: "per device:
 * 0: 4 objects, 1.2 GB; 1: ...". */
static char spread[WHY_BYTES];

static void
note_spread(const Backend *b)
{
  spread[0] = '\0';
  if (b->backend != CUDAFFT_BACKEND_CUDA || b->devices == 0)
    return;
  const size_t used = (size_t)snprintf(spread, sizeof spread, "per device: ");
  bench_format_device_load(spread + used, sizeof spread - used);
}

/* An object of `channels` channels filtering with the response's first `channels` rows (or its
 * first row alone, --kernel one), at block size `block`, on b's devices; its status, and why it
 * failed in `why`. */
static CudafftStatus
make_object(CudafftConvolve **object, const Backend *b, unsigned channels, const double *response,
            size_t taps, size_t block, char *why)
{
  const unsigned rows = row_per_channel ? channels : 1;
  const CudafftConvolveConfig config = {channels, sample_format, {response, taps, rows}, 1.0};
  char call[64] = "cudafft_convolve_create";
  CudafftStatus status = cudafft_convolve_create(object, b->backend, object_device(b), &config);
  if (status == CUDAFFT_STATUS_OK) {
    snprintf(call, sizeof call, "cudafft_convolve_set_block_size(%zu)", block);
    status = cudafft_convolve_set_block_size(*object, block);
    if (status != CUDAFFT_STATUS_OK) {
      cudafft_convolve_destroy(*object);
      *object = NULL;
    }
  }
  if (status != CUDAFFT_STATUS_OK)
    snprintf(why, WHY_BYTES, "%s: %s (%s)", call, cudafft_status_name(status),
             cudafft_last_error_message());
  return status;
}

static int
out_of_memory(CudafftStatus status)
{
  return status == CUDAFFT_STATUS_DEVICE_OUT_OF_MEMORY ||
         status == CUDAFFT_STATUS_HOST_OUT_OF_MEMORY;
}

/* ---- one row: workers pushing their objects ---- */

/* The workers wait here after their warm-up until all are warm, so that every object is timed
 * under the same load. */
typedef struct {
  pthread_mutex_t lock;
  pthread_cond_t cond;
  unsigned ready;
  int go;
} Gate;

typedef struct {
  size_t block;
  double period; /* seconds */
  const void *input;
  uint64_t warmup; /* blocks an object */
  uint64_t target; /* timed blocks a stream */
  double max_wall;
  int paced; /* a round a period (--paced) */
  Gate gate;
} Spec;

/* Call times in ms. */
typedef struct {
  double *ms;
  size_t n, room;
} Calls;

typedef struct {
  Spec *spec;
  CudafftConvolve **objects; /* pushed in turn */
  unsigned n_objects;
  void *out;
  int out_pinned;
  /* Every timed call: those whose block completes a 2048-frame block of the stream (the split
   * path's tail blocks: its near tail is filtered in that call), and the others. */
  Calls ends, others;
  uint64_t rounds; /* timed blocks of each of its objects */
  double wall;     /* seconds of its timed rounds */
  int failed;
  char why[WHY_BYTES];
} Worker;

static int
record(Calls *c, double ms)
{
  if (c->n == c->room) {
    const size_t room = c->room ? 2 * c->room : 1024;
    double *grown = realloc(c->ms, room * sizeof(double));
    if (!grown)
      return 0;
    c->ms = grown;
    c->room = room;
  }
  c->ms[c->n++] = ms;
  return 1;
}

/* Whether push `index` (from the stream's start) completes a 2048-frame block of it. Not at the
 * default block size, where every push does. */
static int
ends_tail_block(const Spec *s, uint64_t index)
{
  return s->block < CUDAFFT_CONVOLVE_BLOCK && (index + 1) * s->block % CUDAFFT_CONVOLVE_BLOCK == 0;
}

/* Pushes block `index` (of the input, in turn) to each of the worker's objects; with `timed`,
 * records each call. FALSE once something failed (in w->why). */
static int
push_round(Worker *w, uint64_t index, int timed)
{
  const Spec *s = w->spec;
  const size_t in_block = (size_t)(index % (INPUT_FRAMES / s->block)) * s->block;
  for (unsigned k = 0; k < w->n_objects; k++) {
    CudafftConvolve *object = w->objects[k];
    const size_t frame_bytes = cudafft_convolve_frame_bytes(object);
    size_t produced = 0;
    const double start = now_s();
    const CudafftStatus status = cudafft_convolve_push(
        object, (const char *)s->input + in_block * frame_bytes, s->block, w->out, &produced);
    const double ms = (now_s() - start) * 1e3;
    if (status != CUDAFFT_STATUS_OK) {
      snprintf(w->why, WHY_BYTES, "push failed: %s (%s)", cudafft_status_name(status),
               cudafft_last_error_message());
      w->failed = 1;
    } else if (produced != s->block) {
      snprintf(w->why, WHY_BYTES, "WRONG LENGTH: a push of %zu frames gave %zu", s->block,
               produced);
      w->failed = 1;
    } else if (timed && !record(ends_tail_block(s, index) ? &w->ends : &w->others, ms)) {
      snprintf(w->why, WHY_BYTES, "out of memory for the call times");
      w->failed = 1;
    }
    if (w->failed)
      return 0;
  }
  return 1;
}

/* Sleeps until `due` (seconds on now_s()'s clock), and returns at once where it is past. */
static void
sleep_until(double due)
{
  const double whole = floor(due);
  const struct timespec at = {(time_t)whole, (long)((due - whole) * 1e9)};
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL) != 0) {
    /* interrupted: sleep on until the deadline */
  }
}

/* With --paced: sleeps until round `round` of a run that started at `start` is due (round
 * period), and returns at once where it is already due. */
static void
wait_for_round(const Spec *s, double start, uint64_t round)
{
  if (s->paced)
    sleep_until(start + (double)round * s->period);
}

static void *
drive(void *data)
{
  Worker *w = data;
  Spec *s = w->spec;
  /* A warm-up that takes --max-wall (calls far longer than the period) ends there: such a row is
   * far from real time whatever comes next. */
  const double warm_start = now_s();
  uint64_t warm = 0;
  while (warm < s->warmup) {
    wait_for_round(s, warm_start, warm);
    if (!push_round(w, warm, 0))
      break;
    warm++;
    if (now_s() - warm_start >= s->max_wall)
      break;
  }
  pthread_mutex_lock(&s->gate.lock);
  s->gate.ready++;
  pthread_cond_broadcast(&s->gate.cond);
  while (!s->gate.go)
    pthread_cond_wait(&s->gate.cond, &s->gate.lock);
  pthread_mutex_unlock(&s->gate.lock);

  const double start = now_s();
  uint64_t round = 0;
  while (!w->failed && round < s->target) {
    wait_for_round(s, start, round);
    if (!push_round(w, s->warmup + round, 1))
      break;
    round++;
    const double wall = now_s() - start;
    const int behind = (double)round * s->period < wall;
    if (wall >= s->max_wall && (round >= MIN_TIMED || behind))
      break;
  }
  w->rounds = round;
  w->wall = now_s() - start;
  return NULL;
}

typedef struct {
  int ok;
  double median, p999, worst;    /* ms a call */
  double p999_ends, p999_others; /* of the calls that complete a 2048-frame block, and the rest;
                                  * NAN where there are none */
  double rate;                   /* audio seconds per wall second, of the slowest stream */
  double aggregate;              /* of all streams together */
  uint64_t blocks;               /* timed blocks a stream, the fewest of any worker */
  int capped;                    /* fewer blocks than --seconds of audio */
  char why[WHY_BYTES];           /* where !ok */
} Figures;

/* The value at quantile q of n sorted values, by nearest rank. */
static double
nearest_rank(const double *sorted, size_t n, double q)
{
  const size_t rank = (size_t)ceil(q * (double)n - 1e-9); /* 0.999 x 1000 is 999, not 1000 */
  return sorted[rank > 0 ? rank - 1 : 0];
}

/* Copies every worker's calls at tail block ends (ends) or the others to dst, sorted; their
 * count. */
static size_t
gather_sorted(const Worker *workers, unsigned n_workers, int ends, double *dst)
{
  size_t at = 0;
  for (unsigned i = 0; i < n_workers; i++) {
    const Calls *c = ends ? &workers[i].ends : &workers[i].others;
    memcpy(dst + at, c->ms, c->n * sizeof(double));
    at += c->n;
  }
  qsort(dst, at, sizeof(double), bench_compare_doubles);
  return at;
}

static void
summarize(Worker *workers, unsigned n_workers, const Spec *s, uint64_t wanted_blocks, Figures *f)
{
  size_t calls = 0;
  f->rate = INFINITY;
  f->blocks = UINT64_MAX;
  for (unsigned i = 0; i < n_workers; i++) {
    const Worker *w = &workers[i];
    calls += w->ends.n + w->others.n;
    const double rate = w->wall > 0.0 ? (double)w->rounds * s->period / w->wall : 0.0;
    f->rate = fmin(f->rate, rate);
    f->aggregate += rate * w->n_objects;
    if (w->rounds < f->blocks)
      f->blocks = w->rounds;
  }
  double *all = malloc((calls ? calls : 1) * sizeof(double));
  if (!all || calls == 0) {
    snprintf(f->why, WHY_BYTES, all ? "no call was timed" : "out of memory for the call times");
    free(all);
    return;
  }
  const size_t ends = gather_sorted(workers, n_workers, 1, all);
  const size_t others = gather_sorted(workers, n_workers, 0, all + ends);
  f->p999_ends = ends ? nearest_rank(all, ends, 0.999) : NAN;
  f->p999_others = others ? nearest_rank(all + ends, others, 0.999) : NAN;
  qsort(all, calls, sizeof(double), bench_compare_doubles);
  f->median = calls % 2 ? all[calls / 2] : 0.5 * (all[calls / 2 - 1] + all[calls / 2]);
  f->p999 = nearest_rank(all, calls, 0.999);
  f->worst = all[calls - 1];
  f->capped = f->blocks < wanted_blocks;
  f->ok = 1;
  free(all);
}

/* Times n_objects objects (all of the same block size) on n_workers threads, each pushing its
 * share in turn. */
static Figures
run_row(CudafftConvolve **objects, unsigned n_objects, unsigned n_workers, size_t block,
        const void *input, int want_pinned, const Options *o)
{
  Figures f = {0};
  const uint64_t wanted = (uint64_t)ceil(o->seconds * RATE / (double)block - 1e-9);
  Spec s = {.block = block,
            .period = (double)block / RATE,
            .input = input,
            .warmup = 2 * CUDAFFT_CONVOLVE_BLOCK / block,
            .target = wanted > MIN_TIMED ? wanted : MIN_TIMED,
            .max_wall = o->max_wall,
            .paced = o->paced};
  if (s.warmup < MIN_WARMUP)
    s.warmup = MIN_WARMUP;
  pthread_mutex_init(&s.gate.lock, NULL);
  pthread_cond_init(&s.gate.cond, NULL);
  Worker *workers = calloc(n_workers, sizeof(Worker));
  pthread_t *threads = calloc(n_workers, sizeof(pthread_t));
  unsigned started = 0;
  int ok = workers && threads;
  for (unsigned i = 0; ok && i < n_workers; i++) {
    Worker *w = &workers[i];
    const unsigned first = (unsigned)((uint64_t)n_objects * i / n_workers);
    const unsigned end = (unsigned)((uint64_t)n_objects * (i + 1) / n_workers);
    size_t room = 0; /* the most one push can give: lag < latency */
    for (unsigned k = first; k < end; k++) {
      const size_t bytes =
          (block + cudafft_convolve_latency(objects[k])) * cudafft_convolve_frame_bytes(objects[k]);
      room = bytes > room ? bytes : room;
    }
    *w = (Worker){.spec = &s, .objects = objects + first, .n_objects = end - first};
    w->out = cudafft_pinned_alloc(room, want_pinned, &w->out_pinned);
    ok = w->out != NULL;
  }
  while (ok && started < n_workers) {
    ok = pthread_create(&threads[started], NULL, drive, &workers[started]) == 0;
    started += ok;
  }
  /* All that started are warm (or failed): let them go, also when a thread did not start, so that
   * none waits forever. */
  pthread_mutex_lock(&s.gate.lock);
  while (s.gate.ready < started)
    pthread_cond_wait(&s.gate.cond, &s.gate.lock);
  s.gate.go = 1;
  pthread_cond_broadcast(&s.gate.cond);
  pthread_mutex_unlock(&s.gate.lock);
  for (unsigned i = 0; i < started; i++)
    pthread_join(threads[i], NULL);

  if (!ok)
    snprintf(f.why, WHY_BYTES, "out of memory or threads for %u workers", n_workers);
  for (unsigned i = 0; ok && i < n_workers; i++)
    if (workers[i].failed) {
      memcpy(f.why, workers[i].why, WHY_BYTES);
      ok = 0;
    }
  if (ok)
    summarize(workers, n_workers, &s, wanted, &f);
  for (unsigned i = 0; workers && i < n_workers; i++) {
    cudafft_pinned_free(workers[i].out, workers[i].out_pinned);
    free(workers[i].ends.ms);
    free(workers[i].others.ms);
  }
  free(workers);
  free(threads);
  pthread_cond_destroy(&s.gate.cond);
  pthread_mutex_destroy(&s.gate.lock);
  return f;
}

/* ---- the tables ---- */

static const char *const element_columns[] = {
    "backend",   "block",          "channels",      "objects",       "blocks timed",
    "median ms", "p99.9 ms",       "p99.9 at ends", "p99.9 between", "worst ms",
    "period ms", "p99.9 / period", "x real time",   "real time",     "note"};
static const char *const instance_columns[] = {"backend",
                                               "block",
                                               "instances",
                                               "threads",
                                               "blocks timed",
                                               "median ms",
                                               "p99.9 ms",
                                               "p99.9 at ends",
                                               "p99.9 between",
                                               "worst ms",
                                               "period ms",
                                               "p99.9 / period",
                                               "x real time (slowest)",
                                               "aggregate",
                                               "real time",
                                               "note"};
#define N_ELEMENT_COLUMNS (int)(sizeof element_columns / sizeof element_columns[0])
#define N_INSTANCE_COLUMNS (int)(sizeof instance_columns / sizeof instance_columns[0])

static void
print_header(const char *const *columns, int n)
{
  for (int c = 0; c < n; c++)
    printf("| %s ", columns[c]);
  printf("|\n");
  for (int c = 0; c < n; c++) /* text left, numbers right */
    printf("| %s ", c == 0 || c >= n - 2 ? "---" : "---:");
  printf("|\n");
}

/* A row without figures: the first columns, dashes, and the note. */
static void
print_skipped(const char *backend, const char *block, const char *count, int n_columns,
              const char *note)
{
  printf("| %s | %s | %s ", backend, block, count);
  for (int c = 3; c < n_columns - 1; c++)
    printf("| - ");
  printf("| %s |\n", note);
}

static int
is_real_time(const Figures *f, size_t block)
{
  return f->ok && f->p999 < 0.5 * (double)block / RATE * 1e3;
}

static void
print_figures(const char *backend, size_t block, unsigned count, unsigned threads, const Figures *f,
              int instances)
{
  const double period_ms = (double)block / RATE * 1e3;
  if (!f->ok) {
    char b[24], c[24];
    snprintf(b, sizeof b, "%zu", block);
    snprintf(c, sizeof c, "%u", count);
    print_skipped(backend, b, c, instances ? N_INSTANCE_COLUMNS : N_ELEMENT_COLUMNS, f->why);
    return;
  }
  printf("| %s | %zu | %u | %u | %llu | %.4f | %.4f ", backend, block, count, threads,
         (unsigned long long)f->blocks, f->median, f->p999);
  if (isnan(f->p999_ends))
    printf("| - ");
  else
    printf("| %.4f ", f->p999_ends);
  printf("| %.4f | %.4f | %.3f | %.1f%% | %.2f ", f->p999_others, f->worst, period_ms,
         100.0 * f->p999 / period_ms, f->rate);
  if (instances)
    printf("| %.1f ", f->aggregate);
  const char *note = f->blocks < MIN_TIMED ? "fell behind real time: cut by --max-wall"
                     : f->capped           ? "capped by --max-wall"
                                           : "";
  printf("| %s | %s%s%s |\n", is_real_time(f, block) ? "yes" : "no", note,
         note[0] && spread[0] ? "; " : "", spread);
}

/* ---- the sweeps ---- */

/* What a (backend, block, response) reached: the largest count in real time (0: none), and
 * whether any row was measured. */
typedef struct {
  int channels_measured, instances_measured;
  unsigned best_channels, best_instances;
} Reach;

typedef struct {
  const Options *o;
  const double *response;
  size_t taps;
  const void *input;
  int want_pinned;
  int status; /* the exit status so far */
} Context;

/* Why a row is not measured because of an earlier one: far behind or out of memory. */
static void
stop_growing(char *stop, const char *what, unsigned count, const char *reason)
{
  snprintf(stop, WHY_BYTES, "skipped: %u %s %s", count, what, reason);
}

/* After objects for a row of `count` `what` could not be made: larger rows are skipped, and a
 * failure other than memory makes the run's exit status 1. */
static void
stop_after_failure(Context *cx, char *stop, const char *what, unsigned count, CudafftStatus status)
{
  if (out_of_memory(status)) {
    stop_growing(stop, what, count, "did not fit in memory");
  } else {
    cx->status = 1;
    stop_growing(stop, what, count, "could not be made");
  }
}

static void
after_row(const Figures *f, unsigned count, const char *what, char *stop)
{
  if (f->ok && f->rate < FAR_BEHIND) {
    char reason[64];
    snprintf(reason, sizeof reason, "ran at %.2fx real time", f->rate);
    stop_growing(stop, what, count, reason);
  }
}

/* Table 1's rows of one backend and block: one element of each C. */
static void
element_rows(Context *cx, const Backend *b, size_t block, Reach *reach)
{
  const Options *o = cx->o;
  char stop[WHY_BYTES] = "";
  for (int i = 0; i < o->n_channels; i++) {
    const unsigned channels = (unsigned)o->channels[i];
    const unsigned n_objects = (channels + CUDAFFT_MAX_CHANNELS - 1) / CUDAFFT_MAX_CHANNELS;
    char b_text[24], c_text[24];
    snprintf(b_text, sizeof b_text, "%zu", block);
    snprintf(c_text, sizeof c_text, "%u", channels);
    if (stop[0]) {
      print_skipped(b->name, b_text, c_text, N_ELEMENT_COLUMNS, stop);
      continue;
    }
    CudafftConvolve **objects = calloc(n_objects, sizeof *objects);
    char why[WHY_BYTES] = "out of memory for the objects' list";
    CudafftStatus status = objects ? CUDAFFT_STATUS_OK : CUDAFFT_STATUS_HOST_OUT_OF_MEMORY;
    for (unsigned k = 0; objects && k < n_objects && status == CUDAFFT_STATUS_OK; k++) {
      const unsigned first = k * CUDAFFT_MAX_CHANNELS;
      const unsigned these =
          channels - first < CUDAFFT_MAX_CHANNELS ? channels - first : CUDAFFT_MAX_CHANNELS;
      status = make_object(&objects[k], b, these, cx->response, cx->taps, block, why);
    }
    if (status != CUDAFFT_STATUS_OK) {
      print_skipped(b->name, b_text, c_text, N_ELEMENT_COLUMNS, why);
      stop_after_failure(cx, stop, "channels", channels, status);
    } else {
      note_spread(b);
      const Figures f =
          run_row(objects, n_objects, n_objects, block, cx->input, cx->want_pinned, o);
      print_figures(b->name, block, channels, n_objects, &f, 0);
      reach->channels_measured = 1;
      if (!f.ok)
        cx->status = 1;
      if (is_real_time(&f, block) && channels > reach->best_channels)
        reach->best_channels = channels;
      after_row(&f, channels, "channels", stop);
    }
    fflush(stdout);
    for (unsigned k = 0; objects && k < n_objects; k++)
      cudafft_convolve_destroy(objects[k]);
    free(objects);
  }
}

/* Table 2's rows of one backend and block: M stereo instances for each M. The objects of one row
 * are kept for the next (reset, and topped up to its M), since making a thousand objects with long
 * responses takes longer than timing them. */
static void
instance_rows(Context *cx, const Backend *b, size_t block, Reach *reach)
{
  const Options *o = cx->o;
  const unsigned pool =
      b->backend == CUDAFFT_BACKEND_CUDA ? MAX_GPU_WORKERS : (unsigned)bench_host_threads();
  unsigned made = 0, room = 0;
  CudafftConvolve **objects = NULL;
  char stop[WHY_BYTES] = "";
  for (int i = 0; i < o->n_instances; i++) {
    const unsigned m = (unsigned)o->instances[i];
    char b_text[24], m_text[24];
    snprintf(b_text, sizeof b_text, "%zu", block);
    snprintf(m_text, sizeof m_text, "%u", m);
    if (stop[0]) {
      print_skipped(b->name, b_text, m_text, N_INSTANCE_COLUMNS, stop);
      continue;
    }
    char why[WHY_BYTES] = "out of memory for the objects' list";
    CudafftStatus status = CUDAFFT_STATUS_OK;
    if (m > room) {
      CudafftConvolve **grown = realloc(objects, m * sizeof *objects);
      status = grown ? CUDAFFT_STATUS_OK : CUDAFFT_STATUS_HOST_OUT_OF_MEMORY;
      if (grown) {
        objects = grown;
        room = m;
      }
    }
    while (status == CUDAFFT_STATUS_OK && made < m) {
      status =
          make_object(&objects[made], b, INSTANCE_CHANNELS, cx->response, cx->taps, block, why);
      made += status == CUDAFFT_STATUS_OK;
    }
    if (status != CUDAFFT_STATUS_OK) {
      print_skipped(b->name, b_text, m_text, N_INSTANCE_COLUMNS, why);
      stop_after_failure(cx, stop, "instances", m, status);
      continue;
    }
    for (unsigned k = 0; k < m; k++)
      cudafft_convolve_reset(objects[k]); /* each row starts from the first frame */
    const unsigned threads = m < pool ? m : pool;
    note_spread(b);
    const Figures f = run_row(objects, m, threads, block, cx->input, cx->want_pinned, o);
    print_figures(b->name, block, m, threads, &f, 1);
    fflush(stdout);
    reach->instances_measured = 1;
    if (!f.ok)
      cx->status = 1;
    if (is_real_time(&f, block) && m > reach->best_instances)
      reach->best_instances = m;
    after_row(&f, m, "instances", stop);
  }
  for (unsigned k = 0; k < made; k++)
    cudafft_convolve_destroy(objects[k]);
  free(objects);
}

/* Whether `backend` takes block size `block`: a one-channel object tried with it; why not in
 * `why`. The object is too small to fail for memory. */
static int
takes_block(const Backend *b, size_t block, char *why)
{
  static const double delta[CUDAFFT_CONVOLVE_DIRECT_TAPS] = {1.0};
  if (b->devices > cudafft_cuda_device_count()) {
    snprintf(why, WHY_BYTES, "D=%d needs %d CUDA devices; this host has %d", b->devices, b->devices,
             cudafft_cuda_device_count());
    return 0;
  }
  CudafftConvolve *object = NULL;
  const CudafftStatus status =
      make_object(&object, b, 1, delta, CUDAFFT_CONVOLVE_DIRECT_TAPS, block, why);
  cudafft_convolve_destroy(object);
  return status == CUDAFFT_STATUS_OK;
}

static void
reach_text(char *text, size_t size, int measured, unsigned best)
{
  if (!measured)
    snprintf(text, size, "not measured");
  else if (best == 0)
    snprintf(text, size, "none");
  else
    snprintf(text, size, "%u", best);
}

/* ---- the command line ---- */

/* A comma list of numbers, each an integer in lo..hi where `integers`; the count, 0 when bad. */
static int
parse_list(const char *text, double *values, double lo, double hi, int integers)
{
  int n = 0;
  const char *p = text;
  for (;;) {
    char *end;
    const double v = strtod(p, &end);
    if (end == p || n == MAX_LIST || !(v >= lo && v <= hi) || (integers && v != floor(v)))
      return 0;
    values[n++] = v;
    if (*end == '\0')
      return n;
    if (*end != ',')
      return 0;
    p = end + 1;
  }
}

static int
parse_backends(const char *text, int *wanted)
{
  int any = 0;
  wanted[0] = wanted[1] = 0;
  for (const char *p = text; *p;) {
    const size_t len = strcspn(p, ",");
    int known = 0;
    for (int b = 0; b < n_backends; b++)
      if (len == strlen(backends[b].name) && !strncmp(p, backends[b].name, len))
        known = wanted[b] = any = 1;
    if (!known)
      return 0;
    p += len + (p[len] == ',');
  }
  return any;
}

static void
usage(const char *name)
{
  fprintf(stderr,
          "usage: %s [--blocks L,..] [--ir-seconds T,..] [--channels C,..] [--instances M,..] "
          "[--backends cuda,cpu] [--format f32|f64] [--kernel channel|one] [--seconds S] "
          "[--max-wall W] [--paced] [--devices D,..]\n",
          name);
}

static int
parse_options(int argc, char **argv, Options *o)
{
  *o = (Options){.blocks = {64, 128, 256, 2048},
                 .ir_seconds = {1, 10},
                 .channels = {1, 16, 64, 256, 1024, 4096},
                 .instances = {1, 16, 64, 256, 1024},
                 .n_blocks = 4,
                 .n_ir = 2,
                 .n_channels = 6,
                 .n_instances = 5,
                 .wanted = {1, 1},
                 .seconds = 10.0,
                 .max_wall = 5.0};
  for (int i = 1; i < argc; i += 2) {
    if (!strcmp(argv[i], "--paced")) { /* the one option without a value */
      o->paced = 1;
      i--;
      continue;
    }
    const char *arg = argv[i], *value = argv[i + 1];
    int good = value != NULL;
    if (!good)
      ;
    else if (!strcmp(arg, "--blocks"))
      good = (o->n_blocks = parse_list(value, o->blocks, 1, CUDAFFT_CONVOLVE_BLOCK, 1)) > 0;
    else if (!strcmp(arg, "--ir-seconds"))
      good = (o->n_ir = parse_list(value, o->ir_seconds, 1.0 / RATE, 60.0, 0)) > 0;
    else if (!strcmp(arg, "--channels"))
      good = (o->n_channels = parse_list(value, o->channels, 1, 16 * CUDAFFT_MAX_CHANNELS, 1)) > 0;
    else if (!strcmp(arg, "--instances"))
      good = (o->n_instances = parse_list(value, o->instances, 1, 16384, 1)) > 0;
    else if (!strcmp(arg, "--backends"))
      good = parse_backends(value, o->wanted);
    else if (!strcmp(arg, "--seconds"))
      good = (o->seconds = strtod(value, NULL)) > 0.0;
    else if (!strcmp(arg, "--format")) {
      good = !strcmp(value, "f32") || !strcmp(value, "f64");
      sample_format = !strcmp(value, "f64") ? CUDAFFT_SAMPLE_F64 : CUDAFFT_SAMPLE_F32;
      sample_bytes = sample_format == CUDAFFT_SAMPLE_F64 ? sizeof(double) : sizeof(float);
    } else if (!strcmp(arg, "--kernel")) {
      good = !strcmp(value, "channel") || !strcmp(value, "one");
      row_per_channel = !strcmp(value, "channel");
    } else if (!strcmp(arg, "--devices"))
      good = (o->n_devices = parse_list(value, o->devices, 1, 64, 1)) > 0;
    else if (!strcmp(arg, "--max-wall"))
      good = (o->max_wall = strtod(value, NULL)) > 0.0;
    else
      good = 0;
    if (!good) {
      usage(argv[0]);
      return 0;
    }
  }
  if (o->n_devices > 0) { /* cuda D=.. for each D, then cpu */
    const int cuda = o->wanted[0], cpu = o->wanted[1];
    for (int d = 0; d < o->n_devices; d++) {
      backends[d] = (Backend){"", CUDAFFT_BACKEND_CUDA, (int)o->devices[d]};
      snprintf(backends[d].name, sizeof backends[d].name, "cuda D=%d", (int)o->devices[d]);
      o->wanted[d] = cuda;
    }
    backends[o->n_devices] = (Backend){"cpu", CUDAFFT_BACKEND_CPU, 0};
    o->wanted[o->n_devices] = cpu;
    n_backends = o->n_devices + 1;
  }
  return 1;
}

static void
print_list(const char *label, const double *values, int n)
{
  printf("%s ", label);
  for (int i = 0; i < n; i++)
    printf("%s%g", i ? "," : "", values[i]);
}

/* The host's own noise, the floor under every paced row's tail: a thread that sleeps to a
 * deadline each period (as a paced push's wait for the device does, one wake-up a push) for
 * WAKE_SECONDS, and how late it wakes. On the lent virtual machines its p99.9 was 0.2 to 2 ms
 * (RESULTS.md), up to the whole real-time bound of a 64- or 128-frame block. */
#define WAKE_SECONDS 2.0

static void
print_wake_floor(const double *blocks, int n_blocks)
{
  printf("\n### The host's wake-up lateness (the floor under paced tails)\n\n");
  printf("A thread sleeping to an absolute deadline each period for %.0f s, nothing else "
         "running.\n\n",
         WAKE_SECONDS);
  printf("| period ms | wakes | median ms | p99.9 ms | worst ms | p99.9 / half the period |\n");
  printf("| ---: | ---: | ---: | ---: | ---: | ---: |\n");
  for (int l = 0; l < n_blocks; l++) {
    const double period = blocks[l] / RATE;
    const size_t n = (size_t)(WAKE_SECONDS / period);
    double *late = malloc(n * sizeof *late);
    if (!late) {
      printf("| %.3f | no memory for %zu wakes |\n", period * 1e3, n);
      continue;
    }
    const double start = now_s();
    for (size_t i = 0; i < n; i++) {
      const double due = start + (double)(i + 1) * period;
      sleep_until(due);
      late[i] = (now_s() - due) * 1e3;
    }
    qsort(late, n, sizeof *late, bench_compare_doubles);
    const double p999 = nearest_rank(late, n, 0.999);
    printf("| %.3f | %zu | %.4f | %.4f | %.4f | %.0f%% |\n", period * 1e3, n, late[n / 2], p999,
           late[n - 1], 100.0 * p999 / (period * 1e3 / 2));
    free(late);
  }
}

int
main(int argc, char **argv)
{
  Options o;
  if (!parse_options(argc, argv, &o))
    return 2;
  setvbuf(stdout, NULL, _IOLBF, 0); /* each row as soon as it is measured */

  /* A backend that cannot make an object (no device, not built in) is skipped, saying why. */
  char backend_why[MAX_BACKENDS][WHY_BYTES] = {{0}};
  for (int b = 0; b < n_backends; b++)
    if (o.wanted[b] && !takes_block(&backends[b], CUDAFFT_CONVOLVE_BLOCK, backend_why[b]))
      o.wanted[b] = 0;
  int block_ok[MAX_BACKENDS][MAX_LIST];
  char block_why[MAX_BACKENDS][MAX_LIST][WHY_BYTES];
  for (int b = 0; b < n_backends; b++)
    for (int l = 0; l < o.n_blocks; l++)
      block_ok[b][l] =
          o.wanted[b] && takes_block(&backends[b], (size_t)o.blocks[l], block_why[b][l]);

  printf("# latency-bench\n\n");
  bench_print_host("the cuda backend", NULL);
  printf("settings: %s interleaved at %d Hz, one block a push, %s; ",
         sample_format == CUDAFFT_SAMPLE_F64 ? "F64" : "F32", RATE,
         o.paced ? "paced: a round a period, as a live source" : "pushed as fast as they go");
  print_list("blocks", o.blocks, o.n_blocks);
  print_list("; responses (s)", o.ir_seconds, o.n_ir);
  printf(" of decaying noise, %s; ",
         row_per_channel ? "a row per channel" : "one row for all channels");
  print_list("channels", o.channels, o.n_channels);
  print_list("; stereo instances", o.instances, o.n_instances);
  printf("; %.1f s of audio a stream (at least %d blocks), cut after %.1f s of wall; real time: "
         "p99.9 under half the period\n",
         o.seconds, MIN_TIMED, o.max_wall);
  for (int b = 0; b < n_backends; b++)
    if (backend_why[b][0])
      printf("%s backend skipped: %s\n", backends[b].name, backend_why[b]);

  /* One input for every object: INPUT_FRAMES frames of the most channels an object has. */
  unsigned max_channels = INSTANCE_CHANNELS;
  for (int i = 0; i < o.n_channels; i++)
    if (o.channels[i] > max_channels)
      max_channels =
          o.channels[i] < CUDAFFT_MAX_CHANNELS ? (unsigned)o.channels[i] : CUDAFFT_MAX_CHANNELS;
  const int want_pinned = o.wanted[0];
  int input_pinned = 0;
  const size_t input_count = (size_t)INPUT_FRAMES * max_channels;
  void *input = cudafft_pinned_alloc(input_count * sample_bytes, want_pinned, &input_pinned);
  if (!input) {
    fprintf(stderr, "out of memory for %zu input samples\n", input_count);
    return 1;
  }
  uint64_t state = 42;
  for (size_t i = 0; i < input_count; i++) {
    if (sample_format == CUDAFFT_SAMPLE_F64)
      ((double *)input)[i] = random_sample(&state);
    else
      ((float *)input)[i] = (float)random_sample(&state);
  }

  Reach reach[MAX_LIST][MAX_BACKENDS][MAX_LIST] = {{{{0}}}}; /* [response][backend][block] */
  Context cx = {.o = &o, .input = input, .want_pinned = want_pinned};
  for (int r = 0; r < o.n_ir; r++) {
    cx.taps = (size_t)llround(o.ir_seconds[r] * RATE);
    const unsigned response_rows = row_per_channel ? max_channels : 1;
    double *response = make_response(cx.taps, response_rows);
    if (!response) {
      printf("\nthe %g s response on %u rows does not fit in memory: skipped\n", o.ir_seconds[r],
             response_rows);
      cx.status = 1;
      continue;
    }
    cx.response = response;
    for (int table = 0; table < 2; table++) {
      printf("\n### %g s response (%zu taps): %s\n\n", o.ir_seconds[r], cx.taps,
             table == 0 ? "one element with C channels" : "M stereo instances");
      if (table == 0)
        print_header(element_columns, N_ELEMENT_COLUMNS);
      else
        print_header(instance_columns, N_INSTANCE_COLUMNS);
      const int n_columns = table == 0 ? N_ELEMENT_COLUMNS : N_INSTANCE_COLUMNS;
      for (int b = 0; b < n_backends; b++)
        if (backend_why[b][0])
          print_skipped(backends[b].name, "all", "all", n_columns, backend_why[b]);
      for (int l = 0; l < o.n_blocks; l++)
        for (int b = 0; b < n_backends; b++) {
          char b_text[24];
          snprintf(b_text, sizeof b_text, "%g", o.blocks[l]);
          if (!o.wanted[b])
            continue;
          if (!block_ok[b][l])
            print_skipped(backends[b].name, b_text, "all", n_columns, block_why[b][l]);
          else if (table == 0)
            element_rows(&cx, &backends[b], (size_t)o.blocks[l], &reach[r][b][l]);
          else
            instance_rows(&cx, &backends[b], (size_t)o.blocks[l], &reach[r][b][l]);
        }
    }
    free(response);
  }

  printf("\n### The most that stay real time (p99.9 under half the period)\n\n");
  printf("| backend | block | response | channels (one element) | stereo instances |\n");
  printf("| --- | ---: | ---: | ---: | ---: |\n");
  for (int b = 0; b < n_backends; b++)
    if (backend_why[b][0])
      printf("| %s | all | all | skipped | skipped |\n", backends[b].name);
  for (int b = 0; b < n_backends; b++)
    for (int l = 0; o.wanted[b] && l < o.n_blocks; l++)
      for (int r = 0; r < o.n_ir; r++) {
        const Reach *x = &reach[r][b][l];
        char c[24], m[24];
        reach_text(c, sizeof c, x->channels_measured, x->best_channels);
        reach_text(m, sizeof m, x->instances_measured, x->best_instances);
        printf("| %s | %g | %g s | %s | %s |\n", backends[b].name, o.blocks[l], o.ir_seconds[r], c,
               m);
      }
  if (o.paced)
    print_wake_floor(o.blocks, o.n_blocks);
  cudafft_pinned_free(input, input_pinned);
  return cx.status;
}
