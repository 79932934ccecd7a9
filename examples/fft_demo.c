/* fft-demo: the engine on a real task, on whatever machine it finds. It makes 256 frames of 4096
 * samples holding two tones and noise, finds the tones in the spectra (R2C), turns the spectra
 * back into audio (C2R) and checks both: the tones land in their bins and the round trip returns
 * the input. Backend AUTO: the GPU when one is usable, otherwise FFTW on the CPU. */
#define _POSIX_C_SOURCE 200809L
#include <cudafft/fft.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define N 4096
#define FRAMES 256
#define PI 3.14159265358979323846

static double
seconds(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int
fail(const char *what, CudafftStatus status)
{
  fprintf(stderr, "fft-demo: %s: %s (%s)\n", what, cudafft_status_name(status),
          cudafft_last_error_message());
  return 1;
}

int
main(void)
{
  const int bin_a = 100, bin_b = 731; /* 1.17 kHz and 8.57 kHz at 48 kHz */
  float *audio = malloc(sizeof(float) * N * FRAMES);
  float *spectra = malloc(sizeof(float) * (N + 2) * FRAMES);
  float *back = malloc(sizeof(float) * N * FRAMES);
  if (!audio || !spectra || !back)
    return fprintf(stderr, "fft-demo: out of memory\n"), 1;
  srand((unsigned)time(NULL));
  for (int i = 0; i < N * FRAMES; ++i) {
    const double t = (double)(i % N) / N;
    audio[i] = (float)(0.5 * cos(2 * PI * bin_a * t) + 0.25 * sin(2 * PI * bin_b * t) +
                       0.01 * (2.0 * rand() / RAND_MAX - 1.0));
  }

  CudafftPlan *forward = NULL, *inverse = NULL;
  CudafftStatus status = cudafft_plan_create(&forward, CUDAFFT_BACKEND_AUTO, -1, CUDAFFT_R2C, N);
  if (status != CUDAFFT_STATUS_OK)
    return fail("creating the R2C plan", status);
  status = cudafft_plan_create(&inverse, CUDAFFT_BACKEND_AUTO, -1, CUDAFFT_C2R, N);
  if (status != CUDAFFT_STATUS_OK)
    return fail("creating the C2R plan", status);
  const int on_gpu = cudafft_plan_get_backend(forward) == CUDAFFT_BACKEND_CUDA;
  if (on_gpu)
    printf("backend: CUDA (GPU), the plans on devices %d and %d\n",
           cudafft_plan_get_device(forward), cudafft_plan_get_device(inverse));
  else
    printf("backend: CPU (FFTW): no usable CUDA device\n");

  const double start = seconds();
  status = cudafft_execute(forward, CUDAFFT_FORWARD, audio, spectra, FRAMES, 1.0f);
  if (status != CUDAFFT_STATUS_OK)
    return fail("forward transform", status);
  status = cudafft_execute(inverse, CUDAFFT_INVERSE, spectra, back, FRAMES, 1.0f / N);
  if (status != CUDAFFT_STATUS_OK)
    return fail("inverse transform", status);
  const double elapsed = seconds() - start;

  /* the two strongest bins of every frame, and the round trip's error */
  int frames_ok = 0;
  for (int f = 0; f < FRAMES; ++f) {
    const float *x = spectra + (size_t)f * (N + 2);
    int first = 0, second = 0;
    double p1 = -1, p2 = -1;
    for (int k = 0; k <= N / 2; ++k) {
      const double p = (double)x[2 * k] * x[2 * k] + (double)x[2 * k + 1] * x[2 * k + 1];
      if (p > p1) {
        p2 = p1, second = first;
        p1 = p, first = k;
      } else if (p > p2) {
        p2 = p, second = k;
      }
    }
    frames_ok += first == bin_a && second == bin_b;
  }
  double err = 0, norm = 0;
  for (int i = 0; i < N * FRAMES; ++i) {
    err += ((double)back[i] - audio[i]) * ((double)back[i] - audio[i]);
    norm += (double)audio[i] * audio[i];
  }
  const double rel = sqrt(err / norm);
  printf("%d x %d-point frames: tones found in bins %d and %d in %d of %d frames; "
         "round trip relative error %.2e; %.2f ms for both directions including copies\n",
         FRAMES, N, bin_a, bin_b, frames_ok, FRAMES, rel, elapsed * 1e3);

  cudafft_plan_destroy(forward);
  cudafft_plan_destroy(inverse);
  free(audio);
  free(spectra);
  free(back);
  const int ok = frames_ok == FRAMES && rel < 1e-6;
  printf("%s\n", ok ? "fft-demo: OK" : "fft-demo: FAILED");
  return ok ? 0 : 1;
}
