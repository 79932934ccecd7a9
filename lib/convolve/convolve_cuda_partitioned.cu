/* convolve_cuda_partitioned.cu: the CUDA backend's partitioned F32 path: uniformly partitioned
 * overlap-save at B = CUDAFFT_CONVOLVE_BLOCK with the single-precision block FFT. Its kinds:
 * blocks (deinterleave into signal rows, forward FFTs into the delay line, then MAC + inverse FFT
 * + mix + interleave for P > 1, or the fused kernel for P = 1) and kernel spectra (from uploaded
 * taps; the split path's head and tail spectra too). Blocks larger than a job holds go through the
 * object's block buffers in parts (staged). */
#include "convolve_cuda_state.cuh"

#include <cstdlib>

namespace convolve_cuda {

size_t
twiddle_bytes()
{
  int plans = 0;
  const CudafftTwiddlePlan *twiddles = cudafft_convolve_twiddle_plans(&plans);
  return cudafft_twiddles_count(twiddles, plans) * sizeof(float2);
}

/* Units of each job (convolve_kernels.h): transforms of a partitioned job, tiles of a direct one
 * and the samples of its append to the ring in runs of CUDAFFT_CONVOLVE_DIRECT_UNIT, partitions
 * of a spectra job (F64: frames of a whole batch of the plan, `channels`). */
size_t
block_units(const ConvolveJob *j)
{
  return j->count * j->f->channels;
}

static bool
multi_partition(const ConvolveJob *j)
{
  return j->f->partitions > 1;
}

static size_t
blocks_aux_bytes(CudafftJob *const *jobs, size_t count)
{
  return aux_bytes_for(count, sizeof(CudafftConvolveBlocksJob), sum_over(jobs, count, block_units));
}

static CudafftConvolveBlocksJob
describe_blocks(const ConvolveJob *j)
{
  const CudaConvolve *f = j->f;
  CudafftConvolveBlocksJob d = {};
  d.in = j->staged ? f->raw_block : j->job.device_in;
  d.out = j->staged ? f->out_block : j->job.device_out;
  d.signal = f->signal[j->current];
  d.next = f->signal[1 - j->current];
  d.ring = f->ring;
  d.spectra = f->spectra;
  d.pitch = f->pitch;
  d.wet_gain = (float)j->mix;
  d.dry_gain = (float)(1.0 - j->mix);
  d.format = f->format;
  d.channels = (int)f->channels;
  d.kernel_rows = (int)f->rows;
  d.partitions = (int)f->partitions;
  d.slots = (int)f->slots;
  d.first_slot = (int)j->head;
  d.blocks = (int)j->count;
  return d;
}

/* The units of the jobs with P > 1 first (forward and MAC launch over them), then those of the
 * jobs with P = 1 (the fused launch); the deinterleave launches over all. */
static void
blocks_prepare(CudafftJob *const *jobs, size_t count, void *host_aux, void *)
{
  CudafftConvolveBlocksJob *descs = aux_descs<CudafftConvolveBlocksJob>(host_aux);
  CudafftConvolveUnit *at = aux_units<CudafftConvolveBlocksJob>(host_aux, count);
  for (size_t i = 0; i < count; ++i)
    descs[i] = describe_blocks(as_job(jobs[i]));
  for (int multi = 1; multi >= 0; --multi)
    for (size_t i = 0; i < count; ++i)
      if (multi_partition(as_job(jobs[i])) == (multi == 1))
        at = map_units(at, i, block_units(as_job(jobs[i])));
}

static CudafftStatus
blocks_launch(CudafftJob *const *jobs, size_t count, void *device_aux, void *stream)
{
  size_t multi = 0, single = 0;
  for (size_t i = 0; i < count; ++i)
    (multi_partition(as_job(jobs[i])) ? multi : single) += block_units(as_job(jobs[i]));
  const CudafftConvolveBlocksJob *descs = aux_descs<CudafftConvolveBlocksJob>(device_aux);
  const CudafftConvolveUnit *units = aux_units<CudafftConvolveBlocksJob>(device_aux, count);
  /* every object's table is the same: the first job's serves the launch */
  const float2 *twiddles = as_job(jobs[0])->f->twiddles;
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  CUDAFFT_CHECK(cudafft_convolve_deinterleave_launch(descs, units, multi + single, s));
  CUDAFFT_CHECK(cudafft_convolve_forward_launch(descs, units, multi, twiddles, s));
  CUDAFFT_CHECK(cudafft_convolve_mac_launch(descs, units, multi, twiddles, s));
  CUDAFFT_CHECK(cudafft_convolve_fused_launch(descs, units + multi, single, twiddles, s));
  return CUDAFFT_STATUS_OK;
}

const CudafftWorkKind blocks_kind = {"convolution blocks", blocks_aux_bytes, blocks_prepare,
                                     blocks_launch, nullptr};

size_t
spectra_units(const ConvolveJob *j)
{
  return j->f->format == CUDAFFT_SAMPLE_F64 && j->f->path == CUDAFFT_CONVOLVE_PARTITIONED
             ? j->f->channels
             : units_of(j->count, kBlock);
}

static size_t
spectra_aux_bytes(CudafftJob *const *jobs, size_t count)
{
  return aux_bytes_for(count, sizeof(CudafftConvolveSpectraJob),
                       sum_over(jobs, count, spectra_units));
}

static void
spectra_prepare(CudafftJob *const *jobs, size_t count, void *host_aux, void *)
{
  CudafftConvolveSpectraJob *descs = aux_descs<CudafftConvolveSpectraJob>(host_aux);
  CudafftConvolveUnit *at = aux_units<CudafftConvolveSpectraJob>(host_aux, count);
  for (size_t i = 0; i < count; ++i) {
    const ConvolveJob *j = as_job(jobs[i]);
    descs[i] = CudafftConvolveSpectraJob{static_cast<const double *>(j->job.device_in),
                                         j->spectra_rows, j->count};
    at = map_units(at, i, spectra_units(j));
  }
}

static CudafftStatus
spectra_launch(CudafftJob *const *jobs, size_t count, void *device_aux, void *stream)
{
  CUDAFFT_CHECK(cudafft_convolve_spectra_launch(
      aux_descs<CudafftConvolveSpectraJob>(device_aux),
      aux_units<CudafftConvolveSpectraJob>(device_aux, count), sum_over(jobs, count, spectra_units),
      as_job(jobs[0])->f->twiddles, static_cast<cudaStream_t>(stream)));
  return CUDAFFT_STATUS_OK;
}

const CudafftWorkKind spectra_kind = {"convolution kernel spectra", spectra_aux_bytes,
                                      spectra_prepare, spectra_launch, nullptr};

/* The twiddle table on the host (the tables of cudafft_convolve_twiddle_plans(), one after
 * another), for the object's copy; free() it. */
static float *
host_twiddles()
{
  int plans = 0;
  const CudafftTwiddlePlan *twiddles = cudafft_convolve_twiddle_plans(&plans);
  float *table = static_cast<float *>(malloc(twiddle_bytes()));
  if (!table)
    return nullptr;
  float *at = table;
  for (int i = 0; i < plans; ++i) {
    cudafft_twiddle_table(twiddles[i].n_complex, twiddles[i].plan_kind, at);
    at += 2 * cudafft_twiddle_count(twiddles[i].n_complex, twiddles[i].plan_kind);
  }
  return table;
}

/* The twiddle table, from `table` (host_twiddles()'s, which must outlive the window's jobs). */
static void
submit_twiddles(Window *w, CudaConvolve *f, const float *table)
{
  if (ConvolveJob *job = w->next()) {
    job->steps[0] = from_input(copy_step(f->twiddles, nullptr, twiddle_bytes()));
    job->job.in_bytes = twiddle_bytes();
    w->submit(job, table, nullptr);
  }
}

/* The spectra of the `partitions` partitions of kernel (F32), row r's partition p to spectrum row
 * r partitions + p from `spectra` on: each job a range of partitions of a row, the taps uploaded
 * as they are and rounded to float by the kernel. */
static void
submit_spectra(Window *w, CudaConvolve *f, const CudafftConvolveKernel &kernel, size_t partitions,
               float2 *spectra)
{
  /* partitions per job: their taps and unit entries, after the descriptor */
  const size_t max_job = cudafft_executor_max_job_bytes(f->ex);
  const size_t room = max_job - aux_bytes_for(1, sizeof(CudafftConvolveSpectraJob), 0);
  const size_t per_job = room / (kBlock * sizeof(double) + sizeof(CudafftConvolveUnit));
  for (size_t r = 0; r < kernel.rows; ++r)
    for (size_t p = 0; p < partitions; p += per_job) {
      ConvolveJob *job = w->next();
      if (!job)
        return;
      job->work = Work::Spectra;
      job->spectra_rows = spectra + (r * partitions + p) * CUDAFFT_CONVOLVE_BIN_PITCH;
      job->count = min_size(kernel.taps - p * kBlock, per_job * kBlock);
      job->job.in_bytes = job->count * sizeof(double);
      w->submit(job, kernel.taps_data + r * kernel.taps + p * kBlock, nullptr);
    }
}

/* Partitioned (F32) and split setup: the twiddle table, the split path's head spectrum (one
 * partition of its a <= B taps; head nullptr on the partitioned path), the spectra of kernel (the
 * split path's tail), and the history cleared. */
CudafftStatus
load_partitioned(CudaConvolve *f, const CudafftConvolveKernel &kernel,
                 const CudafftConvolveKernel *head)
{
  float *table = host_twiddles();
  if (!table)
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY, "cannot allocate a twiddle table");
  Window w(f);
  submit_twiddles(&w, f, table);
  if (head)
    submit_spectra(&w, f, *head, 1, f->head_spectra);
  submit_spectra(&w, f, kernel, f->partitions, f->spectra);
  submit_clear(&w, f);
  const CudafftStatus status = w.finish();
  free(table);
  return status;
}

/* One partitioned job of `blocks` blocks, its input at in (nullptr: zeros), its output to out. */
void
submit_blocks(Window *w, CudaConvolve *f, const char *in, char *out, size_t blocks, double mix)
{
  ConvolveJob *job = w->next();
  if (!job)
    return;
  job->work = Work::Blocks;
  job->count = blocks;
  job->current = f->current;
  job->head = f->head;
  job->mix = mix;
  job->job.in_bytes = job->job.out_bytes = blocks * kBlock * f->frame_bytes;
  w->submit(job, in, out);
  f->current = 1 - f->current;
  if (f->slots > 0)
    f->head = (f->head + blocks) % f->slots;
}

/* One block of a staged object: its input copied into the object's raw block in parts, the block's
 * job on the block buffers, its output copied out of the out block in parts. */
void
submit_staged_block(Window *w, CudaConvolve *f, const char *in, char *out, double mix)
{
  const size_t bytes = kBlock * f->frame_bytes;
  char *raw = static_cast<char *>(f->raw_block);
  const char *cooked = static_cast<const char *>(f->out_block);
  for (size_t at = 0; at < bytes; at += f->part_bytes) {
    ConvolveJob *job = w->next();
    if (!job)
      return;
    const size_t size = min_size(f->part_bytes, bytes - at);
    job->steps[0] = from_input(copy_step(raw + at, nullptr, size));
    job->job.in_bytes = size;
    w->submit(job, in ? in + at : nullptr, nullptr);
  }
  ConvolveJob *job = w->next();
  if (!job)
    return;
  job->work = Work::Blocks;
  job->count = 1;
  job->current = f->current;
  job->head = f->head;
  job->mix = mix;
  job->staged = true;
  w->submit(job, nullptr, nullptr);
  f->current = 1 - f->current;
  if (f->slots > 0)
    f->head = (f->head + 1) % f->slots;
  for (size_t at = 0; at < bytes; at += f->part_bytes) {
    job = w->next();
    if (!job)
      return;
    const size_t size = min_size(f->part_bytes, bytes - at);
    job->steps[0] = to_output(copy_step(nullptr, cooked + at, size));
    job->job.out_bytes = size;
    w->submit(job, nullptr, out + at);
  }
}

/* Whether a partitioned job of `blocks` blocks fits an executor job. */
bool
blocks_fit(const CudaConvolve *f, size_t blocks, size_t max_job)
{
  const size_t in = blocks * kBlock * f->frame_bytes;
  const size_t aux =
      f->format == CUDAFFT_SAMPLE_F64
          ? aux_bytes_for(1, sizeof(CudafftConvolveBlocks64Job), 2 * blocks * f->channels)
          : aux_bytes_for(1, sizeof(CudafftConvolveBlocksJob), blocks * f->channels);
  return in <= max_job && aux <= max_job - in;
}

} // namespace convolve_cuda
