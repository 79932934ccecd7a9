/* test_spectrum_device.c: the spectrum analyser's device-memory call
 * (cudafft_spectrum_push_device; cudafft/spectrum.h), which cudaspectrum uses for CUDA memory.
 *
 * cuda: two analysers on the CUDA backend get the same random input in the same random pushes, one
 * through cudafft_spectrum_push and one reading device memory (cudaMalloc'd) with
 * cudafft_spectrum_push_device on most pushes and host memory on every third (so that frames
 * waiting on the host are followed by frames on the device); every result, magnitude and phase,
 * must be bit for bit the host path's (the same kernels run), the partial interval at the end
 * (cudafft_spectrum_finish) too, and every magnitude within 0.01 dB of the CPU backend's (FFTW) on
 * the same pushes, where it is above -60 dB (20 dB over the threshold). Cases: mono and 8-channel,
 * F32 and S16, short intervals (several results a push) and long ones (pushes that end no
 * interval), with phase and without. cpu (CI too): the call is UNSUPPORTED on the CPU backend, with
 * a message. */
#include "cuda_test_util.h"

#include <cudafft/spectrum.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void
check_cpu(void)
{
  const CudafftSpectrumConfig config = {128, 1, 48000, CUDAFFT_SAMPLE_F32, 0, {10000000, -80, 0},
                                        0};
  CudafftSpectrum *sp = NULL;
  if (!test_check(cudafft_spectrum_create(&sp, CUDAFFT_BACKEND_CPU, -1, &config) ==
                      CUDAFFT_STATUS_OK,
                  "CPU analyser made"))
    return;
  float in[256] = {0};
  size_t consumed = 0, results = 0;
  const CudafftStatus status =
      cudafft_spectrum_push_device(sp, in, 256, 4, &consumed, &results, NULL);
  test_check(status == CUDAFFT_STATUS_UNSUPPORTED && strstr(cudafft_last_error_message(), "CPU"),
             "cudafft_spectrum_push_device on the CPU backend: %s (%s)",
             cudafft_status_name(status), cudafft_last_error_message());
  cudafft_spectrum_destroy(sp);
}

typedef struct {
  const char *name;
  size_t bands;
  unsigned channels;
  CudafftSampleFormat format;
  int multi_channel, phase;
  uint64_t interval_ns;
  size_t total, max_push; /* frames in all, and the largest push */
} Case;

static const Case cases[] = {
    {"mono F32, 5 ms intervals", 1025, 1, CUDAFFT_SAMPLE_F32, 0, 0, 5000000, 48000, 4000},
    {"8 channels F32, phase", 513, 8, CUDAFFT_SAMPLE_F32, 1, 1, 20000000, 30000, 2000},
    {"stereo S16, 100 ms intervals", 257, 2, CUDAFFT_SAMPLE_S16, 0, 0, 100000000, 30000, 480},
};

/* The results a push or finish gave, appended to a host array: each interval's magnitudes (and
 * phases) one after the other. */
typedef struct {
  float *values;
  size_t count, capacity, intervals;
} Results;

static void
collect(Results *r, const CudafftSpectrum *sp, size_t results, size_t spectra, size_t bands)
{
  for (size_t i = 0; i < results; i++) {
    CudafftSpectrumResult result;
    if (cudafft_spectrum_result(sp, i, &result) != CUDAFFT_STATUS_OK)
      continue;
    const size_t n = spectra * bands, need = r->count + 2 * n;
    if (need > r->capacity) {
      r->capacity = 2 * need;
      r->values = realloc(r->values, r->capacity * sizeof(float));
    }
    memcpy(r->values + r->count, result.magnitude, n * sizeof(float));
    r->count += n;
    if (result.phase) {
      memcpy(r->values + r->count, result.phase, n * sizeof(float));
      r->count += n;
    }
    r->intervals++;
  }
}

/* Pushes `count` frames at src (device memory where on_device) until all are taken (a push stops
 * at the most results it can give), its results into r; the number of failed calls. */
static size_t
push_all(CudafftSpectrum *sp, const uint8_t *src, size_t count, size_t fb, int on_device,
         Results *r, size_t spectra, size_t bands)
{
  size_t failures = 0;
  for (size_t taken = 0; taken < count;) {
    size_t consumed = 0, results = 0;
    const size_t most = cudafft_spectrum_max_results(sp);
    const CudafftStatus status =
        on_device
            ? cudafft_spectrum_push_device(sp, src + taken * fb, count - taken, most, &consumed,
                                           &results, NULL)
            : cudafft_spectrum_push(sp, src + taken * fb, count - taken, most, &consumed, &results);
    if (status != CUDAFFT_STATUS_OK || (consumed == 0 && results == 0))
      return failures + 1;
    collect(r, sp, results, spectra, bands);
    taken += consumed;
  }
  return failures;
}

/* Runs case c: the three analysers side by side, then the comparisons. */
static void
check_case(const Case *c, TestRng *rng)
{
  const CudafftSpectrumConfig config = {
      c->bands, c->channels, 48000, c->format, c->multi_channel, {c->interval_ns, -80, c->phase},
      0};
  const size_t sample = c->format == CUDAFFT_SAMPLE_S16 ? 2 : 4, fb = sample * c->channels;
  const size_t spectra = c->multi_channel ? c->channels : 1;
  CudafftSpectrum *on_device = NULL, *on_host = NULL, *on_cpu = NULL;
  uint8_t *in = test_malloc(c->total * fb), *device_in = NULL;
  Results got = {0}, want = {0}, cpu = {0};
  for (size_t i = 0; i < c->total * c->channels; i++) {
    const double v = 1.6 * test_rng_uniform53(rng) - 0.8;
    if (c->format == CUDAFFT_SAMPLE_S16)
      ((int16_t *)in)[i] = (int16_t)lrint(v * 32767.0);
    else
      ((float *)in)[i] = (float)v;
  }
  if (!test_check(cudafft_spectrum_create(&on_device, CUDAFFT_BACKEND_CUDA, 0, &config) ==
                          CUDAFFT_STATUS_OK &&
                      cudafft_spectrum_create(&on_host, CUDAFFT_BACKEND_CUDA, 0, &config) ==
                          CUDAFFT_STATUS_OK &&
                      cudafft_spectrum_create(&on_cpu, CUDAFFT_BACKEND_CPU, -1, &config) ==
                          CUDAFFT_STATUS_OK,
                  "%s: analysers made (%s)", c->name, cudafft_last_error_message()))
    goto done;
  if (!cuda_ok(cudaMalloc((void **)&device_in, c->total * fb), "cudaMalloc") ||
      !cuda_ok(cudaMemcpy(device_in, in, c->total * fb, cudaMemcpyHostToDevice), "upload"))
    goto done;

  size_t pushes = 0, failures = 0;
  for (size_t done = 0; done < c->total; pushes++) {
    const size_t r = test_rng_range(rng, 1, c->max_push);
    const size_t count = r < c->total - done ? r : c->total - done;
    const int from_device = pushes % 3 != 2;
    failures += push_all(on_device, (from_device ? device_in : in) + done * fb, count, fb,
                         from_device, &got, spectra, c->bands);
    failures += push_all(on_host, in + done * fb, count, fb, 0, &want, spectra, c->bands);
    failures += push_all(on_cpu, in + done * fb, count, fb, 0, &cpu, spectra, c->bands);
    done += count;
  }
  size_t ra = 0, rb = 0, rk = 0;
  failures += cudafft_spectrum_finish(on_device, &ra) != CUDAFFT_STATUS_OK;
  failures += cudafft_spectrum_finish(on_host, &rb) != CUDAFFT_STATUS_OK;
  failures += cudafft_spectrum_finish(on_cpu, &rk) != CUDAFFT_STATUS_OK;
  collect(&got, on_device, ra, spectra, c->bands);
  collect(&want, on_host, rb, spectra, c->bands);
  collect(&cpu, on_cpu, rk, spectra, c->bands);
  if (!test_check(failures == 0 && got.intervals == want.intervals &&
                      want.intervals == cpu.intervals && got.count == want.count &&
                      got.intervals > 2,
                  "%s: %zu pushes, %zu intervals each way (%zu failures; last: %s)", c->name,
                  pushes, got.intervals, failures, cudafft_last_error_message()))
    goto done;
  test_check(memcmp(got.values, want.values, got.count * sizeof(float)) == 0,
             "%s: every value from device memory bit for bit the host path's (%zu values)", c->name,
             got.count);
  /* against the CPU backend: the magnitudes (a row of phases follows each row when phase is on,
   * and is skipped here: a phase near +-pi may wrap) */
  const size_t row = spectra * c->bands, step = c->phase ? 2 * row : row;
  double worst = 0.0;
  size_t compared = 0;
  for (size_t at = 0; at + row <= got.count; at += step)
    for (size_t i = 0; i < row; i++) {
      const double g = got.values[at + i], w = cpu.values[at + i];
      if (w < -60.0)
        continue; /* near the threshold float rounding of tiny levels dominates */
      const double d = fabs(g - w);
      worst = d > worst || isnan(d) ? d : worst;
      compared++;
    }
  test_check(worst <= 1e-2 && compared > 0,
             "%s: %zu magnitudes above -60 dB within %.2g dB of the CPU backend's (tolerance "
             "0.01 dB)",
             c->name, compared, worst);
done:
  cudaFree(device_in);
  cudafft_spectrum_destroy(on_device);
  cudafft_spectrum_destroy(on_host);
  cudafft_spectrum_destroy(on_cpu);
  free(in);
  free(got.values);
  free(want.values);
  free(cpu.values);
}

int
main(int argc, char **argv)
{
  if (test_begin(argc, argv) == CUDAFFT_BACKEND_CPU) {
    check_cpu();
    return test_finish();
  }
  TestRng rng = test_rng("spectrum device memory");
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    check_case(&cases[i], &rng);
  return test_finish();
}
