/* stft_cuda.cu: the STFT's CUDA backend: device buffers, the signal carried between pushes (on the
 * device, so that every input sample is uploaded once), chunking, and the launch chains. Every
 * CUDA call is checked; a failure becomes a status and a message. */
#include "cuda_check.cuh"
#include "sample_values.h"
#include "stft_backend.h"
#include "stft_kernels.h"

#include <cstdlib>
#include <cstring>
#include <new>

namespace {

/* Limits on what one chunk of a push holds on the device: samples per channel in the signal
 * buffers, and bytes of frames (spectra in, spectra or samples out). Large enough that copies
 * dwarf launch costs, small enough that an element holds tens of MB, not GB. */
constexpr size_t kChunkFloats = 1u << 22;
constexpr size_t kChunkFrameBytes = 64u << 20;

/* What analysis and synthesis share: the device, a stream, the twiddles and the window. */
struct Common {
  int device = 0;
  cudaStream_t stream = nullptr;
  float2 *d_twiddles = nullptr;
  float *d_window = nullptr; /* analysis window, or synthesis window g */
};

struct CudaAnalysis {
  Common common;
  size_t chunk_samples = 0; /* most samples per channel one chunk appends */
  size_t pitch = 0;         /* floats per signal row: fft_size + chunk_samples */
  float *d_signal[2] = {};  /* planar rows; held samples at the start of d_signal[current] */
  int current = 0;
  void *d_raw = nullptr; /* one chunk of interleaved input */
  float *d_frames = nullptr;
  size_t max_frames = 0; /* frames one chunk can complete */
};

struct CudaSynthesis {
  Common common;
  size_t chunk_frames = 0;
  float *d_bins = nullptr;
  float *d_rows = nullptr; /* chunk_frames x channels rows of n windowed samples */
  float *d_tail[2] = {};   /* channels rows of n - hop carried sums */
  int current = 0;
  float *d_out = nullptr;  /* chunk_frames x hop x channels interleaved samples */
  float *h_tail = nullptr; /* drain's staging */
};

void
common_fini(Common *c)
{
  if (c->stream)
    cudaStreamSynchronize(c->stream);
  cudaFree(c->d_twiddles);
  cudaFree(c->d_window);
  if (c->stream)
    cudaStreamDestroy(c->stream);
}

CudafftStatus
common_init(Common *c, int device_id, size_t n, const float *window)
{
  const CudafftStatus picked = cudafft_cuda_pick_device(device_id, &c->device);
  if (picked != CUDAFFT_STATUS_OK)
    return picked;
  CUDAFFT_CHECK(cudaSetDevice(c->device));
  int smem_optin = 0;
  CUDAFFT_CHECK(
      cudaDeviceGetAttribute(&smem_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, c->device));
  if (cudafft_stft_kernel_smem(n) > (size_t)smem_optin)
    return cudafft_fail(CUDAFFT_STATUS_UNSUPPORTED,
                        "a %zu-point STFT needs %zu bytes of shared memory per block; this GPU "
                        "offers %d",
                        n, cudafft_stft_kernel_smem(n), smem_optin);
  CUDAFFT_CHECK(cudafft_stft_kernel_prepare(n));
  CUDAFFT_CHECK(cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking));

  const size_t table_bytes = cudafft_stft_twiddle_count(n) * sizeof(float2);
  float *table = (float *)malloc(table_bytes);
  if (!table)
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY, "cannot allocate a twiddle table");
  cudafft_stft_twiddles(n, table);
  cudaError_t copy = cudaMalloc(&c->d_twiddles, table_bytes);
  if (copy == cudaSuccess)
    copy = cudaMemcpy(c->d_twiddles, table, table_bytes, cudaMemcpyHostToDevice);
  free(table);
  if (copy != cudaSuccess)
    return cudafft_cuda_failure(copy, "uploading the twiddle table", __FILE__, __LINE__);
  CUDAFFT_CHECK(cudaMalloc(&c->d_window, n * sizeof(float)));
  CUDAFFT_CHECK(cudaMemcpy(c->d_window, window, n * sizeof(float), cudaMemcpyHostToDevice));
  return CUDAFFT_STATUS_OK;
}

/* Analysis ------------------------------------------------------------------------------------ */

void
analysis_fini(CudafftStft *stft)
{
  CudaAnalysis *a = static_cast<CudaAnalysis *>(stft->impl);
  if (!a)
    return;
  cudaSetDevice(a->common.device); /* best effort: release after any failure, sticky ones too */
  common_fini(&a->common);
  cudaFree(a->d_signal[0]);
  cudaFree(a->d_signal[1]);
  cudaFree(a->d_raw);
  cudaFree(a->d_frames);
  cudaGetLastError();
  delete a;
  stft->impl = nullptr;
}

CudafftStatus
analysis_setup(CudafftStft *stft, CudaAnalysis *a, int device_id)
{
  const CudafftStftConfig &config = stft->config;
  const size_t n = config.fft_size, channels = config.channels;
  CudafftStatus status = common_init(&a->common, device_id, n, stft->window);
  if (status != CUDAFFT_STATUS_OK)
    return status;
  const size_t frame_bytes = cudafft_stft_frame_floats(stft) * sizeof(float);
  a->max_frames = kChunkFrameBytes / frame_bytes > 0 ? kChunkFrameBytes / frame_bytes : 1;
  size_t chunk = kChunkFloats / channels;
  if (chunk < 2 * n)
    chunk = 2 * n;
  if (chunk > a->max_frames * config.hop)
    chunk = a->max_frames * config.hop;
  a->chunk_samples = chunk;
  /* held samples (< n) plus one chunk; a chunk completes at most chunk / hop + 1 frames */
  a->pitch = n + chunk;
  a->max_frames = chunk / config.hop + 1;
  for (float *&signal : a->d_signal)
    CUDAFFT_CHECK(cudaMalloc(&signal, a->pitch * channels * sizeof(float)));
  CUDAFFT_CHECK(cudaMalloc(&a->d_raw, chunk * channels * cudafft_sample_size(config.format)));
  CUDAFFT_CHECK(cudaMalloc(&a->d_frames, a->max_frames * frame_bytes));
  return CUDAFFT_STATUS_OK;
}

CudafftStatus
analysis_init(CudafftStft *stft, int device_id)
{
  CudaAnalysis *a = new (std::nothrow) CudaAnalysis;
  if (!a)
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY, "cannot allocate a CUDA STFT");
  stft->impl = a;
  const CudafftStatus status = analysis_setup(stft, a, device_id);
  if (status != CUDAFFT_STATUS_OK)
    analysis_fini(stft);
  return status;
}

/* One chunk: upload and convert its samples behind the held ones, transform the frames that
 * completes, download them, and carry the rest over into the other signal buffer. */
CudafftStatus
analysis_chunk(CudafftStft *stft, CudaAnalysis *a, const char *in, size_t samples, size_t held,
               float *out, size_t frames)
{
  const CudafftStftConfig &config = stft->config;
  const unsigned channels = config.channels;
  const size_t hop = config.hop;
  cudaStream_t stream = a->common.stream;
  float *signal = a->d_signal[a->current];
  if (in) {
    const size_t bytes = samples * channels * cudafft_sample_size(config.format);
    CUDAFFT_CHECK(cudaMemcpyAsync(a->d_raw, in, bytes, cudaMemcpyHostToDevice, stream));
    CUDAFFT_CHECK(cudafft_deinterleave_launch(config.format, a->d_raw, samples, channels,
                                              signal + held, a->pitch, stream));
  } else {
    CUDAFFT_CHECK(cudaMemset2DAsync(signal + held, a->pitch * sizeof(float), 0,
                                    samples * sizeof(float), channels, stream));
  }
  if (frames == 0)
    return CUDAFFT_STATUS_OK;
  CUDAFFT_CHECK(cudafft_analysis_launch(config.fft_size, signal, a->pitch, channels, frames, hop,
                                        a->common.d_window, config.representation, a->d_frames,
                                        a->common.d_twiddles, stream));
  const size_t left = held + samples - frames * hop;
  float *next = a->d_signal[1 - a->current];
  if (left > 0)
    CUDAFFT_CHECK(cudaMemcpy2DAsync(next, a->pitch * sizeof(float), signal + frames * hop,
                                    a->pitch * sizeof(float), left * sizeof(float), channels,
                                    cudaMemcpyDeviceToDevice, stream));
  a->current = 1 - a->current;
  const size_t bytes = frames * cudafft_stft_frame_floats(stft) * sizeof(float);
  CUDAFFT_CHECK(cudaMemcpyAsync(out, a->d_frames, bytes, cudaMemcpyDeviceToHost, stream));
  return CUDAFFT_STATUS_OK;
}

CudafftStatus
analysis_push(CudafftStft *stft, const void *in, size_t samples, float *out, size_t frames)
{
  (void)frames; /* each chunk counts its own; they add up to the front end's count */
  CudaAnalysis *a = static_cast<CudaAnalysis *>(stft->impl);
  CUDAFFT_CHECK(cudafft_use_device(a->common.device));
  const CudafftStftConfig &config = stft->config;
  const size_t n = config.fft_size, hop = config.hop;
  const size_t sample_bytes = cudafft_sample_size(config.format) * config.channels;
  const size_t frame_floats = cudafft_stft_frame_floats(stft);
  size_t held = stft->held;
  for (size_t done = 0; done < samples;) {
    const size_t count = samples - done < a->chunk_samples ? samples - done : a->chunk_samples;
    const size_t total = held + count;
    const size_t chunk_frames = total < n ? 0 : (total - n) / hop + 1;
    const CudafftStatus status =
        analysis_chunk(stft, a, in ? (const char *)in + done * sample_bytes : nullptr, count, held,
                       out, chunk_frames);
    if (status != CUDAFFT_STATUS_OK) {
      cudaStreamSynchronize(a->common.stream); /* no copy may still write into out */
      cudaGetLastError();
      return status;
    }
    out += chunk_frames * frame_floats;
    held = total - chunk_frames * hop;
    done += count;
  }
  CUDAFFT_CHECK(cudaStreamSynchronize(a->common.stream));
  return CUDAFFT_STATUS_OK;
}

/* Synthesis ----------------------------------------------------------------------------------- */

void
synthesis_fini(CudafftIstft *istft)
{
  CudaSynthesis *s = static_cast<CudaSynthesis *>(istft->impl);
  if (!s)
    return;
  cudaSetDevice(s->common.device);
  common_fini(&s->common);
  cudaFree(s->d_bins);
  cudaFree(s->d_rows);
  cudaFree(s->d_tail[0]);
  cudaFree(s->d_tail[1]);
  cudaFree(s->d_out);
  free(s->h_tail);
  cudaGetLastError();
  delete s;
  istft->impl = nullptr;
}

size_t
tail_floats(const CudafftStftConfig &config)
{
  return (config.fft_size - config.hop) * config.channels;
}

CudafftStatus
synthesis_setup(CudafftIstft *istft, CudaSynthesis *s, int device_id)
{
  const CudafftStftConfig &config = istft->config;
  const size_t n = config.fft_size, channels = config.channels;
  CudafftStatus status = common_init(&s->common, device_id, n, istft->synthesis);
  if (status != CUDAFFT_STATUS_OK)
    return status;
  const size_t bins_bytes = channels * (n / 2 + 1) * 2 * sizeof(float);
  s->chunk_frames = kChunkFrameBytes / bins_bytes > 0 ? kChunkFrameBytes / bins_bytes : 1;
  CUDAFFT_CHECK(cudaMalloc(&s->d_bins, s->chunk_frames * bins_bytes));
  CUDAFFT_CHECK(cudaMalloc(&s->d_rows, s->chunk_frames * channels * n * sizeof(float)));
  CUDAFFT_CHECK(cudaMalloc(&s->d_out, s->chunk_frames * config.hop * channels * sizeof(float)));
  const size_t tail = tail_floats(config);
  if (tail > 0) {
    for (float *&t : s->d_tail) {
      CUDAFFT_CHECK(cudaMalloc(&t, tail * sizeof(float)));
      CUDAFFT_CHECK(cudaMemset(t, 0, tail * sizeof(float)));
    }
    s->h_tail = (float *)malloc(tail * sizeof(float));
    if (!s->h_tail)
      return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY, "cannot allocate the drain buffer");
  }
  return CUDAFFT_STATUS_OK;
}

CudafftStatus
synthesis_init(CudafftIstft *istft, int device_id)
{
  CudaSynthesis *s = new (std::nothrow) CudaSynthesis;
  if (!s)
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY, "cannot allocate a CUDA ISTFT");
  istft->impl = s;
  const CudafftStatus status = synthesis_setup(istft, s, device_id);
  if (status != CUDAFFT_STATUS_OK)
    synthesis_fini(istft);
  return status;
}

CudafftStatus
synthesis_chunk(CudafftIstft *istft, CudaSynthesis *s, const float *in, size_t frames, float *out)
{
  const CudafftStftConfig &config = istft->config;
  const unsigned channels = config.channels;
  const size_t n = config.fft_size, hop = config.hop;
  cudaStream_t stream = s->common.stream;
  const size_t bins_bytes = frames * channels * (n / 2 + 1) * 2 * sizeof(float);
  CUDAFFT_CHECK(cudaMemcpyAsync(s->d_bins, in, bins_bytes, cudaMemcpyHostToDevice, stream));
  CUDAFFT_CHECK(cudafft_synthesis_launch(n, s->d_bins, channels, frames, s->common.d_window,
                                         s->d_rows, s->common.d_twiddles, stream));
  CUDAFFT_CHECK(cudafft_overlap_add_launch(n, hop, channels, frames, s->d_rows,
                                           s->d_tail[s->current], s->d_tail[1 - s->current],
                                           s->d_out, stream));
  s->current = 1 - s->current;
  CUDAFFT_CHECK(cudaMemcpyAsync(out, s->d_out, frames * hop * channels * sizeof(float),
                                cudaMemcpyDeviceToHost, stream));
  return CUDAFFT_STATUS_OK;
}

CudafftStatus
synthesis_push(CudafftIstft *istft, const float *in, size_t frames, float *out)
{
  CudaSynthesis *s = static_cast<CudaSynthesis *>(istft->impl);
  CUDAFFT_CHECK(cudafft_use_device(s->common.device));
  const CudafftStftConfig &config = istft->config;
  const size_t in_floats = config.channels * (config.fft_size / 2 + 1) * 2;
  const size_t out_floats = config.hop * config.channels;
  for (size_t done = 0; done < frames; done += s->chunk_frames) {
    const size_t count = frames - done < s->chunk_frames ? frames - done : s->chunk_frames;
    const CudafftStatus status =
        synthesis_chunk(istft, s, in + done * in_floats, count, out + done * out_floats);
    if (status != CUDAFFT_STATUS_OK) {
      cudaStreamSynchronize(s->common.stream);
      cudaGetLastError();
      return status;
    }
  }
  CUDAFFT_CHECK(cudaStreamSynchronize(s->common.stream));
  return CUDAFFT_STATUS_OK;
}

CudafftStatus
clear_tails(CudafftIstft *istft, CudaSynthesis *s)
{
  const size_t tail = tail_floats(istft->config);
  for (float *t : s->d_tail)
    if (t)
      CUDAFFT_CHECK(cudaMemsetAsync(t, 0, tail * sizeof(float), s->common.stream));
  CUDAFFT_CHECK(cudaStreamSynchronize(s->common.stream));
  return CUDAFFT_STATUS_OK;
}

CudafftStatus
synthesis_drain(CudafftIstft *istft, float *out)
{
  CudaSynthesis *s = static_cast<CudaSynthesis *>(istft->impl);
  CUDAFFT_CHECK(cudafft_use_device(s->common.device));
  const CudafftStftConfig &config = istft->config;
  const size_t carried = config.fft_size - config.hop;
  const unsigned channels = config.channels;
  if (carried == 0)
    return CUDAFFT_STATUS_OK;
  CUDAFFT_CHECK(cudaMemcpyAsync(s->h_tail, s->d_tail[s->current],
                                carried * channels * sizeof(float), cudaMemcpyDeviceToHost,
                                s->common.stream));
  CUDAFFT_CHECK(cudaStreamSynchronize(s->common.stream));
  for (unsigned c = 0; c < channels; c++)
    for (size_t i = 0; i < carried; i++)
      out[i * channels + c] = s->h_tail[c * carried + i];
  return clear_tails(istft, s);
}

void
synthesis_reset(CudafftIstft *istft)
{
  CudaSynthesis *s = static_cast<CudaSynthesis *>(istft->impl);
  if (cudafft_use_device(s->common.device) == cudaSuccess)
    clear_tails(istft, s);
  cudaGetLastError();
}

} // namespace

extern "C" const CudafftStftOps cudafft_stft_cuda_ops = {
    analysis_init,  analysis_fini,  analysis_push,   synthesis_init,
    synthesis_fini, synthesis_push, synthesis_drain, synthesis_reset,
};
