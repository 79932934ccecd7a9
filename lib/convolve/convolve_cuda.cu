/* convolve_cuda.cu: the convolution's CUDA backend, on the device's shared executor
 * (lib/executor/executor.h): an object holds its state in executor memory and does everything on
 * the device through jobs, so that the work of every convolution object on a device goes out in
 * batched launches (convolve_kernels.h) and in the executor's order. It owns no streams, events or
 * staging. Every CUDA call is checked; a failure becomes a status and a message.
 *
 * State (one executor allocation, so that an object too large fails at create with the sizes in
 * the message, before anything else is done): the partitioned path's twiddle table, kernel
 * spectra, delay line and two sets of signal rows (and, where one block is more than a job holds,
 * a block of input and one of output); the direct path's taps and its history ring, in the
 * format's type; the split path's twiddle table, head spectrum, tail spectra and delay line, three
 * sets of signal rows, the tail's sums and its output ring. F64 streams run in double end to end:
 * the direct path sums in double, and the partitioned path has double kernel spectra, a double
 * delay line, a job's frames, sums and inverse transforms, and cuFFT's D2Z and Z2D plans (one pair
 * per object, `channels` transforms a block) with their work area in the state. F32 streams keep
 * the single-precision block FFT.
 *
 * Kinds of work (one job per call of the executor; the kernels are convolve_kernels.h's):
 * - blocks: partitioned F32 jobs: deinterleave into the object's signal rows, then forward FFTs
 *   into its delay line and MAC + inverse FFT + mix + interleave (P > 1), or the fused kernel
 *   (P = 1);
 * - blocks (double): partitioned F64 jobs: deinterleave into frames, D2Z into the delay line, MAC,
 *   Z2D, mix + interleave (the kernels batched over the jobs, the transforms per job and block);
 * - direct: direct-path jobs: the tiled direct kernel, then the append to the history ring;
 * - split: the split path's F32 jobs (CUDAFFT_CONVOLVE_SPLIT, convolve_kernels.h), one a push of
 *   whole blocks of L within one block of B: gather, head, the push's share of the tail's MAC
 *   (where the job before did not run it ahead), the block's transforms in the push that
 *   completes it, and the tail's output added; then, as work ahead (after the batch is done), the
 *   MAC share of the object's next push;
 * - spectra: the kernel spectra from uploaded taps (setup), or for F64 their frames and a D2Z;
 * - fill: copies, conversions and zeroing of state (setup, reset, and the staged blocks' input and
 *   output).
 * Each kind's launch serves all its jobs in the batch, one launch per stage, whatever their
 * objects. An object's host-side sequence (the delay line's head, which set of rows or history a
 * job reads) advances as its jobs are submitted: the executor runs an owner's jobs in order.
 *
 * A call runs in jobs of at most job_units blocks (frames on the direct path), cut as the old
 * per-object pipeline cut its chunks (call_job_units()), and keeps up to kWindow of them
 * outstanding, so that consecutive jobs go out in consecutive batches whose copies and kernels
 * overlap. Every call waits for all its jobs before it returns; a failed job's status is the
 * call's (the front end then resets).
 *
 * This file: the state's layout, the fill kind, clearing, and the backend table that chooses the
 * path; the paths themselves are in convolve_cuda_{partitioned,f64,direct,split}.cu over
 * convolve_cuda_state.cuh. */
#include "backend_object.cuh"
#include "convolve_cuda_state.cuh"
#include "cufft_check.cuh"

namespace convolve_cuda {

/* Lays the object's state out from base (nullptr: only counts), each part at a multiple of
 * kStateAlign, and returns its bytes (saturating: SIZE_MAX stands for more than can be counted).
 */
size_t
lay_out(CudaConvolve *f, char *base)
{
  size_t at = 0;
  auto part = [&](size_t bytes) -> void * {
    void *p = base && bytes > 0 ? base + at : nullptr;
    at = sat_add(at, round_up(bytes, kStateAlign));
    return p;
  };
  const size_t sample = cudafft_sample_size(f->format);
  const size_t transforms = sat_mul(f->job_units, f->channels);
  if (f->path == CUDAFFT_CONVOLVE_PARTITIONED && f->format == CUDAFFT_SAMPLE_F64) {
    f->spectra64 = static_cast<double2 *>(
        part(sat_mul(sat_add(sat_mul(f->partitions, f->rows), f->channels), kRow64Bytes)));
    f->ring64 = static_cast<double2 *>(part(sat_mul(sat_mul(f->slots, f->channels), kRow64Bytes)));
    f->frames64 = static_cast<double *>(part(sat_mul(transforms, kN * sizeof(double))));
    f->sums64 = static_cast<double2 *>(part(sat_mul(transforms, kRow64Bytes)));
    f->time64 = static_cast<double *>(part(sat_mul(transforms, kN * sizeof(double))));
    for (double *&previous : f->previous64)
      previous = static_cast<double *>(part(sat_mul(f->channels, kBlock * sizeof(double))));
    if (f->staged) {
      f->raw_block = part(kBlock * f->frame_bytes);
      f->out_block = part(kBlock * f->frame_bytes);
    }
    f->work64 = part(f->work64_bytes);
  } else if (f->path == CUDAFFT_CONVOLVE_SPLIT) {
    f->twiddles = static_cast<float2 *>(part(twiddle_bytes()));
    f->spectra = static_cast<float2 *>(part(sat_mul(sat_mul(f->partitions, f->rows), kRowBytes)));
    f->ring = static_cast<float2 *>(part(sat_mul(sat_mul(f->slots, f->channels), kRowBytes)));
    for (float *&rows : f->rows3)
      rows = static_cast<float *>(part(sat_mul(3 * kBlock * f->channels, sizeof(float))));
    f->head_spectra = static_cast<float2 *>(part(sat_mul(f->rows, kRowBytes)));
    f->acc = static_cast<float2 *>(part(sat_mul(f->channels, kRowBytes)));
    f->tail = static_cast<float *>(part(sat_mul(2 * kBlock * f->channels, sizeof(float))));
  } else if (f->path == CUDAFFT_CONVOLVE_PARTITIONED) {
    f->twiddles = static_cast<float2 *>(part(twiddle_bytes()));
    f->spectra = static_cast<float2 *>(part(sat_mul(sat_mul(f->partitions, f->rows), kRowBytes)));
    f->ring = static_cast<float2 *>(part(sat_mul(sat_mul(f->slots, f->channels), kRowBytes)));
    for (float *&rows : f->signal)
      rows = static_cast<float *>(part(sat_mul(sat_mul(f->pitch, f->channels), sizeof(float))));
    if (f->staged) {
      f->raw_block = part(kBlock * f->frame_bytes);
      f->out_block = part(kBlock * f->frame_bytes);
    }
  } else {
    f->direct_taps = part(sat_mul(f->taps * f->rows, sample));
    f->history = part(sat_mul((f->taps - 1) * f->channels, sample));
  }
  return at;
}

static size_t
fill_aux_bytes(CudafftJob *const *, size_t count)
{
  return descs_bytes(count, sizeof(CudafftConvolveFillJob));
}

static void
fill_prepare(CudafftJob *const *jobs, size_t count, void *host_aux, void *)
{
  CudafftConvolveFillJob *descs = aux_descs<CudafftConvolveFillJob>(host_aux);
  for (size_t i = 0; i < count; ++i) {
    const ConvolveJob *j = as_job(jobs[i]);
    for (int r = 0; r < CUDAFFT_CONVOLVE_FILL_RANGES; ++r) {
      const FillStep &step = j->steps[r];
      descs[i].ranges[r] = CudafftConvolveFillRange{step.to_output ? j->job.device_out : step.dst,
                                                    step.from_input ? j->job.device_in : step.src,
                                                    step.count, step.op};
    }
  }
}

static CudafftStatus
fill_launch(CudafftJob *const *jobs, size_t count, void *device_aux, void *stream)
{
  size_t longest = 0;
  for (size_t i = 0; i < count; ++i)
    for (const FillStep &step : as_job(jobs[i])->steps)
      longest = step.count > longest ? step.count : longest;
  CUDAFFT_CHECK(cudafft_convolve_fill_launch(aux_descs<CudafftConvolveFillJob>(device_aux), count,
                                             longest, static_cast<cudaStream_t>(stream)));
  return CUDAFFT_STATUS_OK;
}

const CudafftWorkKind fill_kind = {"convolution state", fill_aux_bytes, fill_prepare, fill_launch,
                                   nullptr};

/* History to zeros: the delay line (the spectra of the blocks before the first) and the first set
 * of signal rows (the block before the first is zeros), or the first history, or on the split path
 * the delay line, every set of rows and the tail's output ring (z before frame 0 is zeros; the
 * tail's sums need none: each block's first share sets them); from then on the sequence starts
 * again. The jobs follow the object's earlier ones. */
void
submit_clear(Window *w, CudaConvolve *f)
{
  f->head = 0;
  f->current = 0;
  f->position = 0;
  if (f->path == CUDAFFT_CONVOLVE_DIRECT && f->taps == 1)
    return; /* nothing kept */
  ConvolveJob *job = w->next();
  if (!job)
    return;
  if (f->path == CUDAFFT_CONVOLVE_SPLIT) {
    const size_t rows_bytes = 3 * kBlock * f->channels * sizeof(float);
    job->steps[0] = zero_step(f->ring, f->slots * f->channels * kRowBytes);
    job->steps[1] = zero_step(f->rows3[0], rows_bytes);
    job->steps[2] = zero_step(f->rows3[1], rows_bytes);
    w->submit(job, nullptr, nullptr);
    job = w->next();
    if (!job)
      return;
    job->steps[0] = zero_step(f->rows3[2], rows_bytes);
    job->steps[1] = zero_step(f->tail, 2 * kBlock * f->channels * sizeof(float));
  } else if (f->path == CUDAFFT_CONVOLVE_PARTITIONED && f->format == CUDAFFT_SAMPLE_F64) {
    job->steps[0] = zero_step(f->ring64, f->slots * f->channels * kRow64Bytes);
    job->steps[1] = zero_step(f->previous64[0], f->channels * kBlock * sizeof(double));
  } else if (f->path == CUDAFFT_CONVOLVE_PARTITIONED) {
    job->steps[0] = zero_step(f->ring, f->slots * f->channels * kRowBytes);
    job->steps[1] = zero_step(f->signal[0], f->pitch * f->channels * sizeof(float));
  } else {
    job->steps[0] =
        zero_step(f->history, (f->taps - 1) * f->channels * cudafft_sample_size(f->format));
  }
  w->submit(job, nullptr, nullptr);
}

/* Jobs of a call of `units` blocks (frames on the direct path): kPipelineChunks says why. */
static size_t
call_job_units(const CudaConvolve *f, size_t units)
{
  const size_t unit_bytes = (f->path == CUDAFFT_CONVOLVE_PARTITIONED ? kBlock : 1) * f->frame_bytes;
  size_t per_job = (units + kPipelineChunks - 1) / kPipelineChunks;
  const size_t least = (kMinChunkBytes + unit_bytes - 1) / unit_bytes;
  per_job = per_job > least ? per_job : least;
  return per_job < f->job_units ? per_job : f->job_units;
}

static CudafftStatus
convolve_setup(CudaConvolve *f, const CudafftConvolveSpec *spec)
{
  f->format = spec->format;
  f->path = spec->path;
  f->channels = spec->channels;
  f->rows = spec->kernel.rows;
  f->taps = spec->kernel.taps;
  f->frame_bytes = spec->channels * cudafft_sample_size(spec->format);
  if (f->path == CUDAFFT_CONVOLVE_SPLIT)
    return split_setup(f, spec);
  if (f->path == CUDAFFT_CONVOLVE_DIRECT && f->taps > CUDAFFT_CONVOLVE_BLOCK)
    return cudafft_fail(CUDAFFT_STATUS_INVALID_SIZE,
                        "the CUDA direct path takes at most %d taps, not %zu",
                        CUDAFFT_CONVOLVE_BLOCK, f->taps);
  CudafftStatus status = cudafft_executor_acquire(spec->device_id, &f->ex);
  if (status != CUDAFFT_STATUS_OK)
    return status;
  f->device = cudafft_executor_device(f->ex);
  const size_t max_job = cudafft_executor_max_job_bytes(f->ex);
  const bool double_blocks =
      f->path == CUDAFFT_CONVOLVE_PARTITIONED && f->format == CUDAFFT_SAMPLE_F64;
  if (f->path == CUDAFFT_CONVOLVE_PARTITIONED) {
    size_t blocks = (double_blocks ? kChunkTransforms64 : kChunkTransforms) / f->channels;
    if (blocks > kChunkBytes / (kBlock * f->frame_bytes))
      blocks = kChunkBytes / (kBlock * f->frame_bytes);
    blocks = blocks < 1 ? 1 : blocks > kMaxChunkBlocks ? kMaxChunkBlocks : blocks;
    while (blocks > 1 && !blocks_fit(f, blocks, max_job))
      --blocks;
    f->staged = !blocks_fit(f, 1, max_job);
    if (f->staged)
      f->part_bytes = (max_job - aux_bytes_for(1, sizeof(CudafftConvolveFillJob), 0)) /
                      kStateAlign * kStateAlign;
    f->job_units = blocks;
    f->partitions = (f->taps + kBlock - 1) / kBlock;
    /* A job's blocks and the P - 1 before its first must coexist in the ring (which F64 jobs use
     * for P = 1 too: their transforms go through it). */
    f->slots = f->partitions > 1 || double_blocks ? f->partitions + blocks - 1 : 0;
    f->pitch = kBlock + blocks * kBlock;
  } else {
    const size_t frames = kChunkSamples / f->channels;
    f->job_units = frames > 0 ? frames : 1;
  }

  char what[256];
  if (double_blocks)
    snprintf(what, sizeof what,
             "the double-precision state of a %zu-tap kernel (%u rows) on %u channels (kernel "
             "spectra %zu MB, delay line %zu MB, transforms of a job %zu MB)",
             f->taps, f->rows, f->channels,
             megabytes(sat_mul(sat_add(sat_mul(f->partitions, f->rows), f->channels), kRow64Bytes)),
             megabytes(sat_mul(sat_mul(f->slots, f->channels), kRow64Bytes)),
             megabytes(sat_mul(sat_mul(f->job_units, f->channels),
                               2 * kN * sizeof(double) + kRow64Bytes)));
  else if (f->path == CUDAFFT_CONVOLVE_PARTITIONED)
    snprintf(what, sizeof what,
             "the state of a %zu-tap kernel (%u rows) on %u channels (kernel spectra %zu MB, "
             "delay line %zu MB)",
             f->taps, f->rows, f->channels,
             megabytes(sat_mul(sat_mul(f->partitions, f->rows), kRowBytes)),
             megabytes(sat_mul(sat_mul(f->slots, f->channels), kRowBytes)));
  else
    snprintf(what, sizeof what, "the state of a %zu-tap kernel (%u rows) on %u channels (%s)",
             f->taps, f->rows, f->channels, cudafft_sample_format_name(f->format));
  if (double_blocks) {
    /* Whether the state fits before cuFFT plans anything (their work area is small next to it),
     * so that an object too large fails with the sizes, as every other one does; the probe's
     * memory goes back to the executor's pool, which keeps it for the allocation below. */
    void *probe = nullptr;
    status = cudafft_executor_alloc(f->ex, lay_out(f, nullptr), what, &probe);
    cudafft_executor_free(f->ex, probe);
    if (status != CUDAFFT_STATUS_OK)
      return status;
    CUDAFFT_CHECK(cudafft_use_device(f->device));
    status = make_plans64(f, &f->work64_bytes);
    if (status != CUDAFFT_STATUS_OK)
      return status;
  }
  const size_t bytes = lay_out(f, nullptr);
  status = cudafft_executor_alloc(f->ex, bytes, what, &f->state);
  if (status != CUDAFFT_STATUS_OK)
    return status;
  lay_out(f, static_cast<char *>(f->state));
  if (double_blocks) {
    if (f->work64) {
      CUDAFFT_CHECK_CUFFT(cufftSetWorkArea(f->forward64, f->work64));
      CUDAFFT_CHECK_CUFFT(cufftSetWorkArea(f->inverse64, f->work64));
    }
    return load_partitioned64(f, spec->kernel);
  }
  return f->path == CUDAFFT_CONVOLVE_PARTITIONED ? load_partitioned(f, spec->kernel)
                                                 : load_direct(f, spec->kernel);
}

/* Frees the state and gives the executor back, once the jobs of a run that did not wait are
 * done (their failure has nobody left to hear it). */
static void
convolve_release(CudaConvolve *f)
{
  if (f->ex && f->waited < f->submitted)
    (void)Window(f).finish();
  if (f->forward64_made)
    cufftDestroy(f->forward64);
  if (f->inverse64_made)
    cufftDestroy(f->inverse64);
  if (!f->ex)
    return;
  cudafft_executor_free(f->ex, f->state);
  cudafft_executor_release(f->ex);
}

static CudafftStatus
convolve_run(void *impl, const CudafftConvolveJob *call)
{
  CudaConvolve *f = static_cast<CudaConvolve *>(impl);
  const size_t frames = call->frames;
  if (call->done)
    *call->done = CudafftFence{};
  if (frames == 0)
    return CUDAFFT_STATUS_OK;
  if (f->path == CUDAFFT_CONVOLVE_SPLIT)
    return run_split(f, call);
  const bool partitioned = f->path == CUDAFFT_CONVOLVE_PARTITIONED;
  if (partitioned && frames % kBlock != 0)
    return cudafft_fail(
        CUDAFFT_STATUS_INVALID_VALUE,
        "the partitioned CUDA convolution takes whole blocks of %zu frames, not %zu", kBlock,
        frames);
  const char *in = static_cast<const char *>(call->in);
  char *out = static_cast<char *>(call->out);
  const size_t unit = partitioned ? kBlock : 1, units = frames / unit;
  const size_t per_job = call_job_units(f, units), unit_bytes = unit * f->frame_bytes;
  Window w(f, call->on_device, call->after);
  for (size_t done = 0; done < units && w.ok();) {
    const size_t count = min_size(per_job, units - done);
    const char *job_in = in ? in + done * unit_bytes : nullptr;
    char *job_out = out + done * unit_bytes;
    if (!partitioned)
      submit_direct(&w, f, job_in, job_out, count, call->mix);
    else if (f->staged)
      submit_staged_block(&w, f, job_in, job_out, call->mix);
    else
      submit_blocks(&w, f, job_in, job_out, count, call->mix);
    done += count;
  }
  return w.finish(call->done);
}

static CudafftStatus
convolve_reset(void *impl)
{
  CudaConvolve *f = static_cast<CudaConvolve *>(impl);
  Window w(f);
  submit_clear(&w, f);
  return w.finish();
}

static void *
convolve_stream(const void *)
{
  return nullptr; /* the executor's streams carry the work */
}

} // namespace convolve_cuda

using namespace convolve_cuda;
extern "C" const CudafftConvolveBackend cudafft_convolve_cuda_backend = {
    cudafft_keeping_caller<
        cudafft_cuda_create<CudaConvolve, CudafftConvolveSpec, convolve_setup, convolve_release>>,
    cudafft_keeping_caller<cudafft_cuda_destroy<CudaConvolve, convolve_release>>,
    cudafft_keeping_caller<convolve_run>, cudafft_keeping_caller<convolve_reset>, convolve_stream};
