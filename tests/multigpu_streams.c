/* multigpu_streams.c: see multigpu_streams.h. */
#include "multigpu_streams.h"

#include "convolve_reference.h"
#include "worker_util.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOLERANCE 1e-5 /* F32, as test_convolve_streams.c: float rounding over the FFT's stages */
#define WINDOW 1024

int
stream_make(Stream *s, int device_id, unsigned channels, size_t taps, size_t frames,
            const char *label)
{
  memset(s, 0, sizeof *s);
  s->channels = channels;
  s->taps = taps;
  s->frames = frames;
  s->device = -2;
  snprintf(s->label, sizeof s->label, "%s", label);
  s->rng = test_rng("%s", label);
  s->h = test_malloc(taps * sizeof *s->h);
  const double scale = 1.0 / sqrt((double)taps);
  for (size_t i = 0; i < taps; i++)
    s->h[i] = test_rng_uniform(&s->rng) * scale;
  const CudafftConvolveConfig config = {channels, CUDAFFT_SAMPLE_F32, {s->h, taps, 1}, 1.0};
  const CudafftStatus status =
      cudafft_convolve_create(&s->cv, CUDAFFT_BACKEND_CUDA, device_id, &config);
  if (status != CUDAFFT_STATUS_OK) {
    worker_fail("%s: create on device %d: %s: %s", label, device_id, cudafft_status_name(status),
                cudafft_last_error_message());
    free(s->h);
    s->h = NULL;
    return 0;
  }
  s->device = cudafft_convolve_get_device(s->cv);
  return 1;
}

void
stream_start(Stream *s)
{
  const size_t values = s->frames * s->channels;
  s->x = test_malloc(values * sizeof *s->x);
  s->in = test_malloc(values * sizeof *s->in);
  s->out = test_malloc((s->frames + 4096) * s->channels * sizeof *s->out);
  for (size_t i = 0; i < values; i++) {
    s->in[i] = (float)test_rng_uniform(&s->rng);
    s->x[i] = s->in[i];
  }
  for (size_t i = 0; i < (s->frames + 4096) * s->channels; i++)
    s->out[i] = NAN;
  s->pushed = s->produced = 0;
}

CudafftStatus
stream_call(Stream *s, const char **what, int *ended)
{
  size_t produced = 0;
  if (s->pushed < s->frames) {
    size_t n = test_rng_range(&s->rng, 1, 4096);
    n = n < s->frames - s->pushed ? n : s->frames - s->pushed;
    *what = "push";
    const CudafftStatus status = cudafft_convolve_push(
        s->cv, s->in + s->pushed * s->channels, n, s->out + s->produced * s->channels, &produced);
    *ended = status != CUDAFFT_STATUS_OK;
    if (status == CUDAFFT_STATUS_OK) {
      s->pushed += n;
      s->produced += produced;
    }
    return status;
  }
  *what = "drain";
  *ended = 1;
  const CudafftStatus status =
      cudafft_convolve_drain(s->cv, 0, s->out + s->produced * s->channels, &produced);
  if (status == CUDAFFT_STATUS_OK)
    s->produced += produced;
  return status;
}

int
stream_step(Stream *s)
{
  const char *what = "";
  int ended = 0;
  const CudafftStatus status = stream_call(s, &what, &ended);
  if (status != CUDAFFT_STATUS_OK) {
    worker_fail("%s (device %d): %s: %s: %s", s->label, s->device, what,
                cudafft_status_name(status), cudafft_last_error_message());
    s->failures++;
  }
  return ended;
}

static pthread_mutex_t reference_lock = PTHREAD_MUTEX_INITIALIZER; /* FFTW's planner */

int
stream_compare(Stream *s, size_t frames)
{
  if (frames == 0)
    return 1;
  int ok = 1;
  pthread_mutex_lock(&reference_lock);
  double *ref = convolve_reference(s->h, s->taps, 1, s->x, s->channels, s->frames, s->frames);
  pthread_mutex_unlock(&reference_lock);
  for (unsigned c = 0; c < s->channels && ok; c++) {
    double mean_power = 0.0;
    for (size_t n = 0; n < frames; n++)
      mean_power += ref[n * s->channels + c] * ref[n * s->channels + c];
    mean_power /= (double)frames;
    for (size_t w = 0; w < frames && ok; w += WINDOW) {
      const size_t end = w + WINDOW < frames ? w + WINDOW : frames;
      double err = 0.0, norm = 0.0;
      for (size_t n = w; n < end; n++) {
        const double y = s->out[n * s->channels + c], r = ref[n * s->channels + c];
        if (!isfinite(y)) {
          worker_fail("%s (device %d): channel %u frame %zu is %g", s->label, s->device, c, n, y);
          ok = 0;
          break;
        }
        err += (y - r) * (y - r);
        norm += r * r;
      }
      const double level = fmax(norm, mean_power * (double)(end - w));
      const double rel = level > 0.0 ? sqrt(err / level) : err == 0.0 ? 0.0 : INFINITY;
      if (ok && !(rel <= TOLERANCE)) {
        worker_fail("%s (device %d): channel %u frames %zu..%zu: relative L2 error %.3g "
                    "(tolerance %.0e)",
                    s->label, s->device, c, w, end - 1, rel, TOLERANCE);
        ok = 0;
      }
    }
  }
  free(ref);
  return ok;
}

void
stream_discard(Stream *s)
{
  free(s->x);
  free(s->in);
  free(s->out);
  s->x = NULL;
  s->in = s->out = NULL;
}

int
stream_check(Stream *s)
{
  int ok = 1;
  if (s->produced != s->frames) {
    worker_fail("%s (device %d): %zu frames out of %zu in", s->label, s->device, s->produced,
                s->frames);
    ok = 0;
  }
  if (ok)
    ok = stream_compare(s, s->frames);
  stream_discard(s);
  s->failures += !ok;
  return ok;
}

void
stream_destroy(Stream *s)
{
  cudafft_convolve_destroy(s->cv);
  free(s->h);
  free(s->x);
  free(s->in);
  free(s->out);
  memset(s, 0, sizeof *s);
}

void
stream_all(Stream *objects, size_t count)
{
  int *done = calloc(count, sizeof *done);
  if (!done)
    test_abort("no memory for %zu flags", count);
  size_t left = 0;
  for (size_t i = 0; i < count; i++) {
    done[i] = !objects[i].cv; /* not made: noted when it failed */
    left += !done[i];
    if (!done[i])
      stream_start(&objects[i]);
  }
  while (left > 0)
    for (size_t i = 0; i < count; i++)
      if (!done[i] && stream_step(&objects[i])) {
        done[i] = 1;
        left--;
        stream_check(&objects[i]);
      }
  free(done);
}

int
device_load_is(int device, unsigned objects, size_t *bytes)
{
  unsigned have = 0;
  size_t state = 0;
  if (cudafft_cuda_device_load(device, &have, &state) != CUDAFFT_STATUS_OK)
    return 0;
  if (bytes)
    *bytes = state;
  return have == objects;
}
