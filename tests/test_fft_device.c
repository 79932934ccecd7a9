/* test_fft_device.c: cudafft_execute_device() over device memory, against FFTW double, in the
 * ways a plan's cached launch graphs (lib/cuda/kernel_launch.h) could go wrong:
 *  - more buffer pairs than a plan keeps graphs for, each called twice in a row (a cached graph,
 *    then one rewritten for other buffers, batch or scale);
 *  - a burst of calls queued before one synchronisation, so that graphs are rewritten while their
 *    earlier launches still wait: each of those must keep its own buffers;
 *  - the plan's stream captured into the caller's graph, which must record the work itself.
 * Every call gets fresh random input and a NaN-poisoned output; every output value is checked.
 * Argument: cuda (only: exits 77 where there is no device, like every -cuda test). */
#include "cuda_test_util.h"
#include "fft_reference.h"

#include <stdio.h>
#include <stdlib.h>

#define N 4096
/* More than the plan's graph cache holds (4 today), so that its entries are rewritten. */
#define PAIRS 6
#define MAX_BATCH 64

/* One buffer pair's call: its input on the host, the expected output, and the device buffers. */
typedef struct {
  float *h_in, *h_out;
  double *ref;
  float *d_in, *d_out;
  size_t batch;
  float scale;
} Call;

/* Fresh input for call (uploaded), a poisoned output, and the reference. */
static int
prepare(Call *call, TestRng *rng, const FftTransform *t, size_t batch, float scale)
{
  const size_t in_count = batch * fft_layout_floats(t->kind, N, 1);
  const size_t out_count = batch * fft_layout_floats(t->kind, N, 0);
  call->batch = batch;
  call->scale = scale;
  test_rng_fill(rng, call->h_in, in_count);
  test_poison(call->h_out, out_count + FFT_GUARD_FLOATS);
  if (fft_reference(t->kind, t->direction, N, call->h_in, batch, call->ref) != 0)
    test_abort("FFTW double could not plan n=%d", N);
  /* the plan's stream does not wait for the legacy stream these run on: finish them first */
  return cuda_ok(
             cudaMemcpy(call->d_in, call->h_in, in_count * sizeof(float), cudaMemcpyHostToDevice),
             "uploading an input") &&
         cuda_ok(cudaMemcpy(call->d_out, call->h_out,
                            (out_count + FFT_GUARD_FLOATS) * sizeof(float), cudaMemcpyHostToDevice),
                 "poisoning an output") &&
         cuda_ok(cudaDeviceSynchronize(), "synchronising the uploads");
}

/* Downloads call's output (with the guard after it) and checks every value. */
static void
verify(const Call *call, const FftTransform *t, const char *label)
{
  const size_t out_count = call->batch * fft_layout_floats(t->kind, N, 0);
  if (!cuda_ok(cudaMemcpy(call->h_out, call->d_out, (out_count + FFT_GUARD_FLOATS) * sizeof(float),
                          cudaMemcpyDeviceToHost),
               "downloading an output"))
    return;
  size_t first = 0;
  const size_t bad = test_count_nonfinite(call->h_out, out_count, &first);
  const size_t guard_written = test_count_unpoisoned(call->h_out + out_count, FFT_GUARD_FLOATS);
  const double err = fft_rel_l2_error(call->h_out, call->ref, out_count, call->scale);
  test_check(bad == 0 && guard_written == 0 && err <= fft_tolerance(N),
             "%s batch=%zu scale=%g: rel L2 %.3g (tol %.3g), %zu non-finite, %zu guard values "
             "written",
             label, call->batch, call->scale, err, fft_tolerance(N), bad, guard_written);
}

static int
execute(CudafftPlan *plan, const FftTransform *t, const Call *call)
{
  const CudafftStatus status =
      cudafft_execute_device(plan, t->direction, call->d_in, call->d_out, call->batch, call->scale);
  return status == CUDAFFT_STATUS_OK ||
         test_check(0, "execute_device -> %s (%s)", cudafft_status_name(status),
                    cudafft_last_error_message());
}

/* Calls c and the batch and scale it runs with: they vary so that no two neighbours agree. */
static size_t
batch_of(int c)
{
  static const size_t batches[] = {1, 7, MAX_BATCH};
  return batches[c % 3];
}

static float
scale_of(int c)
{
  return c % 2 ? 1.0f / N : 1.0f;
}

static void
check_transform(CudafftPlan *plan, const FftTransform *t, Call *calls)
{
  const char *name = test_transform_name(t->kind, t->direction);
  char label[128];
  TestRng rng = test_rng("%s", name);

  /* each pair twice in a row, synchronised: a rewritten graph, then the same one again */
  for (int round = 0; round < 2; ++round)
    for (int c = 0; c < PAIRS; ++c)
      for (int again = 0; again < 2; ++again) {
        Call *call = &calls[c];
        if (!prepare(call, &rng, t, batch_of(c + round), scale_of(c + round)) ||
            !execute(plan, t, call) || cudafft_plan_synchronize(plan) != CUDAFFT_STATUS_OK)
          return;
        snprintf(label, sizeof label, "%s pair %d round %d call %d", name, c, round, again);
        verify(call, t, label);
      }

  /* a burst: every pair queued, then one synchronisation */
  for (int c = 0; c < PAIRS; ++c)
    if (!prepare(&calls[c], &rng, t, batch_of(c + 1), scale_of(c)))
      return;
  for (int c = 0; c < PAIRS; ++c)
    if (!execute(plan, t, &calls[c]))
      return;
  if (cudafft_plan_synchronize(plan) != CUDAFFT_STATUS_OK)
    return;
  for (int c = 0; c < PAIRS; ++c) {
    snprintf(label, sizeof label, "%s pair %d of a queued burst", name, c);
    verify(&calls[c], t, label);
  }

  /* the plan's stream captured into a graph of ours, launched twice on fresh input */
  cudaStream_t stream = cudafft_plan_get_cuda_stream(plan);
  cudaGraph_t graph = NULL;
  cudaGraphExec_t exec = NULL;
  Call *call = &calls[0];
  if (!prepare(call, &rng, t, MAX_BATCH, 1.0f) ||
      !cuda_ok(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), "begin capture"))
    return;
  const int queued = execute(plan, t, call);
  const int captured = cuda_ok(cudaStreamEndCapture(stream, &graph), "end capture");
  if (queued && captured && cuda_ok(cudaGraphInstantiate(&exec, graph, 0), "instantiate"))
    for (int launch = 0; launch < 2; ++launch) {
      if (launch > 0 && !prepare(call, &rng, t, MAX_BATCH, 1.0f))
        break;
      if (!cuda_ok(cudaGraphLaunch(exec, stream), "launching the captured graph") ||
          !cuda_ok(cudaStreamSynchronize(stream), "synchronising"))
        break;
      snprintf(label, sizeof label, "%s captured into a graph, launch %d", name, launch);
      verify(call, t, label);
    }
  if (exec)
    cudaGraphExecDestroy(exec);
  if (graph)
    cudaGraphDestroy(graph);
}

int
main(int argc, char **argv)
{
  if (test_begin(argc, argv) != CUDAFFT_BACKEND_CUDA)
    test_abort("%s checks device memory: its argument is cuda", test_program());
  Call calls[PAIRS];
  const size_t most_floats = MAX_BATCH * (2 * N + 2);
  for (int c = 0; c < PAIRS; ++c) {
    calls[c].h_in = test_malloc(most_floats * sizeof(float));
    calls[c].h_out = test_malloc((most_floats + FFT_GUARD_FLOATS) * sizeof(float));
    calls[c].ref = test_malloc(most_floats * sizeof(double));
    if (!cuda_ok(cudaMalloc((void **)&calls[c].d_in, most_floats * sizeof(float)), "cudaMalloc") ||
        !cuda_ok(
            cudaMalloc((void **)&calls[c].d_out, (most_floats + FFT_GUARD_FLOATS) * sizeof(float)),
            "cudaMalloc"))
      return test_finish();
  }
  for (size_t i = 0; i < FFT_TRANSFORM_COUNT; ++i) {
    /* on device 0, where the test's own device memory is: with -1, a host of several GPUs may put
     * the plan on another (cudafft/fft.h: make a plan for device memory on that memory's device) */
    CudafftPlan *plan = fft_create_plan_on(CUDAFFT_BACKEND_CUDA, 0, fft_transforms[i].kind, N);
    if (!plan)
      continue;
    check_transform(plan, &fft_transforms[i], calls);
    cudafft_plan_destroy(plan);
  }
  for (int c = 0; c < PAIRS; ++c) {
    free(calls[c].h_in);
    free(calls[c].h_out);
    free(calls[c].ref);
    cudaFree(calls[c].d_in);
    cudaFree(calls[c].d_out);
  }
  return test_finish();
}
