/* features_kernels.cu: the features engine's kind of work (features_kernels.h): its five batched
 * kernels and the callbacks that lay out their descriptors. Every value is computed by the
 * formulas of features_values.h, in the order the CPU backend (features_cpu.c) applies them.
 *
 * A batch's jobs come from different objects (sizes, channels, kinds): each kernel finds its job
 * from its work item by a binary search over the jobs' prefix sums of items (no per-item map in
 * the auxiliary data), and the frame kernel launches once per transform size, its blocks' groups
 * all running the same plan. Control flow around the block's barriers never depends on a job's
 * settings: every group of a block runs the same reductions, so jobs of different objects share
 * blocks. */
#include "block_kernels.cuh"
#include "cuda_check.cuh"
#include "features_driver.h"
#include "features_kernels.h"
#include "features_values.h"
#include "mixed_fft.cuh"

#include <cstdint>
#include <cstdlib>
#include <cstring>

using namespace cudafft;

namespace {

constexpr int kFlatThreads = 256;
constexpr int kFloorThreads = 256;

/* What the kernels read of a job: its step, with its device input and output. */
struct Desc {
  CudafftFeaturesObject o;
  const void *in;     /* the appended samples; nullptr: zeros */
  unsigned char *out; /* the units' values */
  uint64_t append_at;
  uint32_t append_count;
  uint64_t f0, f1, length;
  int ended;
  uint64_t first, count, kept, made;
  uint32_t c0, group;
  uint64_t g0, g1; /* FRAMES: the frames whose base vectors the units read */
};

__host__ __device__ inline bool
range_on(const CudafftFeaturesObject &o)
{
  return o.kind != CUDAFFT_FEATURES_MEL && o.range > 0.0f;
}

__host__ __device__ inline bool
frames_out(const CudafftFeaturesObject &o)
{
  return o.output == CUDAFFT_FEATURES_OUTPUT_FRAMES;
}

/* Frames a unit (window or chunk) of a job covers: e0 .. e1 - 1 (the real ones). */
__host__ __device__ inline void
unit_frames(const Desc &d, uint64_t unit, uint64_t *e0, uint64_t *e1)
{
  *e0 = d.o.output == CUDAFFT_FEATURES_OUTPUT_WINDOWS ? unit * d.o.window_stride : 0;
  *e1 = *e0 + d.o.window_frames;
  if (d.kept != CUDAFFT_FEATURES_UNKNOWN && d.kept < *e1)
    *e1 = d.kept;
}

/* Work items of each stage of a job. */
struct Items {
  uint64_t append, frames, floors, base, out;
};

Items
job_items(const Desc &d)
{
  const CudafftFeaturesObject &o = d.o;
  Items n{};
  n.append = (uint64_t)d.append_count * o.channels;
  n.frames = (d.f1 - d.f0) * o.channels;
  if (o.direct || d.count == 0)
    return n;
  const uint64_t per_unit = frames_out(o) ? 1 : o.window_frames;
  if (range_on(o))
    n.floors = (frames_out(o) ? d.g1 - d.g0 : d.count) * d.group;
  n.base = (frames_out(o) ? d.g1 - d.g0 : d.count * per_unit) * d.group * o.base_features;
  n.out = d.count * per_unit * d.group * o.features;
  return n;
}

__device__ inline int
find_job(const uint64_t *__restrict__ prefix, int jobs, uint64_t item)
{
  int lo = 0, hi = jobs - 1;
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (prefix[mid] <= item)
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

__device__ inline void
store_value(unsigned char *out, size_t index, float value, int precision)
{
  if (precision == CUDAFFT_FEATURES_F16)
    reinterpret_cast<uint16_t *>(out)[index] = cudafft_features_half(value);
  else
    reinterpret_cast<float *>(out)[index] = value;
}

__device__ inline CudafftFeaturesLogSpec
log_spec(const CudafftFeaturesObject &o)
{
  return CudafftFeaturesLogSpec{(CudafftFeaturesLog)o.log, o.log_floor, o.db_offset};
}

/* 1. append ----------------------------------------------------------------------------------- */

__global__ void
__launch_bounds__(kFlatThreads)
    append_kernel(const Desc *__restrict__ descs, const uint64_t *__restrict__ prefix, int jobs)
{
  const uint64_t item = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (item >= prefix[jobs])
    return;
  const int j = find_job(prefix, jobs, item);
  const Desc &d = descs[j];
  const CudafftFeaturesObject &o = d.o;
  const uint64_t local = item - prefix[j];
  const uint32_t c = (uint32_t)(local % o.channels);
  const uint64_t s = local / o.channels;
  const float x = d.in ? cudafft_sample_float((CudafftSampleFormat)o.format, d.in, (size_t)local,
                                              CUDAFFT_INT_SCALE_POW2) *
                             o.sample_scale
                       : 0.0f;
  o.history[(size_t)c * o.history_capacity + (d.append_at + s) % o.history_capacity] = x;
}

/* 2. frames ----------------------------------------------------------------------------------- */

/* The sum of every group thread's `partial` (scratch: the group's threads floats), the same in
 * each thread and in every run: each thread adds the partials in order. Ends with a barrier. */
__device__ inline float
group_sum(float *scratch, int t, int threads, float partial)
{
  scratch[t] = partial;
  __syncthreads();
  float sum = 0.0f;
  for (int k = 0; k < threads; ++k)
    sum += scratch[k];
  __syncthreads();
  return sum;
}

/* One frame of one channel per transform group (features_kernels.h, kernel 2). Odd: the fft
 * size n is odd and the transform the complex one of n points of (x, 0); else the real split
 * over N = n / 2. Per group: the two FFT buffers (mixed_buffer_points(N) each), then `extra`
 * floats: the reduction's scratch (threads) and a direct MFCC's log-mel values. */
template <bool Odd>
__global__ void
__launch_bounds__(kMixedMaxBlockThreads)
    frames_kernel(const Desc *__restrict__ descs, const uint32_t *__restrict__ order,
                  const uint64_t *__restrict__ prefix, int jobs, uint64_t total,
                  const float2 *__restrict__ twiddles, CudafftMixedArgs m, int extra)
{
  extern __shared__ float2 smem[];
  const int big_n = m.plan.n, threads = m.threads;
  const int points = mixed_buffer_points(big_n);
  const int row = threadIdx.x / threads, t = threadIdx.x % threads;
  const int per_block = blockDim.x / threads;
  const uint64_t wanted = (uint64_t)blockIdx.x * per_block + row;
  const bool active = wanted < total;
  float *row_floats = reinterpret_cast<float *>(smem) + (size_t)row * (4 * points + extra);
  float2 *a = reinterpret_cast<float2 *>(row_floats), *b = a + points;
  float *scratch = row_floats + 4 * points, *lm = scratch + threads;
  const uint64_t transform = prefix[0] + (active ? wanted : total - 1);
  const int j = find_job(prefix, jobs, transform);
  const Desc &d = descs[order[j]];
  const CudafftFeaturesObject &o = d.o;
  const uint64_t local = transform - prefix[j];
  const uint32_t c = (uint32_t)(local % o.channels);
  const uint64_t f = d.f0 + local / o.channels;
  const int n = Odd ? big_n : 2 * big_n, length = (int)o.length;
  const int64_t start = (int64_t)f * o.hop - o.start_offset;
  const float *history = o.history + (size_t)c * o.history_capacity;
  const uint32_t capacity = o.history_capacity;
  const bool signal_preemph = o.preemphasis == CUDAFFT_FEATURES_PREEMPHASIS_SIGNAL;

  /* the frame's samples, dithered, into b */
  float *u = reinterpret_cast<float *>(b);
  float partial = 0.0f;
  for (int i = t; i < length; i += threads) {
    const int64_t at = cudafft_features_pad_index(start + i, (int64_t)d.length,
                                                  (CudafftFeaturesPad)o.pad, o.zero_end);
    float x = 0.0f;
    if (at >= 0) {
      x = history[at % capacity];
      if (signal_preemph && at > 0)
        x = x - o.preemph_coeff * history[(at - 1) % capacity];
    }
    if (o.dither > 0.0f)
      x += o.dither * cudafft_features_gauss(o.dither_seed, c, f, (uint64_t)i);
    u[i] = x;
    partial += x;
  }
  const float sum = group_sum(scratch, t, threads, partial);
  const float mean = o.remove_dc ? sum / (float)length : 0.0f;
  partial = 0.0f;
  for (int i = t; i < length; i += threads) {
    const float x = u[i] - mean;
    u[i] = x;
    partial += x * x;
  }
  const float raw_energy = group_sum(scratch, t, threads, partial);

  /* pre-emphasis and window into the transform's input a (zero padded) */
  const float coeff = o.preemphasis == CUDAFFT_FEATURES_PREEMPHASIS_FRAME ? o.preemph_coeff : 0.0f;
  const auto windowed = [&](int i) -> float {
    if (i >= length)
      return 0.0f;
    float x = u[i];
    if (coeff != 0.0f)
      x -= coeff * u[i > 0 ? i - 1 : 0];
    return x * __ldg(&o.window[i]);
  };
  partial = 0.0f;
  if (Odd) {
    for (int i = t; i < n; i += threads) {
      const float v = windowed(i);
      a[pad(i)] = make_float2(v, 0.0f);
      partial += v * v;
    }
  } else {
    for (int k = t; k < big_n; k += threads) {
      const float v0 = windowed(2 * k), v1 = windowed(2 * k + 1);
      a[pad(k)] = make_float2(v0, v1);
      partial += v0 * v0 + v1 * v1;
    }
  }
  const float windowed_energy = group_sum(scratch, t, threads, partial);

  /* the spectrum values v[k], k = 0 .. n / 2, into the buffer the transform does not return */
  const float2 *z = mixed_fft(m.plan, a, b, twiddles, t, threads, false);
  float *v = reinterpret_cast<float *>(z == a ? b : a);
  const float bin_scale = o.bin_scale;
  const unsigned power = (unsigned)o.power;
  partial = 0.0f;
  if (Odd) {
    for (int k = t; 2 * k <= n; k += threads) {
      const float2 x = z[pad(k)];
      v[k] = cudafft_features_bin_value(x.x, x.y, bin_scale, power);
      partial += v[k];
    }
  } else {
    const float2 *w = mixed_real_twiddles(m.plan, twiddles);
    for (int k = t; 2 * k <= big_n; k += threads) {
      float2 xk, xnk;
      mixed_real_forward_pair(z, big_n, k, w, &xk, &xnk);
      v[k] = cudafft_features_bin_value(xk.x, xk.y, bin_scale, power);
      partial += v[k];
      if (2 * k != big_n) {
        v[big_n - k] = cudafft_features_bin_value(xnk.x, xnk.y, bin_scale, power);
        partial += v[big_n - k];
      }
    }
  }
  const float spectrum_energy = group_sum(scratch, t, threads, partial);

  /* the mel bank, the log and the energy: into the ring, or (direct) on to the output */
  const CudafftFeaturesLogSpec spec = log_spec(o);
  const float energy = o.energy == CUDAFFT_FEATURES_ENERGY_RAW        ? raw_energy
                       : o.energy == CUDAFFT_FEATURES_ENERGY_WINDOWED ? windowed_energy
                                                                      : spectrum_energy;
  const bool has_energy = o.energy != CUDAFFT_FEATURES_ENERGY_NONE;
  const float e_log =
      has_energy ? cudafft_features_energy_log(&spec, energy, o.log_energy_floor) : 0.0f;
  const uint32_t mels = o.n_mels;
  float *ring =
      o.direct ? nullptr : o.ring + ((size_t)c * o.ring_frames + f % o.ring_frames) * o.ring_values;
  const size_t out_at = ((size_t)(f - d.f0) * o.channels + c) * o.features;
  for (uint32_t jm = t; jm < mels; jm += threads) {
    const uint32_t first = __ldg(&o.filters[3 * jm]), count = __ldg(&o.filters[3 * jm + 1]);
    const float *weights = o.weights + __ldg(&o.filters[3 * jm + 2]);
    float sum = 0.0f;
    for (uint32_t k = 0; k < count; ++k)
      sum += __ldg(&weights[k]) * v[first + k];
    const float value = o.kind == CUDAFFT_FEATURES_MEL ? sum : cudafft_features_log(&spec, sum);
    if (!o.direct) {
      if (active)
        ring[jm] = value;
    } else if (o.kind == CUDAFFT_FEATURES_MFCC) {
      lm[jm] = cudafft_features_normalise(value, -INFINITY, o.shift, o.scale);
    } else if (active) {
      const float out = o.kind == CUDAFFT_FEATURES_MEL
                            ? value
                            : cudafft_features_normalise(value, -INFINITY, o.shift, o.scale);
      store_value(d.out, out_at + jm + (has_energy ? 1 : 0), out, o.precision);
    }
  }
  if (active && t == 0) {
    if (!o.direct)
      ring[mels] = e_log;
    else if (o.kind == CUDAFFT_FEATURES_LOG_MEL && has_energy)
      store_value(d.out, out_at, e_log, o.precision);
  }
  __syncthreads();
  if (o.direct && o.kind == CUDAFFT_FEATURES_MFCC && active)
    for (uint32_t q = t; q < o.n_mfcc; q += threads) {
      float value =
          cudafft_features_cepstrum(o.dct + (size_t)q * mels, lm, 1, mels, __ldg(&o.lifter[q]));
      if (q == 0 && has_energy)
        value = e_log;
      store_value(d.out, out_at + q, value, o.precision);
    }
}

/* 3. floors ----------------------------------------------------------------------------------- */

/* One block per unit (FRAMES: per frame) and channel: the largest finite log-mel value of its
 * frames, less the range. The maximum is exact whatever the order of the reduction. */
__global__ void
__launch_bounds__(kFloorThreads)
    floors_kernel(const Desc *__restrict__ descs, const uint64_t *__restrict__ prefix, int jobs)
{
  __shared__ float best[kFloorThreads];
  const uint64_t item = blockIdx.x;
  const int j = find_job(prefix, jobs, item);
  const Desc &d = descs[j];
  const CudafftFeaturesObject &o = d.o;
  const uint64_t local = item - prefix[j];
  const uint32_t c = d.c0 + (uint32_t)(local % d.group);
  uint64_t e0, e1, key;
  if (frames_out(o)) {
    key = e0 = d.g0 + local / d.group;
    e1 = e0 + 1;
  } else {
    key = d.first + local / d.group;
    unit_frames(d, key, &e0, &e1);
  }
  const uint64_t values = (e1 - e0) * o.n_mels;
  float max = -INFINITY;
  for (uint64_t i = threadIdx.x; i < values; i += blockDim.x) {
    const uint64_t g = e0 + i / o.n_mels;
    const float *ring = o.ring + ((size_t)c * o.ring_frames + g % o.ring_frames) * o.ring_values;
    max = cudafft_features_finite_max(max, ring[i % o.n_mels]);
  }
  best[threadIdx.x] = max;
  __syncthreads();
  for (int s = kFloorThreads / 2; s > 0; s /= 2) {
    if ((int)threadIdx.x < s)
      best[threadIdx.x] = fmaxf(best[threadIdx.x], best[threadIdx.x + s]);
    __syncthreads();
  }
  if (threadIdx.x == 0)
    o.floors[(size_t)c * o.ring_frames + key % o.ring_frames] = best[0] - o.range;
}

/* 4. base vectors ----------------------------------------------------------------------------- */

/* One thread per value of a frame's base vector b (step 9), from its ring row. */
__global__ void
__launch_bounds__(kFlatThreads)
    base_kernel(const Desc *__restrict__ descs, const uint64_t *__restrict__ prefix, int jobs)
{
  const uint64_t item = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (item >= prefix[jobs])
    return;
  const int j = find_job(prefix, jobs, item);
  const Desc &d = descs[j];
  const CudafftFeaturesObject &o = d.o;
  const uint32_t base_features = o.base_features;
  uint64_t local = item - prefix[j];
  const uint32_t i = (uint32_t)(local % base_features);
  local /= base_features;
  const uint32_t c = d.c0 + (uint32_t)(local % d.group);
  local /= d.group;
  uint64_t g, key;
  if (frames_out(o)) {
    key = g = d.g0 + local;
  } else {
    key = d.first + local / o.window_frames;
    uint64_t e0, e1;
    unit_frames(d, key, &e0, &e1);
    g = e0 + local % o.window_frames;
    if (g >= e1)
      return; /* past a partial window's frames */
  }
  const size_t slot = (size_t)c * o.ring_frames + g % o.ring_frames;
  const float *ring = o.ring + slot * o.ring_values;
  const float lo =
      range_on(o) ? o.floors[(size_t)c * o.ring_frames + key % o.ring_frames] : -INFINITY;
  const bool has_energy = o.energy != CUDAFFT_FEATURES_ENERGY_NONE;
  const uint32_t mels = o.n_mels;
  float value;
  if (o.kind == CUDAFFT_FEATURES_MEL) {
    value = ring[i];
  } else if (o.kind == CUDAFFT_FEATURES_LOG_MEL) {
    value = has_energy && i == 0
                ? ring[mels]
                : cudafft_features_normalise(ring[i - (has_energy ? 1 : 0)], lo, o.shift, o.scale);
  } else if (has_energy && i == 0) {
    value = ring[mels];
  } else {
    const float *row = o.dct + (size_t)i * mels;
    float sum = 0.0f;
    for (uint32_t jm = 0; jm < mels; ++jm)
      sum += row[jm] * cudafft_features_normalise(ring[jm], lo, o.shift, o.scale);
    value = sum * o.lifter[i];
  }
  o.base[slot * base_features + i] = value;
}

/* 5. output ----------------------------------------------------------------------------------- */

/* One feature of a frame from the base rows (bases: channel c's rows, slot s at s
 * base_features): order 0 the base vector, else its deltas over frames 0 .. frames - 1 of the unit
 * starting at frame e0. */
__device__ inline float
feature_value(const CudafftFeaturesObject &o, const float *bases, uint32_t i, int64_t t,
              int64_t frames, uint64_t e0)
{
  const uint32_t order = i / o.base_features, feature = i % o.base_features;
  const float *v = bases + feature;
  const int64_t ring = o.ring_frames, base = -(int64_t)e0, stride = o.base_features;
  const int r = o.delta_reach;
  if (order == 0)
    return v[((t - base) % ring) * stride];
  if (o.delta_style == CUDAFFT_FEATURES_DELTAS_SAVGOL)
    return cudafft_features_savgol(v, stride, base, ring, t, frames, r, o.savgol[order - 1]);
  if (order == 1)
    return cudafft_features_regression(v, stride, base, ring, t, frames, r, o.regression_norm);
  /* the second order: the regression of the first-order deltas, each made as above */
  float sum = 0.0f;
  for (int k = 1; k <= r; ++k) {
    int64_t up = t + k, down = t - k;
    up = up > frames - 1 ? frames - 1 : up;
    down = down < 0 ? 0 : down;
    sum += (float)k *
           (cudafft_features_regression(v, stride, base, ring, up, frames, r, o.regression_norm) -
            cudafft_features_regression(v, stride, base, ring, down, frames, r, o.regression_norm));
  }
  return sum * o.regression_norm;
}

__global__ void
__launch_bounds__(kFlatThreads)
    out_kernel(const Desc *__restrict__ descs, const uint64_t *__restrict__ prefix, int jobs)
{
  const uint64_t item = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (item >= prefix[jobs])
    return;
  const int j = find_job(prefix, jobs, item);
  const Desc &d = descs[j];
  const CudafftFeaturesObject &o = d.o;
  const uint32_t features = o.features;
  uint64_t local = item - prefix[j];
  const uint32_t i = (uint32_t)(local % features);
  local /= features;
  const uint32_t gc = (uint32_t)(local % d.group), c = d.c0 + gc;
  local /= d.group;
  const float *bases = o.base + (size_t)c * o.ring_frames * o.base_features;
  if (frames_out(o)) {
    const uint64_t frame = d.first + local;
    const int64_t frames = d.kept == CUDAFFT_FEATURES_UNKNOWN ? INT64_MAX : (int64_t)d.kept;
    const float value = feature_value(o, bases, i, (int64_t)frame, frames, 0);
    store_value(d.out, ((size_t)local * o.channels + c) * features + i, value, o.precision);
    return;
  }
  const uint32_t frames_per_unit = o.window_frames;
  const uint64_t t = local % frames_per_unit, unit = d.first + local / frames_per_unit;
  uint64_t e0, e1;
  unit_frames(d, unit, &e0, &e1);
  const float value =
      e0 + t < e1 ? feature_value(o, bases, i, (int64_t)t, (int64_t)(e1 - e0), e0) : o.pad_value;
  const size_t at = o.layout == CUDAFFT_FEATURES_LAYOUT_FEATURE_MAJOR
                        ? (size_t)i * frames_per_unit + t
                        : (size_t)t * features + i;
  const size_t unit_values = (size_t)frames_per_unit * features;
  store_value(d.out, ((size_t)(unit - d.first) * d.group + gc) * unit_values + at, value,
              o.precision);
}

/* The kind's callbacks ------------------------------------------------------------------------ */

const CudafftFeaturesStepJob *
step(CudafftJob *job)
{
  return reinterpret_cast<const CudafftFeaturesStepJob *>(job);
}

Desc
make_desc(const CudafftFeaturesStepJob *job)
{
  const CudafftFeaturesStep &s = job->step;
  Desc d{};
  d.o = job->o;
  d.in = s.has_input ? job->job.device_in : nullptr;
  d.out = static_cast<unsigned char *>(job->job.device_out);
  d.append_at = s.append_at;
  d.append_count = s.append_count;
  d.f0 = s.f0;
  d.f1 = s.f1;
  d.length = s.length;
  d.ended = s.ended;
  d.first = s.first;
  d.count = s.count;
  d.kept = s.kept;
  d.made = s.made;
  d.c0 = s.c0;
  d.group = s.group;
  if (frames_out(d.o) && d.count > 0) {
    const uint64_t reach =
        2 * (uint64_t)d.o.delta_reach * (uint64_t)(d.o.delta_order ? d.o.delta_order : 1);
    d.g0 = d.first > reach ? d.first - reach : 0;
    d.g1 = d.first + d.count + reach;
    d.g1 = d.g1 < d.made ? d.g1 : d.made;
    d.g1 = d.kept != CUDAFFT_FEATURES_UNKNOWN && d.kept < d.g1 ? d.kept : d.g1;
  }
  return d;
}

/* The auxiliary data: the descriptors, the jobs in the frame launches' order (by fft size), and
 * each stage's prefix sums of items (the frames' over that order). */
struct Layout {
  size_t descs, append, order, frames, floors, base, out, bytes;
};

Layout
layout(size_t count)
{
  CudafftAuxLayout l;
  Layout at;
  at.descs = l.take(count, sizeof(Desc));
  at.append = l.take(count + 1, sizeof(uint64_t));
  at.order = l.take(count, sizeof(uint32_t));
  at.frames = l.take(count + 1, sizeof(uint64_t));
  at.floors = l.take(count + 1, sizeof(uint64_t));
  at.base = l.take(count + 1, sizeof(uint64_t));
  at.out = l.take(count + 1, sizeof(uint64_t));
  at.bytes = l.bytes;
  return at;
}

size_t
aux_bytes(CudafftJob *const *jobs, size_t count)
{
  (void)jobs;
  return kCudafftAuxSlack + layout(count).bytes;
}

/* The jobs' indices sorted by fft size (stable: insertion sort, batches are small). */
void
order_by_size(CudafftJob *const *jobs, size_t count, uint32_t *order)
{
  for (size_t i = 0; i < count; ++i) {
    size_t k = i;
    const uint32_t n = step(jobs[i])->o.fft_size;
    while (k > 0 && step(jobs[order[k - 1]])->o.fft_size > n) {
      order[k] = order[k - 1];
      --k;
    }
    order[k] = (uint32_t)i;
  }
}

void
prepare(CudafftJob *const *jobs, size_t count, void *host_aux, void *device_aux)
{
  (void)device_aux;
  const Layout at = layout(count);
  Desc *descs = cudafft_aux_at<Desc>(host_aux, at.descs);
  uint64_t *append = cudafft_aux_at<uint64_t>(host_aux, at.append);
  uint32_t *order = cudafft_aux_at<uint32_t>(host_aux, at.order);
  uint64_t *frames = cudafft_aux_at<uint64_t>(host_aux, at.frames);
  uint64_t *floors = cudafft_aux_at<uint64_t>(host_aux, at.floors);
  uint64_t *base = cudafft_aux_at<uint64_t>(host_aux, at.base);
  uint64_t *out = cudafft_aux_at<uint64_t>(host_aux, at.out);
  append[0] = floors[0] = base[0] = out[0] = frames[0] = 0;
  for (size_t i = 0; i < count; ++i) {
    descs[i] = make_desc(step(jobs[i]));
    const Items n = job_items(descs[i]);
    append[i + 1] = append[i] + n.append;
    floors[i + 1] = floors[i] + n.floors;
    base[i + 1] = base[i] + n.base;
    out[i + 1] = out[i] + n.out;
  }
  order_by_size(jobs, count, order);
  for (size_t i = 0; i < count; ++i)
    frames[i + 1] = frames[i] + job_items(descs[order[i]]).frames;
}

unsigned
flat_blocks(uint64_t items, int threads)
{
  return (unsigned)((items + (uint64_t)threads - 1) / (uint64_t)threads);
}

/* Queues the frame kernel of one fft size over the sorted jobs first .. last - 1. */
CudafftStatus
launch_frames(CudafftJob *const *jobs, const Desc *descs, const uint32_t *order,
              const uint64_t *prefix, const uint32_t *host_order, const uint64_t *host_prefix,
              size_t first, size_t last, cudaStream_t stream)
{
  const uint64_t total = host_prefix[last] - host_prefix[first];
  if (total == 0)
    return CUDAFFT_STATUS_OK;
  const CudafftFeaturesStepJob *lead = step(jobs[host_order[first]]);
  uint32_t mels = 0;
  for (size_t i = first; i < last; ++i) {
    const uint32_t m = step(jobs[host_order[i]])->o.n_mels;
    mels = m > mels ? m : mels;
  }
  const uint32_t n = lead->o.fft_size;
  int threads = 0, per_block = 0;
  size_t smem = 0;
  cudafft_features_frame_shape(n, mels, &threads, &per_block, &smem);
  const int points = mixed_buffer_points(n % 2 ? (int)n : (int)n / 2);
  const int extra = (int)(smem / (size_t)per_block / sizeof(float)) - 4 * points;
  const CudafftMixedArgs m = {mixed_plan(n % 2 ? (int)n : (int)n / 2), threads};
  const uint64_t blocks = (total + (uint64_t)per_block - 1) / (uint64_t)per_block;
  if (blocks > 0x7fffffffu)
    return cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE, "features: %llu frames in one launch",
                        (unsigned long long)total);
  const int jobs_here = (int)(last - first);
  if (n % 2)
    frames_kernel<true><<<(unsigned)blocks, threads * per_block, smem, stream>>>(
        descs, order + first, prefix + first, jobs_here, total, lead->o.twiddles, m, extra);
  else
    frames_kernel<false><<<(unsigned)blocks, threads * per_block, smem, stream>>>(
        descs, order + first, prefix + first, jobs_here, total, lead->o.twiddles, m, extra);
  CUDAFFT_CHECK(cudaGetLastError());
  return CUDAFFT_STATUS_OK;
}

/* The stages' launches in order (features_kernels.h). */
CudafftStatus
launch_stages(CudafftJob *const *jobs, size_t count, const Items &total, const uint32_t *host_order,
              const uint64_t *host_frames, const Desc *descs, const uint64_t *append,
              const uint32_t *order, const uint64_t *frames, const uint64_t *floors,
              const uint64_t *base, const uint64_t *out, cudaStream_t stream)
{
  const int jobs_count = (int)count;
  if (total.append > 0) {
    append_kernel<<<flat_blocks(total.append, kFlatThreads), kFlatThreads, 0, stream>>>(
        descs, append, jobs_count);
    CUDAFFT_CHECK(cudaGetLastError());
  }
  for (size_t first = 0; first < count;) {
    size_t last = first + 1;
    const uint32_t n = step(jobs[host_order[first]])->o.fft_size;
    while (last < count && step(jobs[host_order[last]])->o.fft_size == n)
      ++last;
    const CudafftStatus status =
        launch_frames(jobs, descs, order, frames, host_order, host_frames, first, last, stream);
    if (status != CUDAFFT_STATUS_OK)
      return status;
    first = last;
  }
  if (total.floors > 0) {
    floors_kernel<<<(unsigned)total.floors, kFloorThreads, 0, stream>>>(descs, floors, jobs_count);
    CUDAFFT_CHECK(cudaGetLastError());
  }
  if (total.base > 0) {
    base_kernel<<<flat_blocks(total.base, kFlatThreads), kFlatThreads, 0, stream>>>(descs, base,
                                                                                    jobs_count);
    CUDAFFT_CHECK(cudaGetLastError());
  }
  if (total.out > 0) {
    out_kernel<<<flat_blocks(total.out, kFlatThreads), kFlatThreads, 0, stream>>>(descs, out,
                                                                                  jobs_count);
    CUDAFFT_CHECK(cudaGetLastError());
  }
  return CUDAFFT_STATUS_OK;
}

CudafftStatus
launch(CudafftJob *const *jobs, size_t count, void *device_aux, void *stream_ptr)
{
  cudaStream_t stream = static_cast<cudaStream_t>(stream_ptr);
  const Layout at = layout(count);
  const Desc *descs = cudafft_aux_at<const Desc>(device_aux, at.descs);
  const uint64_t *append = cudafft_aux_at<const uint64_t>(device_aux, at.append);
  const uint32_t *order = cudafft_aux_at<const uint32_t>(device_aux, at.order);
  const uint64_t *frames = cudafft_aux_at<const uint64_t>(device_aux, at.frames);
  const uint64_t *floors = cudafft_aux_at<const uint64_t>(device_aux, at.floors);
  const uint64_t *base = cudafft_aux_at<const uint64_t>(device_aux, at.base);
  const uint64_t *out = cudafft_aux_at<const uint64_t>(device_aux, at.out);
  /* the host's copy of the counts: the same arithmetic as prepare's */
  Items total{};
  uint32_t *host_order = static_cast<uint32_t *>(malloc(count * sizeof(uint32_t)));
  uint64_t *host_frames = static_cast<uint64_t *>(malloc((count + 1) * sizeof(uint64_t)));
  if (!host_order || !host_frames) {
    free(host_order);
    free(host_frames);
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY,
                        "features: cannot order a batch of %zu jobs", count);
  }
  order_by_size(jobs, count, host_order);
  host_frames[0] = 0;
  for (size_t i = 0; i < count; ++i) {
    const Items n = job_items(make_desc(step(jobs[i])));
    total.append += n.append;
    total.floors += n.floors;
    total.base += n.base;
    total.out += n.out;
    host_frames[i + 1] = host_frames[i] + job_items(make_desc(step(jobs[host_order[i]]))).frames;
  }
  const CudafftStatus status = launch_stages(jobs, count, total, host_order, host_frames, descs,
                                             append, order, frames, floors, base, out, stream);
  free(host_order);
  free(host_frames);
  return status;
}

} // namespace

void
cudafft_features_frame_shape(uint32_t fft_size, uint32_t n_mels, int *threads, int *per_block,
                             size_t *smem)
{
  const int big_n = fft_size % 2 ? (int)fft_size : (int)fft_size / 2;
  const MixedPlan plan = mixed_plan(big_n);
  *threads = mixed_group_threads(plan);
  *per_block = *threads >= kMixedBlockThreadsAim ? 1 : kMixedBlockThreadsAim / *threads;
  /* the scratch and the log-mel values, rounded to whole float2 (the next row's alignment) */
  const int extra = (*threads + (int)n_mels + 1) / 2 * 2;
  *smem =
      (size_t)*per_block * (4 * (size_t)mixed_buffer_points(big_n) + (size_t)extra) * sizeof(float);
}

cudaError_t
cudafft_features_kernels_prepare(void)
{
  int device = 0, optin = 0;
  cudaError_t error = cudaGetDevice(&device);
  if (error == cudaSuccess)
    error = cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device);
  if (error == cudaSuccess)
    error = cudaFuncSetAttribute(frames_kernel<true>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 optin);
  if (error == cudaSuccess)
    error = cudaFuncSetAttribute(frames_kernel<false>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 optin);
  return error;
}

size_t
cudafft_features_step_aux_bytes(const CudafftFeaturesStepJob *job)
{
  CudafftJob *one = const_cast<CudafftJob *>(&job->job);
  return aux_bytes(&one, 1);
}

const CudafftWorkKind cudafft_features_step_kind = {"features steps", aux_bytes, prepare, launch,
                                                    nullptr};
const CudafftWorkKind cudafft_features_tables_kind = {"features tables", cudafft_segment_aux_bytes,
                                                      cudafft_segment_prepare,
                                                      cudafft_segment_launch, nullptr};
