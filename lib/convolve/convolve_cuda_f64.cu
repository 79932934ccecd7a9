/* convolve_cuda_f64.cu: the CUDA backend's partitioned F64 path, double end to end: frames
 * deinterleaved in double, cuFFT's D2Z into a double delay line, the MAC in double, Z2D, then mix
 * and interleave; the kernels batched over a batch's jobs, cuFFT's transforms per job and block on
 * the object's plans (one pair, `channels` transforms each, their work area in the object's
 * state). Its kinds: blocks (double) and kernel spectra (double). */
#include "convolve_cuda_state.cuh"
#include "cufft_check.cuh"

namespace convolve_cuda {

/* Units of an F64 partitioned job's deinterleave and output: its samples in runs of B. */
static size_t
sample_units(const ConvolveJob *j)
{
  return j->count * j->f->channels;
}

/* F64 partitioned jobs: the transforms' units (the MAC's) first, then the sample runs' (the
 * deinterleave's and the output's); as many of each. */
static size_t
blocks64_aux_bytes(CudafftJob *const *jobs, size_t count)
{
  return aux_bytes_for(count, sizeof(CudafftConvolveBlocks64Job),
                       2 * sum_over(jobs, count, block_units));
}

static CudafftConvolveBlocks64Job
describe_blocks64(const ConvolveJob *j)
{
  const CudaConvolve *f = j->f;
  CudafftConvolveBlocks64Job d = {};
  d.in = static_cast<const double *>(j->staged ? f->raw_block : j->job.device_in);
  d.out = static_cast<double *>(j->staged ? f->out_block : j->job.device_out);
  d.frames = f->frames64;
  d.previous = f->previous64[j->current];
  d.next_previous = f->previous64[1 - j->current];
  d.ring = f->ring64;
  d.spectra = f->spectra64;
  d.sums = f->sums64;
  d.time = f->time64;
  d.wet_gain = j->mix;
  d.dry_gain = 1.0 - j->mix;
  d.channels = (int)f->channels;
  d.kernel_rows = (int)f->rows;
  d.partitions = (int)f->partitions;
  d.slots = (int)f->slots;
  d.first_slot = (int)j->head;
  d.blocks = (int)j->count;
  return d;
}

static void
blocks64_prepare(CudafftJob *const *jobs, size_t count, void *host_aux, void *)
{
  CudafftConvolveBlocks64Job *descs = aux_descs<CudafftConvolveBlocks64Job>(host_aux);
  CudafftConvolveUnit *at = aux_units<CudafftConvolveBlocks64Job>(host_aux, count);
  for (size_t i = 0; i < count; ++i) {
    descs[i] = describe_blocks64(as_job(jobs[i]));
    at = map_units(at, i, block_units(as_job(jobs[i])));
  }
  for (size_t i = 0; i < count; ++i)
    at = map_units(at, i, sample_units(as_job(jobs[i])));
}

/* The kernels batch every job; cuFFT's transforms go per job and block, `channels` transforms
 * each on the object's plans (a block's frames, spectra, sums and inverse transforms are
 * `channels` consecutive rows everywhere, its ring slot's included). */
static CudafftStatus
blocks64_launch(CudafftJob *const *jobs, size_t count, void *device_aux, void *stream)
{
  const size_t transforms = sum_over(jobs, count, block_units);
  const CudafftConvolveBlocks64Job *descs = aux_descs<CudafftConvolveBlocks64Job>(device_aux);
  const CudafftConvolveUnit *units = aux_units<CudafftConvolveBlocks64Job>(device_aux, count);
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  CUDAFFT_CHECK(cudafft_convolve_deinterleave64_launch(descs, units + transforms, transforms, s));
  for (size_t i = 0; i < count; ++i) {
    const ConvolveJob *j = as_job(jobs[i]);
    const CudaConvolve *f = j->f;
    CUDAFFT_CHECK_CUFFT(cufftSetStream(f->forward64, s));
    for (size_t q = 0; q < j->count; ++q) {
      const size_t slot = (j->head + q) % f->slots;
      CUDAFFT_CHECK_CUFFT(
          cufftExecD2Z(f->forward64, f->frames64 + q * f->channels * kN,
                       reinterpret_cast<cufftDoubleComplex *>(
                           f->ring64 + slot * f->channels * CUDAFFT_CONVOLVE_BIN_PITCH)));
    }
  }
  CUDAFFT_CHECK(cudafft_convolve_mac64_launch(descs, units, transforms, s));
  for (size_t i = 0; i < count; ++i) {
    const ConvolveJob *j = as_job(jobs[i]);
    const CudaConvolve *f = j->f;
    CUDAFFT_CHECK_CUFFT(cufftSetStream(f->inverse64, s));
    for (size_t q = 0; q < j->count; ++q)
      CUDAFFT_CHECK_CUFFT(
          cufftExecZ2D(f->inverse64,
                       reinterpret_cast<cufftDoubleComplex *>(
                           f->sums64 + q * f->channels * CUDAFFT_CONVOLVE_BIN_PITCH),
                       f->time64 + q * f->channels * kN));
  }
  CUDAFFT_CHECK(cudafft_convolve_output64_launch(descs, units + transforms, transforms, s));
  return CUDAFFT_STATUS_OK;
}

const CudafftWorkKind blocks64_kind = {"convolution blocks (double)", blocks64_aux_bytes,
                                       blocks64_prepare, blocks64_launch, nullptr};

/* F64 kernel spectra: a job's taps to `channels` frames, then one D2Z of them to its spectrum
 * rows (and the rows after them up to a whole batch: the spare rows at the end of the spectra, or
 * rows a later job of the object overwrites). */
static size_t
spectra64_aux_bytes(CudafftJob *const *jobs, size_t count)
{
  return aux_bytes_for(count, sizeof(CudafftConvolveSpectra64Job),
                       sum_over(jobs, count, spectra_units));
}

static void
spectra64_prepare(CudafftJob *const *jobs, size_t count, void *host_aux, void *)
{
  CudafftConvolveSpectra64Job *descs = aux_descs<CudafftConvolveSpectra64Job>(host_aux);
  CudafftConvolveUnit *at = aux_units<CudafftConvolveSpectra64Job>(host_aux, count);
  for (size_t i = 0; i < count; ++i) {
    const ConvolveJob *j = as_job(jobs[i]);
    descs[i] = CudafftConvolveSpectra64Job{static_cast<const double *>(j->job.device_in),
                                           j->f->frames64, j->count};
    at = map_units(at, i, spectra_units(j));
  }
}

static CudafftStatus
spectra64_launch(CudafftJob *const *jobs, size_t count, void *device_aux, void *stream)
{
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  CUDAFFT_CHECK(cudafft_convolve_spectra64_frames_launch(
      aux_descs<CudafftConvolveSpectra64Job>(device_aux),
      aux_units<CudafftConvolveSpectra64Job>(device_aux, count),
      sum_over(jobs, count, spectra_units), s));
  for (size_t i = 0; i < count; ++i) {
    const ConvolveJob *j = as_job(jobs[i]);
    const CudaConvolve *f = j->f;
    CUDAFFT_CHECK_CUFFT(cufftSetStream(f->forward64, s));
    CUDAFFT_CHECK_CUFFT(cufftExecD2Z(f->forward64, f->frames64,
                                     reinterpret_cast<cufftDoubleComplex *>(j->spectra64_rows)));
  }
  return CUDAFFT_STATUS_OK;
}

const CudafftWorkKind spectra64_kind = {"convolution kernel spectra (double)", spectra64_aux_bytes,
                                        spectra64_prepare, spectra64_launch, nullptr};

/* Partitioned F64 setup: the kernel spectra in double from the taps as they are (each job up to
 * a batch of the forward plan, `channels` partitions of a row, as many as a job holds), the
 * history cleared. A job's transform writes a whole batch of rows, those past its partitions
 * from zero frames: the next job of the row, which runs later, overwrites them, and the last
 * row's spill into the spare rows at the end. */
CudafftStatus
load_partitioned64(CudaConvolve *f, const CudafftConvolveKernel &kernel)
{
  Window w(f);
  const size_t max_job = cudafft_executor_max_job_bytes(f->ex);
  const size_t room = max_job - aux_bytes_for(1, sizeof(CudafftConvolveSpectra64Job), f->channels);
  size_t per_job = room / (kBlock * sizeof(double));
  per_job = per_job < f->channels ? per_job : f->channels;
  for (size_t r = 0; r < f->rows; ++r)
    for (size_t p = 0; p < f->partitions; p += per_job) {
      ConvolveJob *job = w.next();
      if (!job)
        break;
      job->work = Work::Spectra;
      job->spectra64_rows = f->spectra64 + (r * f->partitions + p) * CUDAFFT_CONVOLVE_BIN_PITCH;
      job->count = min_size(f->taps - p * kBlock, per_job * kBlock);
      job->job.in_bytes = job->count * sizeof(double);
      w.submit(job, kernel.taps_data + r * f->taps + p * kBlock, nullptr);
    }
  submit_clear(&w, f);
  return w.finish();
}

/* The F64 path's cuFFT plans, `channels` transforms of N points each (a block's frames to its ring
 * slot's rows; a block's sums to its inverse transforms), with no work area yet: *work receives
 * the larger one's. */
CudafftStatus
make_plans64(CudaConvolve *f, size_t *work)
{
  long long n = (long long)kN, frame = (long long)kN, row = CUDAFFT_CONVOLVE_BIN_PITCH;
  const long long batch = f->channels;
  size_t forward_work = 0, inverse_work = 0;
  CUDAFFT_CHECK_CUFFT(cufftCreate(&f->forward64));
  f->forward64_made = true;
  CUDAFFT_CHECK_CUFFT(cufftSetAutoAllocation(f->forward64, 0));
  CUDAFFT_CHECK_CUFFT(cufftMakePlanMany64(f->forward64, 1, &n, &frame, 1, frame, &row, 1, row,
                                          CUFFT_D2Z, batch, &forward_work));
  CUDAFFT_CHECK_CUFFT(cufftCreate(&f->inverse64));
  f->inverse64_made = true;
  CUDAFFT_CHECK_CUFFT(cufftSetAutoAllocation(f->inverse64, 0));
  CUDAFFT_CHECK_CUFFT(cufftMakePlanMany64(f->inverse64, 1, &n, &row, 1, row, &frame, 1, frame,
                                          CUFFT_Z2D, batch, &inverse_work));
  *work = forward_work > inverse_work ? forward_work : inverse_work;
  return CUDAFFT_STATUS_OK;
}

} // namespace convolve_cuda
