/* test_stft_device.c: the STFT's device-memory calls (cudafft_stft_push_device,
 * cudafft_istft_push_device; cudafft/stft.h), which the elements use for CUDA memory.
 *
 * cuda: an analyser writing its frames into device memory (cudaMalloc'd, poisoned with NaN) and
 * one writing into host memory (poisoned) get the same random input in the same random pushes;
 * every float of every frame must be bit for bit the same (the same kernels: only where the output
 * goes differs), for the four representations, 1 to 1024 channels (1024 x 4096 complex: a frame
 * larger than an executor job, so the channels go in groups), hops of n, n/4 and odd ones, pushes
 * of 1 to 30000 samples. Then the complex frames go back through two synthesisers, one reading
 * them from device memory in place and one from host memory: the samples bit for bit the same,
 * and the round trip gives back the input (1e-5 relative L2: weighted overlap-add's promise).
 * cpu (CI too): both calls are UNSUPPORTED on the CPU backend, with a message. */
#include "test_util.h"

#include <cudafft/stft.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h> /* built only with the CUDA backend (tests/meson.build) */

static void
check_cpu(void)
{
  const CudafftStftConfig config = {
      1024, 256, 2, CUDAFFT_WINDOW_HANN, CUDAFFT_REPRESENTATION_COMPLEX, CUDAFFT_SAMPLE_F32};
  CudafftStft *stft = NULL;
  CudafftIstft *istft = NULL;
  if (!test_check(
          cudafft_stft_create(&stft, CUDAFFT_BACKEND_CPU, -1, &config) == CUDAFFT_STATUS_OK &&
              cudafft_istft_create(&istft, CUDAFFT_BACKEND_CPU, -1, &config) == CUDAFFT_STATUS_OK,
          "CPU analyser and synthesiser made"))
    goto done;
  float in[2048] = {0}, out[8 * 2 * 1026];
  size_t frames = 0;
  CudafftStatus status = cudafft_stft_push_device(stft, in, 1024, out, &frames);
  test_check(status == CUDAFFT_STATUS_UNSUPPORTED && strstr(cudafft_last_error_message(), "CPU"),
             "cudafft_stft_push_device on the CPU backend: %s (%s)", cudafft_status_name(status),
             cudafft_last_error_message());
  status = cudafft_istft_push_device(istft, out, 1, in);
  test_check(status == CUDAFFT_STATUS_UNSUPPORTED && strstr(cudafft_last_error_message(), "CPU"),
             "cudafft_istft_push_device on the CPU backend: %s (%s)", cudafft_status_name(status),
             cudafft_last_error_message());
done:
  cudafft_stft_destroy(stft);
  cudafft_istft_destroy(istft);
}

static int
cuda_ok(cudaError_t error, const char *what)
{
  return error == cudaSuccess || test_check(0, "%s: %s", what, cudaGetErrorString(error));
}

typedef struct {
  size_t n, hop;
  unsigned channels;
  CudafftRepresentation representation;
  size_t total, max_push; /* samples per channel in all, and the largest push */
} Case;

static const Case cases[] = {
    {4096, 1024, 2, CUDAFFT_REPRESENTATION_COMPLEX, 96000, 30000},
    {1024, 256, 64, CUDAFFT_REPRESENTATION_DB, 24000, 5000},
    {2048, 2048, 8, CUDAFFT_REPRESENTATION_MAGNITUDE, 40000, 9000},
    {512, 97, 3, CUDAFFT_REPRESENTATION_POWER, 20000, 700},
    {256, 64, 1, CUDAFFT_REPRESENTATION_COMPLEX, 5000, 1},
    {4096, 4096, 1024, CUDAFFT_REPRESENTATION_COMPLEX, 3 * 4096, 4096},
};

/* Runs case c: analysis both ways, then (complex) synthesis both ways and the round trip. */
static void
check_case(const Case *c, TestRng *rng)
{
  const CudafftStftConfig config = {
      c->n, c->hop, c->channels, CUDAFFT_WINDOW_HANN, c->representation, CUDAFFT_SAMPLE_F32};
  char label[96];
  snprintf(label, sizeof label, "n %zu hop %zu, %u channels, representation %d", c->n, c->hop,
           c->channels, (int)c->representation);
  CudafftStft *on_device = NULL, *on_host = NULL;
  if (!test_check(
          cudafft_stft_create(&on_device, CUDAFFT_BACKEND_CUDA, 0, &config) == CUDAFFT_STATUS_OK &&
              cudafft_stft_create(&on_host, CUDAFFT_BACKEND_CUDA, 0, &config) == CUDAFFT_STATUS_OK,
          "%s: analysers made (%s)", label, cudafft_last_error_message())) {
    cudafft_stft_destroy(on_device);
    cudafft_stft_destroy(on_host);
    return;
  }
  const size_t frame_floats = cudafft_stft_frame_floats(on_host);
  const size_t most_frames = cudafft_stft_frames_for(on_host, c->total);
  const size_t out_floats = (most_frames + 1) * frame_floats;
  float *signal = test_malloc(c->total * c->channels * sizeof(float));
  for (size_t i = 0; i < c->total * c->channels; i++)
    signal[i] = (float)(1.6 * test_rng_uniform53(rng) - 0.8);
  float *host = test_malloc(out_floats * sizeof(float));
  float *back = test_malloc(out_floats * sizeof(float));
  float *device = NULL;
  test_poison(host, out_floats);
  if (!cuda_ok(cudaMalloc((void **)&device, out_floats * sizeof(float)), "cudaMalloc") ||
      !cuda_ok(cudaMemset(device, 0xff, out_floats * sizeof(float)), "cudaMemset (NaN)"))
    goto done;

  size_t frames = 0, pushes = 0, failures = 0;
  for (size_t done = 0; done < c->total; pushes++) {
    const size_t r = test_rng_range(rng, 1, c->max_push);
    const size_t count = r < c->total - done ? r : c->total - done;
    size_t a = 0, b = 0;
    const float *in = signal + done * c->channels;
    failures += cudafft_stft_push_device(on_device, in, count, device + frames * frame_floats,
                                         &a) != CUDAFFT_STATUS_OK;
    failures += cudafft_stft_push(on_host, in, count, host + frames * frame_floats, &b) !=
                CUDAFFT_STATUS_OK;
    failures += a != b;
    frames += b;
    done += count;
  }
  if (!test_check(failures == 0 && frames == most_frames,
                  "%s: %zu pushes, %zu frames both ways (%zu failures; last: %s)", label, pushes,
                  frames, failures, cudafft_last_error_message()))
    goto done;
  if (!cuda_ok(
          cudaMemcpy(back, device, frames * frame_floats * sizeof(float), cudaMemcpyDeviceToHost),
          "cudaMemcpy"))
    goto done;
  const size_t floats = frames * frame_floats;
  size_t first = floats;
  for (size_t i = 0; i < floats && first == floats; i++)
    if (memcmp(&back[i], &host[i], sizeof(float)) != 0)
      first = i;
  test_check(first == floats && test_count_unpoisoned(host, floats) == floats,
             "%s: the %zu floats written to device memory are bit for bit the host push's%s", label,
             floats, first == floats ? "" : " (they differ)");

  if (c->representation == CUDAFFT_REPRESENTATION_COMPLEX && c->channels <= 64) {
    /* synthesis from the device frames in place, and from their host copy */
    CudafftIstft *from_device = NULL, *from_host = NULL;
    const size_t samples = frames * c->hop * c->channels;
    float *y_device = test_malloc(samples * sizeof(float));
    float *y_host = test_malloc(samples * sizeof(float));
    test_poison(y_device, samples);
    test_poison(y_host, samples);
    const int made =
        cudafft_istft_create(&from_device, CUDAFFT_BACKEND_CUDA, 0, &config) == CUDAFFT_STATUS_OK &&
        cudafft_istft_create(&from_host, CUDAFFT_BACKEND_CUDA, 0, &config) == CUDAFFT_STATUS_OK;
    size_t bad = !made;
    for (size_t f = 0; made && f < frames;) {
      const size_t r = test_rng_range(rng, 1, 9);
      const size_t count = r < frames - f ? r : frames - f;
      bad += cudafft_istft_push_device(from_device, device + f * frame_floats, count,
                                       y_device + f * c->hop * c->channels) != CUDAFFT_STATUS_OK;
      bad += cudafft_istft_push(from_host, back + f * frame_floats, count,
                                y_host + f * c->hop * c->channels) != CUDAFFT_STATUS_OK;
      f += count;
    }
    test_check(bad == 0 && memcmp(y_device, y_host, samples * sizeof(float)) == 0,
               "%s: synthesis reading the frames in device memory gives the host path's %zu "
               "samples bit for bit (%s)",
               label, samples, bad ? cudafft_last_error_message() : "ok");
    /* the round trip: output sample t is input sample t, where every frame that covers t is in
     * (from n - hop on: the signal has no silent lead-in here) */
    const size_t from = (c->n - c->hop) * c->channels;
    double err = 0.0, norm = 0.0;
    for (size_t i = from; i < samples; i++) {
      const double d = (double)y_device[i] - signal[i];
      err += d * d;
      norm += (double)signal[i] * signal[i];
    }
    const double rel = norm > 0.0 ? sqrt(err / norm) : 0.0;
    test_check(samples > from && rel < 1e-5,
               "%s: the round trip through device memory gives back the input (rel L2 %.2e)", label,
               rel);
    cudafft_istft_destroy(from_device);
    cudafft_istft_destroy(from_host);
    free(y_device);
    free(y_host);
  }
done:
  cudaFree(device);
  free(signal);
  free(host);
  free(back);
  cudafft_stft_destroy(on_device);
  cudafft_stft_destroy(on_host);
}

static void
check_cuda(void)
{
  TestRng rng = test_rng("stft device memory");
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    check_case(&cases[i], &rng);
}

int
main(int argc, char **argv)
{
  if (test_begin(argc, argv) == CUDAFFT_BACKEND_CPU) {
    check_cpu();
    return test_finish();
  }
  check_cuda();
  return test_finish();
}
