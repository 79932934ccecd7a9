/* check_install_fft: an application of the installed library, built by scripts/check-install.sh
 * against the installed headers and shared library through the installed cudafft.pc alone. It
 * includes every public header (cudafft/cudafft.h), makes a CPU-backend C2C plan and checks one
 * forward transform of random input, every output bin, against a direct DFT in double precision.
 * Exit 0 when it matches, 1 otherwise. */
#include <cudafft/cudafft.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define N 256
#define PI 3.14159265358979323846

int
main(void)
{
  static float in[2 * N], out[2 * N];
  srand((unsigned)time(NULL));
  for (int i = 0; i < 2 * N; ++i)
    in[i] = 2.0f * rand() / (float)RAND_MAX - 1.0f;
  memset(out, 0xff, sizeof out); /* NaN: a bin left unwritten fails the comparison */

  CudafftPlan *plan = NULL;
  CudafftStatus status = cudafft_plan_create(&plan, CUDAFFT_BACKEND_CPU, -1, CUDAFFT_C2C, N);
  if (status == CUDAFFT_STATUS_OK)
    status = cudafft_execute(plan, CUDAFFT_FORWARD, in, out, 1, 1.0f);
  if (status != CUDAFFT_STATUS_OK) {
    fprintf(stderr, "check_install_fft: %s: %s\n", cudafft_status_name(status),
            cudafft_last_error_message());
    cudafft_plan_destroy(plan);
    return 1;
  }
  const int on_cpu = cudafft_plan_get_backend(plan) == CUDAFFT_BACKEND_CPU;
  cudafft_plan_destroy(plan);

  double err = 0, norm = 0;
  for (int k = 0; k < N; ++k) {
    double re = 0, im = 0;
    for (int j = 0; j < N; ++j) {
      const double a = -2 * PI * (double)((long)j * k % N) / N;
      re += in[2 * j] * cos(a) - in[2 * j + 1] * sin(a);
      im += in[2 * j] * sin(a) + in[2 * j + 1] * cos(a);
    }
    const double dr = out[2 * k] - re, di = out[2 * k + 1] - im;
    err += dr * dr + di * di;
    norm += re * re + im * im;
  }
  const double relative = sqrt(err / norm);
  /* FFTW single precision: about 1e-7; a wrong or missing bin: order 1 or NaN */
  const int ok = on_cpu && relative < 1e-5;
  printf("check_install_fft: C2C %d points on the CPU backend, relative L2 error %.2e: %s\n", N,
         relative, ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}
