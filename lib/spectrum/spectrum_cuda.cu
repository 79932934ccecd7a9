/* spectrum_cuda.cu: the spectrum's CUDA backend on the shared executor of its device (executor.h):
 * the object's device state (from the executor's memory, sized and checked at creation), the runs
 * as jobs of the spectrum's kind (spectrum_kernels.h), and the bookkeeping of where the history and
 * the open interval's sums are. The object owns no streams, events or staging: every call is jobs,
 * submitted a few ahead of their waits, and returns when they are done.
 *
 * The signal history stays on the device (every input sample is uploaded once), the nfft most
 * recent values of each analysed signal in one of two signal buffers: a run appends behind them and
 * its FFTs read from where they start; afterwards the history is the last nfft values, which stay
 * where they are until a run's frames would run past the buffer's end, and then move to the start
 * of the other buffer in the same launch that appends. After a reset the history is known to be
 * zeros and the next run writes them in that launch too.
 *
 * A run that closes no interval and runs no FFT only appends: its frames wait on the host and go
 * with the next run's, so that a stream of small buffers makes a job per result, not per buffer.
 *
 * Sizes other than the powers of two 256..16384 run on cuFFT: the object's own plans, set to the
 * executor's stream, queued by the kind for each such job between the batch's other launches. */
#include "backend_object.cuh"
#include "batch_units.cuh"
#include "cuda_check.cuh"
#include "cufft_check.cuh"
#include "device_choice.cuh"
#include "executor.h"
#include "sample_values.h"
#include "size_math.h"
#include "spectrum_backend.h"
#include "spectrum_kernels.h"
#include "twiddles.h"

#include <cufft.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

/* A run's bounds. Signal: frames x spectra values per run (1 MB), so that an object's device
 * state stays near a few MB for live streams while long pushes still make large jobs; its input
 * and auxiliary data fit one executor job. */
constexpr size_t kRunFloats = (size_t)1 << 18;
constexpr size_t kRunFramesMax = (size_t)1 << 20;
/* FFTs per run, and (FFT, spectrum) pairs of the fused kernel per run: the FFT list and the unit
 * map travel with the job (16 and 8 bytes each). */
constexpr size_t kRunFfts = (size_t)1 << 16;
constexpr size_t kRunTransforms = (size_t)1 << 16;
/* Bytes of interval sums on the device (levels and phases of run_closed + 1 slots). */
constexpr size_t kSumBytes = (size_t)16 << 20;
/* cuFFT: real input floats per batch. 4M floats keep an H100 busy, even for small nfft. */
constexpr size_t kCufftFloats = (size_t)1 << 22;
/* Plans of batch B, B/8, B/64, ... (down to 1 at most): a run's last, partial batch runs on the
 * smallest that holds it, so that a short run does not pay for a whole batch. B <= 2^21. */
constexpr int kMaxPlans = 12;
constexpr size_t kPlanStep = 8;
/* Jobs an object submits ahead of its waits. */
constexpr int kAhead = 4;
/* Device state sub-buffers start at multiples of this. */
constexpr size_t kStateAlign = 256;

size_t
align_up(size_t bytes)
{
  return sat_mul((sat_add(bytes, kStateAlign - 1)) / kStateAlign, kStateAlign);
}

/* A run job and where its sums go when they come through the object's staging (magnitudes and
 * phases in one output): `staged` floats of each, to magnitude_dest and phase_dest. */
struct RunWork {
  CudafftSpectrumRunJob r; /* first: the queue finds the CudafftJob at the start */
  const float *staging;
  float *magnitude_dest, *phase_dest;
  size_t staged;
};

struct Unstage {
  void
  operator()(RunWork *w) const
  {
    if (!w->staging)
      return;
    memcpy(w->magnitude_dest, w->staging, w->staged * sizeof(float));
    memcpy(w->phase_dest, w->staging + w->staged, w->staged * sizeof(float));
  }
};

struct CudaSpectrum {
  uint64_t after = 0; /* the run's device input is written by this batch (0: complete) */
  /* what it is made for (the spec's values) and the bounds of a run */
  CudafftSampleFormat format = CUDAFFT_SAMPLE_F32;
  unsigned channels = 0;
  int multi_channel = 0;
  size_t bands = 0, nfft = 0, spectra = 0;
  float norm_db = 0.0f;
  CudafftSpectrumBounds bounds = {};

  int device = 0;
  CudafftExecutor *ex = nullptr;
  void *state = nullptr; /* the device state, one allocation */
  CudafftJobOwner owner = {};
  size_t budget = 0;                          /* cudafft_executor_max_job_bytes() */
  const CudafftBlockKernels *fused = nullptr; /* the fused kernels, or NULL: the cuFFT path */
  size_t frame_bytes = 0;
  size_t slot_floats = 0; /* spectra x bands */
  size_t pitch = 0;       /* floats per signal row: nfft history + bounds.frames */
  float *signal[2] = {};  /* spectra rows each */
  int current = 0;
  size_t offset = 0;        /* where the history starts in signal[current] */
  bool history_zero = true; /* the history is zeros (new, reset, failed): not yet written */
  float *window = nullptr;
  float2 *twiddles = nullptr; /* fused path */
  /* (bounds.closed + 1) slots of sums each; slot 0 holds the open interval's between runs */
  float *magnitude = nullptr, *phase = nullptr;
  /* Whether slot 0 holds sums of the open interval (else its contents are stale and the run's
   * first FFTs store into it or zero it). */
  bool open_sums = false;
  bool split_outputs = false; /* a slot's sums exceed a job: they go out in several */

  /* host */
  unsigned char *pending = nullptr; /* frames waiting for a run with FFTs: bounds.frames of them */
  size_t pending_frames = 0;
  CudafftSpectrumLaunchFft *ffts = nullptr; /* the FFT list of a run */
  float *staging = nullptr; /* a run's magnitudes then phases, where it has phases */

  /* cuFFT path: plans of decreasing batch sharing one work area, one batch of windowed frames
   * and of their bins. */
  cufftHandle plans[kMaxPlans] = {};
  size_t plan_batch[kMaxPlans] = {};
  int plans_created = 0;
  void *work = nullptr;
  float *cufft_frames = nullptr;
  float2 *cufft_bins = nullptr;

  CudafftJobQueue<RunWork, kAhead> queue;
};

/* The spectrum's resources, best effort (cudafft_cuda_destroy). Every job was waited for: nothing
 * of the executor's uses the state or the plans. */
void
spectrum_release(CudaSpectrum *c)
{
  for (int i = 0; i < c->plans_created; ++i)
    cufftDestroy(c->plans[i]);
  cudafft_executor_free(c->ex, c->state);
  cudafft_executor_release(c->ex);
  free(c->pending);
  free(c->ffts);
  free(c->staging);
}

/* cuFFT plans for batch, batch / 8, ... (the last >= 1), without work areas yet: *work receives
 * the largest any of them needs. */
CudafftStatus
make_plans(CudaSpectrum *c, size_t batch, size_t *work)
{
  const size_t nfft = c->nfft;
  long long n = (long long)nfft;
  *work = 0;
  for (size_t b = batch; b > 0 && c->plans_created < kMaxPlans; b /= kPlanStep) {
    cufftHandle &plan = c->plans[c->plans_created];
    CUDAFFT_CHECK_CUFFT(cufftCreate(&plan));
    c->plans_created++;
    CUDAFFT_CHECK_CUFFT(cufftSetAutoAllocation(plan, 0));
    size_t plan_work = 0;
    CUDAFFT_CHECK_CUFFT(cufftMakePlanMany64(plan, 1, &n, nullptr, 1, n, nullptr, 1, n / 2 + 1,
                                            CUFFT_R2C, (long long)b, &plan_work));
    c->plan_batch[c->plans_created - 1] = b;
    if (plan_work > *work)
      *work = plan_work;
  }
  return CUDAFFT_STATUS_OK;
}

/* The FFTs of a job on the cuFFT path (CudafftSpectrumCufftRun): the run's (FFT, spectrum) pairs
 * in batches of the largest plan; the last, partial batch on the smallest plan that holds it,
 * whose rows past the batch are transformed but never accumulated. Runs within a batch's launch,
 * which the executor makes one at a time: the only user of the plans while the object lives. */
CudafftStatus
cufft_run(void *object, const float *signal, const CudafftSpectrumLaunchFft *ffts, size_t fft_count,
          int threshold, int phase, cudaStream_t stream)
{
  CudaSpectrum *c = static_cast<CudaSpectrum *>(object);
  const size_t nfft = c->nfft, spectra = c->spectra;
  const size_t pairs = fft_count * spectra;
  float *phases = phase ? c->phase : nullptr;
  for (size_t first = 0; first < pairs;) {
    const size_t count = min_size(pairs - first, c->plan_batch[0]);
    int plan = 0;
    while (plan + 1 < c->plans_created && c->plan_batch[plan + 1] >= count)
      ++plan;
    CUDAFFT_CHECK(cudafft_spectrum_gather_launch(nfft, signal, c->pitch, spectra, ffts, first,
                                                 count, c->window, c->cufft_frames, stream));
    CUDAFFT_CHECK_CUFFT(cufftSetStream(c->plans[plan], stream));
    CUDAFFT_CHECK_CUFFT(
        cufftExecR2C(c->plans[plan], c->cufft_frames, (cufftComplex *)c->cufft_bins));
    CUDAFFT_CHECK(cudafft_spectrum_accumulate_launch(c->bands, spectra, ffts, first, count,
                                                     c->cufft_bins, c->norm_db, threshold,
                                                     c->magnitude, phases, stream));
    first += count;
  }
  return CUDAFFT_STATUS_OK;
}

/* The run's bounds (each >= 1), from the executor's job size: a run's input, its FFT list and
 * unit maps fit one job's input side, its closed slots' sums (magnitudes and phases) its output
 * side unless a single slot's are larger (split_outputs). */
void
set_bounds(CudaSpectrum *c)
{
  const size_t spectra = c->spectra;
  const size_t slot_bytes = sat_mul(c->slot_floats, sizeof(float));
  c->bounds.ffts = c->fused ? min_size(kRunFfts, kRunTransforms / spectra) : kRunFfts;
  c->bounds.ffts = c->bounds.ffts > 0 ? c->bounds.ffts : 1;
  const size_t slots = kSumBytes / sat_mul(slot_bytes, 2);
  c->bounds.closed = min_size(slots > 2 ? slots - 1 : 1, kRunFfts);
  c->split_outputs = sat_mul(slot_bytes, 2) > c->budget;
  if (c->split_outputs)
    c->bounds.closed = 1;
  else
    c->bounds.closed = min_size(c->bounds.closed, c->budget / sat_mul(slot_bytes, 2));
  const size_t transforms = c->fused ? c->bounds.ffts * spectra : 0;
  const size_t out_floats =
      c->split_outputs ? c->budget / sizeof(float) : 2 * c->bounds.closed * c->slot_floats;
  size_t frames = min_size(kRunFramesMax, kRunFloats / spectra);
  for (int pass = 0; pass < 2; pass++) {
    /* the bound shrinks with the frames: a second pass keeps the input within what is left */
    const size_t aux = cudafft_spectrum_run_aux_bound(frames, spectra, c->bounds.ffts, transforms,
                                                      spectra * kCudafftSegmentChunks, out_floats);
    frames = min_size(frames, aux < c->budget ? (c->budget - aux) / c->frame_bytes : 1);
  }
  c->bounds.frames = frames > 0 ? frames : 1;
}

/* Bytes of each part of the state, in its order. */
struct StateParts {
  size_t window, twiddles, sums, signal, cufft_frames, cufft_bins, work;

  size_t
  total() const
  {
    return sat_add(sat_add(sat_add(window, twiddles), sat_add(2 * sums, 2 * signal)),
                   sat_add(sat_add(cufft_frames, cufft_bins), work));
  }
};

/* Places the parts in the state. */
void
place_state(CudaSpectrum *c, const StateParts &parts)
{
  char *at = static_cast<char *>(c->state);
  c->window = reinterpret_cast<float *>(at);
  at += parts.window;
  c->twiddles = parts.twiddles ? reinterpret_cast<float2 *>(at) : nullptr;
  at += parts.twiddles;
  c->magnitude = reinterpret_cast<float *>(at);
  c->phase = reinterpret_cast<float *>(at + parts.sums);
  at += 2 * parts.sums;
  c->signal[0] = reinterpret_cast<float *>(at);
  c->signal[1] = reinterpret_cast<float *>(at + parts.signal);
  at += 2 * parts.signal;
  c->cufft_frames = parts.cufft_frames ? reinterpret_cast<float *>(at) : nullptr;
  at += parts.cufft_frames;
  c->cufft_bins = parts.cufft_bins ? reinterpret_cast<float2 *>(at) : nullptr;
  at += parts.cufft_bins;
  c->work = parts.work ? at : nullptr;
}

/* The window, the twiddles (fused path) and zeros in the cuFFT batch (a partial batch leaves rows
 * of the plan's batch unwritten: defined values, never read), through the object's first jobs. */
CudafftStatus
upload_tables(CudaSpectrum *c, const float *window, const StateParts &parts)
{
  float *table = nullptr;
  size_t twiddle_bytes = 0;
  if (c->fused) {
    twiddle_bytes = cudafft_twiddles_count(&c->fused->twiddles, 1) * sizeof(float2);
    table = static_cast<float *>(malloc(twiddle_bytes));
    if (!table)
      return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY, "cannot allocate a twiddle table");
    cudafft_twiddle_table(c->fused->twiddles.n_complex, c->fused->twiddles.plan_kind, table);
  }
  const CudafftTablePiece pieces[] = {
      {window, c->window, c->nfft * sizeof(float)},
      {table, c->twiddles, twiddle_bytes},
      {nullptr, c->cufft_frames, c->cufft_frames ? parts.cufft_frames : 0},
  };
  const CudafftStatus status =
      cudafft_upload_tables(c->ex, &c->owner, &cudafft_spectrum_tables_kind, pieces, 3);
  free(table);
  return status;
}

CudafftStatus
spectrum_setup(CudaSpectrum *c, const CudafftSpectrumSpec *spec)
{
  c->format = spec->format;
  c->channels = spec->channels;
  c->multi_channel = spec->multi_channel;
  c->bands = spec->bands;
  c->nfft = spec->nfft;
  c->spectra = spec->spectra;
  c->norm_db = spec->norm_db;
  const size_t nfft = c->nfft, bands = c->bands, spectra = c->spectra;

  /* The fused kernel holds a transform in shared memory; where the GPU offers too little (16384
   * points on sm_75) cuFFT runs it instead (the path every size other than the powers of two
   * 256..16384 takes). */
  int smem_optin = 0;
  CudafftStatus status = cudafft_cuda_open_device(spec->device_id, &c->device, &smem_optin);
  if (status != CUDAFFT_STATUS_OK)
    return status;
  const CudafftBlockKernels *fused = cudafft_spectrum_fused_kernels(nfft);
  c->fused = fused && fused->smem_bytes <= (size_t)smem_optin ? fused : nullptr;
  if (c->fused)
    CUDAFFT_CHECK(cudafft_block_kernels_prepare(c->fused));
  status = cudafft_executor_acquire(c->device, &c->ex);
  if (status != CUDAFFT_STATUS_OK)
    return status;
  c->budget = cudafft_executor_max_job_bytes(c->ex);

  /* The bounds, then every part's size, saturating: the front end has checked the host side, but
   * bands x spectra may still be far more than any GPU holds. */
  c->frame_bytes = c->channels * cudafft_sample_size(c->format);
  c->slot_floats = sat_mul(spectra, bands);
  set_bounds(c);
  c->pitch = (nfft + c->bounds.frames + 3) / 4 * 4;
  size_t batch = 0;
  if (!c->fused) {
    batch = min_size(kCufftFloats / nfft, sat_mul(c->bounds.ffts, spectra));
    batch = batch > 0 ? batch : 1;
  }
  StateParts parts = {};
  parts.window = align_up(sat_mul(nfft, sizeof(float)));
  parts.twiddles =
      c->fused ? align_up(cudafft_twiddles_count(&c->fused->twiddles, 1) * sizeof(float2)) : 0;
  parts.sums = align_up(sat_mul(sat_mul(c->bounds.closed + 1, c->slot_floats), sizeof(float)));
  parts.signal = align_up(sat_mul(sat_mul(spectra, c->pitch), sizeof(float)));
  parts.cufft_frames = batch ? align_up(sat_mul(sat_mul(batch, nfft), sizeof(float))) : 0;
  parts.cufft_bins = batch ? align_up(sat_mul(sat_mul(batch, bands), sizeof(float2))) : 0;
  char what[200];
  snprintf(what, sizeof what,
           "a spectrum of bands=%zu with %zu spectra (signal %zu MB, sums %zu MB, cuFFT batch %zu "
           "MB)",
           bands, spectra, megabytes(sat_mul(2, parts.signal)), megabytes(sat_mul(2, parts.sums)),
           megabytes(sat_add(parts.cufft_frames, parts.cufft_bins)));
  if (!c->fused) {
    /* Plans are made (their work areas not yet allocated) only once the buffers are known to
     * fit; their work area then joins the state. The executor's allocation is the test: it counts
     * the memory its pool holds unused, which the device's free memory does not show. */
    void *probe = nullptr;
    status = cudafft_executor_alloc(c->ex, parts.total(), what, &probe);
    cudafft_executor_free(c->ex, probe);
    if (status != CUDAFFT_STATUS_OK)
      return status;
    size_t work = 0;
    status = make_plans(c, batch, &work);
    if (status != CUDAFFT_STATUS_OK)
      return status;
    parts.work = align_up(work);
  }
  status = cudafft_executor_alloc(c->ex, parts.total(), what, &c->state);
  if (status != CUDAFFT_STATUS_OK)
    return status;
  place_state(c, parts);
  for (int i = 0; i < c->plans_created && c->work; ++i)
    CUDAFFT_CHECK_CUFFT(cufftSetWorkArea(c->plans[i], c->work));

  c->pending = static_cast<unsigned char *>(malloc(c->bounds.frames * c->frame_bytes));
  c->ffts = static_cast<CudafftSpectrumLaunchFft *>(malloc(c->bounds.ffts * sizeof *c->ffts));
  if (!c->split_outputs)
    c->staging =
        static_cast<float *>(malloc(2 * c->bounds.closed * c->slot_floats * sizeof(float)));
  if (!c->pending || !c->ffts || (!c->split_outputs && !c->staging))
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY,
                        "cannot allocate the host staging of a spectrum of bands=%zu with %zu "
                        "spectra",
                        bands, spectra);
  status = upload_tables(c, spec->window, parts);
  if (status != CUDAFFT_STATUS_OK)
    return status;
  *spec->bounds = c->bounds;
  return CUDAFFT_STATUS_OK;
}

/* Checks the run against the bounds create set and the list's promises (which the device writes
 * rely on), and fills the FFT list with windows `shift` frames later: an FFT stores where it is
 * its slot's only one and the slot carries nothing in; [*zero_first, *zero_last] (empty when
 * first > last) are the slots that need zeros before FFTs add into them. */
CudafftStatus
prepare_ffts(CudaSpectrum *c, const CudafftSpectrumJob *run, size_t shift, size_t *zero_first,
             size_t *zero_last)
{
  *zero_first = 1;
  *zero_last = 0;
  const bool carried = c->open_sums;
  /* slots 0..covered-1 have sums (slot 0 from earlier runs, or from FFTs listed so far) */
  size_t covered = carried ? 1 : 0;
  for (size_t i = 0; i < run->fft_count; ++i) {
    const CudafftSpectrumFft &fft = run->ffts[i];
    const size_t slot = fft.slot;
    const bool alone = (i == 0 || run->ffts[i - 1].slot != slot) &&
                       (i + 1 == run->fft_count || run->ffts[i + 1].slot != slot);
    const bool adds_to_carried = slot == 0 && carried;
    const bool store = alone && !adds_to_carried;
    if (slot + 1 > covered)
      covered = slot + 1;
    if (!store && !adds_to_carried) {
      if (*zero_first > *zero_last)
        *zero_first = slot;
      *zero_last = slot;
    }
    c->ffts[i] = CudafftSpectrumLaunchFft{fft.end + shift, (unsigned)slot, store ? 1 : 0};
  }
  return CUDAFFT_STATUS_OK;
}

/* The promises prepare_ffts relies on; nothing is changed. */
CudafftStatus
check_run(const CudaSpectrum *c, const CudafftSpectrumJob *run)
{
  if (run->frames > c->bounds.frames || run->fft_count > c->bounds.ffts ||
      run->closed > c->bounds.closed || (run->frames > 0 && !run->in) ||
      (run->fft_count > 0 && !run->ffts) || (run->closed > 0 && !run->magnitude_sums) ||
      (run->closed > 0 && run->phase && !run->phase_sums))
    return cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE,
                        "CUDA spectrum run of %zu frames, %zu FFTs, %zu closed intervals is out "
                        "of its bounds (%zu, %zu, %zu) or lacks a buffer",
                        run->frames, run->fft_count, run->closed, c->bounds.frames, c->bounds.ffts,
                        c->bounds.closed);
  size_t covered = c->open_sums ? 1 : 0;
  for (size_t i = 0; i < run->fft_count; ++i) {
    const CudafftSpectrumFft &fft = run->ffts[i];
    const size_t slot = fft.slot;
    if (fft.end > run->frames || slot > run->closed || slot > covered ||
        (i > 0 && slot < run->ffts[i - 1].slot))
      return cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE,
                          "CUDA spectrum run: FFT %zu (end %zu, slot %zu) is out of order or out "
                          "of the run (%zu frames, %zu closed)",
                          i, (size_t)fft.end, slot, run->frames, run->closed);
    if (slot + 1 > covered)
      covered = slot + 1;
  }
  if (covered < run->closed)
    return cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE,
                        "CUDA spectrum run: interval %zu of the %zu it closes has no FFT", covered,
                        run->closed);
  return CUDAFFT_STATUS_OK;
}

/* A run job of the object with nothing in it yet: no frames, FFTs, segments or outputs. */
RunWork *
new_job(CudaSpectrum *c)
{
  RunWork *w = c->queue.next(c->ex, Unstage());
  CudafftSpectrumRunJob &r = w->r;
  r.job.kind = &cudafft_spectrum_run_kind;
  r.job.owner = &c->owner;
  r.job.in_bytes = r.job.out_bytes = 0;
  r.job.in_device = nullptr; /* the ring's jobs are reused: a run from device memory sets it */
  r.job.out_device = nullptr;
  r.job.after = 0;
  r.format = c->format;
  r.channels = c->channels;
  r.multi_channel = c->multi_channel;
  r.frame_bytes = c->frame_bytes;
  r.frames = 0;
  r.spectra = c->spectra;
  r.append = nullptr;
  r.pitch = c->pitch;
  r.segment_count = 0;
  r.nfft = c->nfft;
  r.phase = 0;
  r.ffts = nullptr;
  r.fft_count = 0;
  r.fused_path = c->fused != nullptr;
  r.window = c->window;
  r.twiddles = c->twiddles;
  r.norm_db = c->norm_db;
  r.cufft = cufft_run;
  r.cufft_object = c;
  r.magnitude_sums = c->magnitude;
  r.phase_sums = nullptr;
  r.slot_floats = c->slot_floats;
  r.closed = r.out_first = r.out_count = 0;
  r.move = 0;
  w->staging = nullptr;
  return w;
}

void
add_segment(CudafftSpectrumRunJob *r, const CudafftSegment &segment)
{
  r->segments[r->segment_count++] = segment;
}

/* Places `frames` appended frames behind the history (zeroing it first, or moving it to the other
 * buffer where they would run past the end) and points the job's stage 1 and FFTs there. */
void
place_frames(CudaSpectrum *c, CudafftSpectrumRunJob *r, size_t frames)
{
  const size_t pitch_bytes = c->pitch * sizeof(float), history = c->nfft * sizeof(float);
  if (c->history_zero) {
    c->offset = 0;
    add_segment(
        r, CudafftSegment{nullptr, c->signal[c->current], 0, pitch_bytes, history, c->spectra});
    c->history_zero = false;
  } else if (c->offset + c->nfft + frames > c->pitch) {
    add_segment(r, CudafftSegment{c->signal[c->current] + c->offset, c->signal[1 - c->current],
                                  pitch_bytes, pitch_bytes, history, c->spectra});
    c->current = 1 - c->current;
    c->offset = 0;
  }
  float *base = c->signal[c->current] + c->offset;
  r->frames = frames;
  r->append = base + c->nfft;
  r->job.in_bytes = frames * c->frame_bytes;
  r->fused =
      CudafftSpectrumFusedDesc{base, c->pitch, nullptr, c->magnitude, nullptr, 0, (int)c->spectra};
  c->offset += frames;
}

/* Submits the jobs of a run whose input is `frames` frames at src (device memory where
 * src_on_device: read in place), with its FFT list filled. */
void
submit_run(CudaSpectrum *c, const CudafftSpectrumJob *run, const void *src, bool src_on_device,
           size_t frames, size_t zero_first, size_t zero_last)
{
  const size_t slot_bytes = c->slot_floats * sizeof(float);
  const bool phase = run->phase != 0;
  RunWork *w = new_job(c);
  CudafftSpectrumRunJob &r = w->r;
  place_frames(c, &r, frames);
  if (zero_first <= zero_last) {
    /* slots in between that store need no zeros but take no harm from them; slot 0 when it
     * carries sums is never in the range (it is first, and never needs zeros) */
    const size_t bytes = (zero_last - zero_first + 1) * slot_bytes;
    add_segment(&r, CudafftSegment{nullptr, c->magnitude + zero_first * c->slot_floats, 0, bytes,
                                   bytes, 1});
    if (phase)
      add_segment(
          &r, CudafftSegment{nullptr, c->phase + zero_first * c->slot_floats, 0, bytes, bytes, 1});
  }
  r.phase = phase;
  r.ffts = c->ffts;
  r.fft_count = run->fft_count;
  r.fused.phase = phase ? c->phase : nullptr;
  r.fused.threshold = run->threshold;
  r.closed = run->closed;
  r.phase_sums = phase ? c->phase : nullptr;
  const bool open_added = run->fft_count > 0 && run->ffts[run->fft_count - 1].slot == run->closed;
  const size_t per_array = run->closed * c->slot_floats;
  void *out = nullptr;
  if (run->closed > 0 && !c->split_outputs) {
    r.out_count = per_array * (phase ? 2 : 1);
    r.move = open_added;
    out = run->magnitude_sums;
    if (phase) {
      w->staging = c->staging;
      w->magnitude_dest = run->magnitude_sums;
      w->phase_dest = run->phase_sums;
      w->staged = per_array;
      out = c->staging;
    }
  }
  r.job.out_bytes = r.out_count * sizeof(float);
  r.job.in_device = src_on_device && frames > 0 ? src : nullptr;
  r.job.after = src_on_device ? c->after : 0;
  c->queue.submit(c->ex, w, src_on_device ? nullptr : src, out);
  if (run->closed == 0 || !c->split_outputs)
    return;
  /* A slot larger than a job: its sums in parts, each straight to its place, then the move. */
  const size_t part = c->budget / sizeof(float);
  for (int a = 0; a < (phase ? 2 : 1); a++) {
    float *dest = a ? run->phase_sums : run->magnitude_sums;
    for (size_t done = 0; done < per_array && c->queue.failed == CUDAFFT_STATUS_OK;) {
      const size_t count = min_size(part, per_array - done);
      RunWork *o = new_job(c);
      o->r.closed = run->closed;
      o->r.phase_sums = r.phase_sums;
      o->r.out_first = a * per_array + done;
      o->r.out_count = count;
      o->r.job.out_bytes = count * sizeof(float);
      c->queue.submit(c->ex, o, nullptr, dest + done);
      done += count;
    }
  }
  if (open_added && c->queue.failed == CUDAFFT_STATUS_OK) {
    RunWork *m = new_job(c);
    add_segment(&m->r, CudafftSegment{c->magnitude + per_array, c->magnitude, slot_bytes,
                                      slot_bytes, slot_bytes, 1});
    if (phase)
      add_segment(&m->r, CudafftSegment{c->phase + per_array, c->phase, slot_bytes, slot_bytes,
                                        slot_bytes, 1});
    c->queue.submit(c->ex, m, nullptr, nullptr);
  }
}

/* Submits a job that only appends the frames waiting on the host. */
void
submit_pending(CudaSpectrum *c)
{
  RunWork *w = new_job(c);
  place_frames(c, &w->r, c->pending_frames);
  c->queue.submit(c->ex, w, c->pending, nullptr);
}

/* After a failure the state is unknown; reset's state is where the front end goes on from. */
void
forget(CudaSpectrum *c)
{
  c->open_sums = false;
  c->history_zero = true;
  c->pending_frames = 0;
  c->offset = 0;
}

CudafftStatus
spectrum_run(void *impl, const CudafftSpectrumJob *run)
{
  CudaSpectrum *c = static_cast<CudaSpectrum *>(impl);
  CudafftStatus status = check_run(c, run);
  if (status != CUDAFFT_STATUS_OK)
    return status;
  const size_t bytes = run->frames * c->frame_bytes;
  const bool on_device = run->in_on_device != 0;
  /* device input that queued work writes: ordered on the device where that work is this
   * executor's, else waited for here */
  c->after = 0;
  if (on_device &&
      (status = cudafft_executor_order_after(c->ex, run->after, &c->after)) != CUDAFFT_STATUS_OK)
    return status;
  if (run->fft_count == 0 && run->closed == 0) {
    if (run->frames == 0)
      return CUDAFFT_STATUS_OK;
    if (!on_device && c->pending_frames + run->frames <= c->bounds.frames) {
      memcpy(c->pending + c->pending_frames * c->frame_bytes, run->in, bytes);
      c->pending_frames += run->frames;
      return CUDAFFT_STATUS_OK;
    }
  }
  const void *src = run->in;
  size_t frames = run->frames, shift = 0;
  if (c->pending_frames > 0) {
    /* frames in device memory are read where they are: the waiting ones go in a job before */
    if (!on_device && c->pending_frames + frames <= c->bounds.frames) {
      /* the waiting frames go first, in the same job */
      if (bytes > 0)
        memcpy(c->pending + c->pending_frames * c->frame_bytes, run->in, bytes);
      src = c->pending;
      shift = c->pending_frames;
      frames += c->pending_frames;
    } else {
      submit_pending(c);
    }
    c->pending_frames = 0;
  }
  size_t zero_first, zero_last;
  prepare_ffts(c, run, shift, &zero_first, &zero_last);
  if (c->queue.failed == CUDAFFT_STATUS_OK)
    submit_run(c, run, src, on_device, frames, zero_first, zero_last);
  status = c->queue.finish(c->ex, Unstage());
  if (status != CUDAFFT_STATUS_OK) {
    forget(c);
    return status;
  }
  const bool open_added = run->fft_count > 0 && run->ffts[run->fft_count - 1].slot == run->closed;
  if (run->closed > 0)
    c->open_sums = open_added;
  else if (open_added)
    c->open_sums = true;
  return CUDAFFT_STATUS_OK;
}

/* The history to zeros (written by the next run's first launch) and the open sums forgotten:
 * without open_sums the next FFTs into slot 0 store, or zero it first. Nothing on the device. */
CudafftStatus
spectrum_reset(void *impl)
{
  forget(static_cast<CudaSpectrum *>(impl));
  return CUDAFFT_STATUS_OK;
}

void *
no_stream(const void *impl)
{
  (void)impl;
  return nullptr;
}

} // namespace

extern "C" const CudafftSpectrumBackend cudafft_spectrum_cuda_backend = {
    cudafft_keeping_caller<
        cudafft_cuda_create<CudaSpectrum, CudafftSpectrumSpec, spectrum_setup, spectrum_release>>,
    cudafft_keeping_caller<cudafft_cuda_destroy<CudaSpectrum, spectrum_release>>,
    cudafft_keeping_caller<spectrum_run>, cudafft_keeping_caller<spectrum_reset>, no_stream};
