/* features_kernel_math.cuh: the bodies of the features kernels (features_kernels.h), one work
 * item (or one transform group's share of a frame) at a time, __host__ __device__: the kernels
 * call them per thread, and tests/test_features_kernels.cu runs them on the host over whole
 * steps (one thread taking each group's work in turn, no barriers), against the CPU backend. The
 * per-value formulas are features_values.h's. Internal to the library; for .cu files.
 *
 * A step's five stages (features_kernels.h): append (one item per sample and channel), frames
 * (one transform group per frame and channel), floors (one per unit and channel: FRAMES, per
 * frame), base (one item per frame, channel and base value), out (one per unit frame, channel and
 * feature). */
#ifndef CUDAFFT_FEATURES_KERNEL_MATH_CUH
#define CUDAFFT_FEATURES_KERNEL_MATH_CUH

#include "features_step.h"
#include "features_values.h"
#include "mixed_fft.cuh"

#include <cstdint>

/* A step as the kernels read it: the object, the step, its input and output where they are. */
struct CudafftFeaturesDesc {
  CudafftFeaturesObject o;
  const void *in;     /* the appended samples; nullptr: zeros */
  unsigned char *out; /* the units' values */
  CudafftFeaturesStep s;
  uint64_t g0, g1;      /* FRAMES: the frames whose base vectors the units read */
  uint64_t append_slot; /* where the appended samples start in the history rows */
};

/* Work items of each stage of a step. */
struct CudafftFeaturesItems {
  uint64_t append, frames, floors, base, out;
};

namespace cudafft {

__host__ __device__ inline float
fx_load(const float *p)
{
#ifdef __CUDA_ARCH__
  return __ldg(p);
#else
  return *p;
#endif
}

__host__ __device__ inline uint32_t
fx_load(const uint32_t *p)
{
#ifdef __CUDA_ARCH__
  return __ldg(p);
#else
  return *p;
#endif
}

/* The job of a batch's work item: the last whose prefix sum is at most the item (jobs with no
 * items of the stage share their successor's prefix and are skipped). */
__host__ __device__ inline int
fx_find_job(const uint64_t *prefix, int jobs, uint64_t item)
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

__host__ __device__ inline bool
fx_range_on(const CudafftFeaturesObject &o)
{
  return o.kind != CUDAFFT_FEATURES_MEL && o.range > 0.0f;
}

__host__ __device__ inline bool
fx_frames_out(const CudafftFeaturesObject &o)
{
  return o.output == CUDAFFT_FEATURES_OUTPUT_FRAMES;
}

inline CudafftFeaturesDesc
fx_desc(const CudafftFeaturesObject &o, const CudafftFeaturesStep &s, const void *in,
        unsigned char *out)
{
  CudafftFeaturesDesc d{};
  d.o = o;
  d.s = s;
  d.in = s.has_input ? in : nullptr;
  d.out = out;
  d.append_slot = o.history_capacity ? s.append_at % o.history_capacity : 0;
  if (fx_frames_out(o) && s.count > 0) {
    const uint64_t reach =
        2 * (uint64_t)o.delta_reach * (uint64_t)(o.delta_order ? o.delta_order : 1);
    d.g0 = s.first > reach ? s.first - reach : 0;
    d.g1 = s.first + s.count + reach;
    d.g1 = d.g1 < s.made ? d.g1 : s.made;
    d.g1 = s.kept != CUDAFFT_FEATURES_UNKNOWN && s.kept < d.g1 ? s.kept : d.g1;
  }
  return d;
}

/* Frames a unit (window or chunk) covers: e0 .. e1 - 1 (the real ones). */
__host__ __device__ inline void
fx_unit_frames(const CudafftFeaturesDesc &d, uint64_t unit, uint64_t *e0, uint64_t *e1)
{
  *e0 = d.o.output == CUDAFFT_FEATURES_OUTPUT_WINDOWS ? unit * d.o.window_stride : 0;
  *e1 = *e0 + d.o.window_frames;
  if (d.s.kept != CUDAFFT_FEATURES_UNKNOWN && d.s.kept < *e1)
    *e1 = d.s.kept;
}

inline CudafftFeaturesItems
fx_items(const CudafftFeaturesDesc &d)
{
  const CudafftFeaturesObject &o = d.o;
  CudafftFeaturesItems n{};
  n.append = (uint64_t)d.s.append_count * o.channels;
  n.frames = (d.s.f1 - d.s.f0) * o.channels;
  if (o.direct || d.s.count == 0)
    return n;
  const uint64_t per_unit = fx_frames_out(o) ? 1 : o.window_frames;
  if (fx_range_on(o))
    n.floors = (fx_frames_out(o) ? d.g1 - d.g0 : d.s.count) * d.s.group;
  n.base = (fx_frames_out(o) ? d.g1 - d.g0 : d.s.count * per_unit) * d.s.group * o.base_features;
  n.out = d.s.count * per_unit * d.s.group * o.features;
  return n;
}

__host__ __device__ inline void
fx_store(unsigned char *out, size_t index, float value, int precision)
{
  if (precision == CUDAFFT_FEATURES_F16)
    reinterpret_cast<uint16_t *>(out)[index] = cudafft_features_half(value);
  else
    reinterpret_cast<float *>(out)[index] = value;
}

__host__ __device__ inline CudafftFeaturesLogSpec
fx_log_spec(const CudafftFeaturesObject &o)
{
  return CudafftFeaturesLogSpec{(CudafftFeaturesLog)o.log, o.log_floor, o.db_offset};
}

/* 1. append: sample local / channels of channel local % channels. */
__host__ __device__ inline void
fx_append_item(const CudafftFeaturesDesc &d, uint64_t local)
{
  const CudafftFeaturesObject &o = d.o;
  const uint32_t c = (uint32_t)(local % o.channels);
  const uint64_t s = local / o.channels;
  const float x = d.in ? cudafft_sample_float((CudafftSampleFormat)o.format, d.in, (size_t)local,
                                              CUDAFFT_INT_SCALE_POW2) *
                             o.sample_scale
                       : 0.0f;
  /* a step appends fewer samples than the row holds: one wrap at most */
  uint64_t slot = d.append_slot + s;
  slot = slot >= o.history_capacity ? slot - o.history_capacity : slot;
  o.history[(size_t)c * o.history_capacity + slot] = x;
}

/* The sum of every group thread's `partial` (scratch: the group's threads floats), the same in
 * each thread and in every run: each thread adds the partials in order. Ends with a barrier. */
template <typename Barrier>
__host__ __device__ inline float
fx_group_sum(float *scratch, int t, int threads, float partial, Barrier barrier)
{
  scratch[t] = partial;
  barrier();
  float sum = 0.0f;
  for (int k = 0; k < threads; ++k)
    sum += scratch[k];
  barrier();
  return sum;
}

/* A transform group's buffers: the FFT's two (mixed_buffer_points(N) each), the reduction's
 * scratch (threads floats) and a direct MFCC's log-mel values (n_mels floats). */
struct FxFrameBuffers {
  float2 *a, *b;
  float *scratch, *log_mel;
};

/* What the frame kernel does for the jobs of one launch, the same for every group of it (so that
 * its barriers are): the frames through b (DC removal, Kaldi's pre-emphasis or the raw energy:
 * kFxStaged, else straight into the transform's input), and the reductions any job needs. */
enum : unsigned {
  kFxStaged = 1,
  kFxMean = 2,
  kFxRawEnergy = 4,
  kFxWindowedEnergy = 8,
  kFxSpectrumEnergy = 16,
  kFxCepstrum = 32, /* a direct MFCC: the DCT after the mel bank */
};

inline unsigned
fx_frame_flags(const CudafftFeaturesObject &o)
{
  unsigned flags = 0;
  if (o.remove_dc || o.preemphasis == CUDAFFT_FEATURES_PREEMPHASIS_FRAME ||
      o.energy == CUDAFFT_FEATURES_ENERGY_RAW)
    flags |= kFxStaged;
  if (o.remove_dc)
    flags |= kFxMean;
  if (o.energy == CUDAFFT_FEATURES_ENERGY_RAW)
    flags |= kFxRawEnergy;
  if (o.energy == CUDAFFT_FEATURES_ENERGY_WINDOWED)
    flags |= kFxWindowedEnergy;
  if (o.energy == CUDAFFT_FEATURES_ENERGY_SPECTRUM)
    flags |= kFxSpectrumEnergy;
  if (o.direct && o.kind == CUDAFFT_FEATURES_MFCC)
    flags |= kFxCepstrum;
  return flags;
}

/* A group's sum where `wanted`, else 0 after a plain barrier: either way the group's writes before
 * it are complete after it. */
template <typename Barrier>
__host__ __device__ inline float
fx_group_sum_if(bool wanted, float *scratch, int t, int threads, float partial, Barrier barrier)
{
  if (wanted)
    return fx_group_sum(scratch, t, threads, partial, barrier);
  barrier();
  return 0.0f;
}

/* 2. frames: transform `local` of the step (frame local / channels of channel local % channels)
 * by thread t of its group of `threads`; `active`: it writes (a spare group of a partly empty
 * block computes along for the barriers but writes nothing). Odd: the fft size n is odd and the
 * transform the complex one of n points of (x, 0); else the real split over N = n / 2. flags:
 * the launch's (fx_frame_flags of its jobs, or-ed), whatever this job's own settings. */
template <bool Odd, typename Barrier>
__host__ __device__ inline void
fx_frame(const CudafftFeaturesDesc &d, uint64_t local, bool active, const FxFrameBuffers &buf,
         int t, int threads, const MixedPlan &plan, const float2 *twiddles, unsigned flags,
         Barrier barrier)
{
  const CudafftFeaturesObject &o = d.o;
  const uint32_t c = (uint32_t)(local % o.channels);
  const uint64_t f = d.s.f0 + local / o.channels;
  const int big_n = plan.n, n = Odd ? big_n : 2 * big_n, length = (int)o.length;
  const int64_t start = (int64_t)f * o.hop - o.start_offset;
  const float *history = o.history + (size_t)c * o.history_capacity;
  const uint32_t capacity = o.history_capacity;
  const bool signal_preemph = o.preemphasis == CUDAFFT_FEATURES_PREEMPHASIS_SIGNAL;
  float2 *a = buf.a, *b = buf.b;
  float *scratch = buf.scratch;

  /* sample i of the frame, dithered: a window inside the utterance reads its history row from one
   * slot on (no padding map, no 64-bit remainder a sample) */
  const bool inside = start >= 0 && start + length <= (int64_t)d.s.length;
  const uint32_t first_slot = inside ? (uint32_t)(start % capacity) : 0;
  const auto sample = [&](int i) -> float {
    float x = 0.0f;
    if (inside) {
      uint32_t slot = first_slot + (uint32_t)i;
      slot = slot >= capacity ? slot - capacity : slot;
      x = history[slot];
      if (signal_preemph && start + i > 0)
        x = x - o.preemph_coeff * history[slot == 0 ? capacity - 1 : slot - 1];
    } else {
      const int64_t at = cudafft_features_pad_index(start + i, (int64_t)d.s.length,
                                                    (CudafftFeaturesPad)o.pad, o.zero_end);
      if (at >= 0) {
        x = history[at % capacity];
        if (signal_preemph && at > 0)
          x = x - o.preemph_coeff * history[(at - 1) % capacity];
      }
    }
    if (o.dither > 0.0f)
      x += o.dither * cudafft_features_gauss(o.dither_seed, c, f, (uint64_t)i);
    return x;
  };

  float raw_energy = 0.0f, partial = 0.0f;
  const float coeff = o.preemphasis == CUDAFFT_FEATURES_PREEMPHASIS_FRAME ? o.preemph_coeff : 0.0f;
  float *u = reinterpret_cast<float *>(b);
  if (flags & kFxStaged) {
    /* the frame into b, its mean removed, its raw energy */
    for (int i = t; i < length; i += threads) {
      const float x = sample(i);
      u[i] = x;
      partial += x;
    }
    const float sum =
        (flags & kFxMean) ? fx_group_sum(scratch, t, threads, partial, barrier) : 0.0f;
    const float mean = o.remove_dc ? sum / (float)length : 0.0f;
    partial = 0.0f;
    for (int i = t; i < length; i += threads) {
      const float x = u[i] - mean;
      u[i] = x;
      partial += x * x;
    }
    raw_energy =
        fx_group_sum_if((flags & kFxRawEnergy) != 0, scratch, t, threads, partial, barrier);
  }
  /* pre-emphasis and window into the transform's input a, zero padded */
  const auto windowed = [&](int i) -> float {
    if (i >= length)
      return 0.0f;
    float x;
    if (flags & kFxStaged) {
      x = u[i];
      if (coeff != 0.0f)
        x -= coeff * u[i > 0 ? i - 1 : 0];
    } else {
      x = sample(i);
    }
    return x * fx_load(&o.window[i]);
  };
  partial = 0.0f;
  for (int k = t; k < (Odd ? n : big_n); k += threads) {
    const float v0 = windowed(Odd ? k : 2 * k), v1 = Odd ? 0.0f : windowed(2 * k + 1);
    a[pad(k)] = make_float2(v0, v1);
    partial += v0 * v0 + v1 * v1;
  }
  const float windowed_energy =
      fx_group_sum_if((flags & kFxWindowedEnergy) != 0, scratch, t, threads, partial, barrier);

  /* the spectrum values v[k], k = 0 .. n / 2, into the buffer the transform does not return */
  const float2 *z = mixed_fft_passes(plan, a, b, twiddles, t, threads, false, barrier);
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
    const float2 *w = mixed_real_twiddles(plan, twiddles);
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
  const float spectrum_energy =
      fx_group_sum_if((flags & kFxSpectrumEnergy) != 0, scratch, t, threads, partial, barrier);

  /* the mel bank, the log and the energy: into the ring, or (direct) on to the output */
  const CudafftFeaturesLogSpec spec = fx_log_spec(o);
  const float energy = o.energy == CUDAFFT_FEATURES_ENERGY_RAW        ? raw_energy
                       : o.energy == CUDAFFT_FEATURES_ENERGY_WINDOWED ? windowed_energy
                                                                      : spectrum_energy;
  const bool has_energy = o.energy != CUDAFFT_FEATURES_ENERGY_NONE;
  const float e_log =
      has_energy ? cudafft_features_energy_log(&spec, energy, o.log_energy_floor) : 0.0f;
  const uint32_t mels = o.n_mels;
  float *ring =
      o.direct ? nullptr : o.ring + ((size_t)c * o.ring_frames + f % o.ring_frames) * o.ring_values;
  const size_t out_at = ((size_t)(f - d.s.f0) * o.channels + c) * o.features;
  for (uint32_t jm = t; jm < mels; jm += threads) {
    const uint32_t first = fx_load(&o.filters[3 * jm]), count = fx_load(&o.filters[3 * jm + 1]);
    const float *weights = o.weights + fx_load(&o.filters[3 * jm + 2]);
    float acc = 0.0f;
    for (uint32_t k = 0; k < count; ++k)
      acc += fx_load(&weights[k]) * v[first + k];
    const float value = o.kind == CUDAFFT_FEATURES_MEL ? acc : cudafft_features_log(&spec, acc);
    if (!o.direct) {
      if (active)
        ring[jm] = value;
    } else if (o.kind == CUDAFFT_FEATURES_MFCC) {
      buf.log_mel[jm] = cudafft_features_normalise(value, -INFINITY, o.shift, o.scale);
    } else if (active) {
      const float out = o.kind == CUDAFFT_FEATURES_MEL
                            ? value
                            : cudafft_features_normalise(value, -INFINITY, o.shift, o.scale);
      fx_store(d.out, out_at + jm + (has_energy ? 1 : 0), out, o.precision);
    }
  }
  if (active && t == 0) {
    if (!o.direct)
      ring[mels] = e_log;
    else if (o.kind == CUDAFFT_FEATURES_LOG_MEL && has_energy)
      fx_store(d.out, out_at, e_log, o.precision);
  }
  if (flags & kFxCepstrum)
    barrier();
  if (o.direct && o.kind == CUDAFFT_FEATURES_MFCC && active)
    for (uint32_t q = t; q < o.n_mfcc; q += threads) {
      float value = cudafft_features_cepstrum(o.dct + (size_t)q * mels, buf.log_mel, 1, mels,
                                              fx_load(&o.lifter[q]));
      if (q == 0 && has_energy)
        value = e_log;
      fx_store(d.out, out_at + q, value, o.precision);
    }
}

/* The frame kernel's thread `thread` of block `block` (block_threads threads: groups of `threads`,
 * block_threads / threads transforms a block) over the `total` transforms of the launch's jobs
 * order[0 .. jobs - 1] (prefix: their transforms' prefix sums): its group's buffers one after
 * another in the block's dynamic shared memory smem (the FFT's two, then `extra` floats: the
 * reduction's scratch and a direct MFCC's log-mel values), its transform (a spare group of a
 * partly empty last block takes the last one and writes nothing). The kernel calls it with the
 * block's barrier; tests/test_features_kernels.cu runs whole blocks of it on the host. */
template <bool Odd, typename Barrier>
__host__ __device__ inline void
fx_frame_thread(const CudafftFeaturesDesc *__restrict__ descs, const uint32_t *__restrict__ order,
                const uint64_t *__restrict__ prefix, int jobs, uint64_t total,
                const float2 *__restrict__ twiddles, const MixedPlan &plan, int threads, int extra,
                unsigned flags, float *smem, unsigned block, unsigned thread,
                unsigned block_threads, Barrier barrier)
{
  const int points = mixed_buffer_points(plan.n);
  const int row = (int)thread / threads, t = (int)thread % threads;
  const uint64_t wanted = (uint64_t)block * (block_threads / (unsigned)threads) + (uint64_t)row;
  const bool active = wanted < total;
  float *mine = smem + (size_t)row * (4 * (size_t)points + (size_t)extra);
  FxFrameBuffers buf;
  buf.a = reinterpret_cast<float2 *>(mine);
  buf.b = buf.a + points;
  buf.scratch = mine + 4 * points;
  buf.log_mel = buf.scratch + threads;
  const uint64_t transform = prefix[0] + (active ? wanted : total - 1);
  const int j = fx_find_job(prefix, jobs, transform);
  fx_frame<Odd>(descs[order[j]], transform - prefix[j], active, buf, t, threads, plan, twiddles,
                flags, barrier);
}

/* 3. floors: unit (FRAMES: frame) local / group of channel c0 + local % group: its channel,
 * frames e0 .. e1 - 1 and the key of its floor's slot. */
__host__ __device__ inline void
fx_floor_unit(const CudafftFeaturesDesc &d, uint64_t local, uint32_t *c, uint64_t *e0, uint64_t *e1,
              uint64_t *key)
{
  *c = d.s.c0 + (uint32_t)(local % d.s.group);
  if (fx_frames_out(d.o)) {
    *key = *e0 = d.g0 + local / d.s.group;
    *e1 = *e0 + 1;
  } else {
    *key = d.s.first + local / d.s.group;
    fx_unit_frames(d, *key, e0, e1);
  }
}

/* The largest finite log-mel value among values first, first + step, ... of frames e0 .. e1 - 1
 * of channel c (one thread's share of the reduction; -INFINITY for none). */
__host__ __device__ inline float
fx_floor_share(const CudafftFeaturesDesc &d, uint32_t c, uint64_t e0, uint64_t e1, uint64_t first,
               uint64_t step)
{
  const CudafftFeaturesObject &o = d.o;
  const uint64_t values = (e1 - e0) * o.n_mels;
  float max = -INFINITY;
  for (uint64_t i = first; i < values; i += step) {
    const uint64_t g = e0 + i / o.n_mels;
    const float *ring = o.ring + ((size_t)c * o.ring_frames + g % o.ring_frames) * o.ring_values;
    max = cudafft_features_finite_max(max, ring[i % o.n_mels]);
  }
  return max;
}

__host__ __device__ inline void
fx_floor_store(const CudafftFeaturesDesc &d, uint32_t c, uint64_t key, float max)
{
  const CudafftFeaturesObject &o = d.o;
  o.floors[(size_t)c * o.ring_frames + key % o.ring_frames] = max - o.range;
}

/* 4. base: value local % base_features of a frame's base vector b (step 9), from its ring row. */
__host__ __device__ inline void
fx_base_item(const CudafftFeaturesDesc &d, uint64_t local)
{
  const CudafftFeaturesObject &o = d.o;
  const uint32_t base_features = o.base_features;
  const uint32_t i = (uint32_t)(local % base_features);
  local /= base_features;
  const uint32_t c = d.s.c0 + (uint32_t)(local % d.s.group);
  local /= d.s.group;
  uint64_t g, key;
  if (fx_frames_out(o)) {
    key = g = d.g0 + local;
  } else {
    key = d.s.first + local / o.window_frames;
    uint64_t e0, e1;
    fx_unit_frames(d, key, &e0, &e1);
    g = e0 + local % o.window_frames;
    if (g >= e1)
      return; /* past a partial window's frames */
  }
  const size_t slot = (size_t)c * o.ring_frames + g % o.ring_frames;
  const float *ring = o.ring + slot * o.ring_values;
  const float lo =
      fx_range_on(o) ? o.floors[(size_t)c * o.ring_frames + key % o.ring_frames] : -INFINITY;
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
    float acc = 0.0f;
    for (uint32_t jm = 0; jm < mels; ++jm)
      acc += fx_load(&row[jm]) * cudafft_features_normalise(ring[jm], lo, o.shift, o.scale);
    value = acc * fx_load(&o.lifter[i]);
  }
  o.base[slot * base_features + i] = value;
}

/* One feature of a frame from the base rows (bases: channel c's rows, slot s at s
 * base_features): order 0 the base vector, else its deltas over frames 0 .. frames - 1 of the
 * unit starting at frame e0. */
__host__ __device__ inline float
fx_feature(const CudafftFeaturesObject &o, const float *bases, uint32_t i, int64_t t,
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

/* 5. out: feature local % features of a unit frame and channel, stored in the output. */
__host__ __device__ inline void
fx_out_item(const CudafftFeaturesDesc &d, uint64_t local)
{
  const CudafftFeaturesObject &o = d.o;
  const uint32_t features = o.features;
  const uint32_t i = (uint32_t)(local % features);
  local /= features;
  const uint32_t gc = (uint32_t)(local % d.s.group), c = d.s.c0 + gc;
  local /= d.s.group;
  const float *bases = o.base + (size_t)c * o.ring_frames * o.base_features;
  if (fx_frames_out(o)) {
    const uint64_t frame = d.s.first + local;
    const int64_t frames = d.s.kept == CUDAFFT_FEATURES_UNKNOWN ? INT64_MAX : (int64_t)d.s.kept;
    const float value = fx_feature(o, bases, i, (int64_t)frame, frames, 0);
    fx_store(d.out, ((size_t)local * o.channels + c) * features + i, value, o.precision);
    return;
  }
  const uint32_t frames_per_unit = o.window_frames;
  const uint64_t t = local % frames_per_unit, unit = d.s.first + local / frames_per_unit;
  uint64_t e0, e1;
  fx_unit_frames(d, unit, &e0, &e1);
  const float value =
      e0 + t < e1 ? fx_feature(o, bases, i, (int64_t)t, (int64_t)(e1 - e0), e0) : o.pad_value;
  const size_t at = o.layout == CUDAFFT_FEATURES_LAYOUT_FEATURE_MAJOR
                        ? (size_t)i * frames_per_unit + t
                        : (size_t)t * features + i;
  const size_t unit_values = (size_t)frames_per_unit * features;
  fx_store(d.out, ((size_t)(unit - d.s.first) * d.s.group + gc) * unit_values + at, value,
           o.precision);
}

} // namespace cudafft

#endif
