/* matrix_cuda.cu: the matrix convolution's CUDA backend: per block, each input's 2L-point real FFT
 * (cuFFT, one batch of every input) packed into the delay line, the fused multiply-accumulate over
 * every (output, entry, partition) (matrix_kernels.h), one inverse FFT per output (one batch of
 * every output, of both sets during a crossover) and the frames written interleaved, blended
 * during a crossover. Host samples pass through page-locked staging a chunk of blocks at a time;
 * samples in device memory of the object's context (a job's on_device) are read and written where
 * they are, by the same kernels.
 *
 * The object queues its work on a stream of its own rather than the shared executor's batches:
 * its unit of work is one whole matrix block whose multiply-accumulate alone fills the GPU (a
 * 64 x 64 matrix of 1 s responses reads 1.6 GB per block), so there is nothing to gain from
 * batching it with other objects' jobs, and its delay line must advance block by block in order. */
#include "matrix_backend.h"
#include "matrix_kernels.h"

#include "backend_object.cuh"
#include "caller_context.cuh"
#include "cuda_check.cuh"
#include "cufft_check.cuh"
#include "device_choice.cuh"
#include "devices.h"
#include "device_memory.h"
#include "errors.h"
#include "size_math.h"

#include <cufft.h>
#include <string.h>

namespace {

/* Frames of input staged per chunk (and of output), at most, and the bytes a chunk's staging may
 * take each way (page-locked memory is the host's scarcest kind); and the real values a response
 * chunk's transforms take at a time. */
constexpr size_t kChunkFrames = 8192;
constexpr size_t kChunkBytes = size_t(16) << 20;
constexpr size_t kLoadValues = size_t(1) << 22;

struct CudaSet {
  bool made = false;
  void *spectra = nullptr;
  MatrixDeviceEntry *entry = nullptr;
  unsigned *first = nullptr;
  unsigned parts = 0;
  long long bytes = 0; /* counted in the device's load */
};

struct CudaMatrix {
  int device = -1;
  cudaStream_t stream = nullptr;
  cudaEvent_t done = nullptr; /* blocking sync: waits for the stream sleep instead of spinning */
  unsigned inputs = 0, outputs = 0;
  CudafftSampleFormat format = CUDAFFT_SAMPLE_F32;
  size_t L = 0, real = 0, value = 0; /* block size; bytes of a real and of a complex value */
  size_t cap = 0, block = 0;         /* the delay line's slots; blocks since reset */
  void *fdl = nullptr;
  long long fdl_bytes = 0;
  void *prev = nullptr, *time_in = nullptr, *bins_in = nullptr;
  unsigned max_splits = 0;
  void *partial = nullptr, *bins_out = nullptr, *time_out = nullptr;
  size_t chunk_blocks = 0;
  void *d_in = nullptr, *d_out = nullptr, *h_in = nullptr, *h_out = nullptr;
  cufftHandle forward = 0, inverse = 0, inverse_fade = 0;
  bool forward_made = false, inverse_made = false, inverse_fade_made = false;
  CudaSet cur, next, queued;
};

/* Waits for the work queued on the object's stream, asleep (cudaStreamSynchronize would spin). */
cudaError_t
wait_stream(const CudaMatrix *m)
{
  const cudaError_t error = cudaEventRecord(m->done, m->stream);
  return error != cudaSuccess ? error : cudaEventSynchronize(m->done);
}

cufftType
forward_type(const CudaMatrix *m)
{
  return m->format == CUDAFFT_SAMPLE_F64 ? CUFFT_D2Z : CUFFT_R2C;
}

cufftType
inverse_type(const CudaMatrix *m)
{
  return m->format == CUDAFFT_SAMPLE_F64 ? CUFFT_Z2D : CUFFT_C2R;
}

CudafftStatus
exec_forward(const CudaMatrix *m, cufftHandle plan, void *in, void *out)
{
  if (m->format == CUDAFFT_SAMPLE_F64)
    CUDAFFT_CHECK_CUFFT(cufftExecD2Z(plan, static_cast<cufftDoubleReal *>(in),
                                     static_cast<cufftDoubleComplex *>(out)));
  else
    CUDAFFT_CHECK_CUFFT(
        cufftExecR2C(plan, static_cast<cufftReal *>(in), static_cast<cufftComplex *>(out)));
  return CUDAFFT_STATUS_OK;
}

CudafftStatus
exec_inverse(const CudaMatrix *m, cufftHandle plan, void *in, void *out)
{
  if (m->format == CUDAFFT_SAMPLE_F64)
    CUDAFFT_CHECK_CUFFT(cufftExecZ2D(plan, static_cast<cufftDoubleComplex *>(in),
                                     static_cast<cufftDoubleReal *>(out)));
  else
    CUDAFFT_CHECK_CUFFT(
        cufftExecC2R(plan, static_cast<cufftComplex *>(in), static_cast<cufftReal *>(out)));
  return CUDAFFT_STATUS_OK;
}

/* A plan of `batch` 2L-point transforms of `type` on the object's stream. */
CudafftStatus
make_plan(CudaMatrix *m, cufftHandle *plan, bool *made, cufftType type, size_t batch)
{
  int n = (int)(2 * m->L);
  CUDAFFT_CHECK_CUFFT(cufftPlanMany(plan, 1, &n, nullptr, 1, 0, nullptr, 1, 0, type, (int)batch));
  *made = true;
  CUDAFFT_CHECK_CUFFT(cufftSetStream(*plan, m->stream));
  return CUDAFFT_STATUS_OK;
}

/* Allocates device memory counted in the device's load (devices.h). */
CudafftStatus
state_alloc(CudaMatrix *m, void **ptr, size_t bytes, const char *what, long long *counted)
{
  const CudafftStatus status = cudafft_device_alloc(ptr, bytes, what);
  if (status == CUDAFFT_STATUS_OK) {
    cudafft_device_load_change(m->device, 0, (long long)bytes);
    *counted += (long long)bytes;
  }
  return status;
}

void
set_free(CudaMatrix *m, CudaSet *set)
{
  cudafft_device_free({set->spectra, set->entry, set->first});
  cudafft_device_load_change(m->device, 0, -set->bytes);
  *set = CudaSet();
}

template <typename R>
CudafftStatus
set_build(CudaMatrix *m, const CudafftMatrixSet *set, CudaSet *dst, size_t total)
{
  const size_t L = m->L, n = 2 * L;
  const size_t chunk = kLoadValues / n > total ? total : kLoadValues / n; /* >= 1 */
  R *host = nullptr;
  void *time = nullptr, *bins = nullptr;
  cufftHandle plan = 0;
  bool plan_made = false;
  CudafftStatus status = CUDAFFT_STATUS_OK;
  do {
    if ((status = cudafft_pinned_host_alloc((void **)&host, chunk * n * sizeof(R),
                                            "staging responses")) ||
        (status = cudafft_device_alloc(&time, chunk * n * sizeof(R), "response partitions")) ||
        (status = cudafft_device_alloc(&bins, chunk * (L + 1) * m->value, "response spectra")) ||
        (status = make_plan(m, &plan, &plan_made, forward_type(m), chunk)))
      break;
    size_t row = 0, done = 0;
    for (size_t e = 0; e < set->count && status == CUDAFFT_STATUS_OK; e++) {
      const CudafftMatrixEntry *entry = &set->entries[e];
      const double *h =
          set->taps_data + ((size_t)entry->input * m->outputs + entry->output) * set->taps;
      for (size_t p = 0; p < entry->parts; p++) {
        const size_t first = p * L, count = first + L <= set->taps ? L : set->taps - first;
        R *to = host + row * n;
        for (size_t t = 0; t < count; t++)
          to[t] = matrix_tap<R>(h[first + t], L);
        memset(to + count, 0, (n - count) * sizeof(R));
        if (++row < chunk && done + row < total)
          continue;
        /* A full chunk (or the last): transform it, pack it after the chunks before. */
        cudaError_t error =
            cudaMemcpyAsync(time, host, row * n * sizeof(R), cudaMemcpyHostToDevice, m->stream);
        if (error != cudaSuccess) {
          status = cudafft_cuda_failure(error, "cudaMemcpyAsync", __FILE__, __LINE__);
          break;
        }
        if ((status = exec_forward(m, plan, time, bins)))
          break;
        error = MatrixKernels<R>::pack(
            bins, static_cast<char *>(dst->spectra) + done * L * m->value, row, L, m->stream);
        if (error == cudaSuccess)
          error = wait_stream(m); /* before the staging is filled again */
        if (error != cudaSuccess) {
          status = cudafft_cuda_failure(error, "packing response spectra", __FILE__, __LINE__);
          break;
        }
        done += row;
        row = 0;
      }
    }
  } while (0);
  if (plan_made)
    cufftDestroy(plan);
  cudaFreeHost(host);
  cudafft_device_free({time, bins});
  return status;
}

CudafftStatus
set_make(CudaMatrix *m, const CudafftMatrixSet *set, CudaSet *dst)
{
  *dst = CudaSet();
  size_t total = 0;
  for (size_t e = 0; e < set->count; e++)
    total += set->entries[e].parts;
  MatrixDeviceEntry *entries = new (std::nothrow) MatrixDeviceEntry[set->count ? set->count : 1];
  unsigned *first = new (std::nothrow) unsigned[m->outputs + 1]();
  if (!entries || !first) {
    delete[] entries;
    delete[] first;
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY, "cannot list a matrix's entries");
  }
  size_t offset = 0;
  for (size_t e = 0; e < set->count; e++) {
    const CudafftMatrixEntry *entry = &set->entries[e];
    entries[e] = MatrixDeviceEntry{entry->input, (unsigned)entry->parts, offset};
    offset += entry->parts;
    first[entry->output + 1] = (unsigned)(e + 1);
  }
  for (unsigned j = 0; j < m->outputs; j++) /* outputs without entries: empty ranges */
    if (first[j + 1] < first[j])
      first[j + 1] = first[j];
  size_t bytes = 0;
  CudafftStatus status = CUDAFFT_STATUS_OK;
  if (!mul_size(total, m->L * m->value, &bytes))
    status = cudafft_fail(CUDAFFT_STATUS_DEVICE_OUT_OF_MEMORY,
                          "response spectra of %zu partitions of %zu bins overflow", total, m->L);
  if (status == CUDAFFT_STATUS_OK)
    status = state_alloc(m, &dst->spectra, bytes, "response spectra", &dst->bytes);
  if (status == CUDAFFT_STATUS_OK)
    status = state_alloc(m, (void **)&dst->entry, (set->count ? set->count : 1) * sizeof *entries,
                         "matrix entries", &dst->bytes);
  if (status == CUDAFFT_STATUS_OK)
    status = state_alloc(m, (void **)&dst->first, (m->outputs + 1) * sizeof *first,
                         "matrix entries", &dst->bytes);
  if (status == CUDAFFT_STATUS_OK) {
    cudaError_t error = cudaMemcpyAsync(dst->entry, entries, set->count * sizeof *entries,
                                        cudaMemcpyHostToDevice, m->stream);
    if (error == cudaSuccess)
      error = cudaMemcpyAsync(dst->first, first, (m->outputs + 1) * sizeof *first,
                              cudaMemcpyHostToDevice, m->stream);
    if (error == cudaSuccess)
      error = wait_stream(m);
    if (error != cudaSuccess)
      status = cudafft_cuda_failure(error, "copying a matrix's entries", __FILE__, __LINE__);
  }
  delete[] entries;
  delete[] first;
  if (status == CUDAFFT_STATUS_OK && total > 0)
    status = m->format == CUDAFFT_SAMPLE_F64 ? set_build<double>(m, set, dst, total)
                                             : set_build<float>(m, set, dst, total);
  if (status != CUDAFFT_STATUS_OK) {
    set_free(m, dst);
    return status;
  }
  dst->parts = (unsigned)set->parts;
  dst->made = true;
  return CUDAFFT_STATUS_OK;
}

/* The partial sums hold the splits of sets of up to `parts` partitions (of both sets during a
 * crossover): sized by the sets, since a small matrix needs far less than the most splits. */
CudafftStatus
ensure_splits(CudaMatrix *m, size_t parts)
{
  const unsigned splits = cudafft_matrix_splits(m->outputs, m->L, (unsigned)parts);
  if (splits <= m->max_splits)
    return CUDAFFT_STATUS_OK;
  void *partial = nullptr;
  const CudafftStatus status = cudafft_device_alloc(
      &partial, (size_t)splits * 2 * m->outputs * m->L * m->value, "partial sums");
  if (status != CUDAFFT_STATUS_OK)
    return status;
  cudaFree(m->partial); /* no work queued between jobs reads it */
  m->partial = partial;
  m->max_splits = splits;
  return CUDAFFT_STATUS_OK;
}

/* The delay line holds at least `parts` slots, keeping the history of the blocks since reset, and
 * the partial sums room for the splits of such sets. */
CudafftStatus
ensure_slots(CudaMatrix *m, size_t parts)
{
  const CudafftStatus split_status = ensure_splits(m, parts);
  if (split_status != CUDAFFT_STATUS_OK)
    return split_status;
  if (parts <= m->cap)
    return CUDAFFT_STATUS_OK;
  const size_t slot_bytes = (size_t)m->inputs * m->L * m->value;
  size_t bytes = 0;
  if (!mul_size(parts, slot_bytes, &bytes))
    return cudafft_fail(CUDAFFT_STATUS_DEVICE_OUT_OF_MEMORY,
                        "a delay line of %zu slots of %u inputs overflows", parts, m->inputs);
  void *fdl = nullptr;
  long long counted = 0;
  CudafftStatus status = state_alloc(m, &fdl, bytes, "the delay line", &counted);
  if (status != CUDAFFT_STATUS_OK)
    return status;
  cudaError_t error = cudaMemsetAsync(fdl, 0, bytes, m->stream);
  for (size_t q = 0; q < m->cap && q < m->block && error == cudaSuccess; q++) {
    const size_t b = m->block - 1 - q;
    error = cudaMemcpyAsync(static_cast<char *>(fdl) + (b % parts) * slot_bytes,
                            static_cast<char *>(m->fdl) + (b % m->cap) * slot_bytes, slot_bytes,
                            cudaMemcpyDeviceToDevice, m->stream);
  }
  if (error == cudaSuccess)
    error = wait_stream(m);
  if (error != cudaSuccess) {
    cudaFree(fdl);
    cudafft_device_load_change(m->device, 0, -counted);
    return cudafft_cuda_failure(error, "growing the delay line", __FILE__, __LINE__);
  }
  cudaFree(m->fdl);
  cudafft_device_load_change(m->device, 0, -m->fdl_bytes);
  m->fdl = fdl;
  m->fdl_bytes = counted;
  m->cap = parts;
  return CUDAFFT_STATUS_OK;
}

void
matrix_release(CudaMatrix *m)
{
  if (m->stream && m->done)
    wait_stream(m);
  set_free(m, &m->cur);
  set_free(m, &m->next);
  set_free(m, &m->queued);
  if (m->forward_made)
    cufftDestroy(m->forward);
  if (m->inverse_made)
    cufftDestroy(m->inverse);
  if (m->inverse_fade_made)
    cufftDestroy(m->inverse_fade);
  cudafft_device_free({m->fdl, m->prev, m->time_in, m->bins_in, m->partial, m->bins_out,
                       m->time_out, m->d_in, m->d_out});
  cudafft_device_load_change(m->device, 0, -m->fdl_bytes);
  cudaFreeHost(m->h_in);
  cudaFreeHost(m->h_out);
  if (m->done)
    cudaEventDestroy(m->done);
  if (m->stream)
    cudaStreamDestroy(m->stream);
}

CudafftStatus
matrix_setup(CudaMatrix *m, const CudafftMatrixSpec *spec)
{
  /* -1 here is a host of one device (backend_choice.h): device 0; a context id is its context */
  const CudafftStatus opened = cudafft_cuda_open_device(spec->device_id, &m->device, nullptr);
  if (opened != CUDAFFT_STATUS_OK)
    return opened;
  CUDAFFT_CHECK(cudaStreamCreateWithFlags(&m->stream, cudaStreamNonBlocking));
  CUDAFFT_CHECK(cudaEventCreateWithFlags(&m->done, cudaEventBlockingSync | cudaEventDisableTiming));
  m->inputs = spec->inputs;
  m->outputs = spec->outputs;
  m->format = spec->format;
  m->L = spec->block_size;
  m->real = spec->format == CUDAFFT_SAMPLE_F64 ? sizeof(double) : sizeof(float);
  m->value = 2 * m->real;
  const size_t L = m->L;
  const size_t widest = (m->inputs > m->outputs ? m->inputs : m->outputs) * m->real;
  m->chunk_blocks = kChunkFrames / L;
  if (m->chunk_blocks > kChunkBytes / (L * widest))
    m->chunk_blocks = kChunkBytes / (L * widest);
  if (m->chunk_blocks < 1)
    m->chunk_blocks = 1;
  const size_t chunk = m->chunk_blocks * L;
  CudafftStatus status;
  if ((status = cudafft_device_alloc(&m->prev, m->inputs * L * m->real, "input history")) ||
      (status = cudafft_device_alloc(&m->time_in, m->inputs * 2 * L * m->real, "input blocks")) ||
      (status =
           cudafft_device_alloc(&m->bins_in, m->inputs * (L + 1) * m->value, "input spectra")) ||
      (status = cudafft_device_alloc(&m->bins_out, 2 * (size_t)m->outputs * (L + 1) * m->value,
                                     "output spectra")) ||
      (status = cudafft_device_alloc(&m->time_out, 2 * (size_t)m->outputs * 2 * L * m->real,
                                     "output blocks")) ||
      (status = cudafft_device_alloc(&m->d_in, chunk * m->inputs * m->real, "input samples")) ||
      (status = cudafft_device_alloc(&m->d_out, chunk * m->outputs * m->real, "output samples")) ||
      (status =
           cudafft_pinned_host_alloc(&m->h_in, chunk * m->inputs * m->real, "staging input")) ||
      (status =
           cudafft_pinned_host_alloc(&m->h_out, chunk * m->outputs * m->real, "staging output")) ||
      (status = make_plan(m, &m->forward, &m->forward_made, forward_type(m), m->inputs)) ||
      (status = make_plan(m, &m->inverse, &m->inverse_made, inverse_type(m), m->outputs)) ||
      (status = make_plan(m, &m->inverse_fade, &m->inverse_fade_made, inverse_type(m),
                          2 * (size_t)m->outputs)))
    return status;
  CUDAFFT_CHECK(cudaMemsetAsync(m->prev, 0, m->inputs * L * m->real, m->stream));
  if ((status = ensure_slots(m, spec->set->parts ? spec->set->parts : 1)))
    return status;
  return set_make(m, spec->set, &m->cur);
}

/* Blocks [first, first + blocks) of a BLOCKS job: their input from host memory through the
 * staging, or read in place where it is in device memory (on_device), and their output likewise. */
template <typename R>
CudafftStatus
run_chunk(CudaMatrix *m, const CudafftMatrixJob *job, size_t first, size_t blocks, CudaSet *retired)
{
  const size_t L = m->L, in_bytes = blocks * L * m->inputs * m->real;
  const size_t out_bytes = blocks * L * m->outputs * m->real;
  const bool in_place = (job->on_device & CUDAFFT_IN_DEVICE) != 0;
  const bool out_place = (job->on_device & CUDAFFT_OUT_DEVICE) != 0;
  const R *in_frames = nullptr;
  if (job->in && in_place) {
    in_frames = static_cast<const R *>(job->in) + first * L * m->inputs;
  } else if (job->in) {
    memcpy(m->h_in, static_cast<const char *>(job->in) + first * L * m->inputs * m->real, in_bytes);
    CUDAFFT_CHECK(cudaMemcpyAsync(m->d_in, m->h_in, in_bytes, cudaMemcpyHostToDevice, m->stream));
    in_frames = static_cast<const R *>(m->d_in);
  }
  R *out_frames =
      out_place ? static_cast<R *>(job->out) + first * L * m->outputs : static_cast<R *>(m->d_out);
  const size_t slot_bytes = (size_t)m->inputs * L * m->value;
  for (size_t b = 0; b < blocks; b++) {
    const size_t slot = m->block % m->cap;
    const R *in = in_frames ? in_frames + b * L * m->inputs : nullptr;
    CUDAFFT_CHECK(MatrixKernels<R>::frame_inputs(
        in, static_cast<R *>(m->prev), static_cast<R *>(m->time_in), m->inputs, L, m->stream));
    CudafftStatus status = exec_forward(m, m->forward, m->time_in, m->bins_in);
    if (status != CUDAFFT_STATUS_OK)
      return status;
    CUDAFFT_CHECK(MatrixKernels<R>::pack(
        m->bins_in, static_cast<char *>(m->fdl) + slot * slot_bytes, m->inputs, L, m->stream));
    m->block++;
    const bool fade =
        (first + b == job->change_block[0] || first + b == job->change_block[1]) && m->next.made;
    const MatrixDeviceSet sets[2] = {
        {m->cur.spectra, m->cur.entry, m->cur.first, m->cur.parts},
        {m->next.spectra, m->next.entry, m->next.first, m->next.parts},
    };
    const unsigned parts = fade && m->next.parts > m->cur.parts ? m->next.parts : m->cur.parts;
    const unsigned splits = cudafft_matrix_splits(m->outputs, L, parts);
    CUDAFFT_CHECK(MatrixKernels<R>::accumulate(m->fdl, m->cap, slot, m->inputs, m->outputs, L, sets,
                                               fade ? 2 : 1, splits, m->partial, m->bins_out,
                                               m->stream));
    status = exec_inverse(m, fade ? m->inverse_fade : m->inverse, m->bins_out, m->time_out);
    if (status != CUDAFFT_STATUS_OK)
      return status;
    CUDAFFT_CHECK(MatrixKernels<R>::emit(static_cast<const R *>(m->time_out),
                                         out_frames + b * L * m->outputs, m->outputs, L, fade,
                                         m->stream));
    if (fade) { /* the old set is read by the work queued: freed once it is done */
      retired[retired[0].made ? 1 : 0] = m->cur;
      m->cur = m->next;
      m->next = m->queued;
      m->queued = CudaSet();
    }
  }
  /* waited for in every case: the staging is filled again by the next chunk, and output in device
   * memory is complete when the front end returns (its push gives no fence: matrix.h) */
  if (!out_place)
    CUDAFFT_CHECK(
        cudaMemcpyAsync(m->h_out, m->d_out, out_bytes, cudaMemcpyDeviceToHost, m->stream));
  CUDAFFT_CHECK(wait_stream(m));
  if (!out_place)
    memcpy(static_cast<char *>(job->out) + first * L * m->outputs * m->real, m->h_out, out_bytes);
  return CUDAFFT_STATUS_OK;
}

CudafftStatus
matrix_run(void *impl, const CudafftMatrixJob *job)
{
  CudaMatrix *m = static_cast<CudaMatrix *>(impl);
  CUDAFFT_CHECK(cudafft_use_device(m->device));
  switch (job->kind) {
  case CUDAFFT_MATRIX_JOB_LOAD: {
    CudaSet *slot = job->slot ? &m->queued : &m->next;
    set_free(m, slot);
    set_free(m, &m->queued); /* a new next set: none queued after it */
    const CudafftStatus status = ensure_slots(m, job->set->parts);
    if (status != CUDAFFT_STATUS_OK)
      return status;
    return set_make(m, job->set, slot);
  }
  case CUDAFFT_MATRIX_JOB_PROMOTE:
    if (m->next.made) {
      CUDAFFT_CHECK(wait_stream(m));
      set_free(m, &m->cur);
      m->cur = m->queued.made ? m->queued : m->next;
      if (m->queued.made)
        set_free(m, &m->next);
      m->next = CudaSet();
      m->queued = CudaSet();
    }
    return CUDAFFT_STATUS_OK;
  case CUDAFFT_MATRIX_JOB_BLOCKS:
    for (size_t first = 0; first < job->blocks; first += m->chunk_blocks) {
      const size_t blocks =
          job->blocks - first < m->chunk_blocks ? job->blocks - first : m->chunk_blocks;
      CudaSet retired[2];
      const CudafftStatus status = m->format == CUDAFFT_SAMPLE_F64
                                       ? run_chunk<double>(m, job, first, blocks, retired)
                                       : run_chunk<float>(m, job, first, blocks, retired);
      if (retired[0].made) {
        wait_stream(m); /* done already where the chunk succeeded */
        set_free(m, &retired[0]);
        set_free(m, &retired[1]);
      }
      if (status != CUDAFFT_STATUS_OK)
        return status;
    }
    return CUDAFFT_STATUS_OK;
  }
  return cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE, "CUDA backend: unknown matrix job");
}

CudafftStatus
matrix_reset(void *impl)
{
  CudaMatrix *m = static_cast<CudaMatrix *>(impl);
  CUDAFFT_CHECK(cudafft_use_device(m->device));
  CUDAFFT_CHECK(cudaMemsetAsync(m->fdl, 0, m->cap * m->inputs * m->L * m->value, m->stream));
  CUDAFFT_CHECK(cudaMemsetAsync(m->prev, 0, m->inputs * m->L * m->real, m->stream));
  CUDAFFT_CHECK(wait_stream(m));
  m->block = 0;
  return CUDAFFT_STATUS_OK;
}

} // namespace

extern "C" const CudafftMatrixBackend cudafft_matrix_cuda_backend = {
    cudafft_keeping_caller<
        cudafft_cuda_create<CudaMatrix, CudafftMatrixSpec, matrix_setup, matrix_release>>,
    cudafft_keeping_caller<cudafft_cuda_destroy<CudaMatrix, matrix_release>>,
    cudafft_keeping_caller<matrix_run>, cudafft_keeping_caller<matrix_reset>,
    cudafft_cuda_stream<CudaMatrix>};
