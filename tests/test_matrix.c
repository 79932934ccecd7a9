/* test_matrix.c: the matrix convolution of cudafft/matrix.h against a double-precision direct
 * matrix convolution (y_j = sum_i h_ij * x_i, each term by convolve_reference_channel()), on fresh
 * random inputs and responses pushed in random pieces into poisoned outputs: matrices of 1 x 1,
 * 2 x 2, 4 x 2, 8 x 2 with empty entries and entries of different lengths, 64 x 64, and 2 x 3 in
 * pushes of up to 20000 frames (more than the CUDA backend stages at a time); every
 * block size from 32 to 2048 and 0 (zero latency: every frame out as it comes in, changes and the
 * delay line's reach in steps of CUDAFFT_MATRIX_MIN_BLOCK frames); F32 and F64; the lag after every
 * push (and cudafft_matrix_output_frames() exact before it); drain with and without the tail;
 * response changes with their crossover checked against the header's model (longer and shorter
 * responses, responses longer than the delay line reaches, a change replaced before its change
 * point, changes asked exactly at block boundaries, a change pending at the drain); reset; NaN and
 * Inf confined to the outputs and frames they reach; and the statuses of invalid calls. Every
 * output sample is checked. Argument: cpu or cuda.
 */
#include <cudafft/matrix.h>

#include "matrix_reference.h"
#include "test_harness.h"
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* Largest error of any output sample, relative to the RMS of that output's reference over the
 * checked frames. F32 streams are filtered in single precision: the FFTs' and the sums' rounding
 * stays near 1e-6 of the RMS; F64 streams in double, near 1e-14. A misplaced sample, partition or
 * block, a missing entry or a wrong blend costs orders of magnitude more. */
#define TOLERANCE_F32 1e-5
#define TOLERANCE_F64 1e-11
/* Frames past the end of every output buffer that must stay poisoned. */
#define GUARD ((size_t)7)

static CudafftBackend backend;

/* The frames the filter holds back at most, plus one: L, or 1 at block size 0 (zero latency). */
static size_t
lag_bound(size_t block_size)
{
  return block_size ? block_size : 1;
}

/* The step of change points, the length of crossovers and the delay line's blocks: L, or
 * CUDAFFT_MATRIX_MIN_BLOCK at block size 0 (the header's "Response changes"). */
static size_t
change_unit(size_t block_size)
{
  return block_size ? block_size : CUDAFFT_MATRIX_MIN_BLOCK;
}

typedef struct {
  const char *name;
  unsigned inputs, outputs;
  size_t taps;
  size_t block_size;
  size_t frames;
  /* Entries left empty: entry (i, j) is empty where (i * outputs + j) % empty_every == 1 (0: none).
   */
  unsigned empty_every;
  /* Pushes as long as they can be (up to the next change asked): more blocks than the CUDA
   * backend stages at a time (8192 frames), a change among them. */
  int whole;
} Case;

/* Random responses, decaying so that the output stays near the input's scale; some entries empty
 * (empty_every) and some shorter than taps (their tail zero), so that entries of every length
 * and none meet in one output. */
static double *
random_responses(TestRng *rng, unsigned inputs, unsigned outputs, size_t taps, unsigned empty_every,
                 CudafftSampleFormat format)
{
  const size_t rows = (size_t)inputs * outputs;
  double *h = test_malloc(rows * taps * sizeof *h);
  const double scale = 1.0 / sqrt((double)inputs * (double)(taps < 64 ? taps : 64));
  for (size_t row = 0; row < rows; row++) {
    double *r = h + row * taps;
    const int empty = empty_every && row % empty_every == 1;
    const size_t length = row % 3 == 2 ? test_rng_range(rng, 1, taps) : taps;
    for (size_t k = 0; k < taps; k++) {
      const double u =
          format == CUDAFFT_SAMPLE_F64 ? test_rng_uniform53(rng) : test_rng_uniform(rng);
      r[k] = empty || k >= length ? 0.0 : u * scale * exp(-3.0 * (double)k / (double)taps);
    }
  }
  return h;
}

static void
store_samples(CudafftSampleFormat format, const double *x, size_t count, void *out)
{
  for (size_t n = 0; n < count; n++)
    if (format == CUDAFFT_SAMPLE_F64)
      ((double *)out)[n] = x[n];
    else
      ((float *)out)[n] = (float)x[n];
}

static double
load_sample(CudafftSampleFormat format, const void *data, size_t n)
{
  return format == CUDAFFT_SAMPLE_F64 ? ((const double *)data)[n] : ((const float *)data)[n];
}

/* Every sample of out (frames x outputs) against y; the worst error relative to each output's RMS.
 * An output whose reference is zero throughout must be exactly zero. */
static double
tolerance_of(CudafftSampleFormat format)
{
  return format == CUDAFFT_SAMPLE_F64 ? TOLERANCE_F64 : TOLERANCE_F32;
}

/* As check_output(), with the bound given: out holds values of `format`. */
static int
check_output_within(const char *label, CudafftSampleFormat format, double tolerance,
                    const void *out, const double *y, size_t frames, unsigned outputs)
{
  size_t worst_n = 0;
  unsigned worst_j = 0;
  const double worst = matrix_reference_error(format, out, y, frames, outputs, &worst_n, &worst_j);
  return test_check(
      worst <= tolerance,
      "%s: %zu frames x %u outputs, worst error %.2e of the RMS (frame %zu, output %u; bound %.0e)",
      label, frames, outputs, worst, worst_n, worst_j, tolerance);
}

static int
check_output(const char *label, CudafftSampleFormat format, const void *out, const double *y,
             size_t frames, unsigned outputs)
{
  return check_output_within(label, format, tolerance_of(format), out, y, frames, outputs);
}

/* The delay line's blocks for responses h: their partitions; at block size 0 those after the
 * first (the first is filtered in the time domain). */
static size_t
delay_line_parts(const Case *c, const double *h, size_t taps)
{
  const size_t parts =
      matrix_reference_parts(h, (size_t)c->inputs * c->outputs, taps, change_unit(c->block_size));
  return c->block_size || parts == 0 ? parts : parts - 1;
}

/* Sets `set` as the responses, `pushed` frames in: its reach (MatrixRefSet) from the delay line's
 * slots before it, *cap, which grow to its partitions. At block size 0 the delay line has seen
 * the whole blocks before the last frame pushed. */
static int
set_responses_at(CudafftMatrix *mx, MatrixRefSet *set, const Case *c, size_t pushed, size_t *cap)
{
  const size_t C = change_unit(c->block_size);
  const size_t blocks = c->block_size ? pushed / C : pushed ? (pushed - 1) / C : 0;
  set->reach = blocks > *cap ? blocks - *cap : 0;
  const size_t parts = delay_line_parts(c, set->h, set->taps);
  *cap = parts > *cap ? parts : *cap;
  const CudafftMatrixResponses r = {.taps_data = set->h, .taps = set->taps};
  return cudafft_matrix_set_responses(mx, &r) == CUDAFFT_STATUS_OK;
}

/* Pushes x in random pieces (changes[1..] set before the frame they were asked at), drains with or
 * without the tail and checks every frame and the counts. asked[s]: the frame at which set s was
 * set (its change point is the next block boundary); replaced: a set made and replaced before its
 * change point (set just before sets[1], it never takes effect). */
static void
run_stream(const char *label, CudafftSampleFormat format, const Case *c, MatrixRefSet *sets,
           size_t count, const size_t *asked, const MatrixRefSet *replaced, int tail, TestRng *rng)
{
  const unsigned inputs = c->inputs, outputs = c->outputs;
  const size_t L = c->block_size, frames = c->frames;
  const size_t U = lag_bound(L), C = change_unit(L);
  const size_t sample = format == CUDAFFT_SAMPLE_F64 ? 8 : 4;
  double *x = test_malloc(frames * inputs * sizeof *x);
  for (size_t n = 0; n < frames * inputs; n++)
    x[n] = format == CUDAFFT_SAMPLE_F64 ? test_rng_uniform53(rng) : test_rng_uniform(rng);
  uint8_t *in = test_malloc(frames * inputs * sample + 1);
  store_samples(format, x, frames * inputs, in);
  for (size_t s = 1; s < count; s++)
    sets[s].change = (asked[s] + C - 1) / C * C;
  const size_t last_taps = sets[count - 1].taps;
  const size_t total = frames + (tail ? last_taps - 1 : 0);
  const size_t room = total + U + GUARD;
  uint8_t *out = test_malloc(room * outputs * sample);
  test_poison_samples(format, out, room * outputs);

  CudafftMatrixConfig config = {.inputs = inputs,
                                .outputs = outputs,
                                .format = format,
                                .block_size = L,
                                .responses = {.taps_data = sets[0].h, .taps = sets[0].taps}};
  CudafftMatrix *mx = NULL;
  CudafftStatus status = cudafft_matrix_create(&mx, backend, -1, &config);
  if (!test_check(status == CUDAFFT_STATUS_OK && mx, "%s: create (%s)", label,
                  cudafft_status_name(status))) {
    printf("  %s\n", cudafft_last_error_message());
    free(x), free(in), free(out);
    return;
  }
  test_check(cudafft_matrix_get_backend(mx) == backend && cudafft_matrix_get_block_size(mx) == L &&
                 cudafft_matrix_input_frame_bytes(mx) == inputs * sample &&
                 cudafft_matrix_output_frame_bytes(mx) == outputs * sample,
             "%s: backend, block size and frame bytes", label);

  size_t pushed = 0, produced = 0, next_set = 1;
  size_t cap = delay_line_parts(c, sets[0].h, sets[0].taps);
  cap = cap ? cap : 1; /* the delay line's slots */
  sets[0].reach = 0;
  int counts_ok = 1, ok = 1;
  while (pushed < frames && ok) {
    if (next_set < count && pushed >= asked[next_set]) {
      if (replaced && next_set == 1) {
        MatrixRefSet dropped = *replaced;
        ok = set_responses_at(mx, &dropped, c, pushed, &cap);
      }
      ok = ok && set_responses_at(mx, &sets[next_set], c, pushed, &cap);
      next_set++;
    }
    size_t piece;
    switch (test_rng_range(rng, 0, 3)) {
    case 0:
      piece = test_rng_range(rng, 1, 7);
      break;
    case 1:
      piece = C;
      break;
    case 2:
      piece = test_rng_range(rng, 1, 3 * C);
      break;
    default:
      piece = test_rng_range(rng, C, 5 * C);
      break;
    }
    piece = piece < frames - pushed && !c->whole ? piece : frames - pushed;
    if (next_set < count && pushed < asked[next_set] && pushed + piece > asked[next_set])
      piece = asked[next_set] - pushed;
    const size_t expect = cudafft_matrix_output_frames(mx, piece);
    size_t got = 0;
    status = cudafft_matrix_push(mx, in + pushed * inputs * sample, piece,
                                 out + produced * outputs * sample, &got);
    ok = status == CUDAFFT_STATUS_OK;
    pushed += piece;
    produced += got;
    if (got != expect || cudafft_matrix_lag(mx) != pushed - produced || pushed - produced >= U)
      counts_ok = 0;
  }
  if (ok && next_set < count && pushed >= asked[next_set])
    ok = set_responses_at(mx, &sets[next_set], c, pushed, &cap);
  test_check(ok, "%s: pushes and changes succeed (%s)", label, cudafft_status_name(status));
  test_check(counts_ok, "%s: each push writes output_frames(), lag = pushed - produced < max(L, 1)",
             label);
  const size_t drain = cudafft_matrix_drain_frames(mx, tail);
  test_check(drain == pushed - produced + (tail ? last_taps - 1 : 0),
             "%s: drain_frames(%d) = lag%s", label, tail, tail ? " + taps - 1" : "");
  size_t got = 0;
  status = cudafft_matrix_drain(mx, tail, out + produced * outputs * sample, &got);
  test_check(status == CUDAFFT_STATUS_OK && got == drain, "%s: drain writes %zu frames (%zu, %s)",
             label, drain, got, cudafft_status_name(status));
  produced += got;
  test_check(produced == total && cudafft_matrix_lag(mx) == 0,
             "%s: %zu frames out in all, lag 0 after the drain", label, total);
  test_check(test_count_unpoisoned_samples(format, out + total * outputs * sample,
                                           (room - total) * outputs) == 0,
             "%s: nothing written past the output", label);

  double *y = matrix_reference_stream(sets, count, inputs, outputs, C, x, frames, total);
  check_output(label, format, out, y, total, outputs);
  free(y);

  /* After the drain (a reset): the same object filters a fresh signal as a new one would. */
  const size_t again = 3 * C + 5;
  double *x2 = test_malloc(again * inputs * sizeof *x2);
  for (size_t n = 0; n < again * inputs; n++)
    x2[n] = test_rng_uniform(rng);
  store_samples(format, x2, again * inputs, in);
  test_poison_samples(format, out, room * outputs);
  size_t p1 = 0, p2 = 0;
  status = cudafft_matrix_push(mx, in, again, out, &p1);
  if (status == CUDAFFT_STATUS_OK)
    status = cudafft_matrix_drain(mx, 0, out + p1 * outputs * sample, &p2);
  if (test_check(status == CUDAFFT_STATUS_OK && p1 + p2 == again,
                 "%s: a fresh stream after the drain (%s)", label, cudafft_status_name(status))) {
    MatrixRefSet final = sets[count - 1];
    final.change = 0;
    final.reach = 0;
    y = matrix_reference_stream(&final, 1, inputs, outputs, C, x2, again, again);
    char what[160];
    snprintf(what, sizeof what, "%s, after the drain", label);
    check_output(what, format, out, y, again, outputs);
    free(y);
  }
  free(x2);
  cudafft_matrix_destroy(mx);
  free(x), free(in), free(out);
}

static void
run_case(const Case *c, CudafftSampleFormat format)
{
  char label[160];
  const char *fmt = format == CUDAFFT_SAMPLE_F64 ? "F64" : "F32";
  TestRng rng = test_rng("matrix %s %s L%zu", c->name, fmt, c->block_size);
  const size_t C = change_unit(c->block_size);
  MatrixRefSet sets[3] = {{0}};
  sets[0].taps = c->taps;
  sets[0].h = random_responses(&rng, c->inputs, c->outputs, c->taps, c->empty_every, format);

  /* One set, drained with the tail. */
  snprintf(label, sizeof label, "%s %s L=%zu taps=%zu", c->name, fmt, c->block_size, c->taps);
  size_t asked[3] = {0};
  run_stream(label, format, c, sets, 1, asked, NULL, 1, &rng);

  /* Two changes: a longer set asked mid-stream (replacing one asked just before it), then a
   * shorter one; drained without the tail. */
  sets[1].taps = c->taps + C + 3;
  sets[1].h = random_responses(&rng, c->inputs, c->outputs, sets[1].taps, c->empty_every, format);
  sets[2].taps = c->taps / 2 + 1;
  sets[2].h = random_responses(&rng, c->inputs, c->outputs, sets[2].taps, 0, format);
  MatrixRefSet dropped = {.taps = c->taps};
  dropped.h = random_responses(&rng, c->inputs, c->outputs, c->taps, 0, format);
  asked[1] = test_rng_range(&rng, 1, c->frames / 3);
  asked[2] = test_rng_range(&rng, asked[1] + C + 1, c->frames - 1);
  snprintf(label, sizeof label, "%s %s L=%zu changes at %zu, %zu", c->name, fmt, c->block_size,
           asked[1], asked[2]);
  run_stream(label, format, c, sets, 3, asked, &dropped, 0, &rng);

  /* A second change asked while the first one's crossover block is still being staged: each at
   * its own change point. */
  asked[1] = test_rng_range(&rng, 1, c->frames / 3);
  asked[2] = (asked[1] + C - 1) / C * C + 1 + test_rng_range(&rng, 0, C - 2);
  snprintf(label, sizeof label, "%s %s L=%zu changes at %zu, %zu (in the crossover block)", c->name,
           fmt, c->block_size, asked[1], asked[2]);
  run_stream(label, format, c, sets, 3, asked, NULL, 1, &rng);

  /* Changes asked exactly at block boundaries (at block size 0 the tail's block before the change
   * point has not been filtered yet: the change must reach it), the second a whole number of
   * blocks after the first's crossover. */
  asked[1] = C * test_rng_range(&rng, 1, c->frames / (3 * C));
  asked[2] = asked[1] + C * test_rng_range(&rng, 1, 3);
  snprintf(label, sizeof label, "%s %s L=%zu changes at block boundaries %zu, %zu", c->name, fmt,
           c->block_size, asked[1], asked[2]);
  run_stream(label, format, c, sets, 3, asked, NULL, 1, &rng);

  /* A change, late in the stream, to responses more partitions longer than any before than the
   * delay line holds: the new responses reach back only as far as the delay line did (reach > 0).
   */
  MatrixRefSet longer[2] = {sets[0], {.taps = c->taps + 3 * C}};
  longer[1].h = random_responses(&rng, c->inputs, c->outputs, longer[1].taps, 0, format);
  const size_t slots =
      matrix_reference_parts(sets[0].h, (size_t)c->inputs * c->outputs, c->taps, C);
  asked[1] = (slots + 2) * C + test_rng_range(&rng, 0, C - 1);
  asked[1] = asked[1] < c->frames ? asked[1] : c->frames;
  snprintf(label, sizeof label, "%s %s L=%zu change at %zu to longer responses", c->name, fmt,
           c->block_size, asked[1]);
  run_stream(label, format, c, longer, 2, asked, NULL, 1, &rng);
  test_check(longer[1].reach > 0, "%s: the change came after the delay line's reach", label);
  free(longer[1].h);

  /* A change asked at the last frame: it takes effect among the drain's zeros (tail). */
  asked[1] = c->frames;
  snprintf(label, sizeof label, "%s %s L=%zu change pending at the drain", c->name, fmt,
           c->block_size);
  Case at_end = *c;
  run_stream(label, format, &at_end, sets, 2, asked, NULL, 1, &rng);
  free(sets[0].h);
  free(sets[1].h);
  free(sets[2].h);
  free(dropped.h);
}

/* Invalid calls: each refused with its status, nothing made. */
static void
check_invalid(void)
{
  double h[8] = {1, 0.5, 0, 0, 0.25, 0, 0, 1};
  CudafftMatrixConfig good = {.inputs = 2,
                              .outputs = 2,
                              .format = CUDAFFT_SAMPLE_F32,
                              .block_size = 64,
                              .responses = {.taps_data = h, .taps = 2}};
  struct {
    const char *what;
    CudafftMatrixConfig config;
    CudafftStatus want;
  } bad[] = {
      {"0 inputs", good, CUDAFFT_STATUS_INVALID_VALUE},
      {"0 outputs", good, CUDAFFT_STATUS_INVALID_VALUE},
      {"format S16", good, CUDAFFT_STATUS_INVALID_VALUE},
      {"block size 48", good, CUDAFFT_STATUS_INVALID_VALUE},
      {"block size 4096", good, CUDAFFT_STATUS_INVALID_VALUE},
      {"block size 16", good, CUDAFFT_STATUS_INVALID_VALUE},
      {"taps 0", good, CUDAFFT_STATUS_INVALID_SIZE},
      {"taps_data NULL", good, CUDAFFT_STATUS_NULL_POINTER},
      {"a NaN tap", good, CUDAFFT_STATUS_INVALID_VALUE},
      {"an Inf tap", good, CUDAFFT_STATUS_INVALID_VALUE},
      {"a tap beyond the float range on F32", good, CUDAFFT_STATUS_INVALID_VALUE},
      {"1025 inputs", good, CUDAFFT_STATUS_INVALID_VALUE},
  };
  double nan_h[8], inf_h[8], big_h[8];
  memcpy(nan_h, h, sizeof h), memcpy(inf_h, h, sizeof h), memcpy(big_h, h, sizeof h);
  nan_h[5] = NAN, inf_h[3] = -INFINITY, big_h[6] = 1e39;
  bad[0].config.inputs = 0;
  bad[1].config.outputs = 0;
  bad[2].config.format = CUDAFFT_SAMPLE_S16;
  bad[3].config.block_size = 48;
  bad[4].config.block_size = 4096;
  bad[5].config.block_size = 16;
  bad[6].config.responses.taps = 0;
  bad[7].config.responses.taps_data = NULL;
  bad[8].config.responses.taps_data = nan_h;
  bad[9].config.responses.taps_data = inf_h;
  bad[10].config.responses.taps_data = big_h;
  bad[11].config.inputs = 1025;
  for (size_t b = 0; b < COUNT(bad); b++) {
    CudafftMatrix *mx = (CudafftMatrix *)&bad; /* must become NULL */
    const CudafftStatus status = cudafft_matrix_create(&mx, backend, -1, &bad[b].config);
    test_check(status == bad[b].want && mx == NULL, "create refuses %s: %s (%s)", bad[b].what,
               cudafft_status_name(status), cudafft_last_error_message());
  }
  test_check(cudafft_matrix_create(NULL, backend, -1, &good) == CUDAFFT_STATUS_NULL_POINTER,
             "create refuses a NULL matrix pointer");

  CudafftMatrix *mx = NULL;
  CudafftStatus status = cudafft_matrix_create(&mx, backend, -1, &good);
  if (!test_check(status == CUDAFFT_STATUS_OK, "create a 2 x 2 matrix (%s)",
                  cudafft_status_name(status)))
    return;
  CudafftMatrixResponses r = {.taps_data = nan_h, .taps = 2};
  test_check(cudafft_matrix_set_responses(mx, &r) == CUDAFFT_STATUS_INVALID_VALUE,
             "set_responses refuses a NaN tap");
  r.taps = 0;
  test_check(cudafft_matrix_set_responses(mx, &r) == CUDAFFT_STATUS_INVALID_SIZE,
             "set_responses refuses 0 taps");
  test_check(cudafft_matrix_set_responses(mx, NULL) == CUDAFFT_STATUS_NULL_POINTER,
             "set_responses refuses NULL");
  size_t produced = 1;
  test_check(cudafft_matrix_push(mx, NULL, 3, NULL, &produced) == CUDAFFT_STATUS_NULL_POINTER,
             "push refuses NULL input");
  float in[128 * 2] = {0};
  test_check(cudafft_matrix_push(mx, in, 128, NULL, &produced) == CUDAFFT_STATUS_NULL_POINTER,
             "push refuses NULL output where frames come out");
  test_check(cudafft_matrix_push(mx, in, 0, NULL, &produced) == CUDAFFT_STATUS_OK && produced == 0,
             "push of 0 frames");
  test_check(cudafft_matrix_drain(mx, 1, NULL, &produced) == CUDAFFT_STATUS_NULL_POINTER,
             "drain refuses NULL output where frames come out");
  cudafft_matrix_destroy(mx);
  cudafft_matrix_destroy(NULL);
  test_check(cudafft_matrix_get_device(NULL) == -1 && cudafft_matrix_lag(NULL) == 0,
             "getters of NULL");
}

/* NaN and Inf in an input reach only the outputs its entries feed, and only while they are in the
 * responses' reach: a 2 x 2 matrix whose input 0 feeds output 0 alone (entry (0, 1) empty), a NaN
 * and an Inf in input 0; output 1 against the reference throughout, output 0 against it (the
 * non-finite samples taken as 0) from taps + 2L frames after the last of them on (the block that
 * held them and the next one pass through the transforms whole; at block size 0 the tail's blocks
 * of 32 frames, a block later). */
static void
check_nonfinite(CudafftSampleFormat format, size_t L)
{
  const unsigned inputs = 2, outputs = 2;
  const size_t taps = 300, frames = 4000, bad_at = 777, U = lag_bound(L), C = change_unit(L);
  const char *fmt =
      format == CUDAFFT_SAMPLE_F64 ? (L ? "F64" : "F64 L=0") : (L ? "F32" : "F32 L=0");
  TestRng rng = test_rng("matrix nonfinite %s", fmt);
  double *h = random_responses(&rng, inputs, outputs, taps, 0, format);
  memset(h + 1 * taps, 0, taps * sizeof *h); /* entry (0, 1): row 0 * 2 + 1 */
  double *x = test_malloc(frames * inputs * sizeof *x);
  for (size_t n = 0; n < frames * inputs; n++)
    x[n] = test_rng_uniform(&rng);
  const size_t sample = format == CUDAFFT_SAMPLE_F64 ? 8 : 4;
  uint8_t *in = test_malloc(frames * inputs * sample),
          *out = test_malloc(frames * outputs * sample);
  x[bad_at * inputs] = NAN;
  x[(bad_at + 5) * inputs] = INFINITY;
  store_samples(format, x, frames * inputs, in);
  x[bad_at * inputs] = 0;
  x[(bad_at + 5) * inputs] = 0;
  test_poison_samples(format, out, frames * outputs);
  CudafftMatrixConfig config = {.inputs = inputs,
                                .outputs = outputs,
                                .format = format,
                                .block_size = L,
                                .responses = {.taps_data = h, .taps = taps}};
  CudafftMatrix *mx = NULL;
  size_t produced = 0;
  CudafftStatus status = cudafft_matrix_create(&mx, backend, -1, &config);
  if (status == CUDAFFT_STATUS_OK)
    status = cudafft_matrix_push(mx, in, frames, out, &produced);
  if (test_check(status == CUDAFFT_STATUS_OK && produced == frames / U * U,
                 "non-finite %s: pushes (%s)", fmt, cudafft_status_name(status))) {
    double *y = test_malloc(produced * outputs * sizeof *y);
    matrix_reference(h, taps, inputs, outputs, x, frames, produced, y);
    /* at block size 0 the tail's blocks come out a block later */
    const size_t clean = (bad_at + 5) + taps + 2 * C + (L ? 0 : C);
    /* output 1 everywhere; output 0 from `clean` on (each as a one-output stream) */
    double *y1 = test_malloc(produced * sizeof *y1), *y0 = test_malloc(produced * sizeof *y0);
    double *o1 = test_malloc(produced * sizeof *o1), *o0 = test_malloc(produced * sizeof *o0);
    size_t finite_before = 0;
    char what[120];
    for (size_t n = 0; n < produced; n++) {
      y0[n] = y[n * 2], y1[n] = y[n * 2 + 1];
      o0[n] = load_sample(format, out, n * 2), o1[n] = load_sample(format, out, n * 2 + 1);
      finite_before += n < clean && isfinite(o0[n]);
    }
    snprintf(what, sizeof what, "non-finite %s: output 1, not fed by input 0", fmt);
    check_output_within(what, CUDAFFT_SAMPLE_F64, tolerance_of(format), o1, y1, produced, 1);
    snprintf(what, sizeof what, "non-finite %s: output 0 from frame %zu on", fmt, clean);
    check_output_within(what, CUDAFFT_SAMPLE_F64, tolerance_of(format), o0 + clean, y0 + clean,
                        produced - clean, 1);
    test_check(finite_before < clean,
               "non-finite %s: output 0 shows them (%zu of %zu frames "
               "before %zu finite)",
               fmt, finite_before, clean, clean);
    free(y), free(y0), free(y1), free(o0), free(o1);
  }
  cudafft_matrix_destroy(mx);
  free(h), free(x), free(in), free(out);
}

/* A 2 x 2 matrix whose entries are delays (h_ij = g_ij delta[n - d_ij]): the output in closed
 * form, exactly for small integers in F64 (independent of the convolution reference). */
static void
check_delays(size_t L)
{
  const size_t taps = 100, frames = 1000;
  double h[4 * 100] = {0};
  const size_t d[4] = {0, 33, 64, 99};
  const double g[4] = {1, -2, 0.5, 3};
  for (int e = 0; e < 4; e++)
    h[e * taps + d[e]] = g[e];
  CudafftMatrixConfig config = {.inputs = 2,
                                .outputs = 2,
                                .format = CUDAFFT_SAMPLE_F64,
                                .block_size = L,
                                .responses = {.taps_data = h, .taps = taps}};
  CudafftMatrix *mx = NULL;
  if (!test_check(cudafft_matrix_create(&mx, backend, -1, &config) == CUDAFFT_STATUS_OK,
                  "delays: create"))
    return;
  TestRng rng = test_rng("matrix delays");
  double *x = test_malloc(frames * 2 * sizeof *x), *out = test_malloc((frames + taps) * 2 * 8);
  for (size_t n = 0; n < frames * 2; n++)
    x[n] = (double)test_rng_range(&rng, 0, 200) - 100;
  size_t p = 0, q = 0;
  cudafft_matrix_push(mx, x, frames, out, &p);
  cudafft_matrix_drain(mx, 1, out + p * 2, &q);
  double worst = 0;
  for (size_t n = 0; n < p + q; n++)
    for (unsigned j = 0; j < 2; j++) {
      double want = 0;
      for (unsigned i = 0; i < 2; i++) {
        const size_t e = i * 2 + j;
        if (n >= d[e] && n - d[e] < frames)
          want += g[e] * x[(n - d[e]) * 2 + i];
      }
      const double err = fabs(out[n * 2 + j] - want);
      worst = err > worst || isnan(err) ? err : worst;
    }
  test_check(p + q == frames + taps - 1 && (L || p == frames) && worst < 1e-9,
             "delays: 2 x 2 delay matrix in closed form at block size %zu (%zu + %zu frames, worst "
             "error %.2e)",
             L, p, q, worst);
  free(x);
  free(out);
  cudafft_matrix_destroy(mx);
}

int
main(int argc, char **argv)
{
  backend = test_begin(argc, argv);
  check_invalid();
  check_delays(32);
  check_delays(0);
  check_nonfinite(CUDAFFT_SAMPLE_F32, 64);
  check_nonfinite(CUDAFFT_SAMPLE_F64, 64);
  check_nonfinite(CUDAFFT_SAMPLE_F32, 0);
  check_nonfinite(CUDAFFT_SAMPLE_F64, 0);
  test_section_done("invalid calls and delays");
  static const Case cases[] = {
      {"1x1", 1, 1, 300, 32, 2000, 0, 0},
      {"1x1", 1, 1, 5000, 2048, 12000, 0, 0},
      {"2x2", 2, 2, 700, 64, 3000, 0, 0},
      {"2x2", 2, 2, 3000, 1024, 9000, 0, 0},
      {"4x2 output 1 empty", 4, 2, 1000, 128, 3000, 2, 0},
      {"8x2 empty entries", 8, 2, 900, 256, 3000, 3, 0},
      {"8x2 empty entries", 8, 2, 2000, 512, 5000, 4, 0},
      {"64x64", 64, 64, 96, 32, 400, 5, 0},
      {"2x3 long pushes", 2, 3, 500, 32, 20000, 4, 1},
      /* block size 0 (zero latency) */
      {"1x1", 1, 1, 300, 0, 2000, 0, 0},
      {"2x2", 2, 2, 700, 0, 3000, 0, 0},
      {"4x2 heads only", 4, 2, 20, 0, 1000, 2, 0},
      {"8x2 empty entries", 8, 2, 900, 0, 3000, 3, 0},
      {"64x64", 64, 64, 96, 0, 400, 5, 0},
      {"2x3 long pushes", 2, 3, 500, 0, 20000, 4, 1},
  };
  for (size_t c = 0; c < COUNT(cases); c++) {
    run_case(&cases[c], CUDAFFT_SAMPLE_F32);
    run_case(&cases[c], CUDAFFT_SAMPLE_F64);
    test_section_done(cases[c].name);
  }
  return test_finish();
}
