/* spectrum.c: the spectrum API's front end: validation, the window, the interval framing that
 * decides where FFTs run and where intervals end (spectrum's transform_ip loop), the results, and
 * the choice of backend. The backends only append samples and add up the FFTs listed for them. */
#define _DEFAULT_SOURCE /* sysconf's _SC_PHYS_PAGES */

#include "api_getter.h"
#include "backend_choice.h"
#include "device_pointer.h"
#include "sample_values.h"
#include "size_math.h"
#include "spectrum_backend.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#define NS_PER_SECOND UINT64_C(1000000000)
/* Results kept per analyser: at most 1024, and no more than 2^24 floats of magnitudes (and as many
 * of phases) unless a single result is larger, so that small configurations post many intervals
 * per push while a large one stays within 64 MiB per array. */
#define RESULTS_MAX 1024
#define RESULT_FLOATS_MAX ((size_t)1 << 24)
/* Entries of the FFT list handed to a run; a backend allowing more just gets shorter runs. */
#define FFT_LIST_MAX ((size_t)1 << 16)
/* What the CPU backend converts per run at most (see spectrum_cpu.c), for the memory estimate. */
#define RUN_FLOATS_ESTIMATE ((size_t)1 << 22)

struct CudafftSpectrum {
  CudafftSpectrumConfig config; /* config.options: those of the open interval */
  CudafftSpectrumOptions pending;
  int has_pending;
  CudafftBackend backend;
  int device; /* the CUDA device it runs on, -1 for the CPU backend */
  const CudafftSpectrumBackend *ops;
  void *impl;
  size_t nfft;    /* 2 bands - 2 */
  size_t spectra; /* analysed signals: channels or 1 */
  float norm_db;  /* 20 log10(nfft): the level's 1/nfft^2 in dB */

  CudafftSpectrumBounds bounds; /* the backend's: the most a single run may carry */
  CudafftSpectrumFft *ffts;     /* the FFT list of a run */
  size_t fft_capacity;

  /* Interval framing, as spectrum keeps it. */
  uint64_t frames_per_interval, error_per_interval, accumulated_error;
  size_t frames_todo; /* frames of the open interval */
  size_t num_frames;  /* frames pushed into it */
  size_t num_fft;     /* FFTs listed for it */

  /* Results of the last push or finish. */
  size_t max_results, result_count;
  int in_on_device;         /* the push in progress reads device memory (push_device) */
  CudafftFence after;       /* ... written by device work it must go after */
  float *magnitude, *phase; /* max_results x spectra x bands */
  CudafftSpectrumResult *results;
  CudafftCheckedMemory checked; /* device memory that passed (push_device) */
};

static CudafftStatus
check_options(const CudafftSpectrumOptions *options)
{
  if (options->interval_ns == 0)
    return cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE, "spectrum interval of 0 ns");
  if (options->threshold > 0)
    return cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE, "spectrum threshold %d dB is above 0",
                        options->threshold);
  return CUDAFFT_STATUS_OK;
}

static CudafftStatus
check_config(const void *args)
{
  const CudafftSpectrumConfig *config = args;
  if (config->bands < CUDAFFT_SPECTRUM_MIN_BANDS || config->bands > CUDAFFT_SPECTRUM_MAX_BANDS)
    return cudafft_fail(CUDAFFT_STATUS_INVALID_SIZE, "%zu bands is not in %d..%zu", config->bands,
                        CUDAFFT_SPECTRUM_MIN_BANDS, (size_t)CUDAFFT_SPECTRUM_MAX_BANDS);
  if (config->channels == 0 || config->channels > CUDAFFT_MAX_CHANNELS)
    return cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE, "%u channels is not in 1..%d",
                        config->channels, CUDAFFT_MAX_CHANNELS);
  if (config->rate == 0)
    return cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE, "sample rate of 0");
  if ((unsigned)config->format >= CUDAFFT_SAMPLE_COUNT_)
    return cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE, "unknown spectrum sample format %d",
                        (int)config->format);
  return check_options(&config->options);
}

/* Refuses, before anything is allocated, a configuration whose host memory exceeds the machine's:
 * allocations that large may succeed under overcommit and end in an OOM kill when touched. The
 * estimate counts the front end's arrays, the state the CPU backend keeps (history, a run's
 * samples, open sums, FFT buffers; the CUDA backend keeps about as much on its device instead)
 * and the caller's copies of a push's results (value_bytes per magnitude and phase value). */
static CudafftStatus
check_host_memory(size_t nfft, size_t bands, size_t spectra, size_t max_results, size_t value_bytes)
{
  const size_t physical = physical_memory();
  size_t slot_floats, result_floats, signal_floats, floats, bytes, caller = 0;
  const int ok = mul_size(spectra, bands, &slot_floats) &&
                 mul_size(max_results, slot_floats, &result_floats) &&
                 mul_size(result_floats, value_bytes, &caller) && mul_size(caller, 2, &caller) &&
                 mul_add_size(2, bands, nfft, &signal_floats) &&
                 mul_add_size(spectra, signal_floats, RUN_FLOATS_ESTIMATE, &floats) &&
                 mul_add_size(2, result_floats, floats, &floats) &&
                 mul_add_size(4, nfft, floats, &floats) && /* window, FFT input and bins */
                 mul_size(floats, sizeof(float), &bytes) &&
                 mul_add_size(max_results, sizeof(CudafftSpectrumResult), bytes, &bytes) &&
                 mul_add_size(FFT_LIST_MAX, sizeof(CudafftSpectrumFft), bytes, &bytes) &&
                 mul_add_size(1, caller, bytes, &bytes);
  if (!ok)
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY,
                        "a spectrum of %zu bands x %zu signals needs more host memory than can "
                        "be addressed",
                        bands, spectra);
  if (bytes > physical)
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY,
                        "a spectrum of %zu bands x %zu signals needs about %.0f MB of host memory "
                        "(%.0f MB of it for the caller's copies of up to %zu results); this "
                        "machine has %.0f MB",
                        bands, spectra, (double)bytes / 1e6, (double)caller / 1e6, max_results,
                        (double)physical / 1e6);
  return CUDAFFT_STATUS_OK;
}

/* Interval framing ----------------------------------------------------------------------------- */

/* floor(interval rate / 1e9) frames (at least 1) and the fraction dropped, in ns, computed without
 * the overflow of interval x rate. */
static void
set_interval(CudafftSpectrum *s, uint64_t interval_ns)
{
  const uint64_t rate = s->config.rate;
  const uint64_t whole = interval_ns / NS_PER_SECOND, part = interval_ns % NS_PER_SECOND;
  const uint64_t part_frames = part * rate / NS_PER_SECOND; /* part rate < 2^63 */
  uint64_t frames = UINT64_MAX;
  if (whole <= UINT64_MAX / rate && whole * rate <= UINT64_MAX - part_frames)
    frames = whole * rate + part_frames;
  /* An interval no stream can fill is one that never ends. */
  if (frames > SIZE_MAX)
    frames = SIZE_MAX;
  /* spectrum's first interval has 0 frames where interval < 1 / rate (it sets frames_todo before
   * raising frames_per_interval to 1) and posts an FFT of the history alone; every interval here
   * has at least one frame. */
  s->frames_per_interval = frames ? frames : 1;
  s->error_per_interval = part * rate % NS_PER_SECOND;
}

static void
restart_framing(CudafftSpectrum *s)
{
  s->accumulated_error = 0;
  s->frames_todo = (size_t)s->frames_per_interval;
  s->num_frames = 0;
  s->num_fft = 0;
}

/* Makes pending options current; only at the start of an interval. */
static void
apply_pending(CudafftSpectrum *s)
{
  if (!s->has_pending)
    return;
  const int new_interval = s->pending.interval_ns != s->config.options.interval_ns;
  s->config.options = s->pending;
  s->has_pending = 0;
  if (new_interval) {
    set_interval(s, s->config.options.interval_ns);
    s->accumulated_error = 0;
    s->frames_todo = (size_t)s->frames_per_interval;
  }
}

/* The open interval is full: the next one's length, with spectrum's carry (checked before this
 * interval's own fraction is added). */
static void
next_interval(CudafftSpectrum *s)
{
  s->frames_todo = (size_t)s->frames_per_interval;
  if (s->accumulated_error >= NS_PER_SECOND) {
    s->accumulated_error -= NS_PER_SECOND;
    if (s->frames_todo < SIZE_MAX)
      s->frames_todo++;
  }
  s->accumulated_error += s->error_per_interval;
  s->num_frames = 0;
  s->num_fft = 0;
  apply_pending(s);
}

/* Creation ------------------------------------------------------------------------------------- */

CUDAFFT_DEFINE_TRY_BACKEND(try_backend, CudafftSpectrum, CudafftSpectrumSpec,
                           cudafft_spectrum_cpu_backend, cudafft_spectrum_cuda_backend)

/* Releases an analyser, its backend object (where made) included; also what a failed create made.
 */
void
cudafft_spectrum_destroy(CudafftSpectrum *s)
{
  if (!s)
    return;
  if (s->impl)
    s->ops->destroy(s->impl);
  free(s->ffts);
  free(s->results); /* and the magnitudes and phases behind them */
  free(s);
}

/* The Hamming window of nfft points (computed in double, rounded once) into a fresh array. */
static float *
hamming_window(size_t nfft)
{
  float *window = malloc(nfft * sizeof *window);
  const double two_pi = 6.283185307179586476925286766559;
  for (size_t i = 0; window && i < nfft; i++)
    window[i] = (float)(0.53836 - 0.46164 * cos(two_pi * (double)i / (double)nfft));
  return window;
}

/* cudafft_spectrum_create() for a config that passed its checks. */
static CudafftStatus
make_analyser(CudafftSpectrum **spectrum_out, CudafftBackend backend, int device_id,
              const CudafftSpectrumConfig *config)
{
  const size_t bands = config->bands, nfft = 2 * bands - 2;
  const size_t spectra = config->multi_channel ? config->channels : 1;
  size_t result_floats;
  if (!mul_size(spectra, bands, &result_floats))
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY,
                        "a spectrum of %zu bands x %zu signals cannot be addressed", bands,
                        spectra);
  size_t max_results = min_size(RESULTS_MAX, RESULT_FLOATS_MAX / result_floats);
  max_results = max_results ? max_results : 1;
  CudafftStatus status =
      check_host_memory(nfft, bands, spectra, max_results, config->result_value_bytes);
  if (status != CUDAFFT_STATUS_OK)
    return status;

  /* The sizes below were all checked for overflow by check_host_memory. */
  CudafftSpectrum *s = calloc(1, sizeof *s);
  if (!s)
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY, "cannot allocate a spectrum analyser");
  float *window = hamming_window(nfft);
  /* One block: the results, then their magnitudes, then their phases. */
  s->results = calloc(1, max_results * (sizeof *s->results + 2 * result_floats * sizeof(float)));
  if (s->results) {
    s->magnitude = (float *)(s->results + max_results);
    s->phase = s->magnitude + max_results * result_floats;
  }
  if (!window || !s->results) {
    free(window);
    cudafft_spectrum_destroy(s);
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY,
                        "cannot allocate the window and %zu results of a spectrum of %zu bands x "
                        "%zu signals",
                        max_results, bands, spectra);
  }
  s->config = *config;
  s->nfft = nfft;
  s->spectra = spectra;
  s->max_results = max_results;
  s->norm_db = (float)(20.0 * log10((double)nfft));
  set_interval(s, config->options.interval_ns);
  restart_framing(s);

  const CudafftSpectrumSpec spec = {
      .format = config->format,
      .channels = config->channels,
      .multi_channel = config->multi_channel,
      .bands = bands,
      .nfft = nfft,
      .spectra = spectra,
      .window = window,
      .norm_db = s->norm_db,
      .device_id = device_id,
      .bounds = &s->bounds,
  };
  status =
      cudafft_create_on_backend(backend, device_id, try_backend, s, &spec, &s->backend, &s->device);
  free(window); /* the backend keeps its own copy */
  if (status != CUDAFFT_STATUS_OK) {
    cudafft_spectrum_destroy(s);
    return status;
  }
  s->fft_capacity = min_size(s->bounds.ffts, FFT_LIST_MAX);
  s->ffts = malloc(s->fft_capacity * sizeof *s->ffts);
  if (!s->ffts) {
    cudafft_spectrum_destroy(s);
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY, "cannot allocate a spectrum FFT list");
  }
  *spectrum_out = s;
  return CUDAFFT_STATUS_OK;
}

CudafftStatus
cudafft_spectrum_create(CudafftSpectrum **spectrum_out, CudafftBackend backend, int device_id,
                        const CudafftSpectrumConfig *config)
{
  const CudafftStatus status =
      cudafft_check_create((void **)spectrum_out, "cudafft_spectrum_create: spectrum", config,
                           "spectrum config", check_config, backend, device_id);
  return status != CUDAFFT_STATUS_OK ? status
                                     : make_analyser(spectrum_out, backend, device_id, config);
}

CUDAFFT_DEFINE_GETTER(CudafftBackend, cudafft_spectrum_get_backend, CudafftSpectrum,
                      object->backend, CUDAFFT_BACKEND_AUTO)
CUDAFFT_DEFINE_GETTER(int, cudafft_spectrum_get_device, CudafftSpectrum, object->device, -1)

CUDAFFT_DEFINE_GETTER(size_t, cudafft_spectrum_spectra, CudafftSpectrum, object->spectra, 0)

CUDAFFT_DEFINE_GETTER(size_t, cudafft_spectrum_frame_bytes, CudafftSpectrum,
                      object->config.channels *cudafft_sample_size(object->config.format), 0)

CUDAFFT_DEFINE_GETTER(size_t, cudafft_spectrum_max_results, CudafftSpectrum, object->max_results, 0)

CUDAFFT_DEFINE_GETTER(size_t, cudafft_spectrum_frames_left, CudafftSpectrum,
                      object->frames_todo - object->num_frames, 0)

CUDAFFT_DEFINE_GETTER(size_t, cudafft_spectrum_frames_pending, CudafftSpectrum, object->num_frames,
                      0)

CudafftStatus
cudafft_spectrum_set_options(CudafftSpectrum *spectrum, const CudafftSpectrumOptions *options)
{
  if (!spectrum || !options)
    return cudafft_fail(CUDAFFT_STATUS_NULL_POINTER, "cudafft_spectrum_set_options: %s is NULL",
                        !spectrum ? "spectrum" : "options");
  const CudafftStatus status = check_options(options);
  if (status != CUDAFFT_STATUS_OK)
    return status;
  spectrum->pending = *options;
  spectrum->has_pending = 1;
  if (spectrum->num_frames == 0)
    apply_pending(spectrum);
  return CUDAFFT_STATUS_OK;
}

void
cudafft_spectrum_reset(CudafftSpectrum *spectrum)
{
  if (!spectrum)
    return;
  spectrum->ops->reset(spectrum->impl); /* the API's reset reports nothing */
  cudafft_checked_memory_forget(&spectrum->checked);
  apply_pending(spectrum);
  restart_framing(spectrum);
  spectrum->result_count = 0;
}

/* Analysis ------------------------------------------------------------------------------------- */

/* Runs the listed FFTs over `frames` new frames and turns the `closed` slots' sums, written from
 * result result_count on, into results; their frames, ffts and threshold are already set. */
static CudafftStatus
run_and_collect(CudafftSpectrum *s, const void *in, size_t frames, size_t fft_count, size_t closed,
                const CudafftSpectrumOptions *options)
{
  const size_t slot_floats = s->spectra * s->config.bands;
  float *magnitude = s->magnitude + s->result_count * slot_floats;
  float *phase = options->phase ? s->phase + s->result_count * slot_floats : NULL;
  const CudafftSpectrumJob job = {
      .in = in,
      .in_on_device = in && s->in_on_device,
      .frames = frames,
      .ffts = s->ffts,
      .fft_count = fft_count,
      .closed = closed,
      .threshold = options->threshold,
      .phase = options->phase != 0,
      .magnitude_sums = magnitude,
      .phase_sums = phase,
      .after = in && s->in_on_device ? s->after : (CudafftFence){0, 0},
  };
  const CudafftStatus status = s->ops->run(s->impl, &job);
  if (status != CUDAFFT_STATUS_OK)
    return status;
  for (size_t i = 0; i < closed; i++) {
    CudafftSpectrumResult *r = &s->results[s->result_count + i];
    /* spectrum's mean: the float sums divided by the count in float */
    const float count = (float)r->ffts;
    float *m = magnitude + i * slot_floats;
    for (size_t k = 0; k < slot_floats; k++)
      m[k] /= count;
    r->magnitude = m;
    r->phase = NULL;
    if (phase) {
      float *p = phase + i * slot_floats;
      for (size_t k = 0; k < slot_floats; k++)
        p[k] /= count;
      r->phase = p;
    }
  }
  s->result_count += closed;
  return CUDAFFT_STATUS_OK;
}

/* Describes result `slot` of the run about to be made: the interval that has just filled. */
static void
close_slot(CudafftSpectrum *s, size_t slot, int threshold)
{
  CudafftSpectrumResult *r = &s->results[s->result_count + slot];
  r->frames = s->num_frames;
  r->ffts = s->num_fft;
  r->threshold = threshold;
}

/* Takes up to `frames` frames as one backend run, walking them as spectrum's loop does: blocks end
 * at the interval's end and at every nfft frames from its start, an FFT runs after a block that
 * ends on a multiple of nfft or fills an interval without one. The run ends at the backend's
 * limits, after the push's last result, or where the next interval's threshold or phase differ. */
static CudafftStatus
push_run(CudafftSpectrum *s, const uint8_t *in, size_t frames, size_t result_limit, size_t *taken)
{
  const CudafftSpectrumOptions options = s->config.options;
  const size_t max_frames = min_size(frames, s->bounds.frames);
  const size_t max_closed = min_size(s->bounds.closed, result_limit - s->result_count);
  const size_t nfft = s->nfft;
  size_t length = 0, count = 0, closed = 0;
  while (length < max_frames && count < s->fft_capacity) {
    size_t block = min_size(s->frames_todo - s->num_frames, nfft - s->num_frames % nfft);
    block = min_size(block, max_frames - length);
    length += block;
    s->num_frames += block;
    const int full = s->num_frames == s->frames_todo;
    if (s->num_frames % nfft == 0 || (full && s->num_fft == 0)) {
      s->ffts[count].end = length;
      s->ffts[count].slot = closed;
      count++;
      s->num_fft++;
    }
    if (full) {
      close_slot(s, closed, options.threshold);
      closed++;
      next_interval(s);
      const CudafftSpectrumOptions *next = &s->config.options;
      if (closed == max_closed || next->threshold != options.threshold ||
          !next->phase != !options.phase)
        break;
    }
  }
  *taken = length;
  return run_and_collect(s, in, length, count, closed, &options);
}

/* cudafft_spectrum_push and _push_device (`name`): in host or (on_device) device memory. */
static CudafftStatus
spectrum_push(CudafftSpectrum *spectrum, const void *in, size_t frames, size_t max_results,
              size_t *consumed, size_t *results, int on_device, const CudafftFence *after,
              const char *name)
{
  if (consumed)
    *consumed = 0;
  if (results)
    *results = 0;
  if (!spectrum)
    return cudafft_fail(CUDAFFT_STATUS_NULL_POINTER, "%s: spectrum is NULL", name);
  spectrum->result_count = 0;
  const size_t frame_bytes = cudafft_spectrum_frame_bytes(spectrum);
  CudafftStatus status = CUDAFFT_STATUS_OK;
  if (!consumed || !results || (frames > 0 && !in))
    status = cudafft_fail(CUDAFFT_STATUS_NULL_POINTER, "%s: %s is NULL", name,
                          !consumed  ? "consumed"
                          : !results ? "results"
                                     : "in");
  else if (on_device && spectrum->backend != CUDAFFT_BACKEND_CUDA)
    status =
        cudafft_fail(CUDAFFT_STATUS_UNSUPPORTED, "%s: the CPU backend has no device memory", name);
  else if (max_results == 0)
    status = cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE, "%s: max_results is 0", name);
  else if (frames > SIZE_MAX / frame_bytes)
    status = cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE, "%s: %zu frames is too many", name, frames);
  else if (on_device && frames > 0)
    status = cudafft_device_pointer_check(&spectrum->checked, spectrum->device, in,
                                          frames * frame_bytes, name, "input");
  if (status != CUDAFFT_STATUS_OK) {
    cudafft_spectrum_reset(spectrum); /* as documented: every failure resets */
    return status;
  }

  const uint8_t *bytes = in;
  const size_t result_limit = min_size(max_results, spectrum->max_results);
  size_t done = 0;
  spectrum->in_on_device = on_device;
  spectrum->after = after ? *after : (CudafftFence){0, 0};
  while (done < frames && spectrum->result_count < result_limit && status == CUDAFFT_STATUS_OK) {
    size_t taken = 0;
    status = push_run(spectrum, bytes + done * frame_bytes, frames - done, result_limit, &taken);
    done += taken;
  }
  spectrum->in_on_device = 0;
  spectrum->after = (CudafftFence){0, 0};
  if (status != CUDAFFT_STATUS_OK) {
    /* the framing has moved past frames the backend may not have taken */
    cudafft_spectrum_reset(spectrum);
    return status;
  }
  *consumed = done;
  *results = spectrum->result_count;
  return CUDAFFT_STATUS_OK;
}

CudafftStatus
cudafft_spectrum_push(CudafftSpectrum *spectrum, const void *in, size_t frames, size_t max_results,
                      size_t *consumed, size_t *results)
{
  return spectrum_push(spectrum, in, frames, max_results, consumed, results, 0, NULL,
                       "cudafft_spectrum_push");
}

CudafftStatus
cudafft_spectrum_push_device(CudafftSpectrum *spectrum, const void *in, size_t frames,
                             size_t max_results, size_t *consumed, size_t *results,
                             const CudafftFence *after)
{
  return spectrum_push(spectrum, in, frames, max_results, consumed, results, 1, after,
                       "cudafft_spectrum_push_device");
}

CudafftStatus
cudafft_spectrum_finish(CudafftSpectrum *spectrum, size_t *results)
{
  if (results)
    *results = 0;
  if (!spectrum || !results)
    return cudafft_fail(CUDAFFT_STATUS_NULL_POINTER, "cudafft_spectrum_finish: %s is NULL",
                        !spectrum ? "spectrum" : "results");
  spectrum->result_count = 0;
  if (spectrum->num_frames > 0) {
    size_t count = 0;
    if (spectrum->num_fft == 0) {
      /* the FFT a full interval would have had at its end: over the history, which ends here */
      spectrum->ffts[0].end = 0;
      spectrum->ffts[0].slot = 0;
      count = 1;
      spectrum->num_fft = 1;
    }
    const CudafftSpectrumOptions options = spectrum->config.options;
    close_slot(spectrum, 0, options.threshold);
    const CudafftStatus status = run_and_collect(spectrum, NULL, 0, count, 1, &options);
    if (status != CUDAFFT_STATUS_OK) {
      cudafft_spectrum_reset(spectrum);
      return status;
    }
  }
  apply_pending(spectrum);
  restart_framing(spectrum);
  *results = spectrum->result_count;
  return CUDAFFT_STATUS_OK;
}

CudafftStatus
cudafft_spectrum_result(const CudafftSpectrum *spectrum, size_t i, CudafftSpectrumResult *result)
{
  if (!spectrum || !result)
    return cudafft_fail(CUDAFFT_STATUS_NULL_POINTER, "cudafft_spectrum_result: %s is NULL",
                        !spectrum ? "spectrum" : "result");
  if (i >= spectrum->result_count)
    return cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE, "cudafft_spectrum_result: result %zu of %zu",
                        i, spectrum->result_count);
  *result = spectrum->results[i];
  return CUDAFFT_STATUS_OK;
}
