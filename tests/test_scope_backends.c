/* test_scope_backends.c: the spectrum scope's CUDA and CPU backends draw the same frames
 * (cudafft/scope.h: every byte within 1). Both run in this process on the same samples and
 * options: both styles, every scale, weighting, colormap and pixel layout, lanes and the mixed
 * lane, every sample format, FFT sizes with fused kernels and mixed-radix ones (even, odd, below
 * 256), frames with no samples and with several FFTs' worth, smoothing,
 * peaks held and falling, option changes while running and a reset; every byte of every frame is
 * compared. It needs a CUDA device and skips (77) without one; it takes no argument. */
#include "test_signal.h"
#include "test_util.h"

#include <cudafft/scope.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))
/* The backends differ in the last bits of their FFTs and logarithms; each byte is a continuous
 * function of those, so they may round one step apart (cudafft/scope.h). */
#define BYTE_TOLERANCE 1

static const double pi = 3.14159265358979323846;

static const struct {
  CudafftScopeStyle style;
  CudafftFrequencyScale scale;
  CudafftWeighting weighting;
  CudafftColormap colormap;
  int multi;
  unsigned channels, rate, width, height, bands_per_octave;
  CudafftSampleFormat format;
  CudafftPixelFormat pixels;
  size_t fft_size;
  float smoothing_ms, hold_ms;
} cases[] = {
    {CUDAFFT_SCOPE_SPECTROGRAM, CUDAFFT_SCALE_LOG, CUDAFFT_WEIGHTING_Z, CUDAFFT_COLORMAP_VIRIDIS, 1,
     8, 48000, 640, 360, 3, CUDAFFT_SAMPLE_F32, CUDAFFT_PIXELS_BGRX, 4096, 0.0f, 1000.0f},
    {CUDAFFT_SCOPE_SPECTROGRAM, CUDAFFT_SCALE_MEL, CUDAFFT_WEIGHTING_A, CUDAFFT_COLORMAP_MAGMA, 0,
     2, 44100, 333, 201, 3, CUDAFFT_SAMPLE_S16, CUDAFFT_PIXELS_RGB, 2048, 80.0f, 0.0f},
    {CUDAFFT_SCOPE_SPECTROGRAM, CUDAFFT_SCALE_OCTAVE, CUDAFFT_WEIGHTING_C, CUDAFFT_COLORMAP_GREY, 1,
     3, 96000, 257, 180, 24, CUDAFFT_SAMPLE_S24, CUDAFFT_PIXELS_XRGB, 16384, 0.0f, 0.0f},
    {CUDAFFT_SCOPE_SPECTROGRAM, CUDAFFT_SCALE_LINEAR, CUDAFFT_WEIGHTING_Z, CUDAFFT_COLORMAP_VIRIDIS,
     1, 1, 8000, 100, 100, 3, CUDAFFT_SAMPLE_F64, CUDAFFT_PIXELS_XBGR, 256, 0.0f, 0.0f},
    {CUDAFFT_SCOPE_BARS, CUDAFFT_SCALE_LOG, CUDAFFT_WEIGHTING_A, CUDAFFT_COLORMAP_MAGMA, 1, 2,
     48000, 640, 360, 3, CUDAFFT_SAMPLE_F32, CUDAFFT_PIXELS_RGBX, 4096, 50.0f, 500.0f},
    {CUDAFFT_SCOPE_BARS, CUDAFFT_SCALE_OCTAVE, CUDAFFT_WEIGHTING_Z, CUDAFFT_COLORMAP_VIRIDIS, 1, 6,
     48000, 301, 245, 6, CUDAFFT_SAMPLE_S32, CUDAFFT_PIXELS_BGR, 8192, 0.0f, 250.0f},
    {CUDAFFT_SCOPE_BARS, CUDAFFT_SCALE_MEL, CUDAFFT_WEIGHTING_C, CUDAFFT_COLORMAP_GREY, 0, 4, 22050,
     199, 77, 3, CUDAFFT_SAMPLE_S16, CUDAFFT_PIXELS_BGRX, 1024, 0.0f, 2000.0f},
    {CUDAFFT_SCOPE_BARS, CUDAFFT_SCALE_LINEAR, CUDAFFT_WEIGHTING_Z, CUDAFFT_COLORMAP_VIRIDIS, 1, 2,
     48000, 1920, 270, 3, CUDAFFT_SAMPLE_F32, CUDAFFT_PIXELS_XRGB, 4096, 0.0f, 1000.0f},
    /* the mixed-radix kernel's sizes: even, odd (the largest an sm_90 GPU holds), below 256 */
    {CUDAFFT_SCOPE_SPECTROGRAM, CUDAFFT_SCALE_MEL, CUDAFFT_WEIGHTING_Z, CUDAFFT_COLORMAP_MAGMA, 1,
     4, 16000, 320, 200, 3, CUDAFFT_SAMPLE_F32, CUDAFFT_PIXELS_BGRX, 400, 0.0f, 0.0f},
    {CUDAFFT_SCOPE_BARS, CUDAFFT_SCALE_OCTAVE, CUDAFFT_WEIGHTING_A, CUDAFFT_COLORMAP_VIRIDIS, 1, 3,
     48000, 300, 180, 12, CUDAFFT_SAMPLE_S16, CUDAFFT_PIXELS_RGBX, 13125, 30.0f, 500.0f},
    {CUDAFFT_SCOPE_SPECTROGRAM, CUDAFFT_SCALE_LOG, CUDAFFT_WEIGHTING_C, CUDAFFT_COLORMAP_GREY, 0, 2,
     44100, 200, 120, 3, CUDAFFT_SAMPLE_S24, CUDAFFT_PIXELS_RGB, 1125, 0.0f, 0.0f},
    {CUDAFFT_SCOPE_BARS, CUDAFFT_SCALE_LINEAR, CUDAFFT_WEIGHTING_Z, CUDAFFT_COLORMAP_GREY, 1, 1,
     48000, 120, 64, 3, CUDAFFT_SAMPLE_F32, CUDAFFT_PIXELS_BGR, 48, 0.0f, 250.0f},
    {CUDAFFT_SCOPE_SPECTROGRAM, CUDAFFT_SCALE_LOG, CUDAFFT_WEIGHTING_Z, CUDAFFT_COLORMAP_VIRIDIS, 1,
     2, 48000, 256, 128, 3, CUDAFFT_SAMPLE_F32, CUDAFFT_PIXELS_BGRX, 6000, 0.0f, 0.0f},
};

/* Noise, tones that come and go, a sweep, a stretch of silence. */
static void
make_signal(TestSignal *s, const char *label, CudafftSampleFormat format, unsigned channels,
            unsigned rate, size_t frames)
{
  TestRng rng = test_rng("%s", label);
  test_signal_alloc(s, format, channels, rate, frames, TEST_READ_POW2 | TEST_READ_F64_AS_FLOAT);
  for (unsigned c = 0; c < channels; c++) {
    double phase = 0.0;
    for (size_t j = 0; j < frames; j++) {
      const double t = (double)j / rate;
      const double sweep = 50.0 * pow(200.0, fmod(t, 2.0) / 2.0);
      phase += 2.0 * pi * sweep / rate;
      const double gate = fmod(t * (3 + c), 1.0) < 0.5 ? 1.0 : 0.0;
      double x = 0.3 * sin(phase) + 0.2 * gate * sin(2.0 * pi * 440.0 * (c + 1) * t) +
                 0.01 * test_rng_uniform53(&rng);
      if (t > 1.5 && t < 1.8)
        x = 0.0;
      test_signal_set(s, j, c, x);
    }
  }
}

/* One render on both; returns the largest byte difference (1000: a failed render, or padding
 * written), *where: where it was. */
static int
compare_frame(CudafftScope *gpu, CudafftScope *cpu, const CudafftScopeConfig *c, const void *in,
              size_t frames, uint8_t *a, uint8_t *b, char *where, size_t size)
{
  const size_t bytes = c->stride * c->height, row = c->width * cudafft_scope_pixel_bytes(c->pixels);
  memset(a, 0x5a, bytes);
  memset(b, 0x5a, bytes);
  const CudafftStatus sa = cudafft_scope_render(gpu, in, frames, a);
  const CudafftStatus sb = cudafft_scope_render(cpu, in, frames, b);
  if (sa != CUDAFFT_STATUS_OK || sb != CUDAFFT_STATUS_OK) {
    snprintf(where, size, "render: cuda %s, cpu %s (%s)", cudafft_status_name(sa),
             cudafft_status_name(sb), cudafft_last_error_message());
    return 1000;
  }
  int worst = 0;
  for (unsigned y = 0; y < c->height; y++)
    for (size_t i = 0; i < c->stride; i++) {
      const size_t at = (size_t)y * c->stride + i;
      if (i >= row) {
        if (a[at] != 0x5a) {
          snprintf(where, size, "row %u: the CUDA backend wrote padding byte %zu", y, i - row);
          return 1000;
        }
        continue;
      }
      const int d = abs((int)a[at] - (int)b[at]);
      if (d > worst) {
        worst = d;
        snprintf(where, size, "byte %zu of row %u: cuda %d, cpu %d", i, y, a[at], b[at]);
      }
    }
  return worst;
}

static void
run_case(size_t i)
{
  CudafftScopeOptions o = {
      .style = cases[i].style,
      .multi_channel = cases[i].multi,
      .scale = cases[i].scale,
      .bands_per_octave = cases[i].bands_per_octave,
      .weighting = cases[i].weighting,
      .db_min = -80.0f,
      .db_max = -3.0f,
      .colormap = cases[i].colormap,
      .smoothing_ms = cases[i].smoothing_ms,
      .peak_hold_ms = cases[i].hold_ms,
      .peak_decay_db_per_s = 30.0f,
  };
  const size_t bpp = cudafft_scope_pixel_bytes(cases[i].pixels);
  const unsigned fps = 60, per_frame = cases[i].rate / fps;
  const CudafftScopeConfig config = {
      .channels = cases[i].channels,
      .rate = cases[i].rate,
      .format = cases[i].format,
      .fft_size = cases[i].fft_size,
      .max_frames = 4 * per_frame,
      .width = cases[i].width,
      .height = cases[i].height,
      .pixels = cases[i].pixels,
      .stride = cases[i].width * bpp + 12,
      .frame_seconds = 1.0 / fps,
      .options = o,
  };
  char what[96];
  snprintf(what, sizeof what, "case %zu: %s, %u x %u, %u channels %s", i,
           o.style ? "bars" : "spectrogram", config.width, config.height, config.channels,
           o.multi_channel ? "in lanes" : "mixed");
  CudafftScope *gpu = NULL, *cpu = NULL;
  const CudafftStatus sg = cudafft_scope_create(&gpu, CUDAFFT_BACKEND_CUDA, -1, &config);
  const CudafftStatus sc = cudafft_scope_create(&cpu, CUDAFFT_BACKEND_CPU, -1, &config);
  if (!test_check(sg == CUDAFFT_STATUS_OK && sc == CUDAFFT_STATUS_OK, "%s: create (%s, %s: %s)",
                  what, cudafft_status_name(sg), cudafft_status_name(sc),
                  cudafft_last_error_message())) {
    cudafft_scope_destroy(gpu);
    cudafft_scope_destroy(cpu);
    return;
  }
  TestSignal s;
  const unsigned frames = 150;
  make_signal(&s, what, config.format, config.channels, config.rate,
              (size_t)frames * 4 * per_frame);
  const size_t bytes = config.stride * config.height;
  uint8_t *a = test_malloc(bytes), *b = test_malloc(bytes);
  const size_t fb = test_signal_frame_bytes(&s);
  size_t at = 0;
  int worst = 0;
  char where[256] = "";
  for (unsigned f = 0; f < frames && worst <= BYTE_TOLERANCE; f++) {
    /* mostly a video frame's worth; sometimes none, sometimes four frames' (several FFTs) */
    const size_t count = f % 17 == 5 ? 0 : f % 13 == 7 ? 4 * per_frame : per_frame;
    if (f == 60 || f == 100) {
      /* a change while running: colours and decay at 60, the layout at 100 */
      CudafftScopeOptions next = o;
      if (f == 60) {
        next.db_min = -60.0f;
        next.colormap = (CudafftColormap)((o.colormap + 1) % CUDAFFT_COLORMAP_COUNT_);
        next.peak_decay_db_per_s = 10.0f;
      } else {
        next.scale = (CudafftFrequencyScale)((o.scale + 1) % CUDAFFT_SCALE_COUNT_);
        next.multi_channel = !o.multi_channel;
      }
      o = next;
      if (!test_check(cudafft_scope_set_options(gpu, &o) == CUDAFFT_STATUS_OK &&
                          cudafft_scope_set_options(cpu, &o) == CUDAFFT_STATUS_OK,
                      "%s: set_options at frame %u (%s)", what, f, cudafft_last_error_message()))
        break;
    }
    if (f == 130) {
      test_check(cudafft_scope_reset(gpu) == CUDAFFT_STATUS_OK &&
                     cudafft_scope_reset(cpu) == CUDAFFT_STATUS_OK,
                 "%s: reset at frame 130", what);
    }
    char here[200];
    const int d = compare_frame(gpu, cpu, &config, count ? s.raw + at * fb : NULL, count, a, b,
                                here, sizeof here);
    if (d > worst) {
      worst = d;
      snprintf(where, sizeof where, "frame %u: %s", f, here);
    }
    at += count;
  }
  test_check(worst <= BYTE_TOLERANCE,
             "%s: %u frames, every byte of the CUDA backend's within %d of the CPU's%s%s", what,
             frames, BYTE_TOLERANCE, worst ? "; largest: " : "", where);
  free(a);
  free(b);
  test_signal_clear(&s);
  cudafft_scope_destroy(gpu);
  cudafft_scope_destroy(cpu);
}

int
main(int argc, char **argv)
{
  test_begin_every_backend(argc, argv);
  if (cudafft_cuda_device_count() == 0)
    test_skip_program("no usable CUDA device: the CUDA backend cannot be compared with the CPU's");
  for (size_t i = 0; i < COUNT(cases); i++)
    run_case(i);
  test_section_done("cuda against cpu");
  return test_finish();
}
