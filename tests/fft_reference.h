/* fft_reference.h: FFTW double precision as the reference for our layouts, the error measure and
 * tolerance the tests agree on, and the checked run of one execute call. */
#ifndef CUDAFFT_FFT_REFERENCE_H
#define CUDAFFT_FFT_REFERENCE_H

#include <cudafft/fft.h>

#include <stddef.h>

/* Floats past the end of every output buffer that a checked run poisons and then expects
 * untouched: callers allocate them. */
#define FFT_GUARD_FLOATS 64

/* A transform the plans run: a kind and the direction it runs in. */
typedef struct {
  CudafftKind kind;
  CudafftDirection direction;
} FftTransform;

/* Every one of them: C2C forward and inverse, R2C (forward), C2R (inverse). */
#define FFT_TRANSFORM_COUNT 4
extern const FftTransform fft_transforms[FFT_TRANSFORM_COUNT];

/* Floats per transform on the input (input = 1) or output (input = 0) side, from the layouts in
 * cudafft.h; worked out here independently of the library, so that a test can compare. */
size_t fft_layout_floats(CudafftKind kind, size_t n, int input);

/* The relative L2 error a float transform of size n may have against the double reference. */
double fft_tolerance(size_t n);

/* Computes batch transforms of in (our layout for kind) in double precision, unscaled, into out
 * (batch * fft_layout_floats(kind, n, 0) doubles). For C2R the imaginary parts of bin 0 and (even
 * n) bin n/2 are taken as zero, as cudafft/fft.h documents. Returns 0, or -1 if FFTW had no
 * memory. */
int fft_reference(CudafftKind kind, CudafftDirection direction, size_t n, const float *in,
                  size_t batch, double *out);

/* ||out - ref_scale * ref|| / ||ref_scale * ref|| over count values, in double; NaN if out holds
 * a NaN. */
double fft_rel_l2_error(const float *out, const double *ref, size_t count, double ref_scale);

/* Creates a plan on backend (device -1) and checks, in reported lines, that creation succeeded and
 * that the plan runs on that backend with the asked kind, size and layout. NULL if any failed: on
 * a machine that has the backend, a plan that cannot be made is a failure, never a skip. */
CudafftPlan *fft_create_plan(CudafftBackend backend, CudafftKind kind, size_t n);
/* The same on device_id (-1: the library's choice, which on a host of several GPUs may be any). */
CudafftPlan *fft_create_plan_on(CudafftBackend backend, int device_id, CudafftKind kind, size_t n);
/* The same through the library's internal cudafft_plan_create_spec(); force_cufft: the CUDA
 * backend runs the plan on cuFFT, the path it takes by itself where its kernels do not fit the
 * GPU's shared memory (lib/fft/fft_backend.h). */
CudafftPlan *fft_create_plan_spec(CudafftBackend backend, CudafftKind kind, size_t n,
                                  int force_cufft);

/* Runs cudafft_execute(plan, direction, in, out, batch, scale) with out and the
 * FFT_GUARD_FLOATS after it poisoned (only the guard when in == out) and checks what every run
 * must satisfy: the call returns OK, every output value is finite, nothing past the output is
 * written, the input is unchanged (unless in place). Returns 1 if all held; otherwise 0 with the
 * reason in why. */
int fft_run_poisoned(CudafftPlan *plan, CudafftDirection direction, const float *in, float *out,
                     size_t batch, float scale, char *why, size_t why_size);

/* fft_run_poisoned, then the relative L2 error against scale * ref within tol: one reported
 * check, labelled label. Returns whether it passed. */
int fft_check_execute(CudafftPlan *plan, CudafftDirection direction, const float *in, float *out,
                      size_t batch, float scale, const double *ref, double tol, const char *label);

#endif
