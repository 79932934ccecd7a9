/* spectrum_cuda.cu: the spectrum's CUDA backend: device buffers sized and checked against the
 * GPU's free memory before anything is allocated, the signal history kept on the device (every
 * input sample is uploaded once), the interval sums, and the launch chain of a run: the fused
 * kernel where the block FFT covers nfft, cuFFT between gather and accumulate kernels elsewhere.
 * Every CUDA and cuFFT call is checked; a failure becomes a status and a message. */
#include "backend_object.cuh"
#include "cuda_check.cuh"
#include "device_choice.cuh"
#include "device_fit.h"
#include "device_memory.h"
#include "sample_values.h"
#include "size_math.h"
#include "spectrum_backend.h"
#include "spectrum_kernels.h"
#include "streams.cuh"

#include <cufft.h>

#include <cstdint>
#include <cstdio>

namespace {

/* A run's bounds. Signal: frames x spectra floats per run (16 MB) and raw input bytes per run
 * (32 MB, which only binds for wide frames: 1024 mixed F64 channels get 4096 frames), so that
 * copies dwarf launch costs while an element holds tens of MB, not GB. */
constexpr size_t kRunFloats = (size_t)1 << 22;
constexpr size_t kRunFramesMax = (size_t)1 << 20;
constexpr size_t kRunRawBytes = (size_t)32 << 20;
/* FFTs per run: the descriptors' pinned staging (16 bytes each) stays at 1 MB. */
constexpr size_t kRunFfts = (size_t)1 << 16;
/* Bytes of interval sums (levels and phases of run_closed + 1 slots). */
constexpr size_t kSumBytes = (size_t)16 << 20;
/* cuFFT: real input floats per batch. 4M floats keep an H100 busy, even for small nfft. */
constexpr size_t kCufftFloats = (size_t)1 << 22;
/* Plans of batch B, B/8, B/64, ... (down to 1 at most): a run's last, partial batch runs on the
 * smallest that holds it, so that a short run does not pay for a whole batch. B <= 2^21. */
constexpr int kMaxPlans = 12;
constexpr size_t kPlanStep = 8;

struct CudaSpectrum {
  /* what it is made for (the spec's values) and the bounds of a run */
  CudafftSampleFormat format = CUDAFFT_SAMPLE_F32;
  unsigned channels = 0;
  int multi_channel = 0;
  size_t bands = 0, nfft = 0, spectra = 0;
  float norm_db = 0.0f;
  CudafftSpectrumBounds bounds = {};

  int device = 0;
  cudaStream_t stream = nullptr;
  const CudafftBlockKernels *fused = nullptr; /* the fused kernels, or NULL: the cuFFT path */
  size_t frame_bytes = 0;
  size_t slot_floats = 0;  /* spectra x bands */
  size_t pitch = 0;        /* floats per signal row: nfft history + run_frames */
  size_t max_pitch = 0;    /* cudaMemcpy2D's pitch limit in bytes */
  float *d_signal[2] = {}; /* spectra rows each; history at the start of d_signal[current] */
  int current = 0;
  void *d_raw = nullptr; /* one run of interleaved input */
  float *d_window = nullptr;
  float2 *d_twiddles = nullptr;                                  /* fused path */
  CudafftSpectrumLaunchFft *d_ffts = nullptr, *h_ffts = nullptr; /* h_ffts: pinned */
  /* (run_closed + 1) slots of sums each; slot 0 holds the open interval's between runs */
  float *d_magnitude = nullptr, *d_phase = nullptr;
  /* Whether slot 0 holds sums of the open interval (else its contents are stale and the run's
   * first FFTs store into it or zero it). */
  bool open_sums = false;

  /* cuFFT path: plans of decreasing batch sharing one work area, one batch of windowed frames
   * and of their bins. */
  cufftHandle plans[kMaxPlans] = {};
  size_t plan_batch[kMaxPlans] = {};
  int plans_created = 0;
  void *d_work = nullptr;
  float *d_frames = nullptr;
  float2 *d_bins = nullptr;
};

CudafftStatus
cufft_failure(cufftResult result, const char *call, size_t nfft, int line)
{
  CudafftStatus status = CUDAFFT_STATUS_CUDA_ERROR;
  if (result == CUFFT_ALLOC_FAILED)
    status = CUDAFFT_STATUS_DEVICE_OUT_OF_MEMORY;
  else if (result == CUFFT_INVALID_SIZE || result == CUFFT_NOT_SUPPORTED)
    status = CUDAFFT_STATUS_UNSUPPORTED;
  return cudafft_fail(status,
                      "%s failed for a %zu-point spectrum (spectrum_cuda.cu:%d): cuFFT "
                      "error %d",
                      call, nfft, line, (int)result);
}

#define SPECTRUM_CHECK_CUFFT(call, nfft)                                                           \
  do {                                                                                             \
    const cufftResult sp_result_ = (call);                                                         \
    if (sp_result_ != CUFFT_SUCCESS)                                                               \
      return cufft_failure(sp_result_, #call, nfft, __LINE__);                                     \
  } while (0)

/* The spectrum's resources, best effort (cudafft_cuda_destroy). */
void
spectrum_release(CudaSpectrum *c)
{
  cudafft_streams_settle({c->stream});
  for (int i = 0; i < c->plans_created; ++i)
    cufftDestroy(c->plans[i]);
  cudafft_device_free({c->d_work, c->d_frames, c->d_bins, c->d_signal[0], c->d_signal[1], c->d_raw,
                       c->d_window, c->d_twiddles, c->d_ffts, c->d_magnitude, c->d_phase});
  cudaFreeHost(c->h_ffts);
  cudafft_streams_destroy({c->stream});
}

CudafftStatus
check_fits(const CudaSpectrum *c, size_t need)
{
  char what[64];
  snprintf(what, sizeof what, "bands=%zu with %zu spectra", c->bands, c->spectra);
  return cudafft_device_fits(need, what, "");
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
    SPECTRUM_CHECK_CUFFT(cufftCreate(&plan), nfft);
    c->plans_created++;
    SPECTRUM_CHECK_CUFFT(cufftSetAutoAllocation(plan, 0), nfft);
    size_t plan_work = 0;
    SPECTRUM_CHECK_CUFFT(cufftMakePlanMany64(plan, 1, &n, nullptr, 1, n, nullptr, 1, n / 2 + 1,
                                             CUFFT_R2C, (long long)b, &plan_work),
                         nfft);
    SPECTRUM_CHECK_CUFFT(cufftSetStream(plan, c->stream), nfft);
    c->plan_batch[c->plans_created - 1] = b;
    if (plan_work > *work)
      *work = plan_work;
  }
  return CUDAFFT_STATUS_OK;
}

/* The window and, for the fused kernel, the twiddles, copied on the backend's stream, which is
 * non-blocking: copies on the legacy default stream would not be ordered before its kernels. */
CudafftStatus
upload_tables(CudaSpectrum *c, const float *window)
{
  const size_t nfft = c->nfft;
  CudafftStatus status = cudafft_device_copy((void **)&c->d_window, window, nfft * sizeof(float),
                                             "the spectrum's window", c->stream);
  if (status != CUDAFFT_STATUS_OK || !c->fused)
    return status;
  CUDAFFT_CHECK(cudafft_block_kernels_prepare(c->fused));
  return cudafft_twiddles_upload(&c->fused->twiddles, 1, c->stream, &c->d_twiddles);
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
  int smem_optin = 0, max_pitch = 0;
  const CudafftStatus opened = cudafft_cuda_open_device(spec->device_id, &c->device, &smem_optin);
  if (opened != CUDAFFT_STATUS_OK)
    return opened;
  CUDAFFT_CHECK(cudaDeviceGetAttribute(&max_pitch, cudaDevAttrMaxPitch, c->device));
  c->max_pitch = max_pitch > 0 ? (size_t)max_pitch : 0;
  const CudafftBlockKernels *fused = cudafft_spectrum_fused_kernels(nfft);
  c->fused = fused && fused->smem_bytes <= (size_t)smem_optin ? fused : nullptr;

  /* The run's bounds (each >= 1), then every buffer's size, saturating: the front end has
   * checked the host side, but bands x spectra may still be far more than any GPU holds. */
  c->frame_bytes = c->channels * cudafft_sample_size(c->format);
  size_t run_frames = min_size(kRunFramesMax, kRunFloats / spectra);
  run_frames = min_size(run_frames, kRunRawBytes / c->frame_bytes);
  c->bounds.frames = run_frames > 0 ? run_frames : 1;
  c->bounds.ffts = kRunFfts;
  c->slot_floats = sat_mul(spectra, bands);
  const size_t slots = kSumBytes / sat_mul(c->slot_floats, 2 * sizeof(float));
  c->bounds.closed = min_size(slots > 2 ? slots - 1 : 1, kRunFfts);
  c->pitch = nfft + c->bounds.frames;
  size_t batch = 0;
  if (!c->fused) {
    batch = min_size(kCufftFloats / nfft, kRunFfts * spectra);
    batch = batch > 0 ? batch : 1;
  }

  const size_t sum_floats = sat_mul(c->bounds.closed + 1, c->slot_floats);
  size_t need = sat_mul(sat_mul(2 * spectra, c->pitch), sizeof(float)); /* signal */
  need = sat_add(need, sat_mul(c->bounds.frames, c->frame_bytes));
  need = sat_add(need, sat_mul(nfft, sizeof(float)));
  need = sat_add(need, sat_mul(2 * sizeof(float), sum_floats));
  need = sat_add(need, kRunFfts * sizeof(CudafftSpectrumLaunchFft));
  if (c->fused)
    need = sat_add(need, cudafft_twiddles_count(&c->fused->twiddles, 1) * sizeof(float2));
  else
    need = sat_add(need, sat_add(sat_mul(sat_mul(batch, nfft), sizeof(float)),
                                 sat_mul(sat_mul(batch, bands), sizeof(float2))));
  CudafftStatus status = check_fits(c, need);
  if (status != CUDAFFT_STATUS_OK)
    return status;

  CUDAFFT_CHECK(cudafft_streams_create({&c->stream}));
  size_t work = 0;
  if (!c->fused) {
    /* Plans are made (their work areas not yet allocated) only once the buffers are known to
     * fit; their work area then joins the estimate. */
    status = make_plans(c, batch, &work);
    if (status != CUDAFFT_STATUS_OK)
      return status;
    status = check_fits(c, sat_add(need, work));
    if (status != CUDAFFT_STATUS_OK)
      return status;
  }

  for (float *&signal : c->d_signal)
    CUDAFFT_CHECK(cudaMalloc(&signal, spectra * c->pitch * sizeof(float)));
  CUDAFFT_CHECK(cudaMalloc(&c->d_raw, c->bounds.frames * c->frame_bytes));
  CUDAFFT_CHECK(cudaMalloc(&c->d_magnitude, sum_floats * sizeof(float)));
  CUDAFFT_CHECK(cudaMalloc(&c->d_phase, sum_floats * sizeof(float)));
  CUDAFFT_CHECK(cudaMalloc(&c->d_ffts, kRunFfts * sizeof(CudafftSpectrumLaunchFft)));
  status = cudafft_pinned_host_alloc(
      (void **)&c->h_ffts, kRunFfts * sizeof(CudafftSpectrumLaunchFft), "the spectrum's FFT list");
  if (status != CUDAFFT_STATUS_OK)
    return status;
  if (!c->fused) {
    CUDAFFT_CHECK(cudaMalloc(&c->d_frames, batch * nfft * sizeof(float)));
    CUDAFFT_CHECK(cudaMalloc(&c->d_bins, batch * bands * sizeof(float2)));
    /* a partial batch leaves rows of the plan's batch unwritten: defined values, never read */
    CUDAFFT_CHECK(cudaMemsetAsync(c->d_frames, 0, batch * nfft * sizeof(float), c->stream));
    if (work > 0) {
      CUDAFFT_CHECK(cudaMalloc(&c->d_work, work));
      for (int i = 0; i < c->plans_created; ++i)
        SPECTRUM_CHECK_CUFFT(cufftSetWorkArea(c->plans[i], c->d_work), nfft);
    }
  }
  status = upload_tables(c, spec->window);
  if (status != CUDAFFT_STATUS_OK)
    return status;
  /* zeros before the stream's first sample */
  CUDAFFT_CHECK(cudaMemsetAsync(c->d_signal[0], 0, spectra * c->pitch * sizeof(float), c->stream));
  CUDAFFT_CHECK(cudaStreamSynchronize(c->stream));
  *spec->bounds = c->bounds;
  return CUDAFFT_STATUS_OK;
}

/* Checks the run against the bounds init set and the list's promises (which the device writes
 * rely on), and fills the descriptors: an FFT stores where it is its slot's only one and the slot
 * carries nothing in; [*zero_first, *zero_last] (empty when first > last) are the slots that need
 * zeros before FFTs add into them. Nothing is queued yet. */
CudafftStatus
prepare_ffts(CudaSpectrum *c, const CudafftSpectrumJob *run, size_t *zero_first, size_t *zero_last)
{
  *zero_first = 1;
  *zero_last = 0;
  if (run->frames > c->bounds.frames || run->fft_count > c->bounds.ffts ||
      run->closed > c->bounds.closed || (run->frames > 0 && !run->in) ||
      (run->fft_count > 0 && !run->ffts) || (run->closed > 0 && !run->magnitude_sums) ||
      (run->closed > 0 && run->phase && !run->phase_sums))
    return cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE,
                        "CUDA spectrum run of %zu frames, %zu FFTs, %zu closed intervals is out "
                        "of its bounds (%zu, %zu, %zu) or lacks a buffer",
                        run->frames, run->fft_count, run->closed, c->bounds.frames, c->bounds.ffts,
                        c->bounds.closed);
  const bool carried = c->open_sums;
  /* slots 0..covered-1 have sums (slot 0 from earlier runs, or from FFTs listed so far) */
  size_t covered = carried ? 1 : 0;
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
    const bool alone = (i == 0 || run->ffts[i - 1].slot != slot) &&
                       (i + 1 == run->fft_count || run->ffts[i + 1].slot != slot);
    const bool adds_to_carried = slot == 0 && carried;
    const bool store = alone && !adds_to_carried;
    if (!store && !adds_to_carried) {
      if (*zero_first > *zero_last)
        *zero_first = slot;
      *zero_last = slot;
    }
    c->h_ffts[i] = CudafftSpectrumLaunchFft{fft.end, (unsigned)slot, store ? 1 : 0};
  }
  if (covered < run->closed)
    return cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE,
                        "CUDA spectrum run: interval %zu of the %zu it closes has no FFT", covered,
                        run->closed);
  return CUDAFFT_STATUS_OK;
}

/* The cuFFT path: the run's (FFT, spectrum) pairs in batches of the largest plan; the last,
 * partial batch on the smallest plan that holds it, whose rows past the batch are transformed
 * but never accumulated. */
CudafftStatus
cufft_ffts(CudaSpectrum *c, const CudafftSpectrumJob *run, const float *signal)
{
  const size_t nfft = c->nfft, spectra = c->spectra;
  const size_t pairs = run->fft_count * spectra;
  float *phase = run->phase ? c->d_phase : nullptr;
  for (size_t first = 0; first < pairs;) {
    const size_t count = min_size(pairs - first, c->plan_batch[0]);
    int plan = 0;
    while (plan + 1 < c->plans_created && c->plan_batch[plan + 1] >= count)
      ++plan;
    CUDAFFT_CHECK(cudafft_spectrum_gather_launch(nfft, signal, c->pitch, spectra, c->d_ffts, first,
                                                 count, c->d_window, c->d_frames, c->stream));
    SPECTRUM_CHECK_CUFFT(cufftExecR2C(c->plans[plan], c->d_frames, (cufftComplex *)c->d_bins),
                         nfft);
    CUDAFFT_CHECK(cudafft_spectrum_accumulate_launch(c->bands, spectra, c->d_ffts, first, count,
                                                     c->d_bins, c->norm_db, run->threshold,
                                                     c->d_magnitude, phase, c->stream));
    first += count;
  }
  return CUDAFFT_STATUS_OK;
}

/* The nfft samples before the run's end, of every row, to the start of the rows of next. */
CudafftStatus
carry_history(CudaSpectrum *c, const float *from, float *next)
{
  const size_t width = c->nfft * sizeof(float), pitch = c->pitch * sizeof(float);
  const size_t spectra = c->spectra;
  if (spectra == 1 || pitch > c->max_pitch) {
    for (size_t s = 0; s < spectra; ++s)
      CUDAFFT_CHECK(cudaMemcpyAsync(next + s * c->pitch, from + s * c->pitch, width,
                                    cudaMemcpyDeviceToDevice, c->stream));
    return CUDAFFT_STATUS_OK;
  }
  CUDAFFT_CHECK(cudaMemcpy2DAsync(next, pitch, from, pitch, width, spectra,
                                  cudaMemcpyDeviceToDevice, c->stream));
  return CUDAFFT_STATUS_OK;
}

/* Queues the run: upload and conversion of its frames behind the history, the FFTs into the
 * slots, the closed slots' sums to the caller, the open slot's to slot 0, the history for the
 * next run. */
CudafftStatus
queue_run(CudaSpectrum *c, const CudafftSpectrumJob *run)
{
  const size_t nfft = c->nfft, spectra = c->spectra;
  const size_t slot_bytes = c->slot_floats * sizeof(float);
  cudaStream_t stream = c->stream;
  size_t zero_first, zero_last;
  CudafftStatus status = prepare_ffts(c, run, &zero_first, &zero_last);
  if (status != CUDAFFT_STATUS_OK)
    return status;

  float *signal = c->d_signal[c->current];
  if (run->frames > 0) {
    CUDAFFT_CHECK(cudaMemcpyAsync(c->d_raw, run->in, run->frames * c->frame_bytes,
                                  cudaMemcpyHostToDevice, stream));
    CUDAFFT_CHECK(cudafft_spectrum_convert_launch(c->format, c->d_raw, run->frames, c->channels,
                                                  c->multi_channel, spectra, signal + nfft,
                                                  c->pitch, stream));
  }

  if (run->fft_count > 0) {
    CUDAFFT_CHECK(cudaMemcpyAsync(c->d_ffts, c->h_ffts,
                                  run->fft_count * sizeof(CudafftSpectrumLaunchFft),
                                  cudaMemcpyHostToDevice, stream));
    if (zero_first <= zero_last) {
      /* slots in between that store need no zeros but take no harm from them; slot 0 when it
       * carries sums is never in the range (it is first, and never needs zeros) */
      const size_t offset = zero_first * c->slot_floats;
      const size_t bytes = (zero_last - zero_first + 1) * slot_bytes;
      CUDAFFT_CHECK(cudaMemsetAsync(c->d_magnitude + offset, 0, bytes, stream));
      if (run->phase)
        CUDAFFT_CHECK(cudaMemsetAsync(c->d_phase + offset, 0, bytes, stream));
    }
    if (c->fused) {
      CUDAFFT_CHECK(
          cudafft_spectrum_fused_launch(nfft, signal, c->pitch, spectra, c->d_ffts, run->fft_count,
                                        c->d_window, c->norm_db, run->threshold, c->d_magnitude,
                                        run->phase ? c->d_phase : nullptr, c->d_twiddles, stream));
    } else {
      status = cufft_ffts(c, run, signal);
      if (status != CUDAFFT_STATUS_OK)
        return status;
    }
  }

  const bool open_added = run->fft_count > 0 && run->ffts[run->fft_count - 1].slot == run->closed;
  if (run->closed > 0) {
    CUDAFFT_CHECK(cudaMemcpyAsync(run->magnitude_sums, c->d_magnitude, run->closed * slot_bytes,
                                  cudaMemcpyDeviceToHost, stream));
    if (run->phase)
      CUDAFFT_CHECK(cudaMemcpyAsync(run->phase_sums, c->d_phase, run->closed * slot_bytes,
                                    cudaMemcpyDeviceToHost, stream));
    if (open_added) {
      const size_t open = run->closed * c->slot_floats;
      CUDAFFT_CHECK(cudaMemcpyAsync(c->d_magnitude, c->d_magnitude + open, slot_bytes,
                                    cudaMemcpyDeviceToDevice, stream));
      if (run->phase)
        CUDAFFT_CHECK(cudaMemcpyAsync(c->d_phase, c->d_phase + open, slot_bytes,
                                      cudaMemcpyDeviceToDevice, stream));
    }
    c->open_sums = open_added;
  } else if (open_added) {
    c->open_sums = true;
  }

  if (run->frames > 0) {
    status = carry_history(c, signal + run->frames, c->d_signal[1 - c->current]);
    if (status != CUDAFFT_STATUS_OK)
      return status;
    c->current = 1 - c->current;
  }
  return CUDAFFT_STATUS_OK;
}

CudafftStatus
spectrum_run(void *impl, const CudafftSpectrumJob *job)
{
  CudaSpectrum *c = static_cast<CudaSpectrum *>(impl);
  CUDAFFT_CHECK(cudafft_use_device(c->device));
  const CudafftStatus status = queue_run(c, job);
  if (status != CUDAFFT_STATUS_OK) {
    cudafft_streams_settle({c->stream}); /* no copy may still write into the caller's sums */
    return status;
  }
  CUDAFFT_CHECK(cudaStreamSynchronize(c->stream));
  return CUDAFFT_STATUS_OK;
}

/* Zeros the history. The open sums need no zeros: without open_sums the next FFTs into slot 0
 * store, or zero it first. */
CudafftStatus
spectrum_reset(void *impl)
{
  CudaSpectrum *c = static_cast<CudaSpectrum *>(impl);
  c->open_sums = false;
  CUDAFFT_CHECK(cudafft_use_device(c->device));
  CUDAFFT_CHECK(cudaMemsetAsync(c->d_signal[c->current], 0, c->spectra * c->pitch * sizeof(float),
                                c->stream));
  CUDAFFT_CHECK(cudaStreamSynchronize(c->stream));
  return CUDAFFT_STATUS_OK;
}

} // namespace

extern "C" const CudafftSpectrumBackend cudafft_spectrum_cuda_backend = {
    cudafft_cuda_create<CudaSpectrum, CudafftSpectrumSpec, spectrum_setup, spectrum_release>,
    cudafft_cuda_destroy<CudaSpectrum, spectrum_release>, spectrum_run, spectrum_reset,
    cudafft_cuda_stream<CudaSpectrum>};
