/* convolve_cuda.cu: the convolution's CUDA backend: device buffers sized for a chunk and checked
 * against the GPU's free memory before anything is allocated, the kernel spectra computed on the
 * device at create, the history kept on the device (every input sample is uploaded once), pinned
 * staging, and the launch chain of a chunk. Every CUDA call is checked; a failure becomes a status
 * and a message.
 *
 * A run() call runs in chunks of at most chunk_frames frames (whole blocks on the partitioned
 * path; call_chunk_frames() picks the size per call), chunk i through pair i & 1 (pinned staging
 * and device input and output buffers). Each chunk goes through three streams, so that the upload
 * of chunk i + 1, the kernels of chunk i and the download of chunk i - 1 overlap (PCIe is full
 * duplex):
 * - upload stream: once the pair's previous kernels are done (event computed), the input from
 *   pinned staging (or from the caller's page-locked buffer) to the pair's d_raw; event uploaded;
 * - compute stream, which keeps the chunks in order (the delay line, the signal rows with the
 *   carried block and the direct path's history depend on it): once the chunk is uploaded and the
 *   pair's previous download is done (event downloaded), the kernels from d_raw to d_out:
 *   - partitioned, P > 1: deinterleave into the signal rows (and the last block into the next
 *     chunk's), forward FFTs into the delay line, the MAC + inverse FFT + mix kernel writing
 *     interleaved output (3 kernels);
 *   - partitioned, P = 1: deinterleave, the fused kernel (forward, product, inverse, mix);
 *   - direct: the direct kernel on the interleaved input, the history update;
 *   event computed;
 * - download stream: once computed, d_out to pinned staging, an event downloaded after each
 *   piece (or to the caller's page-locked buffer in one piece).
 * Waits for the pair's previous chunk are queued only where that chunk was in the same call: a
 * call returns with all its work done.
 * The host copies between the caller's buffers and pinned staging bound the speed through the
 * element (64 channels of F32 at 500x real time move 6 GB/s each way), so they overlap everything
 * else they can: the upload and the download go in pieces, each piece's DMA running while the host
 * copies the next (or previous) one, and the host copies chunk i's input in before it copies chunk
 * i - 2's output out of the same pair, while the device works on chunk i - 1. */
#include "backend_object.cuh"
#include "convolve_backend.h"
#include "convolve_kernels.h"
#include "cuda_check.cuh"
#include "device_choice.cuh"
#include "device_fit.h"
#include "device_memory.h"
#include "sample_values.h"
#include "size_math.h"
#include "streams.cuh"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

constexpr size_t kBlock = CUDAFFT_CONVOLVE_BLOCK;
/* Partitioned chunk: at most kChunkTransforms (blocks x channels) transforms per launch, which
 * fill an H100 (132 SMs) about twice over at 128 threads a block, and at most kChunkBytes of
 * interleaved input, so that a long call has several chunks to overlap (run_chunks); the delay
 * line holds P - 1 + chunk blocks per channel (64 channels of F32: 8 blocks a chunk). */
constexpr size_t kChunkTransforms = 2048;
constexpr size_t kChunkBytes = (size_t)4 << 20;
constexpr size_t kMaxChunkBlocks = 64;
/* Direct chunk: interleaved samples (1 MB of F32; the direct kernel needs no more to fill a GPU).
 */
constexpr size_t kChunkSamples = (size_t)1 << 18;
/* Copies between host and device go in pieces of at least kPieceBytes (a DMA of that size takes
 * about as long as its setup costs on the host), at most kMaxPieces per chunk. */
constexpr size_t kPieceBytes = (size_t)256 << 10;
constexpr int kMaxPieces = 16;
/* Chunks per call: a call is cut into up to kPipelineChunks chunks, so that a large push
 * pipelines (one chunk would upload, compute and download one after the other), but into none
 * smaller than kMinChunkBytes of input (rounded up to whole blocks on the partitioned path). A
 * chunk costs the host about a dozen API calls (events, waits, launches, copies), adds dependency
 * latency to each stream, and a smaller launch fills less of the GPU. Measured through the element
 * (64 channels, 2 s kernel, convolve-bench; the figures are in bench/HISTORY.md): large pushes ran
 * faster in 4 chunks than in one, from plain and from page-locked memory, but 1 MB pushes ran
 * slower cut into two chunks of 512 KB than uncut: hence 1 MB. Stereo and 8 channels stay in one
 * chunk up to 32 and 8 blocks. Four chunks leave a quarter of a call's copies unoverlapped at each
 * end; more would save little and cost more. */
constexpr size_t kPipelineChunks = 4;
constexpr size_t kMinChunkBytes = (size_t)1 << 20;

/* One of two sets of chunk buffers that alternate between chunks. */
struct Pair {
  void *h_in = nullptr, *h_out = nullptr; /* pinned staging, chunk_frames frames each */
  void *d_raw = nullptr, *d_out = nullptr;
  cudaEvent_t uploaded = nullptr; /* d_raw holds the chunk's input; h_in is free again */
  cudaEvent_t computed = nullptr; /* d_raw is free again, d_out holds the chunk's output */
  /* piece k of d_out is in h_out (or the caller's buffer); the last one frees d_out */
  cudaEvent_t downloaded[kMaxPieces] = {};
  int pieces = 0; /* downloads queued by the pair's last chunk */
};

struct CudaConvolve {
  int device = 0;
  cudaStream_t stream = nullptr; /* compute */
  cudaStream_t upload = nullptr, download = nullptr;
  Pair pairs[2];
  CudafftSampleFormat format = CUDAFFT_SAMPLE_F32;
  CudafftConvolvePath path = CUDAFFT_CONVOLVE_DIRECT;
  unsigned channels = 0, rows = 0;
  size_t taps = 0;
  size_t frame_bytes = 0;
  size_t chunk_frames = 0;
  size_t piece_bytes = 0;

  /* partitioned */
  size_t partitions = 0;
  float2 *d_twiddles = nullptr;
  float2 *d_spectra = nullptr; /* rows x partitions spectrum rows */
  float2 *d_ring = nullptr;    /* channels x slots spectrum rows (P > 1) */
  size_t slots = 0;
  size_t head = 0;         /* the slot the next block's spectrum goes to */
  float *d_signal[2] = {}; /* channels rows of pitch floats each */
  size_t pitch = 0;        /* B + chunk blocks x B */

  /* direct */
  float *d_taps = nullptr;
  float *d_history[2] = {}; /* taps - 1 interleaved frames each (taps > 1) */

  int current = 0; /* which d_signal, d_history the next chunk reads */
};

size_t
spectrum_row_bytes()
{
  return CUDAFFT_CONVOLVE_BIN_PITCH * sizeof(float2);
}

/* Waits for everything queued on the three streams (those made so far), best effort, and clears
 * any error: for release and recovery. */
void
settle(CudaConvolve *f)
{
  cudafft_streams_settle({f->upload, f->stream, f->download});
}

/* The filter's resources, best effort (cudafft_cuda_destroy). */
void
convolve_release(CudaConvolve *f)
{
  settle(f);
  for (Pair &pair : f->pairs) {
    cudafft_events_destroy({pair.uploaded, pair.computed});
    for (cudaEvent_t event : pair.downloaded)
      cudafft_events_destroy({event});
    cudaFreeHost(pair.h_in);
    cudaFreeHost(pair.h_out);
    cudafft_device_free({pair.d_raw, pair.d_out});
  }
  cudafft_device_free({f->d_history[0], f->d_history[1], f->d_twiddles, f->d_spectra, f->d_ring,
                       f->d_signal[0], f->d_signal[1], f->d_taps});
  cudafft_streams_destroy({f->upload, f->stream, f->download});
}

/* The kernel's taps as floats, row-major (the engine computes in single precision). */
float *
taps_as_floats(const CudafftConvolveKernel &kernel)
{
  const size_t count = kernel.taps * kernel.rows;
  float *taps = (float *)malloc(count * sizeof(float));
  if (taps)
    for (size_t i = 0; i < count; ++i)
      taps[i] = (float)kernel.taps_data[i];
  return taps;
}

/* The kernel's taps as floats in a fresh device buffer (*d_taps). */
CudafftStatus
upload_taps(CudaConvolve *f, const CudafftConvolveKernel &kernel, float **d_taps)
{
  float *taps = taps_as_floats(kernel);
  if (!taps)
    return cudafft_fail(
        CUDAFFT_STATUS_HOST_OUT_OF_MEMORY, "cannot allocate %zu MB for a %zu-tap kernel of %u rows",
        megabytes(kernel.taps * kernel.rows * sizeof(float)), kernel.taps, kernel.rows);
  const CudafftStatus status =
      cudafft_device_copy((void **)d_taps, taps, kernel.taps * kernel.rows * sizeof(float),
                          "the convolution's taps", f->stream);
  free(taps);
  return status;
}

/* The kernel's partition spectra, computed on the device from the uploaded taps. */
CudafftStatus
make_spectra(CudaConvolve *f, const CudafftConvolveKernel &kernel)
{
  int plans = 0;
  const CudafftTwiddlePlan *twiddles = cudafft_convolve_twiddle_plans(&plans);
  CudafftStatus status = cudafft_twiddles_upload(twiddles, plans, f->stream, &f->d_twiddles);
  if (status != CUDAFFT_STATUS_OK)
    return status;
  float *d_taps = nullptr;
  status = upload_taps(f, kernel, &d_taps);
  if (status != CUDAFFT_STATUS_OK)
    return status;
  cudaError_t error = cudafft_convolve_spectra_launch(
      d_taps, kernel.taps, kernel.rows, f->partitions, f->d_spectra, f->d_twiddles, f->stream);
  if (error == cudaSuccess)
    error = cudaStreamSynchronize(f->stream); /* before the taps are freed */
  cudaFree(d_taps);
  if (error != cudaSuccess)
    return cudafft_cuda_failure(error, "computing the kernel spectra", __FILE__, __LINE__);
  return CUDAFFT_STATUS_OK;
}

size_t
twiddle_bytes()
{
  int plans = 0;
  const CudafftTwiddlePlan *twiddles = cudafft_convolve_twiddle_plans(&plans);
  return cudafft_twiddles_count(twiddles, plans) * sizeof(float2);
}

/* Device bytes the filter needs (saturating). */
size_t
device_bytes(const CudaConvolve *f)
{
  size_t need = sat_mul(4 * f->chunk_frames, f->frame_bytes); /* raw in, out: two pairs */
  if (f->path == CUDAFFT_CONVOLVE_PARTITIONED) {
    need = sat_add(need, sat_mul(sat_mul(f->partitions, f->rows), spectrum_row_bytes()));
    need = sat_add(need, sat_mul(sat_mul(f->slots, f->channels), spectrum_row_bytes()));
    need = sat_add(need, sat_mul(sat_mul(2 * f->pitch, f->channels), sizeof(float)));
    need = sat_add(need, twiddle_bytes());
    need = sat_add(need, sat_mul(sat_mul(f->taps, f->rows), sizeof(float))); /* while uploading */
  } else {
    need = sat_add(need, sat_mul(sat_mul(f->taps, f->rows), sizeof(float)));
    need = sat_add(need, sat_mul(sat_mul(2 * (f->taps - 1), f->channels), sizeof(float)));
  }
  return need;
}

CudafftStatus
check_fits(const CudaConvolve *f)
{
  const size_t ring = sat_mul(sat_mul(f->slots, f->channels), spectrum_row_bytes());
  const size_t spectra = sat_mul(sat_mul(f->partitions, f->rows), spectrum_row_bytes());
  char what[96], detail[96];
  snprintf(what, sizeof what, "a %zu-tap kernel (%u rows) on %u channels", f->taps, f->rows,
           f->channels);
  snprintf(detail, sizeof detail, " (kernel spectra %zu MB, delay line %zu MB)", megabytes(spectra),
           megabytes(ring));
  return cudafft_device_fits(device_bytes(f), what, detail);
}

/* History to zeros: the signal rows (the block before the first is zeros) and the delay line
 * (spectra of the blocks before the first), or the direct path's history. */
CudafftStatus
clear_history(CudaConvolve *f)
{
  f->head = 0;
  f->current = 0;
  if (f->d_ring)
    CUDAFFT_CHECK(
        cudaMemsetAsync(f->d_ring, 0, f->slots * f->channels * spectrum_row_bytes(), f->stream));
  if (f->d_signal[0])
    CUDAFFT_CHECK(
        cudaMemsetAsync(f->d_signal[0], 0, f->pitch * f->channels * sizeof(float), f->stream));
  if (f->d_history[0])
    CUDAFFT_CHECK(cudaMemsetAsync(f->d_history[0], 0, (f->taps - 1) * f->channels * sizeof(float),
                                  f->stream));
  CUDAFFT_CHECK(cudaStreamSynchronize(f->stream));
  return CUDAFFT_STATUS_OK;
}

CudafftStatus
convolve_setup(CudaConvolve *f, const CudafftConvolveSpec *spec)
{
  const CudafftStatus opened = cudafft_cuda_open_device(spec->device_id, &f->device, nullptr);
  if (opened != CUDAFFT_STATUS_OK)
    return opened;
  f->format = spec->format;
  f->path = spec->path;
  f->channels = spec->channels;
  f->rows = spec->kernel.rows;
  f->taps = spec->kernel.taps;
  f->frame_bytes = spec->channels * cudafft_sample_size(spec->format);
  if (f->path == CUDAFFT_CONVOLVE_PARTITIONED) {
    size_t blocks = kChunkTransforms / f->channels;
    if (blocks > kChunkBytes / (kBlock * f->frame_bytes))
      blocks = kChunkBytes / (kBlock * f->frame_bytes);
    blocks = blocks < 1 ? 1 : blocks > kMaxChunkBlocks ? kMaxChunkBlocks : blocks;
    f->chunk_frames = blocks * kBlock;
    f->partitions = (f->taps + kBlock - 1) / kBlock;
    /* The chunk's blocks and the P - 1 before the first must coexist in the ring. */
    f->slots = f->partitions > 1 ? f->partitions + blocks - 1 : 0;
    f->pitch = kBlock + f->chunk_frames;
  } else {
    if (f->taps > CUDAFFT_CONVOLVE_DIRECT_TAPS)
      return cudafft_fail(CUDAFFT_STATUS_INVALID_SIZE,
                          "the CUDA direct path takes at most %d taps, not %zu",
                          CUDAFFT_CONVOLVE_DIRECT_TAPS, f->taps);
    const size_t frames = kChunkSamples / f->channels;
    f->chunk_frames = frames > 0 ? frames : 1;
  }
  CudafftStatus status = check_fits(f);
  if (status != CUDAFFT_STATUS_OK)
    return status;

  CUDAFFT_CHECK(cudafft_streams_create({&f->stream, &f->upload, &f->download}));
  const size_t chunk_bytes = f->chunk_frames * f->frame_bytes;
  const size_t piece = (chunk_bytes + kMaxPieces - 1) / kMaxPieces;
  f->piece_bytes = piece > kPieceBytes ? (piece + 4095) / 4096 * 4096 : kPieceBytes;
  for (Pair &pair : f->pairs) {
    CUDAFFT_CHECK(cudafft_events_create({&pair.uploaded, &pair.computed}));
    for (cudaEvent_t &event : pair.downloaded)
      CUDAFFT_CHECK(cudafft_events_create({&event}));
    status = cudafft_pinned_host_alloc(&pair.h_in, chunk_bytes, "the convolution's staging");
    if (status == CUDAFFT_STATUS_OK)
      status = cudafft_pinned_host_alloc(&pair.h_out, chunk_bytes, "the convolution's staging");
    if (status == CUDAFFT_STATUS_OK)
      status = cudafft_device_alloc(&pair.d_raw, chunk_bytes, "the convolution's input buffers");
    if (status == CUDAFFT_STATUS_OK)
      status = cudafft_device_alloc(&pair.d_out, chunk_bytes, "the convolution's output buffers");
    if (status != CUDAFFT_STATUS_OK)
      return status;
  }

  if (f->path == CUDAFFT_CONVOLVE_PARTITIONED) {
    status =
        cudafft_device_alloc((void **)&f->d_spectra, f->partitions * f->rows * spectrum_row_bytes(),
                             "the convolution's kernel spectra");
    if (status == CUDAFFT_STATUS_OK && f->slots > 0)
      status =
          cudafft_device_alloc((void **)&f->d_ring, f->slots * f->channels * spectrum_row_bytes(),
                               "the convolution's delay line");
    for (int i = 0; i < 2 && status == CUDAFFT_STATUS_OK; ++i)
      status =
          cudafft_device_alloc((void **)&f->d_signal[i], f->pitch * f->channels * sizeof(float),
                               "the convolution's signal rows");
    if (status == CUDAFFT_STATUS_OK)
      status = make_spectra(f, spec->kernel);
  } else {
    status = upload_taps(f, spec->kernel, &f->d_taps);
    for (int i = 0; i < 2 && status == CUDAFFT_STATUS_OK && f->taps > 1; ++i)
      status = cudafft_device_alloc((void **)&f->d_history[i],
                                    (f->taps - 1) * f->channels * sizeof(float),
                                    "the convolution's history");
  }
  if (status != CUDAFFT_STATUS_OK)
    return status;
  return clear_history(f);
}

/* Queues chunk input of `bytes` to pair s's d_raw on the upload stream, once the pair's previous
 * kernels have read it where `reused` (an earlier chunk of this call used the pair; those of
 * earlier calls are done): from the caller's buffer directly where that is page-locked, else piece
 * by piece through pinned staging, each piece's upload queued as soon as it is there (in nullptr:
 * zeros). */
CudafftStatus
upload_input(CudaConvolve *f, int s, const char *in, size_t bytes, bool in_pinned, bool reused)
{
  Pair &pair = f->pairs[s];
  char *device = static_cast<char *>(pair.d_raw);
  if (reused)
    CUDAFFT_CHECK(cudaStreamWaitEvent(f->upload, pair.computed, 0));
  if (!in) {
    CUDAFFT_CHECK(cudaMemsetAsync(device, 0, bytes, f->upload)); /* all-zero bytes: 0.0 */
  } else if (in_pinned) {
    CUDAFFT_CHECK(cudaMemcpyAsync(device, in, bytes, cudaMemcpyHostToDevice, f->upload));
  } else {
    if (reused) /* the pair's last upload must have left h_in */
      CUDAFFT_CHECK(cudaEventSynchronize(pair.uploaded));
    char *staging = static_cast<char *>(pair.h_in);
    for (size_t at = 0; at < bytes; at += f->piece_bytes) {
      const size_t size = bytes - at < f->piece_bytes ? bytes - at : f->piece_bytes;
      memcpy(staging + at, in + at, size);
      CUDAFFT_CHECK(
          cudaMemcpyAsync(device + at, staging + at, size, cudaMemcpyHostToDevice, f->upload));
    }
  }
  CUDAFFT_CHECK(cudaEventRecord(pair.uploaded, f->upload));
  return CUDAFFT_STATUS_OK;
}

/* Queues the download of `bytes` of pair s's output on the download stream once its kernels are
 * done, to staging in pieces, an event after each (collect() copies each piece out as soon as it
 * is there); to `direct` instead, in one piece, where that is the caller's page-locked output. The
 * caller has collected the pair's previous output from staging. */
CudafftStatus
download(CudaConvolve *f, int s, size_t bytes, char *direct)
{
  Pair &pair = f->pairs[s];
  char *staging = direct ? direct : static_cast<char *>(pair.h_out);
  const char *device = static_cast<const char *>(pair.d_out);
  const size_t piece_bytes = direct ? bytes : f->piece_bytes;
  CUDAFFT_CHECK(cudaStreamWaitEvent(f->download, pair.computed, 0));
  int k = 0;
  for (size_t at = 0; at < bytes; at += piece_bytes, ++k) {
    const size_t size = bytes - at < piece_bytes ? bytes - at : piece_bytes;
    CUDAFFT_CHECK(
        cudaMemcpyAsync(staging + at, device + at, size, cudaMemcpyDeviceToHost, f->download));
    CUDAFFT_CHECK(cudaEventRecord(pair.downloaded[k], f->download));
    pair.pieces = k + 1;
  }
  return CUDAFFT_STATUS_OK;
}

/* Copies `bytes` of pair s's last output to out, each piece as soon as it is downloaded (only
 * waits where the download went to out directly). When it returns, the pair's chunk is done on
 * every stream: its download waited for its kernels, which waited for its upload. */
CudafftStatus
collect(CudaConvolve *f, int s, char *out, size_t bytes, bool out_pinned)
{
  const Pair &pair = f->pairs[s];
  if (out_pinned) {
    CUDAFFT_CHECK(cudaEventSynchronize(pair.downloaded[pair.pieces - 1]));
    return CUDAFFT_STATUS_OK;
  }
  const char *staging = static_cast<const char *>(pair.h_out);
  int k = 0;
  for (size_t at = 0; at < bytes; at += f->piece_bytes, ++k) {
    const size_t size = bytes - at < f->piece_bytes ? bytes - at : f->piece_bytes;
    CUDAFFT_CHECK(cudaEventSynchronize(pair.downloaded[k]));
    memcpy(out + at, staging + at, size);
  }
  return CUDAFFT_STATUS_OK;
}

/* Queues the kernels of one chunk of `frames` frames on the compute stream, from pair s's d_raw
 * once uploaded, to its d_out once the pair's previous download has left it (where `reused`, as
 * in upload_input()). */
CudafftStatus
queue_kernels(CudaConvolve *f, int s, size_t frames, float mix, bool reused)
{
  Pair &pair = f->pairs[s];
  cudaStream_t stream = f->stream;
  CUDAFFT_CHECK(cudaStreamWaitEvent(stream, pair.uploaded, 0));
  if (reused)
    CUDAFFT_CHECK(cudaStreamWaitEvent(stream, pair.downloaded[pair.pieces - 1], 0));
  if (f->path == CUDAFFT_CONVOLVE_PARTITIONED) {
    const size_t blocks = frames / kBlock;
    float *signal = f->d_signal[f->current];
    CUDAFFT_CHECK(cudafft_convolve_deinterleave_launch(f->format, pair.d_raw, frames, f->channels,
                                                       signal + kBlock, f->pitch,
                                                       f->d_signal[1 - f->current], stream));
    if (f->partitions == 1) {
      CUDAFFT_CHECK(cudafft_convolve_fused_launch(f->format, signal, f->pitch, f->channels, blocks,
                                                  f->d_spectra, f->rows, mix, pair.d_out,
                                                  f->d_twiddles, stream));
    } else {
      CUDAFFT_CHECK(cudafft_convolve_forward_launch(signal, f->pitch, f->channels, blocks,
                                                    f->d_ring, f->slots, f->head, f->d_twiddles,
                                                    stream));
      CUDAFFT_CHECK(cudafft_convolve_mac_launch(
          f->format, f->d_ring, f->slots, f->head, f->channels, blocks, f->d_spectra, f->rows,
          f->partitions, signal, f->pitch, mix, pair.d_out, f->d_twiddles, stream));
      f->head = (f->head + blocks) % f->slots;
    }
    f->current = 1 - f->current;
  } else {
    CUDAFFT_CHECK(cudafft_convolve_direct_launch(f->format, pair.d_raw, frames, f->channels,
                                                 f->d_history[f->current], f->d_taps, f->taps,
                                                 f->rows, mix, pair.d_out, stream));
    if (f->taps > 1) {
      CUDAFFT_CHECK(cudafft_convolve_history_launch(
          f->format, pair.d_raw, frames, f->channels, f->d_history[f->current],
          f->d_history[1 - f->current], f->taps - 1, stream));
      f->current = 1 - f->current;
    }
  }
  CUDAFFT_CHECK(cudaEventRecord(pair.computed, stream));
  return CUDAFFT_STATUS_OK;
}

/* Frames per chunk for a call of `frames` frames (kPipelineChunks says why). */
size_t
call_chunk_frames(const CudaConvolve *f, size_t frames)
{
  const size_t unit = f->path == CUDAFFT_CONVOLVE_PARTITIONED ? kBlock : 1;
  const size_t unit_bytes = unit * f->frame_bytes;
  size_t units = (frames / unit + kPipelineChunks - 1) / kPipelineChunks;
  const size_t least = (kMinChunkBytes + unit_bytes - 1) / unit_bytes;
  units = units > least ? units : least;
  return units < f->chunk_frames / unit ? units * unit : f->chunk_frames;
}

/* The chunks, pair i & 1 for chunk i. Before chunk i's download reuses a pair's staging, chunk
 * i - 2's output is collected from it; the host copies chunk i's input in before that, so that
 * they overlap chunk i - 2's download. */
CudafftStatus
run_chunks(CudaConvolve *f, const char *in, char *out, size_t frames, float mix)
{
  const size_t chunk = call_chunk_frames(f, frames), fb = f->frame_bytes;
  const size_t chunks = (frames + chunk - 1) / chunk;
  /* Page-locked caller buffers (the element's output pool; input from an upstream that took the
   * element's allocator) skip the host copies through staging, which otherwise bound the speed. */
  const bool in_pinned = in && cudafft_is_pinned(in), out_pinned = cudafft_is_pinned(out);
  CudafftStatus status = CUDAFFT_STATUS_OK;
  for (size_t i = 0; i < chunks && status == CUDAFFT_STATUS_OK; ++i) {
    const int s = (int)(i & 1);
    const size_t first = i * chunk, count = frames - first < chunk ? frames - first : chunk;
    status = upload_input(f, s, in ? in + first * fb : nullptr, count * fb, in_pinned, i >= 2);
    if (status == CUDAFFT_STATUS_OK)
      status = queue_kernels(f, s, count, mix, i >= 2);
    if (status == CUDAFFT_STATUS_OK && i >= 2) /* chunk i - 2 was a whole one */
      status = collect(f, s, out + (first - 2 * chunk) * fb, chunk * fb, out_pinned);
    if (status == CUDAFFT_STATUS_OK)
      status = download(f, s, count * fb, out_pinned ? out + first * fb : nullptr);
  }
  for (size_t i = chunks >= 2 ? chunks - 2 : 0; i < chunks && status == CUDAFFT_STATUS_OK; ++i) {
    const size_t first = i * chunk, count = frames - first < chunk ? frames - first : chunk;
    status = collect(f, (int)(i & 1), out + first * fb, count * fb, out_pinned);
  }
  return status;
}

CudafftStatus
convolve_run(void *impl, const CudafftConvolveJob *job)
{
  CudaConvolve *f = static_cast<CudaConvolve *>(impl);
  const size_t frames = job->frames;
  if (frames == 0)
    return CUDAFFT_STATUS_OK;
  if (f->path == CUDAFFT_CONVOLVE_PARTITIONED && frames % kBlock != 0)
    return cudafft_fail(
        CUDAFFT_STATUS_INVALID_VALUE,
        "the partitioned CUDA convolution takes whole blocks of %zu frames, not %zu", kBlock,
        frames);
  CUDAFFT_CHECK(cudafft_use_device(f->device));
  const CudafftStatus status =
      run_chunks(f, (const char *)job->in, (char *)job->out, frames, job->mix);
  if (status != CUDAFFT_STATUS_OK)
    settle(f); /* nothing may still run on the buffers, the caller's included */
  return status;
}

CudafftStatus
convolve_reset(void *impl)
{
  CudaConvolve *f = static_cast<CudaConvolve *>(impl);
  CUDAFFT_CHECK(cudafft_use_device(f->device));
  settle(f); /* nothing may overlap the clearing (run() leaves none in flight) */
  return clear_history(f);
}

} // namespace

extern "C" const CudafftConvolveBackend cudafft_convolve_cuda_backend = {
    cudafft_cuda_create<CudaConvolve, CudafftConvolveSpec, convolve_setup, convolve_release>,
    cudafft_cuda_destroy<CudaConvolve, convolve_release>, convolve_run, convolve_reset,
    cudafft_cuda_stream<CudaConvolve>};
