/* stft_cuda.cu: the STFT's CUDA backend: device buffers, the signal carried between pushes (on the
 * device, so that every input sample is uploaded once), chunking, and the launch chains. Every
 * CUDA call is checked; a failure becomes a status and a message. */
#include "backend_object.cuh"
#include "cuda_check.cuh"
#include "device_choice.cuh"
#include "device_memory.h"
#include "sample_values.h"
#include "stft_backend.h"
#include "stft_kernels.h"
#include "streams.cuh"

#include <cstdlib>

namespace {

/* Limits on what one chunk of a push holds on the device: samples per channel in the signal
 * buffers, and bytes of frames (spectra in, spectra or samples out). Large enough that copies
 * dwarf launch costs, small enough that an element holds tens of MB, not GB. */
constexpr size_t kChunkFloats = 1u << 22;
constexpr size_t kChunkFrameBytes = 64u << 20;

/* What analysis and synthesis objects share (a base of both): the configuration, the device, a
 * stream, the twiddles and the window. */
struct Common {
  CudafftStftConfig config = {};
  int device = 0;
  cudaStream_t stream = nullptr;
  float2 *d_twiddles = nullptr;
  float *d_window = nullptr; /* analysis window, or synthesis window g */
};

struct CudaAnalysis : Common {
  size_t chunk_samples = 0; /* most samples per channel one chunk appends */
  size_t pitch = 0;         /* floats per signal row: fft_size + chunk_samples */
  float *d_signal[2] = {};  /* planar rows; held samples at the start of d_signal[current] */
  int current = 0;
  void *d_raw = nullptr; /* one chunk of interleaved input */
  float *d_frames = nullptr;
  size_t max_frames = 0; /* frames one chunk can complete */
};

struct CudaSynthesis : Common {
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
  cudafft_streams_settle({c->stream});
  cudafft_device_free({c->d_twiddles, c->d_window});
  cudafft_streams_destroy({c->stream});
}

CudafftStatus
common_init(Common *c, const CudafftStftSpec *spec)
{
  const size_t n = spec->config.fft_size;
  c->config = spec->config;
  int smem_optin = 0;
  const CudafftStatus opened = cudafft_cuda_open_device(spec->device_id, &c->device, &smem_optin);
  if (opened != CUDAFFT_STATUS_OK)
    return opened;
  const CudafftBlockKernels *kernels = cudafft_stft_kernels(n);
  if (!kernels)
    return cudafft_fail(CUDAFFT_STATUS_INVALID_SIZE, "no STFT kernel for size %zu", n);
  if (kernels->smem_bytes > (size_t)smem_optin)
    return cudafft_fail(CUDAFFT_STATUS_UNSUPPORTED,
                        "a %zu-point STFT needs %zu bytes of shared memory per block; this GPU "
                        "offers %d",
                        n, kernels->smem_bytes, smem_optin);
  CUDAFFT_CHECK(cudafft_block_kernels_prepare(kernels));
  CUDAFFT_CHECK(cudafft_streams_create({&c->stream}));
  const CudafftStatus status =
      cudafft_twiddles_upload(&kernels->twiddles, 1, c->stream, &c->d_twiddles);
  if (status != CUDAFFT_STATUS_OK)
    return status;
  return cudafft_device_copy((void **)&c->d_window, spec->window, n * sizeof(float),
                             "the STFT window", c->stream);
}

/* Analysis ------------------------------------------------------------------------------------ */

/* The analyser's resources, best effort (cudafft_cuda_destroy). */
void
analysis_release(CudaAnalysis *a)
{
  common_fini(a);
  cudafft_device_free({a->d_signal[0], a->d_signal[1], a->d_raw, a->d_frames});
}

CudafftStatus
analysis_setup(CudaAnalysis *a, const CudafftStftSpec *spec)
{
  const CudafftStftConfig &config = spec->config;
  const size_t n = config.fft_size, channels = config.channels;
  CudafftStatus status = common_init(a, spec);
  if (status != CUDAFFT_STATUS_OK)
    return status;
  const size_t frame_bytes = cudafft_stft_frame_floats_of(&config) * sizeof(float);
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

/* One chunk: upload and convert its samples behind the held ones, transform the frames that
 * completes, download them, and carry the rest over into the other signal buffer. */
CudafftStatus
analysis_chunk(CudaAnalysis *a, const char *in, size_t samples, size_t held, float *out,
               size_t frames)
{
  const CudafftStftConfig &config = a->config;
  const unsigned channels = config.channels;
  const size_t hop = config.hop;
  cudaStream_t stream = a->stream;
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
                                        a->d_window, config.representation, a->d_frames,
                                        a->d_twiddles, stream));
  const size_t left = held + samples - frames * hop;
  float *next = a->d_signal[1 - a->current];
  if (left > 0)
    CUDAFFT_CHECK(cudaMemcpy2DAsync(next, a->pitch * sizeof(float), signal + frames * hop,
                                    a->pitch * sizeof(float), left * sizeof(float), channels,
                                    cudaMemcpyDeviceToDevice, stream));
  a->current = 1 - a->current;
  const size_t bytes = frames * cudafft_stft_frame_floats_of(&config) * sizeof(float);
  CUDAFFT_CHECK(cudaMemcpyAsync(out, a->d_frames, bytes, cudaMemcpyDeviceToHost, stream));
  return CUDAFFT_STATUS_OK;
}

/* Each chunk counts its own frames; they add up to the job's. */
CudafftStatus
analysis_run(void *impl, const CudafftStftJob *job)
{
  CudaAnalysis *a = static_cast<CudaAnalysis *>(impl);
  CUDAFFT_CHECK(cudafft_use_device(a->device));
  const CudafftStftConfig &config = a->config;
  const size_t n = config.fft_size, hop = config.hop, samples = job->samples;
  const size_t sample_bytes = cudafft_sample_size(config.format) * config.channels;
  const size_t frame_floats = cudafft_stft_frame_floats_of(&config);
  const char *in = static_cast<const char *>(job->in);
  float *out = job->out;
  size_t held = job->held;
  for (size_t done = 0; done < samples;) {
    const size_t count = samples - done < a->chunk_samples ? samples - done : a->chunk_samples;
    const size_t total = held + count;
    const size_t chunk_frames = total < n ? 0 : (total - n) / hop + 1;
    const CudafftStatus status =
        analysis_chunk(a, in ? in + done * sample_bytes : nullptr, count, held, out, chunk_frames);
    if (status != CUDAFFT_STATUS_OK) {
      cudafft_streams_settle({a->stream}); /* no copy may still write into out */
      return status;
    }
    out += chunk_frames * frame_floats;
    held = total - chunk_frames * hop;
    done += count;
  }
  CUDAFFT_CHECK(cudaStreamSynchronize(a->stream));
  return CUDAFFT_STATUS_OK;
}

/* Synthesis ----------------------------------------------------------------------------------- */

/* The synthesiser's resources, best effort (cudafft_cuda_destroy). */
void
synthesis_release(CudaSynthesis *s)
{
  common_fini(s);
  cudafft_device_free({s->d_bins, s->d_rows, s->d_tail[0], s->d_tail[1], s->d_out});
  free(s->h_tail);
}

size_t
tail_floats(const CudafftStftConfig &config)
{
  return (config.fft_size - config.hop) * config.channels;
}

CudafftStatus
synthesis_setup(CudaSynthesis *s, const CudafftStftSpec *spec)
{
  const CudafftStftConfig &config = spec->config;
  const size_t n = config.fft_size, channels = config.channels;
  CudafftStatus status = common_init(s, spec);
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
synthesis_chunk(CudaSynthesis *s, const float *in, size_t frames, float *out)
{
  const CudafftStftConfig &config = s->config;
  const unsigned channels = config.channels;
  const size_t n = config.fft_size, hop = config.hop;
  cudaStream_t stream = s->stream;
  const size_t bins_bytes = frames * channels * (n / 2 + 1) * 2 * sizeof(float);
  CUDAFFT_CHECK(cudaMemcpyAsync(s->d_bins, in, bins_bytes, cudaMemcpyHostToDevice, stream));
  CUDAFFT_CHECK(cudafft_synthesis_launch(n, s->d_bins, channels, frames, s->d_window, s->d_rows,
                                         s->d_twiddles, stream));
  CUDAFFT_CHECK(cudafft_overlap_add_launch(n, hop, channels, frames, s->d_rows,
                                           s->d_tail[s->current], s->d_tail[1 - s->current],
                                           s->d_out, stream));
  s->current = 1 - s->current;
  CUDAFFT_CHECK(cudaMemcpyAsync(out, s->d_out, frames * hop * channels * sizeof(float),
                                cudaMemcpyDeviceToHost, stream));
  return CUDAFFT_STATUS_OK;
}

CudafftStatus
synthesis_push(CudaSynthesis *s, const float *in, size_t frames, float *out)
{
  const CudafftStftConfig &config = s->config;
  const size_t in_floats = config.channels * (config.fft_size / 2 + 1) * 2;
  const size_t out_floats = config.hop * config.channels;
  for (size_t done = 0; done < frames; done += s->chunk_frames) {
    const size_t count = frames - done < s->chunk_frames ? frames - done : s->chunk_frames;
    const CudafftStatus status =
        synthesis_chunk(s, in + done * in_floats, count, out + done * out_floats);
    if (status != CUDAFFT_STATUS_OK) {
      cudafft_streams_settle({s->stream});
      return status;
    }
  }
  CUDAFFT_CHECK(cudaStreamSynchronize(s->stream));
  return CUDAFFT_STATUS_OK;
}

CudafftStatus
clear_tails(CudaSynthesis *s)
{
  const size_t tail = tail_floats(s->config);
  for (float *t : s->d_tail)
    if (t)
      CUDAFFT_CHECK(cudaMemsetAsync(t, 0, tail * sizeof(float), s->stream));
  CUDAFFT_CHECK(cudaStreamSynchronize(s->stream));
  return CUDAFFT_STATUS_OK;
}

CudafftStatus
synthesis_drain(CudaSynthesis *s, float *out)
{
  const CudafftStftConfig &config = s->config;
  const size_t carried = config.fft_size - config.hop;
  const unsigned channels = config.channels;
  if (carried == 0)
    return CUDAFFT_STATUS_OK;
  CUDAFFT_CHECK(cudaMemcpyAsync(s->h_tail, s->d_tail[s->current],
                                carried * channels * sizeof(float), cudaMemcpyDeviceToHost,
                                s->stream));
  CUDAFFT_CHECK(cudaStreamSynchronize(s->stream));
  for (unsigned c = 0; c < channels; c++)
    for (size_t i = 0; i < carried; i++)
      out[i * channels + c] = s->h_tail[c * carried + i];
  return clear_tails(s);
}

CudafftStatus
synthesis_run(void *impl, const CudafftIstftJob *job)
{
  CudaSynthesis *s = static_cast<CudaSynthesis *>(impl);
  CUDAFFT_CHECK(cudafft_use_device(s->device));
  return job->drain ? synthesis_drain(s, job->out)
                    : synthesis_push(s, job->in, job->frames, job->out);
}

CudafftStatus
synthesis_reset(void *impl)
{
  CudaSynthesis *s = static_cast<CudaSynthesis *>(impl);
  CUDAFFT_CHECK(cudafft_use_device(s->device));
  return clear_tails(s);
}

} // namespace

extern "C" const CudafftStftBackend cudafft_stft_cuda_backend = {
    cudafft_cuda_create<CudaAnalysis, CudafftStftSpec, analysis_setup, analysis_release>,
    cudafft_cuda_destroy<CudaAnalysis, analysis_release>, analysis_run,
    cudafft_cuda_wait<CudaAnalysis>, cudafft_cuda_stream<CudaAnalysis>};

extern "C" const CudafftIstftBackend cudafft_istft_cuda_backend = {
    cudafft_cuda_create<CudaSynthesis, CudafftStftSpec, synthesis_setup, synthesis_release>,
    cudafft_cuda_destroy<CudaSynthesis, synthesis_release>, synthesis_run, synthesis_reset,
    cudafft_cuda_stream<CudaSynthesis>};
