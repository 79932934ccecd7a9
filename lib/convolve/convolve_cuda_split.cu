/* convolve_cuda_split.cu: the CUDA backend's split path (convolve_kernels.h's
 * CUDAFFT_CONVOLVE_SPLIT): F32 at block sizes L below B, a head of a <= B taps as one partition
 * at L and the tail partitioned at B, whose MAC is shared out over the pushes of a block so that no
 * push waits for a whole block's work. One kind, split: one job a push of whole blocks of L within
 * one block of B, with its share of the tail's MAC run ahead (after the batch) for the push after
 * it. */
#include "convolve_cuda_state.cuh"
#include "convolve_split.h"

#include <algorithm>
#include <cstdlib>

namespace convolve_cuda {

/* Split jobs (convolve_kernels.h's split path): a push's head and tail in one job of one kind, so
 * that a push is one job in one batch. */
static
    /* The partitions [first, end) of 1..P - 1 whose products the pushes of L frames at [within,
     * within + frames) of a block add to its sum: their shares. The block's K = B / L pushes but
     * the last (K >= 2), which has the block's transforms to do, share them about equally: push k <
     * K - 1 gets [1 + (P - 1) k / (K - 1), 1 + (P - 1) (k + 1) / (K - 1)), so that each is added
     * once. */
    void
    split_share_range(const CudaConvolve *f, size_t within, size_t frames, int *first, int *end)
{
  const size_t sharing = kBlock / f->block_size - 1, earlier = f->partitions - 1;
  const size_t k0 = min_size(within / f->block_size, sharing);
  const size_t k1 = min_size((within + frames) / f->block_size, sharing);
  *first = (int)(1 + earlier * k0 / sharing);
  *end = (int)(1 + earlier * k1 / sharing);
}

/* A split job's own shares: its pushes', but the first push's where a job came before it since
 * create or reset (each runs the share of the push after it ahead, split_ahead_range). */
static void
split_mac_range(const ConvolveJob *j, int *first, int *end)
{
  const size_t skip = j->position > 0 ? j->f->block_size : 0;
  split_share_range(j->f, j->position % kBlock + skip, j->count - skip, first, end);
}

/* Work ahead: the share of the push after the job (the next block's first where the job completes
 * a block) and that push's block's ring slot. It reads only blocks before that push's, so the
 * device runs it after the job's batch, in the time before the next push comes (a live source's
 * period), instead of in that push's round trip. */
static void
split_ahead_range(const ConvolveJob *j, int *first, int *end, int *slot)
{
  const size_t next = j->position + j->count;
  split_share_range(j->f, next % kBlock, j->f->block_size, first, end);
  *slot = (int)(next / kBlock % j->f->partitions);
}

static bool
split_completes(const ConvolveJob *j)
{
  return j->position % kBlock + j->count == kBlock;
}

static size_t
split_run_units(const ConvolveJob *j)
{
  return units_of(j->count * j->f->channels, CUDAFFT_CONVOLVE_SPLIT_RUN);
}

static size_t
split_head_units(const ConvolveJob *j)
{
  return j->f->channels;
}

static size_t
split_mac_units(const ConvolveJob *j)
{
  int first = 0, end = 0;
  split_mac_range(j, &first, &end);
  return first < end ? j->f->channels * CUDAFFT_CONVOLVE_SPLIT_MAC_CHUNKS : 0;
}

static size_t
split_transform_units(const ConvolveJob *j)
{
  return split_completes(j) ? j->f->channels : 0;
}

static size_t
split_ahead_units(const ConvolveJob *j)
{
  int first = 0, end = 0, slot = 0;
  split_ahead_range(j, &first, &end, &slot);
  return first < end ? j->f->channels * CUDAFFT_CONVOLVE_SPLIT_MAC_CHUNKS : 0;
}

/* The units of each launch, in the order of the launches and of the auxiliary data; the work
 * ahead's last. */
using UnitsOf = size_t (*)(const ConvolveJob *);
const UnitsOf split_unit_kinds[] = {split_run_units, split_head_units, split_mac_units,
                                    split_transform_units, split_ahead_units};
constexpr int kSplitLaunches = sizeof split_unit_kinds / sizeof split_unit_kinds[0] - 1;

static size_t
split_units(const ConvolveJob *j)
{
  size_t units = 0;
  for (UnitsOf of : split_unit_kinds)
    units += of(j);
  return units;
}

/* The auxiliary data: the jobs' descriptors, then their work ahead's (the same but for the MAC's
 * share and slot), then the units. */
static size_t
split_aux_bytes(CudafftJob *const *jobs, size_t count)
{
  return aux_bytes_for(2 * count, sizeof(CudafftConvolveSplitJob),
                       sum_over(jobs, count, split_units));
}

static CudafftConvolveSplitJob
describe_split(const ConvolveJob *j)
{
  const CudaConvolve *f = j->f;
  const size_t block = j->position / kBlock;
  CudafftConvolveSplitJob d = {};
  d.in = static_cast<const float *>(j->job.device_in);
  d.out = static_cast<float *>(j->job.device_out);
  d.signal = f->rows3[block % 3];
  d.next = f->rows3[(block + 1) % 3];
  d.after = f->rows3[(block + 2) % 3];
  d.head_spectra = f->head_spectra;
  d.ring = f->ring;
  d.spectra = f->spectra;
  d.acc = f->acc;
  d.tail = f->tail;
  d.within = j->position % kBlock;
  d.frames = j->count;
  /* output frame n adds z[n - a], a = B - L: ring frame (n - a) mod 2B = (n + B + L) mod 2B */
  d.tail_from = (j->position + kBlock + f->block_size) % (2 * kBlock);
  d.wet_gain = (float)j->mix;
  d.dry_gain = (float)(1.0 - j->mix);
  d.channels = (int)f->channels;
  d.kernel_rows = (int)f->rows;
  d.partitions = (int)f->partitions;
  split_mac_range(j, &d.mac_first, &d.mac_end);
  d.slot = (int)(block % f->partitions);
  d.tail_block = (int)(block % 2);
  return d;
}

static void
split_prepare(CudafftJob *const *jobs, size_t count, void *host_aux, void *)
{
  CudafftConvolveSplitJob *descs = aux_descs<CudafftConvolveSplitJob>(host_aux);
  for (size_t i = 0; i < count; ++i) {
    const ConvolveJob *j = as_job(jobs[i]);
    descs[i] = describe_split(j);
    descs[count + i] = descs[i];
    split_ahead_range(j, &descs[count + i].mac_first, &descs[count + i].mac_end,
                      &descs[count + i].slot);
  }
  CudafftConvolveUnit *at = aux_units<CudafftConvolveSplitJob>(host_aux, 2 * count);
  for (int k = 0; k < kSplitLaunches; ++k)
    for (size_t i = 0; i < count; ++i)
      at = map_units(at, i, split_unit_kinds[k](as_job(jobs[i])));
  for (size_t i = 0; i < count; ++i)
    at = map_units(at, count + i, split_ahead_units(as_job(jobs[i])));
}

static CudafftStatus
split_launch(CudafftJob *const *jobs, size_t count, void *device_aux, void *stream)
{
  const CudafftConvolveUnit *units[kSplitLaunches];
  size_t counts[kSplitLaunches];
  units[0] = aux_units<CudafftConvolveSplitJob>(device_aux, 2 * count);
  for (int k = 0; k < kSplitLaunches; ++k) {
    counts[k] = sum_over(jobs, count, split_unit_kinds[k]);
    if (k + 1 < kSplitLaunches)
      units[k + 1] = units[k] + counts[k];
  }
  /* every object's table is the same: the first job's serves the launch */
  CUDAFFT_CHECK(cudafft_convolve_split_launch(
      aux_descs<CudafftConvolveSplitJob>(device_aux), units[0], counts[0], units[1], counts[1],
      units[2], counts[2], units[3], counts[3], as_job(jobs[0])->f->twiddles,
      static_cast<cudaStream_t>(stream)));
  return CUDAFFT_STATUS_OK;
}

/* The MAC shares of the pushes after the jobs (split_ahead_range), after the batch's marker. */
static CudafftStatus
split_launch_ahead(CudafftJob *const *jobs, size_t count, void *device_aux, void *stream)
{
  const CudafftConvolveUnit *units = aux_units<CudafftConvolveSplitJob>(device_aux, 2 * count);
  for (int k = 0; k < kSplitLaunches; ++k)
    units += sum_over(jobs, count, split_unit_kinds[k]);
  CUDAFFT_CHECK(cudafft_convolve_split_mac_launch(aux_descs<CudafftConvolveSplitJob>(device_aux),
                                                  units, sum_over(jobs, count, split_ahead_units),
                                                  static_cast<cudaStream_t>(stream)));
  return CUDAFFT_STATUS_OK;
}

const CudafftWorkKind split_kind = {"convolution split", split_aux_bytes, split_prepare,
                                    split_launch, split_launch_ahead};

/* One split job of `frames` frames (whole blocks of L, within one block of B). */
static void
submit_split(Window *w, CudaConvolve *f, const char *in, char *out, size_t frames, double mix)
{
  ConvolveJob *job = w->next();
  if (!job)
    return;
  job->work = Work::Split;
  job->count = frames;
  job->position = f->position;
  job->mix = mix;
  job->job.in_bytes = job->job.out_bytes = frames * f->frame_bytes;
  w->submit(job, in, out);
  f->position += frames;
}

/* Whether a split job of `frames` frames, with the aux bytes of the most units such a job has
 * (one that completes a block has the transforms; one at a block's start the MAC shares of all
 * its pushes, and its work ahead's), fits what a job holds. */
static bool
split_fits(CudaConvolve *f, size_t frames, size_t max_job)
{
  size_t aux = 0;
  for (size_t position : {kBlock - frames, (size_t)0}) {
    ConvolveJob probe;
    probe.f = f;
    probe.count = frames;
    probe.position = position;
    CudafftJob *jobs[] = {&probe.job};
    aux = std::max(aux, split_aux_bytes(jobs, 1));
  }
  const size_t in = frames * f->frame_bytes;
  return in <= max_job && aux <= max_job - in;
}

/* The split path (convolve_kernels.h's), where the backend has it: F32, block sizes from
 * CUDAFFT_CONVOLVE_MIN_BLOCK to B / 2, and a kernel that reaches past the head (shorter ones are
 * the head alone, which the split module runs on the direct path); UNSUPPORTED otherwise, before
 * anything is made, and where a block of L frames is more than a job holds. */
CudafftStatus
split_setup(CudaConvolve *f, const CudafftConvolveSpec *spec)
{
  const size_t L = spec->block_size, a = cudafft_convolve_split_head_taps(L);
  if (f->format != CUDAFFT_SAMPLE_F32 || L < CUDAFFT_CONVOLVE_MIN_BLOCK || L >= kBlock ||
      f->taps <= a)
    return cudafft_fail(CUDAFFT_STATUS_UNSUPPORTED,
                        "no CUDA split path for %s at block size %zu with %zu taps",
                        cudafft_sample_format_name(f->format), L, f->taps);
  CudafftStatus status = cudafft_executor_acquire(spec->device_id, &f->ex);
  if (status != CUDAFFT_STATUS_OK)
    return status;
  f->device = cudafft_executor_device(f->ex);
  f->block_size = L;
  const size_t tail_taps = f->taps - a;
  f->partitions = (tail_taps + kBlock - 1) / kBlock;
  f->slots = f->partitions;
  /* a job: the most whole blocks of L up to B that it holds */
  const size_t max_job = cudafft_executor_max_job_bytes(f->ex);
  size_t frames = kBlock;
  while (frames >= L && !split_fits(f, frames, max_job))
    frames -= L;
  if (frames < L)
    return cudafft_fail(CUDAFFT_STATUS_UNSUPPORTED,
                        "a CUDA split job of %zu frames of %u channels is more than a job holds", L,
                        f->channels);
  f->job_units = frames;

  char what[256];
  snprintf(what, sizeof what,
           "the split state of a %zu-tap kernel (%u rows) on %u channels at block size %zu "
           "(kernel spectra %zu MB, delay line %zu MB)",
           f->taps, f->rows, f->channels, L,
           megabytes(sat_mul(sat_mul(f->partitions, f->rows), kRowBytes)),
           megabytes(sat_mul(sat_mul(f->slots, f->channels), kRowBytes)));
  status = cudafft_executor_alloc(f->ex, lay_out(f, nullptr), what, &f->state);
  if (status != CUDAFFT_STATUS_OK)
    return status;
  lay_out(f, static_cast<char *>(f->state));
  double *head = cudafft_convolve_kernel_columns(&spec->kernel, 0, a);
  double *tail = cudafft_convolve_kernel_columns(&spec->kernel, a, tail_taps);
  if (head && tail) {
    const CudafftConvolveKernel head_kernel{head, a, f->rows};
    status = load_partitioned(f, CudafftConvolveKernel{tail, tail_taps, f->rows}, &head_kernel);
  } else
    status = cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY,
                          "cannot copy the head and tail of a %zu-tap kernel (%u rows)", f->taps,
                          f->rows);
  free(head);
  free(tail);
  return status;
}

/* A split call: jobs of whole blocks of L, each within one block of B (the schedule's unit) and at
 * most job_units frames. */
CudafftStatus
run_split(CudaConvolve *f, const CudafftConvolveJob *call)
{
  if (call->frames % f->block_size != 0)
    return cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE,
                        "the CUDA split convolution takes whole blocks of %zu frames, not %zu",
                        f->block_size, call->frames);
  const char *in = static_cast<const char *>(call->in);
  char *out = static_cast<char *>(call->out);
  Window w(f, call->on_device, call->after);
  for (size_t done = 0; done < call->frames && w.ok();) {
    const size_t within = f->position % kBlock;
    const size_t count = min_size(min_size(call->frames - done, kBlock - within), f->job_units);
    submit_split(&w, f, in ? in + done * f->frame_bytes : nullptr, out + done * f->frame_bytes,
                 count, call->mix);
    done += count;
  }
  return w.finish(call->done);
}

} // namespace convolve_cuda
