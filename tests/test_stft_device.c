/* test_stft_device.c: the STFT's device-memory calls (cudafft_stft_push_device,
 * cudafft_istft_push_device, cudafft_istft_drain_device; cudafft/stft.h), which the elements use
 * for CUDA memory.
 *
 * cuda: an analyser writing its frames into device memory (cudaMalloc'd, poisoned with NaN) and
 * one writing into host memory (poisoned) get the same random input in the same random pushes,
 * the first reading it from device memory on every other push (so that samples held on the host
 * are followed by samples on the device); every float of every frame must be bit for bit the same
 * (the same kernels: only where the samples are differs), for the four representations, 1 to 1024
 * channels (1024 x 4096 complex: a frame larger than an executor job, so the channels go in
 * groups), hops of n, n/4 and odd ones, pushes of 1 to 30000 samples. Then the complex frames go
 * back through two synthesisers, one reading them from device memory in place and writing its
 * samples into device memory on every other push and at the drain, one in host memory: the
 * samples bit for bit the same, and the round trip gives back the input (1e-5 relative L2:
 * weighted overlap-add's promise). No synthesis push into device memory waits for its samples
 * (its `done` fence; nothing waits until the drain, which collects them), except in channel
 * groups, where every one must.
 * cpu (CI too): the calls are UNSUPPORTED on the CPU backend, with a message. */
#include "cuda_test_util.h"

#include <cudafft/stft.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
  CudafftStatus status =
      cudafft_stft_push_device(stft, in, 1024, out, &frames, CUDAFFT_OUT_DEVICE, NULL, NULL);
  test_check(status == CUDAFFT_STATUS_UNSUPPORTED && strstr(cudafft_last_error_message(), "CPU"),
             "cudafft_stft_push_device on the CPU backend: %s (%s)", cudafft_status_name(status),
             cudafft_last_error_message());
  status = cudafft_istft_push_device(istft, out, 1, in, CUDAFFT_IN_DEVICE, NULL, NULL);
  test_check(status == CUDAFFT_STATUS_UNSUPPORTED && strstr(cudafft_last_error_message(), "CPU"),
             "cudafft_istft_push_device on the CPU backend: %s (%s)", cudafft_status_name(status),
             cudafft_last_error_message());
done:
  cudafft_stft_destroy(stft);
  cudafft_istft_destroy(istft);
}

typedef struct {
  size_t n, hop;
  unsigned channels;
  CudafftRepresentation representation;
  size_t total, max_push;  /* samples per channel in all, and the largest push */
  int synthesis_in_groups; /* a frame exceeds a synthesis job: its pushes wait */
} Case;

static const Case cases[] = {
    {4096, 1024, 2, CUDAFFT_REPRESENTATION_COMPLEX, 96000, 30000, 0},
    {1024, 256, 64, CUDAFFT_REPRESENTATION_DB, 24000, 5000, 0},
    {2048, 2048, 8, CUDAFFT_REPRESENTATION_MAGNITUDE, 40000, 9000, 0},
    {512, 97, 3, CUDAFFT_REPRESENTATION_POWER, 20000, 700, 0},
    {256, 64, 1, CUDAFFT_REPRESENTATION_COMPLEX, 5000, 1, 0},
    {4096, 4096, 1024, CUDAFFT_REPRESENTATION_COMPLEX, 3 * 4096, 4096, 0},
    /* synthesis in channel groups (a frame larger than a job) into device memory */
    {4096, 1024, 1024, CUDAFFT_REPRESENTATION_COMPLEX, 3 * 4096, 4096, 1},
};

/* The complex frames (`frames` of frame_floats, on the device at `device`, their host copy at
 * `back`) through two synthesisers: one reading them in place and writing into device memory on
 * every other push and at the drain, one in host memory; then the round trip against signal. */
static void
check_synthesis(const Case *c, const CudafftStftConfig *config, const char *label,
                const float *device, CudafftFence written, const float *back, size_t frames,
                size_t frame_floats, const float *signal, TestRng *rng)
{
  CudafftIstft *from_device = NULL, *from_host = NULL;
  const size_t body = frames * c->hop * c->channels, samples = body + (c->n - c->hop) * c->channels;
  float *y_device = test_malloc(samples * sizeof(float));
  float *y_host = test_malloc(samples * sizeof(float));
  float *y_on_device = NULL;
  test_poison(y_device, samples);
  test_poison(y_host, samples);
  int made =
      cudafft_istft_create(&from_device, CUDAFFT_BACKEND_CUDA, 0, config) == CUDAFFT_STATUS_OK &&
      cudafft_istft_create(&from_host, CUDAFFT_BACKEND_CUDA, 0, config) == CUDAFFT_STATUS_OK;
  made = made && cuda_ok(cudaMalloc((void **)&y_on_device, samples * sizeof(float)), "cudaMalloc");
  /* the pushes into device memory: where they start and how many floats (read back at the end) */
  size_t *segment_at = test_malloc(frames * sizeof(size_t));
  size_t *segment_floats = test_malloc(frames * sizeof(size_t));
  size_t bad = !made, pushes = 0, segments = 0, deferred = 0;
  CudafftFence last = {0, 0};
  for (size_t f = 0; made && f < frames; pushes++) {
    const size_t r = test_rng_range(rng, 1, 9);
    const size_t count = r < frames - f ? r : frames - f;
    const size_t at = f * c->hop * c->channels, n = count * c->hop * c->channels;
    const int to_device = pushes % 2 == 0;
    /* samples to device memory: the push need not wait for them (its `done`); nothing here
     * waits until the end, so the next push collects its jobs */
    CudafftFence done = {~0ull, ~0ull}; /* poisoned: the call sets it */
    bad += cudafft_istft_push_device(from_device, device + f * frame_floats, count,
                                     (to_device ? y_on_device : y_device) + at,
                                     CUDAFFT_IN_DEVICE | (to_device ? CUDAFFT_OUT_DEVICE : 0),
                                     pushes == 0 ? &written : NULL, &done) != CUDAFFT_STATUS_OK;
    if (to_device) {
      segment_at[segments] = at;
      segment_floats[segments++] = n;
      deferred += done.queue != 0;
      if (done.queue != 0)
        last = done;
    } else {
      bad += done.queue != 0 || done.mark != 0; /* host memory: complete on return */
    }
    bad += cudafft_istft_push(from_host, back + f * frame_floats, count, y_host + at) !=
           CUDAFFT_STATUS_OK;
    f += count;
  }
  if (made) {
    /* the drain follows the last push's jobs, which it collects; its samples are complete when it
     * returns, the pushes' at their fences */
    bad += cudafft_istft_drain_device(from_device, y_on_device + body) != CUDAFFT_STATUS_OK;
    bad += cudafft_fence_wait(last) != CUDAFFT_STATUS_OK;
    for (size_t i = 0; i < segments; i++)
      bad += !cuda_ok(cudaMemcpy(y_device + segment_at[i], y_on_device + segment_at[i],
                                 segment_floats[i] * sizeof(float), cudaMemcpyDeviceToHost),
                      "download");
    bad += !cuda_ok(cudaMemcpy(y_device + body, y_on_device + body,
                               (samples - body) * sizeof(float), cudaMemcpyDeviceToHost),
                    "download");
    bad += cudafft_istft_drain(from_host, y_host + body) != CUDAFFT_STATUS_OK;
  }
  /* a frame within a job: every push into device memory returns before its samples are written;
   * in channel groups (samples spread after each job) every one waits */
  test_check(made && (c->synthesis_in_groups ? deferred == 0 : deferred == segments),
             "%s: %zu of %zu synthesis pushes into device memory did not wait (%s)", label,
             deferred, segments, c->synthesis_in_groups ? "channel groups: none may" : "all must");
  test_check(bad == 0 && memcmp(y_device, y_host, samples * sizeof(float)) == 0,
             "%s: synthesis reading the frames in device memory, writing device memory on every "
             "other push and at the drain, gives the host path's %zu samples bit for bit (%s)",
             label, samples, bad ? cudafft_last_error_message() : "ok");
  /* the round trip: output sample t is input sample t, where every frame that covers t is in
   * (from n - hop on: the signal has no silent lead-in here) */
  const size_t from = (c->n - c->hop) * c->channels;
  double err = 0.0, norm = 0.0;
  for (size_t i = from; i < body; i++) {
    const double d = (double)y_device[i] - signal[i];
    err += d * d;
    norm += (double)signal[i] * signal[i];
  }
  const double rel = norm > 0.0 ? sqrt(err / norm) : 0.0;
  test_check(body > from && rel < 1e-5,
             "%s: the round trip through device memory gives back the input (rel L2 %.2e)", label,
             rel);
  cudaFree(y_on_device);
  free(segment_at);
  free(segment_floats);
  cudafft_istft_destroy(from_device);
  cudafft_istft_destroy(from_host);
  free(y_device);
  free(y_host);
}

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
  float *device = NULL, *device_signal = NULL;
  test_poison(host, out_floats);
  const size_t signal_bytes = c->total * c->channels * sizeof(float);
  if (!cuda_ok(cudaMalloc((void **)&device, out_floats * sizeof(float)), "cudaMalloc") ||
      !cuda_ok(cudaMemset(device, 0xff, out_floats * sizeof(float)), "cudaMemset (NaN)") ||
      !cuda_ok(cudaMalloc((void **)&device_signal, signal_bytes), "cudaMalloc (signal)") ||
      !cuda_ok(cudaMemcpy(device_signal, signal, signal_bytes, cudaMemcpyHostToDevice), "upload"))
    goto done;

  size_t frames = 0, pushes = 0, failures = 0, deferred = 0;
  CudafftFence written = {0, 0};
  for (size_t done = 0; done < c->total; pushes++) {
    const size_t r = test_rng_range(rng, 1, c->max_push);
    const size_t count = r < c->total - done ? r : c->total - done;
    size_t a = 0, b = 0;
    const float *in = signal + done * c->channels;
    const int from_device = pushes % 2 == 1;
    /* frames to device memory: no push waits for them, each is ordered after the one before
     * (only the ordering runs: the input is complete) */
    CudafftFence fence = {0, 0};
    failures += cudafft_stft_push_device(
                    on_device, (from_device ? device_signal : signal) + done * c->channels, count,
                    device + frames * frame_floats, &a,
                    CUDAFFT_OUT_DEVICE | (from_device ? CUDAFFT_IN_DEVICE : 0),
                    from_device ? &written : NULL, &fence) != CUDAFFT_STATUS_OK;
    deferred += fence.queue != 0;
    if (fence.queue != 0)
      written = fence;
    failures += cudafft_stft_push(on_host, in, count, host + frames * frame_floats, &b) !=
                CUDAFFT_STATUS_OK;
    failures += a != b;
    frames += b;
    done += count;
  }
  /* the host reads the frames back: the last push's work first */
  failures += cudafft_fence_wait(written) != CUDAFFT_STATUS_OK;
  if (!test_check(failures == 0 && frames == most_frames && deferred > 0,
                  "%s: %zu pushes (%zu did not wait), %zu frames both ways (%zu failures; last: "
                  "%s)",
                  label, pushes, deferred, frames, failures, cudafft_last_error_message()))
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

  if (c->representation == CUDAFFT_REPRESENTATION_COMPLEX && c->hop < c->n)
    check_synthesis(c, &config, label, device, written, back, frames, frame_floats, signal, rng);
done:
  cudaFree(device);
  cudaFree(device_signal);
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
