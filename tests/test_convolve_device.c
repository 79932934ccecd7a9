/* test_convolve_device.c: the convolution's device-memory call (cudafft_convolve_push_device;
 * cudafft/convolve.h), which cudaconvolve uses for CUDA memory.
 *
 * cuda: two filters on the CUDA backend get the same random input in the same random pushes, one
 * through cudafft_convolve_push and one through cudafft_convolve_push_device with its input and
 * output in device memory (cudaMalloc'd, the output poisoned with NaN), in host memory, or one of
 * each, changing from push to push (so that frames staged from one kind of memory are completed
 * from the other), each push producing the frames cudafft_convolve_output_frames() said it would.
 * Every output frame must be bit for bit the host path's (the same kernels run;
 * only where the samples are differs), the drained tail too, and the output must match a
 * double-precision model of the filter (tests/convolve_reference.h). The cases cover every path:
 * partitioned (default block size), the CUDA split path (F32 at a block size below the default),
 * direct (a short kernel), the composed split path (F64 at a small block size: its samples go
 * through host copies), a kernel change while streaming (its crossover too), and a block too wide
 * for one executor job (1024 channels). No push to device memory waits for it (its `done` fence
 * is waited for before the host reads the frames back; only the composed split path and a
 * crossover, which go through host copies, give none), and some are ordered after an earlier
 * fence. Then two filters in a chain with no host wait between them (check_chain).
 * cpu (CI too): the call is UNSUPPORTED on the CPU backend, with a message, and refuses unknown
 * flags. */
#include "convolve_reference.h"
#include "cuda_test_util.h"

#include <cudafft/convolve.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BOTH (CUDAFFT_IN_DEVICE | CUDAFFT_OUT_DEVICE)

static void
check_cpu(void)
{
  const double tap = 1.0;
  const CudafftConvolveConfig config = {2, CUDAFFT_SAMPLE_F32, {&tap, 1, 1}, 1.0};
  CudafftConvolve *cv = NULL;
  if (!test_check(cudafft_convolve_create(&cv, CUDAFFT_BACKEND_CPU, -1, &config) ==
                      CUDAFFT_STATUS_OK,
                  "CPU filter made"))
    return;
  float in[64] = {0}, out[64];
  size_t produced = 0;
  CudafftStatus status = cudafft_convolve_push_device(cv, in, 32, out, &produced, BOTH, NULL, NULL);
  test_check(status == CUDAFFT_STATUS_UNSUPPORTED && strstr(cudafft_last_error_message(), "CPU"),
             "cudafft_convolve_push_device on the CPU backend: %s (%s)",
             cudafft_status_name(status), cudafft_last_error_message());
  status = cudafft_convolve_push_device(cv, in, 32, out, &produced, 4, NULL, NULL);
  test_check(status == CUDAFFT_STATUS_INVALID_VALUE, "unknown memory flags: %s (%s)",
             cudafft_status_name(status), cudafft_last_error_message());
  status = cudafft_convolve_push_device(cv, in, 32, out, &produced, 0, NULL, NULL);
  test_check(status == CUDAFFT_STATUS_OK && produced == 32 && memcmp(in, out, sizeof in / 2) == 0,
             "flags 0 is a host push: %s, %zu frames", cudafft_status_name(status), produced);
  cudafft_convolve_destroy(cv);
}

typedef struct {
  const char *name;
  unsigned channels;
  CudafftSampleFormat format;
  size_t taps, block_size; /* block_size 0: the default (CUDAFFT_CONVOLVE_BLOCK) */
  size_t total, max_push;  /* frames in all, and the largest push */
  size_t change_at;        /* a new kernel (other taps) once this many frames are in; 0: none */
  double mix;
} Case;

static const Case cases[] = {
    {"partitioned", 2, CUDAFFT_SAMPLE_F32, 5000, 0, 40000, 5000, 0, 1.0},
    {"CUDA split", 8, CUDAFFT_SAMPLE_F32, 3000, 256, 20000, 1500, 0, 0.7},
    {"direct", 3, CUDAFFT_SAMPLE_F32, 40, 0, 9000, 700, 0, 1.0},
    {"composed split (F64)", 2, CUDAFFT_SAMPLE_F64, 3000, 256, 12000, 900, 0, 1.0},
    {"kernel change", 4, CUDAFFT_SAMPLE_F32, 2500, 0, 30000, 3000, 9000, 0.8},
    {"1024 channels", 1024, CUDAFFT_SAMPLE_F32, 2100, 0, 3 * 2048 + 100, 2600, 0, 1.0},
};

/* Push i's memory: both sides on the device, input only, output only, host only, in turn. */
static unsigned
memory_of_push(size_t i)
{
  static const unsigned order[] = {BOTH, CUDAFFT_IN_DEVICE, CUDAFFT_OUT_DEVICE, BOTH, 0};
  return order[i % (sizeof order / sizeof order[0])];
}

/* The largest relative L2 error of any channel of got against want (frames x channels). */
static double
worst_channel_error(const double *want, const void *got, CudafftSampleFormat format,
                    unsigned channels, size_t frames)
{
  double worst = 0.0;
  for (unsigned c = 0; c < channels; c++) {
    double err = 0.0, level = 0.0;
    for (size_t n = 0; n < frames; n++) {
      const size_t i = n * channels + c;
      const double y =
          format == CUDAFFT_SAMPLE_F64 ? ((const double *)got)[i] : (double)((const float *)got)[i];
      err += (y - want[i]) * (y - want[i]);
      level += want[i] * want[i];
    }
    const double rel = sqrt(err / (level > 0.0 ? level : 1.0));
    worst = rel > worst || isnan(rel) ? rel : worst;
  }
  return worst;
}

/* Runs case c: the two filters side by side, then the comparisons. */
static void
check_case(const Case *c, TestRng *rng)
{
  const size_t sample = c->format == CUDAFFT_SAMPLE_F64 ? 8 : 4, fb = sample * c->channels;
  double *h = test_random_doubles(rng, 2 * c->taps);
  for (size_t k = 0; k < 2 * c->taps; k++)
    h[k] *= exp(-4.0 * (double)(k % c->taps) / (double)c->taps); /* a decaying response */
  const CudafftConvolveConfig config = {c->channels, c->format, {h, c->taps, 1}, c->mix};
  const CudafftConvolveKernel second = {h + c->taps, c->taps, 1};
  CudafftConvolve *on_device = NULL, *on_host = NULL;
  double *x = test_random_doubles(rng, c->total * c->channels);
  const size_t most = c->total + 2 * CUDAFFT_CONVOLVE_BLOCK + c->taps;
  uint8_t *in = test_malloc(c->total * fb), *want = test_malloc(most * fb);
  uint8_t *got = test_malloc(most * fb), *landing = test_malloc(most * fb);
  uint8_t *device_in = NULL, *device_out = NULL;
  for (size_t i = 0; i < c->total * c->channels; i++) {
    if (c->format == CUDAFFT_SAMPLE_F64)
      ((double *)in)[i] = x[i];
    else
      ((float *)in)[i] = (float)x[i];
  }
  test_poison_samples(c->format, want, most * c->channels);
  test_poison_samples(c->format, got, most * c->channels);
  if (!test_check(cudafft_convolve_create(&on_device, CUDAFFT_BACKEND_CUDA, 0, &config) ==
                          CUDAFFT_STATUS_OK &&
                      cudafft_convolve_create(&on_host, CUDAFFT_BACKEND_CUDA, 0, &config) ==
                          CUDAFFT_STATUS_OK,
                  "%s: filters made (%s)", c->name, cudafft_last_error_message()))
    goto done;
  if (c->block_size &&
      !test_check(cudafft_convolve_set_block_size(on_device, c->block_size) == CUDAFFT_STATUS_OK &&
                      cudafft_convolve_set_block_size(on_host, c->block_size) == CUDAFFT_STATUS_OK,
                  "%s: block size %zu", c->name, c->block_size))
    goto done;
  if (!cuda_ok(cudaMalloc((void **)&device_in, c->total * fb), "cudaMalloc (input)") ||
      !cuda_ok(cudaMalloc((void **)&device_out, most * fb), "cudaMalloc (output)") ||
      !cuda_ok(cudaMemcpy(device_in, in, c->total * fb, cudaMemcpyHostToDevice), "upload") ||
      !cuda_ok(cudaMemset(device_out, 0xff, most * fb), "cudaMemset (NaN)"))
    goto done;

  size_t out_frames = 0, pushes = 0, failures = 0, change_point = 0, deferred = 0, eligible = 0;
  CudafftFence last_fence = {0, 0};
  for (size_t done = 0; done < c->total; pushes++) {
    if (c->change_at && !change_point && done >= c->change_at) {
      const size_t grid = c->block_size ? c->block_size : CUDAFFT_CONVOLVE_BLOCK;
      change_point = (done + grid - 1) / grid * grid;
      failures += cudafft_convolve_set_kernel(on_device, &second) != CUDAFFT_STATUS_OK;
      failures += cudafft_convolve_set_kernel(on_host, &second) != CUDAFFT_STATUS_OK;
    }
    const size_t r = test_rng_range(rng, 1, c->max_push);
    const size_t count = r < c->total - done ? r : c->total - done;
    const unsigned memory = memory_of_push(pushes);
    const void *src = (memory & CUDAFFT_IN_DEVICE ? device_in : in) + done * fb;
    uint8_t *dst = (memory & CUDAFFT_OUT_DEVICE ? device_out : landing) + out_frames * fb;
    size_t a = 0, b = 0;
    /* the output's size, known before the push (what cudaconvolve sizes CUDA memory by) */
    const size_t expected = cudafft_convolve_output_frames(on_device, count);
    /* no push to device memory waits for it (the host waits for its fence before it reads the
     * frames back); every third is ordered after the last fence (complete input: only the
     * ordering runs) */
    CudafftFence fence = {0, 0};
    CudafftFence *defer = memory & CUDAFFT_OUT_DEVICE ? &fence : NULL;
    failures += cudafft_convolve_push_device(on_device, src, count, dst, &a, memory,
                                             pushes % 3 == 0 ? &last_fence : NULL,
                                             defer) != CUDAFFT_STATUS_OK;
    failures += cudafft_fence_wait(fence) != CUDAFFT_STATUS_OK;
    deferred += fence.queue != 0;
    eligible += defer && a > 0;
    if (fence.queue != 0)
      last_fence = fence;
    failures += cudafft_convolve_push(on_host, in + done * fb, count, want + out_frames * fb, &b) !=
                CUDAFFT_STATUS_OK;
    failures += a != b || a != expected;
    /* where the frames landed, back into one host array */
    if (memory & CUDAFFT_OUT_DEVICE)
      failures += !cuda_ok(cudaMemcpy(got + out_frames * fb, dst, b * fb, cudaMemcpyDeviceToHost),
                           "download");
    else
      memcpy(got + out_frames * fb, dst, b * fb);
    out_frames += b;
    done += count;
  }
  size_t a = 0, b = 0;
  failures += cudafft_convolve_drain(on_device, 1, got + out_frames * fb, &a) != CUDAFFT_STATUS_OK;
  failures += cudafft_convolve_drain(on_host, 1, want + out_frames * fb, &b) != CUDAFFT_STATUS_OK;
  failures += a != b;
  out_frames += b;
  /* every push that wrote frames to device memory did so without waiting, but on the composed
   * split path (through host copies: it always waits) and in a crossover (blended on the host) */
  const int composed = c->format == CUDAFFT_SAMPLE_F64 && c->block_size;
  const int deferred_right = composed           ? deferred == 0
                             : c->change_at > 0 ? deferred > 0 && deferred <= eligible
                                                : deferred == eligible;
  if (!test_check(failures == 0 && out_frames == c->total + c->taps - 1 && deferred_right,
                  "%s: %zu pushes (%zu of the %zu that wrote device memory did not wait) and a "
                  "drain, %zu frames both ways (%zu failures; last: %s)",
                  c->name, pushes, deferred, eligible, out_frames, failures,
                  cudafft_last_error_message()))
    goto done;
  const size_t values = out_frames * c->channels;
  test_check(test_count_unpoisoned_samples(c->format, got, values) == values &&
                 memcmp(got, want, out_frames * fb) == 0,
             "%s: every frame from device memory bit for bit the host path's", c->name);

  const ConvolveRefKernel kernels[] = {{h, c->taps, 1, 0, 0},
                                       {h + c->taps, c->taps, 1, change_point, 0}};
  double *mix = test_malloc(out_frames * sizeof *mix);
  for (size_t n = 0; n < out_frames; n++)
    mix[n] = c->mix;
  double *ref = test_malloc(values * sizeof *ref);
  const size_t block = c->block_size ? c->block_size : CUDAFFT_CONVOLVE_BLOCK;
  convolve_reference_stream(kernels, change_point ? 2 : 1, block, x, c->channels, c->total,
                            out_frames, mix, ref);
  const double error = worst_channel_error(ref, got, c->format, c->channels, out_frames);
  const double tolerance = c->format == CUDAFFT_SAMPLE_F64 ? 1e-12 : 2e-5;
  test_check(error <= tolerance,
             "%s: worst channel's relative L2 error %.2e against the "
             "double-precision model (tolerance %.0e)",
             c->name, error, tolerance);
  free(mix);
  free(ref);
done:
  cudaFree(device_in);
  cudaFree(device_out);
  cudafft_convolve_destroy(on_device);
  cudafft_convolve_destroy(on_host);
  free(h);
  free(x);
  free(in);
  free(want);
  free(got);
  free(landing);
}

/* Two filters in a chain on the device, as cudaconvolve ! cudaconvolve runs them: the first's
 * output (device memory, a ring of RING buffers reused in turn) goes to the second without a host
 * wait (its `done` fence is the second's `after`), the second's too, waited for only before its
 * output is read back; a buffer is reused once the second's work that read it is done (its fence,
 * as the caller's contract says). Random push sizes (partial blocks, whole blocks straight from
 * device memory). Against the same chain of host pushes: bit for bit. */
#define RING 3

static void
check_chain(TestRng *rng)
{
  const unsigned channels = 2;
  const size_t taps = 3000, total = 40000, max_push = 4500, fb = channels * sizeof(float);
  double *h = test_random_doubles(rng, 2 * taps);
  const CudafftConvolveConfig first = {channels, CUDAFFT_SAMPLE_F32, {h, taps, 1}, 1.0};
  const CudafftConvolveConfig second = {channels, CUDAFFT_SAMPLE_F32, {h + taps, taps, 1}, 0.9};
  CudafftConvolve *d1 = NULL, *d2 = NULL, *h1 = NULL, *h2 = NULL;
  float *in = test_malloc(total * fb), *mid = test_malloc((total + 4096) * fb);
  float *want = test_malloc((total + 8192) * fb), *got = test_malloc((total + 8192) * fb);
  uint8_t *device_in = NULL, *ring[RING] = {NULL}, *device_out = NULL;
  CudafftFence read_by[RING] = {{0, 0}};
  for (size_t i = 0; i < total * channels; i++)
    in[i] = (float)test_rng_uniform(rng);
  test_poison_samples(CUDAFFT_SAMPLE_F32, got, (total + 8192) * channels);
  test_poison_samples(CUDAFFT_SAMPLE_F32, want, (total + 8192) * channels);
  const size_t ring_bytes = (max_push + 2 * CUDAFFT_CONVOLVE_BLOCK) * fb;
  if (!test_check(
          cudafft_convolve_create(&d1, CUDAFFT_BACKEND_CUDA, 0, &first) == CUDAFFT_STATUS_OK &&
              cudafft_convolve_create(&d2, CUDAFFT_BACKEND_CUDA, 0, &second) == CUDAFFT_STATUS_OK &&
              cudafft_convolve_create(&h1, CUDAFFT_BACKEND_CUDA, 0, &first) == CUDAFFT_STATUS_OK &&
              cudafft_convolve_create(&h2, CUDAFFT_BACKEND_CUDA, 0, &second) == CUDAFFT_STATUS_OK,
          "chain: filters made (%s)", cudafft_last_error_message()))
    goto done;
  int made = cuda_ok(cudaMalloc((void **)&device_in, total * fb), "cudaMalloc (input)") &&
             cuda_ok(cudaMalloc((void **)&device_out, (total + 8192) * fb), "cudaMalloc (out)") &&
             cuda_ok(cudaMemcpy(device_in, in, total * fb, cudaMemcpyHostToDevice), "upload");
  for (int k = 0; k < RING && made; k++)
    made = cuda_ok(cudaMalloc((void **)&ring[k], ring_bytes), "cudaMalloc (ring)") &&
           cuda_ok(cudaMemset(ring[k], 0xff, ring_bytes), "cudaMemset (NaN)");
  if (!made)
    goto done;
  size_t failures = 0, pushes = 0, out_device = 0, out_host = 0, ordered = 0;
  for (size_t done = 0; done < total; pushes++) {
    const size_t r = test_rng_range(rng, 1, max_push);
    const size_t count = r < total - done ? r : total - done;
    uint8_t *link = ring[pushes % RING];
    /* the second's work that read this buffer last time is done before it is written again */
    failures += cudafft_fence_wait(read_by[pushes % RING]) != CUDAFFT_STATUS_OK;
    size_t a = 0, b = 0, m = 0;
    CudafftFence made_at = {0, 0}, read_at = {0, 0};
    failures += cudafft_convolve_push_device(d1, device_in + done * fb, count, link, &a, BOTH, NULL,
                                             &made_at) != CUDAFFT_STATUS_OK;
    failures += cudafft_convolve_push_device(d2, link, a, device_out + out_device * fb, &b, BOTH,
                                             &made_at, &read_at) != CUDAFFT_STATUS_OK;
    ordered += made_at.queue != 0 && read_at.queue != 0;
    read_by[pushes % RING] = read_at;
    failures +=
        cudafft_convolve_push(h1, in + done * channels, count, mid, &m) != CUDAFFT_STATUS_OK;
    size_t n = 0;
    failures +=
        cudafft_convolve_push(h2, mid, m, want + out_host * channels, &n) != CUDAFFT_STATUS_OK;
    failures += a != m || b != n;
    out_device += b;
    out_host += n;
    done += count;
  }
  /* the host reads the device output: the last push's work first */
  for (int k = 0; k < RING; k++)
    failures += cudafft_fence_wait(read_by[k]) != CUDAFFT_STATUS_OK;
  failures +=
      !cuda_ok(cudaMemcpy(got, device_out, out_device * fb, cudaMemcpyDeviceToHost), "download");
  if (!test_check(failures == 0 && out_device == out_host && ordered > 0,
                  "chain: %zu pushes through both filters (%zu ordered on the device alone), "
                  "%zu frames both ways (%zu failures; last: %s)",
                  pushes, ordered, out_host, failures, cudafft_last_error_message()))
    goto done;
  test_check(test_count_unpoisoned_samples(CUDAFFT_SAMPLE_F32, got, out_host * channels) ==
                     out_host * channels &&
                 memcmp(got, want, out_host * fb) == 0,
             "chain: every frame bit for bit the host chain's");
done:
  cudaFree(device_in);
  cudaFree(device_out);
  for (int k = 0; k < RING; k++)
    cudaFree(ring[k]);
  cudafft_convolve_destroy(d1);
  cudafft_convolve_destroy(d2);
  cudafft_convolve_destroy(h1);
  cudafft_convolve_destroy(h2);
  free(h);
  free(in);
  free(mid);
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
  TestRng rng = test_rng("convolve device memory");
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    check_case(&cases[i], &rng);
  check_chain(&rng);
  return test_finish();
}
