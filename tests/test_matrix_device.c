/* test_matrix_device.c: the matrix convolution's device-memory calls (cudafft_matrix_push_device,
 * cudafft_matrix_drain_device; cudafft/matrix.h), which cudamatrixconvolve uses for CUDA memory.
 *
 * cuda: two filters on the CUDA backend get the same random input in the same random pushes
 * (single frames, partial blocks, whole blocks, many blocks), one through cudafft_matrix_push and
 * one through cudafft_matrix_push_device with its input and output in device memory (cudaMalloc'd,
 * the output poisoned with NaN), in host memory, or one of each, changing from push to push (so
 * that frames staged from one kind of memory are completed from the other), each push producing
 * the frames cudafft_matrix_output_frames() said it would and giving a zeroed `done` fence (the
 * header: its output is complete when it returns); where the case says, a change of responses
 * while streaming; then drained (with or without the tail), the device filter into device memory
 * (cudafft_matrix_drain_device) or into host memory after frames staged from device memory. Every
 * output frame must be bit for bit the host path's (the same kernels run; only where the samples
 * are differs), the drained tail too, and the output must match the double-precision model of
 * test_matrix.c (matrix_reference.h). The cases: block sizes 2048, 256 and 64 (F32 and F64, 2 x 2
 * to 8 x 2 with empty entries, 3 x 5) and 0 (zero latency, staged through host memory, pushes of
 * more than CUDAFFT_MATRIX_MAX_BLOCK frames). Then a chain of three filters on the device
 * (check_chain): a convolution whose output in device memory goes on before its device work is
 * done (its `done` fence), a matrix ordered after that fence, a convolution after the matrix's;
 * bit for bit the same chain's host pushes.
 * cpu (CI too): both calls are UNSUPPORTED on the CPU backend, with a message; unknown flags are
 * INVALID_VALUE; flags 0 is a host push. */
#include "cuda_test_util.h"
#include "matrix_reference.h"

#include <cudafft/convolve.h>
#include <cudafft/matrix.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BOTH (CUDAFFT_IN_DEVICE | CUDAFFT_OUT_DEVICE)

/* As test_matrix.c's: F32 streams are filtered in single precision (rounding near 1e-6 of the
 * RMS), F64 in double (near 1e-14); a misplaced sample or block costs orders of magnitude more. */
#define TOLERANCE_F32 1e-5
#define TOLERANCE_F64 1e-11

static void
check_cpu(void)
{
  const double h[4] = {1.0, 0.5, 0.25, 1.0};
  const CudafftMatrixConfig config = {.inputs = 2,
                                      .outputs = 2,
                                      .format = CUDAFFT_SAMPLE_F32,
                                      .block_size = 32,
                                      .responses = {.taps_data = h, .taps = 1}};
  CudafftMatrix *mx = NULL;
  if (!test_check(cudafft_matrix_create(&mx, CUDAFFT_BACKEND_CPU, -1, &config) == CUDAFFT_STATUS_OK,
                  "CPU matrix made"))
    return;
  float in[64] = {0}, out[64];
  size_t produced = 0;
  CudafftFence done = {7, 7};
  CudafftStatus status = cudafft_matrix_push_device(mx, in, 32, out, &produced, BOTH, NULL, &done);
  test_check(status == CUDAFFT_STATUS_UNSUPPORTED && strstr(cudafft_last_error_message(), "CPU") &&
                 done.queue == 0,
             "cudafft_matrix_push_device on the CPU backend: %s (%s)", cudafft_status_name(status),
             cudafft_last_error_message());
  status = cudafft_matrix_drain_device(mx, 1, out, &produced);
  test_check(status == CUDAFFT_STATUS_UNSUPPORTED && strstr(cudafft_last_error_message(), "CPU"),
             "cudafft_matrix_drain_device on the CPU backend: %s (%s)", cudafft_status_name(status),
             cudafft_last_error_message());
  status = cudafft_matrix_push_device(mx, in, 32, out, &produced, 4, NULL, NULL);
  test_check(status == CUDAFFT_STATUS_INVALID_VALUE, "unknown memory flags: %s (%s)",
             cudafft_status_name(status), cudafft_last_error_message());
  for (size_t n = 0; n < 32; n++)
    in[2 * n] = (float)n, in[2 * n + 1] = -(float)n;
  status = cudafft_matrix_push_device(mx, in, 32, out, &produced, 0, NULL, NULL);
  /* y0 = x0 + 0.25 x1, y1 = 0.5 x0 + x1, within single precision's rounding of the transforms */
  int same = status == CUDAFFT_STATUS_OK && produced == 32;
  for (size_t n = 0; same && n < 32; n++)
    same = fabsf(out[2 * n] - 0.75f * (float)n) <= 1e-4f &&
           fabsf(out[2 * n + 1] + 0.5f * (float)n) <= 1e-4f;
  test_check(same, "flags 0 is a host push: %s, %zu frames", cudafft_status_name(status), produced);
  cudafft_matrix_destroy(mx);
}

typedef struct {
  const char *name;
  unsigned inputs, outputs;
  CudafftSampleFormat format;
  size_t taps, block_size;
  size_t total, max_push; /* frames in all, and the largest push */
  size_t change_at;       /* new responses (shorter) once this many frames are in; 0: none */
  int tail;               /* drain with the tail */
  unsigned last_memory;   /* the last push's memory: where its partial block waits at the drain */
  int drain_on_device;    /* drain_device into device memory, else drain into host memory */
} Case;

static const Case cases[] = {
    {"2x2 L=2048", 2, 2, CUDAFFT_SAMPLE_F32, 5000, 2048, 40000, 6000, 0, 1, BOTH, 1},
    {"8x2 L=256, a change", 8, 2, CUDAFFT_SAMPLE_F32, 1500, 256, 12000, 1500, 5000, 1, 0, 1},
    {"3x5 L=64 F64, a change", 3, 5, CUDAFFT_SAMPLE_F64, 700, 64, 6000, 500, 2500, 0,
     CUDAFFT_IN_DEVICE, 0},
    {"2x2 L=64 F64", 2, 2, CUDAFFT_SAMPLE_F64, 300, 64, 5000, 200, 0, 1, BOTH, 0},
    {"2x2 L=0, a change", 2, 2, CUDAFFT_SAMPLE_F32, 400, 0, 9000, 3000, 4000, 1, BOTH, 1},
    {"2x3 L=0 F64", 2, 3, CUDAFFT_SAMPLE_F64, 300, 0, 8000, 5000, 0, 0, CUDAFFT_IN_DEVICE, 0},
};

/* Push i's memory: both sides on the device, input only, output only, host only, in turn. */
static unsigned
memory_of_push(size_t i)
{
  static const unsigned order[] = {BOTH, CUDAFFT_IN_DEVICE, CUDAFFT_OUT_DEVICE, BOTH, 0};
  return order[i % (sizeof order / sizeof order[0])];
}

/* Random decaying responses, inputs x outputs rows of taps: every fifth entry empty, every third
 * shorter than taps, so that entries of every length and none meet in one output. */
static double *
random_responses(TestRng *rng, unsigned inputs, unsigned outputs, size_t taps)
{
  const size_t rows = (size_t)inputs * outputs;
  double *h = test_malloc(rows * taps * sizeof *h);
  const double scale = 1.0 / sqrt((double)inputs * 64.0);
  for (size_t row = 0; row < rows; row++) {
    const size_t length = row % 5 == 1 ? 0 : row % 3 == 2 ? test_rng_range(rng, 1, taps) : taps;
    for (size_t k = 0; k < taps; k++)
      h[row * taps + k] = k < length ? (test_rng_uniform53(rng) - 0.5) * scale *
                                           exp(-3.0 * (double)k / (double)taps)
                                     : 0.0;
  }
  return h;
}

/* Runs case c: the two filters side by side, then the comparisons. */
static void
check_case(const Case *c, TestRng *rng)
{
  const size_t sample = c->format == CUDAFFT_SAMPLE_F64 ? 8 : 4;
  const size_t in_fb = sample * c->inputs, out_fb = sample * c->outputs;
  const size_t unit = c->block_size ? c->block_size : CUDAFFT_MATRIX_MIN_BLOCK;
  MatrixRefSet sets[2] = {{.taps = c->taps}, {.taps = c->taps * 3 / 4}};
  sets[0].h = random_responses(rng, c->inputs, c->outputs, sets[0].taps);
  sets[1].h = random_responses(rng, c->inputs, c->outputs, sets[1].taps);
  const CudafftMatrixConfig config = {.inputs = c->inputs,
                                      .outputs = c->outputs,
                                      .format = c->format,
                                      .block_size = c->block_size,
                                      .responses = {.taps_data = sets[0].h, .taps = sets[0].taps}};
  const CudafftMatrixResponses second = {.taps_data = sets[1].h, .taps = sets[1].taps};
  CudafftMatrix *on_device = NULL, *on_host = NULL;
  double *x = test_malloc(c->total * c->inputs * sizeof *x);
  for (size_t i = 0; i < c->total * c->inputs; i++)
    x[i] = c->format == CUDAFFT_SAMPLE_F64 ? test_rng_uniform53(rng) : test_rng_uniform(rng);
  const size_t most = c->total + unit + c->taps;
  uint8_t *in = test_malloc(c->total * in_fb), *want = test_malloc(most * out_fb);
  uint8_t *got = test_malloc(most * out_fb), *landing = test_malloc(most * out_fb);
  uint8_t *device_in = NULL, *device_out = NULL;
  for (size_t i = 0; i < c->total * c->inputs; i++) {
    if (c->format == CUDAFFT_SAMPLE_F64)
      ((double *)in)[i] = x[i];
    else
      ((float *)in)[i] = (float)x[i];
  }
  test_poison_samples(c->format, want, most * c->outputs);
  test_poison_samples(c->format, got, most * c->outputs);
  if (!test_check(cudafft_matrix_create(&on_device, CUDAFFT_BACKEND_CUDA, 0, &config) ==
                          CUDAFFT_STATUS_OK &&
                      cudafft_matrix_create(&on_host, CUDAFFT_BACKEND_CUDA, 0, &config) ==
                          CUDAFFT_STATUS_OK,
                  "%s: filters made (%s)", c->name, cudafft_last_error_message()))
    goto done;
  if (!cuda_ok(cudaMalloc((void **)&device_in, c->total * in_fb), "cudaMalloc (input)") ||
      !cuda_ok(cudaMalloc((void **)&device_out, most * out_fb), "cudaMalloc (output)") ||
      !cuda_ok(cudaMemcpy(device_in, in, c->total * in_fb, cudaMemcpyHostToDevice), "upload") ||
      !cuda_ok(cudaMemset(device_out, 0xff, most * out_fb), "cudaMemset (NaN)"))
    goto done;

  size_t out_frames = 0, pushes = 0, failures = 0, fenced = 0, change_point = 0;
  for (size_t done = 0; done < c->total; pushes++) {
    if (c->change_at && !change_point && done >= c->change_at) {
      change_point = (done + unit - 1) / unit * unit;
      failures += cudafft_matrix_set_responses(on_device, &second) != CUDAFFT_STATUS_OK;
      failures += cudafft_matrix_set_responses(on_host, &second) != CUDAFFT_STATUS_OK;
    }
    /* single frames, a partial block, a block's worth from anywhere, up to max_push */
    const size_t kinds[4] = {test_rng_range(rng, 1, 3), test_rng_range(rng, 1, unit), unit,
                             test_rng_range(rng, 1, c->max_push)};
    const size_t r = kinds[test_rng_range(rng, 0, 3)];
    const size_t count = r < c->total - done ? r : c->total - done;
    const unsigned memory = done + count == c->total ? c->last_memory : memory_of_push(pushes);
    const void *src = (memory & CUDAFFT_IN_DEVICE ? device_in : in) + done * in_fb;
    uint8_t *dst = (memory & CUDAFFT_OUT_DEVICE ? device_out : landing) + out_frames * out_fb;
    /* the output's size, known before the push (what cudamatrixconvolve sizes CUDA memory by) */
    const size_t expected = cudafft_matrix_output_frames(on_device, count);
    size_t a = 0, b = 0;
    CudafftFence fence = {7, 7}; /* zeroed by every push: its output is complete */
    failures += cudafft_matrix_push_device(on_device, src, count, dst, &a, memory, NULL, &fence) !=
                CUDAFFT_STATUS_OK;
    fenced += fence.queue != 0 || fence.mark != 0;
    failures += cudafft_matrix_push(on_host, in + done * in_fb, count, want + out_frames * out_fb,
                                    &b) != CUDAFFT_STATUS_OK;
    failures += a != b || a != expected;
    /* where the frames landed, back into one host array */
    if (memory & CUDAFFT_OUT_DEVICE)
      failures +=
          !cuda_ok(cudaMemcpy(got + out_frames * out_fb, dst, b * out_fb, cudaMemcpyDeviceToHost),
                   "download");
    else
      memcpy(got + out_frames * out_fb, dst, b * out_fb);
    out_frames += b;
    done += count;
  }
  const size_t lag = cudafft_matrix_lag(on_device);
  const size_t drained = cudafft_matrix_drain_frames(on_device, c->tail);
  size_t a = 0, b = 0;
  if (c->drain_on_device) {
    failures += cudafft_matrix_drain_device(on_device, c->tail, device_out + out_frames * out_fb,
                                            &a) != CUDAFFT_STATUS_OK;
    failures += !cuda_ok(cudaMemcpy(got + out_frames * out_fb, device_out + out_frames * out_fb,
                                    a * out_fb, cudaMemcpyDeviceToHost),
                         "download");
  } else {
    failures += cudafft_matrix_drain(on_device, c->tail, got + out_frames * out_fb, &a) !=
                CUDAFFT_STATUS_OK;
  }
  failures +=
      cudafft_matrix_drain(on_host, c->tail, want + out_frames * out_fb, &b) != CUDAFFT_STATUS_OK;
  failures += a != b || a != drained;
  out_frames += b;
  const size_t total = c->total + (c->tail ? (change_point ? sets[1].taps : c->taps) - 1 : 0);
  if (!test_check(failures == 0 && fenced == 0 && out_frames == total,
                  "%s: %zu pushes and a drain%s of %zu frames (%zu staged), %zu frames both ways "
                  "(%zu failures, %zu fences not zeroed; last: %s)",
                  c->name, pushes, c->drain_on_device ? " into device memory" : "", drained, lag,
                  out_frames, failures, fenced, cudafft_last_error_message()))
    goto done;
  const size_t values = out_frames * c->outputs;
  test_check(test_count_unpoisoned_samples(c->format, got, values) == values &&
                 memcmp(got, want, out_frames * out_fb) == 0,
             "%s: every frame through device memory bit for bit the host path's", c->name);

  sets[1].change = change_point;
  double *y = matrix_reference_stream(sets, change_point ? 2 : 1, c->inputs, c->outputs, unit, x,
                                      c->total, out_frames);
  size_t worst_n = 0;
  unsigned worst_j = 0;
  const double error =
      matrix_reference_error(c->format, got, y, out_frames, c->outputs, &worst_n, &worst_j);
  const double tolerance = c->format == CUDAFFT_SAMPLE_F64 ? TOLERANCE_F64 : TOLERANCE_F32;
  test_check(error <= tolerance,
             "%s: worst error %.2e of the RMS (frame %zu, output %u) against the double-precision "
             "model (bound %.0e)",
             c->name, error, worst_n, worst_j, tolerance);
  free(y);
done:
  cudaFree(device_in);
  cudaFree(device_out);
  cudafft_matrix_destroy(on_device);
  cudafft_matrix_destroy(on_host);
  free(sets[0].h);
  free(sets[1].h);
  free(x);
  free(in);
  free(want);
  free(got);
  free(landing);
}

/* The chain's filters: a convolution, a 2 x 2 matrix, a convolution. */
typedef struct {
  CudafftConvolve *first, *last;
  CudafftMatrix *matrix;
} Chain;

static int
chain_make(Chain *chain, const double *h, size_t taps, const double *m, size_t m_taps)
{
  const CudafftConvolveConfig first = {2, CUDAFFT_SAMPLE_F32, {h, taps, 1}, 1.0};
  const CudafftConvolveConfig last = {2, CUDAFFT_SAMPLE_F32, {h + taps, taps, 1}, 0.9};
  const CudafftMatrixConfig matrix = {.inputs = 2,
                                      .outputs = 2,
                                      .format = CUDAFFT_SAMPLE_F32,
                                      .block_size = 256,
                                      .responses = {.taps_data = m, .taps = m_taps}};
  *chain = (Chain){NULL, NULL, NULL};
  return cudafft_convolve_create(&chain->first, CUDAFFT_BACKEND_CUDA, 0, &first) ==
             CUDAFFT_STATUS_OK &&
         cudafft_matrix_create(&chain->matrix, CUDAFFT_BACKEND_CUDA, 0, &matrix) ==
             CUDAFFT_STATUS_OK &&
         cudafft_convolve_create(&chain->last, CUDAFFT_BACKEND_CUDA, 0, &last) == CUDAFFT_STATUS_OK;
}

static void
chain_destroy(Chain *chain)
{
  cudafft_convolve_destroy(chain->first);
  cudafft_matrix_destroy(chain->matrix);
  cudafft_convolve_destroy(chain->last);
}

/* Three filters in a chain on the device, as cudaconvolve ! cudamatrixconvolve ! cudaconvolve
 * runs them: the first convolution's output (device memory, a ring of RING buffers reused in turn)
 * goes to the matrix without a host wait (its `done` fence is the matrix's `after`: the matrix
 * must not read the buffer before it), the matrix's (its zeroed `done`) to the last convolution
 * as its `after`, whose work is waited for only before its output is read back; a buffer is
 * written again once the work that read it is done. Random push sizes. Against the same chain of
 * host pushes: bit for bit. */
#define RING 3

static void
check_chain(TestRng *rng)
{
  const size_t taps = 3000, m_taps = 700, total = 40000, max_push = 4500, fb = 2 * sizeof(float);
  double *h = test_random_doubles(rng, 2 * taps);
  double *m = random_responses(rng, 2, 2, m_taps);
  Chain dev = {NULL, NULL, NULL}, host = {NULL, NULL, NULL};
  float *in = test_malloc(total * fb), *mid = test_malloc((total + 4096) * fb);
  float *mid2 = test_malloc((total + 4096) * fb);
  float *want = test_malloc((total + 8192) * fb), *got = test_malloc((total + 8192) * fb);
  uint8_t *device_in = NULL, *ring[RING] = {NULL}, *matrix_ring[RING] = {NULL};
  uint8_t *device_out = NULL;
  CudafftFence read_by[RING] = {{0, 0}};
  for (size_t i = 0; i < total * 2; i++)
    in[i] = (float)test_rng_uniform(rng);
  test_poison_samples(CUDAFFT_SAMPLE_F32, got, (total + 8192) * 2);
  test_poison_samples(CUDAFFT_SAMPLE_F32, want, (total + 8192) * 2);
  const size_t ring_bytes = (max_push + 2 * CUDAFFT_CONVOLVE_BLOCK) * fb;
  const int made = chain_make(&dev, h, taps, m, m_taps) && chain_make(&host, h, taps, m, m_taps);
  if (!test_check(made, "chain: filters made (%s)", cudafft_last_error_message()))
    goto done;
  int ready = cuda_ok(cudaMalloc((void **)&device_in, total * fb), "cudaMalloc (input)") &&
              cuda_ok(cudaMalloc((void **)&device_out, (total + 8192) * fb), "cudaMalloc (out)") &&
              cuda_ok(cudaMemcpy(device_in, in, total * fb, cudaMemcpyHostToDevice), "upload");
  for (int k = 0; k < RING && ready; k++)
    ready = cuda_ok(cudaMalloc((void **)&ring[k], ring_bytes), "cudaMalloc (ring)") &&
            cuda_ok(cudaMemset(ring[k], 0xff, ring_bytes), "cudaMemset (NaN)") &&
            cuda_ok(cudaMalloc((void **)&matrix_ring[k], ring_bytes), "cudaMalloc (ring)") &&
            cuda_ok(cudaMemset(matrix_ring[k], 0xff, ring_bytes), "cudaMemset (NaN)");
  if (!ready)
    goto done;
  size_t failures = 0, pushes = 0, out_device = 0, out_host = 0, ordered = 0, zeroed = 0;
  for (size_t done = 0; done < total; pushes++) {
    const size_t r = test_rng_range(rng, 1, max_push);
    const size_t count = r < total - done ? r : total - done;
    uint8_t *link = ring[pushes % RING], *link2 = matrix_ring[pushes % RING];
    /* the last filter's work that read link2 last time is done before the matrix writes it; the
     * matrix's work that read link is done when its push returns */
    failures += cudafft_fence_wait(read_by[pushes % RING]) != CUDAFFT_STATUS_OK;
    size_t a = 0, b = 0, c = 0, p = 0, q = 0, s = 0;
    CudafftFence made_at = {0, 0}, matrix_done = {7, 7}, read_at = {0, 0};
    failures += cudafft_convolve_push_device(dev.first, device_in + done * fb, count, link, &a,
                                             BOTH, NULL, &made_at) != CUDAFFT_STATUS_OK;
    failures += cudafft_matrix_push_device(dev.matrix, link, a, link2, &b, BOTH, &made_at,
                                           &matrix_done) != CUDAFFT_STATUS_OK;
    failures += cudafft_convolve_push_device(dev.last, link2, b, device_out + out_device * fb, &c,
                                             BOTH, &matrix_done, &read_at) != CUDAFFT_STATUS_OK;
    ordered += made_at.queue != 0;
    zeroed += matrix_done.queue == 0 && matrix_done.mark == 0;
    read_by[pushes % RING] = read_at;
    failures +=
        cudafft_convolve_push(host.first, in + done * 2, count, mid, &p) != CUDAFFT_STATUS_OK;
    failures += cudafft_matrix_push(host.matrix, mid, p, mid2, &q) != CUDAFFT_STATUS_OK;
    failures +=
        cudafft_convolve_push(host.last, mid2, q, want + out_host * 2, &s) != CUDAFFT_STATUS_OK;
    failures += a != p || b != q || c != s;
    out_device += c;
    out_host += s;
    done += count;
  }
  /* the host reads the device output: the last pushes' work first */
  for (int k = 0; k < RING; k++)
    failures += cudafft_fence_wait(read_by[k]) != CUDAFFT_STATUS_OK;
  failures +=
      !cuda_ok(cudaMemcpy(got, device_out, out_device * fb, cudaMemcpyDeviceToHost), "download");
  if (!test_check(failures == 0 && out_device == out_host && ordered > 0 && zeroed == pushes,
                  "chain: %zu pushes through three filters (%zu matrix pushes ordered after a "
                  "fence not yet reached by the host, %zu zeroed `done`), %zu frames both ways "
                  "(%zu failures; last: %s)",
                  pushes, ordered, zeroed, out_host, failures, cudafft_last_error_message()))
    goto done;
  test_check(test_count_unpoisoned_samples(CUDAFFT_SAMPLE_F32, got, out_host * 2) == out_host * 2 &&
                 memcmp(got, want, out_host * fb) == 0,
             "chain: every frame bit for bit the host chain's");
done:
  cudaFree(device_in);
  cudaFree(device_out);
  for (int k = 0; k < RING; k++) {
    cudaFree(ring[k]);
    cudaFree(matrix_ring[k]);
  }
  chain_destroy(&dev);
  chain_destroy(&host);
  free(h);
  free(m);
  free(in);
  free(mid);
  free(mid2);
  free(want);
  free(got);
}

int
main(int argc, char **argv)
{
  if (test_begin(argc, argv) == CUDAFFT_BACKEND_CPU) {
    check_cpu();
    return test_finish();
  }
  TestRng rng = test_rng("matrix device memory");
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    check_case(&cases[i], &rng);
    test_section_done(cases[i].name);
  }
  check_chain(&rng);
  return test_finish();
}
