/* test_features_device.c: the features engine's device-memory calls (cudafft_features_push_device,
 * cudafft_features_finish_device; cudafft/features.h), which the element uses for CUDA memory.
 *
 * cuda: an object writing its outputs into device memory (cudaMalloc'd, poisoned) and one writing
 * into host memory get the same random input in the same random pushes, the first reading it
 * from device memory on every other push (so that host and device input alternate inside a
 * stream) and never waiting for its outputs (every push's `done` fence; the finish's is waited
 * for at the end): every byte of every output must be the same (the same kernels: only where the
 * data is differs). Frames written straight by the frame kernel, windows with deltas and a range
 * in channel groups (a window of every channel exceeds an executor job), Whisper's chunks, F16,
 * S16 input, 1 to 96 channels.
 * cpu (CI too): the calls are UNSUPPORTED on the CPU backend. */
#include "cuda_test_util.h"
#include "features_util.h"
#include "test_signal.h"

#include <cudafft/features.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void
check_cpu(void)
{
  CudafftFeaturesConfig c;
  cudafft_features_preset(&c, "kaldi-fbank", 16000.0, 0);
  CudafftFeatures *f = NULL;
  if (!test_check(cudafft_features_create(&f, CUDAFFT_BACKEND_CPU, -1, &c) == CUDAFFT_STATUS_OK,
                  "CPU features object made"))
    return;
  float in[4000] = {0}, out[23 * 30];
  size_t outputs = 0;
  CudafftStatus status =
      cudafft_features_push_device(f, in, 4000, out, &outputs, CUDAFFT_OUT_DEVICE, NULL, NULL);
  test_check(status == CUDAFFT_STATUS_UNSUPPORTED && strstr(cudafft_last_error_message(), "CPU"),
             "cudafft_features_push_device on the CPU backend: %s (%s)",
             cudafft_status_name(status), cudafft_last_error_message());
  status = cudafft_features_finish_device(f, out, &outputs, CUDAFFT_OUT_DEVICE, NULL);
  test_check(status == CUDAFFT_STATUS_UNSUPPORTED,
             "cudafft_features_finish_device on the CPU "
             "backend: %s",
             cudafft_status_name(status));
  cudafft_features_destroy(f);
}

typedef struct {
  const char *what;
  void (*configure)(CudafftFeaturesConfig *c);
  size_t samples, max_push;
} Case;

static void
whisper_frames(CudafftFeaturesConfig *c)
{
  cudafft_features_preset(c, "whisper", 16000.0, 80);
  c->output = CUDAFFT_FEATURES_OUTPUT_FRAMES;
  c->range = 0.0f;
  c->channels = 4;
  c->precision = CUDAFFT_FEATURES_F16;
}

static void
windows_groups(CudafftFeaturesConfig *c)
{
  cudafft_features_preset(c, "librosa-mfcc", 22050.0, 128);
  c->n_mfcc = 40;
  c->channels = 96;
  c->delta_order = 2;
  c->delta_style = CUDAFFT_FEATURES_DELTAS_SAVGOL;
  c->output = CUDAFFT_FEATURES_OUTPUT_WINDOWS;
  c->window_frames = 250; /* 250 x 120 floats = 120 KB a channel: 96 exceed 8 MB */
  c->window_stride = 100;
}

static void
whisper_chunks(CudafftFeaturesConfig *c)
{
  cudafft_features_preset(c, "whisper", 16000.0, 80);
  c->chunk_samples = 32000;
  c->channels = 2;
}

static void
kaldi_s16(CudafftFeaturesConfig *c)
{
  cudafft_features_preset(c, "kaldi-mfcc", 16000.0, 0);
  c->format = CUDAFFT_SAMPLE_S16;
  c->sample_scale = 32768.0f;
  c->delta_order = 2;
  c->delta_width = 5;
}

static const Case cases[] = {
    {"Whisper frames, 4 channels, F16 (straight from the frame kernel)", whisper_frames, 48000, 5000},
    {"librosa MFCC windows with deltas and a range, 96 channels in groups", windows_groups,
     120000, 30000},
    {"Whisper chunks of 2 s, 2 channels", whisper_chunks, 70000, 20000},
    {"Kaldi MFCC with deltas, S16, pushes of 1 to 300 samples", kaldi_s16, 16000, 300},
};

static void
check_case(const Case *cs)
{
  CudafftFeaturesConfig c;
  cs->configure(&c);
  TestRng rng = test_rng("%s signal", cs->what);
  TestSignal s;
  test_signal_noise(&s, &rng, c.format, c.channels, (unsigned)c.sample_rate, cs->samples,
                    TEST_READ_POW2, 0.5);
  /* the host run, in the same pushes */
  TestRng pieces = test_rng("%s pieces", cs->what);
  FeaturesRun host;
  features_run(&host, CUDAFFT_BACKEND_CUDA, &c, s.raw, s.frames, &pieces, cs->max_push, cs->what);
  CudafftFeatures *f = NULL;
  if (!host.ok || cudafft_features_create(&f, CUDAFFT_BACKEND_CUDA, -1, &c) != CUDAFFT_STATUS_OK) {
    test_check(0, "%s: the host run or create failed (%s)", cs->what, cudafft_last_error_message());
    features_run_clear(&host);
    test_signal_clear(&s);
    return;
  }
  const size_t frame_bytes = test_signal_frame_bytes(&s), out_bytes = host.output_bytes;
  void *in = NULL;
  unsigned char *out = NULL;
  int ok =
      cuda_ok(cudaMalloc(&in, s.frames * frame_bytes), "cudaMalloc input") &&
      cuda_ok(cudaMalloc((void **)&out, (host.outputs + 1) * out_bytes), "cudaMalloc output") &&
      cuda_ok(cudaMemcpy(in, s.raw, s.frames * frame_bytes, cudaMemcpyHostToDevice),
              "input to the device") &&
      cuda_ok(cudaMemset(out, 0xA5, (host.outputs + 1) * out_bytes), "poison");
  pieces = test_rng("%s pieces", cs->what); /* the host run's pushes again */
  size_t at = 0, written = 0;
  CudafftFence done = {0, 0};
  for (int push = 0; ok; push++) {
    size_t piece = s.frames - at;
    if (piece > 0)
      piece = test_rng_range(&pieces, 1, piece < cs->max_push ? piece : cs->max_push);
    const int last = at + piece == s.frames;
    const int device_in = push % 2;
    const void *from =
        device_in ? (const unsigned char *)in + at * frame_bytes : s.raw + at * frame_bytes;
    size_t outputs = 0;
    const CudafftStatus status = cudafft_features_push_device(
        f, from, piece, out + written * out_bytes, &outputs,
        CUDAFFT_OUT_DEVICE | (device_in ? CUDAFFT_IN_DEVICE : 0), NULL, &done);
    if (status != CUDAFFT_STATUS_OK)
      ok = test_check(0, "%s: push_device %d: %s (%s)", cs->what, push, cudafft_status_name(status),
                      cudafft_last_error_message());
    written += outputs;
    at += piece;
    if (last)
      break;
  }
  if (ok) {
    size_t outputs = 0;
    ok = cudafft_features_finish_device(f, out + written * out_bytes, &outputs, CUDAFFT_OUT_DEVICE,
                                        &done) == CUDAFFT_STATUS_OK &&
         cudafft_fence_wait(done) == CUDAFFT_STATUS_OK;
    written += outputs;
  }
  unsigned char *back = test_malloc((host.outputs + 1) * out_bytes);
  ok = ok && cuda_ok(cudaMemcpy(back, out, (host.outputs + 1) * out_bytes, cudaMemcpyDeviceToHost),
                     "outputs to the host");
  size_t spilled = 0;
  for (size_t i = 0; ok && i < out_bytes; i++)
    spilled += back[host.outputs * out_bytes + i] != 0xA5;
  test_check(ok && written == host.outputs && spilled == 0 &&
                 memcmp(back, host.data, host.outputs * out_bytes) == 0,
             "%s: %zu outputs in device memory (input from device memory on every other push, "
             "no push waiting) are the host run's %zu, byte for byte; %zu bytes past them "
             "written",
             cs->what, written, host.outputs, spilled);
  free(back);
  cudaFree(in);
  cudaFree(out);
  cudafft_features_destroy(f);
  features_run_clear(&host);
  test_signal_clear(&s);
}

int
main(int argc, char **argv)
{
  const CudafftBackend backend = test_begin(argc, argv);
  if (backend == CUDAFFT_BACKEND_CPU) {
    check_cpu();
    return test_finish();
  }
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    check_case(&cases[i]);
  return test_finish();
}
