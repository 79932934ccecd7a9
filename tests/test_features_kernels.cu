/* test_features_kernels.cu: the features engine's CUDA path on the host, where no GPU is: the
 * stepper that cuts calls into steps (features_step.c, the CUDA backend's), the kind's prepare
 * (descriptors, prefix sums, the jobs by fft size) and the five kernels' bodies
 * (features_kernel_math.cuh) over the batch's work items found as the kernels find them, the
 * mixed-radix FFT's passes included; the objects' state in host memory. The frame kernel runs as
 * launched: its shape (cudafft_features_frame_shape), every block's threads (fx_frame_thread) as
 * fibers passing its barriers in a random order each time, over shared memory of exactly the
 * launch's size, poisoned, with a guard behind it; a block whose threads pass different barriers,
 * a thread that reads what another writes with no barrier between, a write past the shared
 * memory or a read of memory not written fails. The other kernels' items run one after another.
 * Several objects of different configurations stream side by side, each batch holding one step of
 * each (as the executor batches them), in two job sizes: 96 KB (many pieces, window units in
 * channel groups) and the executor's 8 MB (pieces of 256 frames, several windows a step); every
 * output value against the CPU backend's on the same input in the same pushes. What it cannot
 * check: the executor's staging and the device's memory (the -cuda runs of test_features,
 * test_features_model and test_features_device do). No argument. */
#include "features_kernel_math.cuh"
#include "features_kernels.h"
#include "features_step.h"
#include "features_timeline.h"
#include "twiddles.h"

/* The tests' C headers, in C++: their C11 _Noreturn as C++'s attribute. */
#define _Noreturn [[noreturn]]
extern "C" {
#include "features_util.h"
#include "test_harness.h"
#include "test_signal.h"
}
#undef _Noreturn

#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <cstring>
#include <ucontext.h>
#include <deque>
#include <functional>
#include <vector>

using namespace cudafft;

namespace {

/* A run's job size: a small one (many pieces, windows in channel groups), or the CUDA executor's
 * (executor_cuda.cu's 8 MB, the backend keeping 1 MB of the input side for the job's own data:
 * pieces of 256 frames, several windows a step), with pushes long enough to fill them. */
struct Budget {
  const char *name;
  size_t bytes, aux_reserve, samples, most_push;
};
constexpr Budget kBudgets[] = {
    {"96 KB jobs", 96 << 10, 16 << 10, 40000, 9000},
    {"the executor's 8 MB jobs", (size_t)8 << 20, (size_t)1 << 20, 120000, 60000},
};

/* One object: its configuration, its host "device" state, its stepper and its steps waiting for
 * their batch. */
struct Object {
  CudafftFeaturesConfig config{};
  CudafftFeaturesShape shape{};
  CudafftFeaturesTables tables{};
  CudafftFeaturesStepper stepper{};
  CudafftFeaturesObject o{};
  std::vector<float> history, ring, base, floors, twiddles;
  std::vector<uint32_t> filters;
  std::deque<CudafftFeaturesWork> waiting;
};

CudafftStatus
collect(void *ctx, const CudafftFeaturesWork *work)
{
  static_cast<Object *>(ctx)->waiting.push_back(*work);
  return CUDAFFT_STATUS_OK;
}

void
open_object(Object *ob, const CudafftFeaturesConfig &config, const Budget &budget)
{
  ob->config = config;
  if (ob->config.win_length == 0)
    ob->config.win_length = ob->config.fft_size;
  const CudafftFeaturesConfig &c = ob->config;
  if (cudafft_features_shape(&c, &ob->shape) != CUDAFFT_STATUS_OK ||
      cudafft_features_tables_make(&c, &ob->tables) != CUDAFFT_STATUS_OK ||
      cudafft_features_stepper_init(&ob->stepper, &c, &ob->shape, budget.bytes,
                                    budget.aux_reserve) != CUDAFFT_STATUS_OK)
    test_abort("a host object: %s", cudafft_last_error_message());
  ob->stepper.submit = collect;
  ob->stepper.ctx = ob;
  cudafft_features_object_describe(&ob->o, &c, &ob->shape, &ob->tables,
                                   ob->stepper.history_capacity, ob->stepper.ring_frames);
  const int big_n = c.fft_size % 2 ? (int)c.fft_size : (int)c.fft_size / 2;
  ob->twiddles.resize(2 * cudafft_twiddle_count(big_n, kPlanMixed));
  cudafft_twiddle_table(big_n, kPlanMixed, ob->twiddles.data());
  ob->filters.resize(3 * (size_t)c.n_mels);
  for (unsigned j = 0; j < c.n_mels; ++j) {
    ob->filters[3 * j] = ob->tables.filters[j].first;
    ob->filters[3 * j + 1] = ob->tables.filters[j].count;
    ob->filters[3 * j + 2] = ob->tables.filters[j].offset;
  }
  /* poisoned: a value read before it is written shows */
  ob->history.assign(c.channels * ob->stepper.history_capacity, NAN);
  const size_t slots = c.channels * ob->stepper.ring_frames;
  ob->ring.assign(slots * (c.n_mels + 1) + 1, NAN);
  ob->base.assign(slots * ob->shape.base_features + 1, NAN);
  ob->floors.assign(slots + 1, NAN);
  CudafftFeaturesObject &o = ob->o;
  o.window = ob->tables.window;
  o.filters = ob->filters.data();
  o.weights = ob->tables.weights;
  o.dct = ob->tables.dct;
  o.lifter = ob->tables.lifter;
  o.savgol[0] = ob->tables.savgol[0];
  o.savgol[1] = ob->tables.savgol[1];
  o.twiddles = ob->twiddles.data();
  o.history = ob->history.data();
  o.ring = ob->ring.data();
  o.base = ob->base.data();
  o.floors = ob->floors.data();
}

/* A thread block on the host: its threads as fibers (ucontext), each run up to its next barrier
 * in a fresh random order every phase, so that a thread reading what another writes with no
 * barrier between them gets a value that depends on the order (or the poison of shared memory not
 * yet written), and a barrier some threads do not reach shows. */
struct HostBlock {
  static constexpr size_t kStack = 64 << 10;
  ucontext_t home{};
  std::vector<ucontext_t> fibers;
  std::vector<std::vector<char>> stacks;
  std::vector<unsigned> barriers;
  std::vector<char> done;
  unsigned current = 0;
  std::function<void(unsigned)> body;
};

HostBlock *g_block = nullptr;

/* The block's barrier: back to the scheduler until every thread has reached it (host only; the
 * kernels' bodies are __host__ __device__). */
struct FiberBarrier {
  __host__ __device__ void
  operator()() const
  {
#ifndef __CUDA_ARCH__
    HostBlock *b = g_block;
    const unsigned t = b->current;
    ++b->barriers[t];
    swapcontext(&b->fibers[t], &b->home);
#endif
  }
};

void
fiber_main()
{
  HostBlock *b = g_block;
  const unsigned t = b->current;
  b->body(t);
  b->done[t] = 1; /* back to home through uc_link */
}

/* Runs `count` threads of body to their end; false (reported) where they passed different
 * barriers. */
bool
run_block(HostBlock *b, unsigned count, TestRng *rng)
{
  b->fibers.resize(count);
  while (b->stacks.size() < count)
    b->stacks.emplace_back(HostBlock::kStack);
  b->barriers.assign(count, 0);
  b->done.assign(count, 0);
  for (unsigned t = 0; t < count; ++t) {
    getcontext(&b->fibers[t]);
    b->fibers[t].uc_stack.ss_sp = b->stacks[t].data();
    b->fibers[t].uc_stack.ss_size = HostBlock::kStack;
    b->fibers[t].uc_link = &b->home;
    makecontext(&b->fibers[t], fiber_main, 0);
  }
  g_block = b;
  std::vector<unsigned> order(count);
  for (unsigned t = 0; t < count; ++t)
    order[t] = t;
  for (unsigned phase = 0;; ++phase) {
    for (unsigned i = count; i > 1; --i)
      std::swap(order[i - 1], order[test_rng_range(rng, 0, i - 1)]);
    for (unsigned t : order)
      if (!b->done[t]) {
        b->current = t;
        swapcontext(&b->home, &b->fibers[t]);
      }
    unsigned finished = 0, behind = 0;
    for (unsigned t = 0; t < count; ++t) {
      finished += b->done[t] != 0;
      behind += b->barriers[t] != phase + 1 && !b->done[t];
    }
    if (finished == count)
      return true;
    if (finished > 0 || behind > 0)
      return test_check(false,
                        "a frame block's threads part ways at barrier %u: %u of %u ended, "
                        "%u elsewhere",
                        phase + 1, finished, count, behind);
  }
}

/* The frame kernel's launch for jobs order[first .. last - 1] (one fft size), as launch_frames
 * makes it: its shape for the largest mel count, every block's threads run to the end over shared
 * memory of exactly the launch's size, poisoned, with a guard behind it that must stay intact. */
template <bool Odd>
bool
run_frames(const CudafftFeaturesAuxView &v, size_t first, size_t last, const float2 *twiddles,
           int big_n, uint32_t mels, HostBlock *block, TestRng *rng)
{
  const MixedPlan plan = mixed_plan(big_n);
  int threads = 0, per_block = 0;
  size_t smem = 0;
  cudafft_features_frame_shape((uint32_t)(Odd ? big_n : 2 * big_n), mels, &threads, &per_block,
                               &smem);
  const int points = mixed_buffer_points(big_n);
  const int extra = (int)(smem / (size_t)per_block / sizeof(float)) - 4 * points;
  const uint64_t *prefix = v.frames + first;
  const uint64_t total = prefix[last - first] - prefix[0];
  unsigned flags = 0; /* the launch's: every job's needs */
  for (size_t i = first; i < last; ++i)
    flags |= fx_frame_flags(v.descs[v.order[i]].o);
  constexpr size_t kGuard = 64;
  const float guard = std::nanf("0x5a5a");
  std::vector<float> shared(smem / sizeof(float) + kGuard);
  const unsigned block_threads = (unsigned)(threads * per_block);
  const uint64_t blocks = (total + (uint64_t)per_block - 1) / (uint64_t)per_block;
  for (uint64_t k = 0; k < blocks; ++k) {
    std::fill(shared.begin(), shared.end(), guard);
    block->body = [&](unsigned thread) {
      fx_frame_thread<Odd>(v.descs, v.order + first, prefix, (int)(last - first), total, twiddles,
                           plan, threads, extra, flags, shared.data(), (unsigned)k, thread,
                           block_threads, FiberBarrier{});
    };
    if (!run_block(block, block_threads, rng))
      return false;
    for (size_t i = smem / sizeof(float); i < shared.size(); ++i)
      if (std::memcmp(&shared[i], &guard, sizeof guard) != 0)
        return test_check(false, "a %d-point frame block wrote past its %zu bytes of shared memory",
                          Odd ? big_n : 2 * big_n, smem);
  }
  return true;
}

/* One batch: the oldest waiting step of each object, through the kind's prepare, and the stages
 * in the launch's order. */
bool
run_batch(std::vector<Object *> &objects, HostBlock *block, TestRng *rng)
{
  std::vector<CudafftFeaturesStepJob> jobs;
  for (Object *ob : objects)
    if (!ob->waiting.empty()) {
      const CudafftFeaturesWork work = ob->waiting.front();
      ob->waiting.pop_front();
      CudafftFeaturesStepJob job{};
      job.o = ob->o;
      job.step = work.step;
      job.job.device_in = const_cast<void *>(work.in);
      job.job.device_out = work.out;
      jobs.push_back(job);
    }
  if (jobs.empty())
    return false;
  std::vector<CudafftJob *> list;
  for (auto &job : jobs)
    list.push_back(&job.job);
  const size_t count = list.size();
  std::vector<unsigned char> aux(cudafft_features_step_kind.aux_bytes(list.data(), count) + 16);
  void *at = aux.data() + (16 - (uintptr_t)aux.data() % 16) % 16;
  cudafft_features_step_kind.prepare(list.data(), count, at, at);
  const CudafftFeaturesAuxView v = cudafft_features_aux_view(at, count);
  /* the frame launches' order: every job once, by fft size, each size's in batch order */
  std::vector<char> seen(count, 0);
  for (size_t i = 0; i < count; ++i) {
    const uint32_t k = v.order[i], before = i ? v.order[i - 1] : 0;
    const bool ok = k < count && !seen[k] &&
                    (i == 0 || v.descs[before].o.fft_size < v.descs[k].o.fft_size ||
                     (v.descs[before].o.fft_size == v.descs[k].o.fft_size && before < k));
    if (!ok)
      test_abort("a batch of %zu jobs: job %u at place %zu of the frame launches' order", count, k,
                 i);
    seen[k] = 1;
  }
  const int jobs_count = (int)count;
  for (uint64_t item = 0; item < v.append[count]; ++item) {
    const int j = fx_find_job(v.append, jobs_count, item);
    fx_append_item(v.descs[j], item - v.append[j]);
  }
  for (size_t first = 0; first < count;) {
    const CudafftFeaturesObject &lead = v.descs[v.order[first]].o;
    size_t last = first + 1;
    uint32_t mels = lead.n_mels;
    while (last < count && v.descs[v.order[last]].o.fft_size == lead.fft_size) {
      mels = std::max(mels, v.descs[v.order[last]].o.n_mels);
      ++last;
    }
    const int n = (int)lead.fft_size;
    const float2 *twiddles = static_cast<const float2 *>(lead.twiddles);
    const bool ran = n % 2 ? run_frames<true>(v, first, last, twiddles, n, mels, block, rng)
                           : run_frames<false>(v, first, last, twiddles, n / 2, mels, block, rng);
    if (!ran)
      test_abort("the frame kernel's blocks failed (above)");
    first = last;
  }
  for (uint64_t item = 0; item < v.floors[count]; ++item) {
    const int j = fx_find_job(v.floors, jobs_count, item);
    uint32_t c;
    uint64_t e0, e1, key;
    fx_floor_unit(v.descs[j], item - v.floors[j], &c, &e0, &e1, &key);
    fx_floor_store(v.descs[j], c, key, fx_floor_share(v.descs[j], c, e0, e1, 0, 1));
  }
  for (uint64_t item = 0; item < v.base[count]; ++item) {
    const int j = fx_find_job(v.base, jobs_count, item);
    fx_base_item(v.descs[j], item - v.base[j]);
  }
  for (uint64_t item = 0; item < v.out[count]; ++item) {
    const int j = fx_find_job(v.out, jobs_count, item);
    fx_out_item(v.descs[j], item - v.out[j]);
  }
  return true;
}

/* Configurations ---------------------------------------------------------------------------- */

CudafftFeaturesConfig
preset(const char *name, double rate, unsigned mels)
{
  CudafftFeaturesConfig c;
  if (cudafft_features_preset(&c, name, rate, mels) != CUDAFFT_STATUS_OK)
    test_abort("preset %s: %s", name, cudafft_last_error_message());
  return c;
}

std::vector<CudafftFeaturesConfig>
configurations()
{
  std::vector<CudafftFeaturesConfig> all;
  CudafftFeaturesConfig c = preset("whisper", 16000.0, 80); /* chunks, groups of channels */
  c.chunk_samples = 6400; /* 40 frames x 80 x 4 bytes a channel: 8 exceed 96 KB */
  c.channels = 8;
  all.push_back(c);
  c = preset("whisper", 16000.0, 80); /* frames straight from the frame kernel, F16 */
  c.output = CUDAFFT_FEATURES_OUTPUT_FRAMES;
  c.range = 0.0f;
  c.precision = CUDAFFT_FEATURES_F16;
  c.channels = 2;
  all.push_back(c);
  c = preset("kaldi-mfcc", 16000.0, 0); /* Kaldi: span L, povey, DC, pre-emphasis, deltas */
  c.delta_order = 2;
  c.delta_width = 5;
  c.format = CUDAFFT_SAMPLE_S16;
  c.edges = CUDAFFT_FEATURES_EDGES_KALDI;
  all.push_back(c);
  c = preset("librosa-mfcc", 22050.0, 40); /* overlapping windows with a range, Savgol */
  c.fft_size = 1024;
  c.hop = 256;
  c.n_mfcc = 13;
  c.lifter = 22.0f;
  c.delta_order = 2;
  c.delta_style = CUDAFFT_FEATURES_DELTAS_SAVGOL;
  c.output = CUDAFFT_FEATURES_OUTPUT_WINDOWS;
  c.window_frames = 20;
  c.window_stride = 7;
  c.layout = CUDAFFT_FEATURES_LAYOUT_FEATURE_MAJOR;
  c.channels = 2;
  all.push_back(c);
  c = preset("nemo", 16000.0, 0); /* signal pre-emphasis, drop_last, per-frame range, deltas */
  c.range = 7.0f;
  c.delta_order = 1;
  c.delta_width = 9;
  c.format = CUDAFFT_SAMPLE_F64;
  all.push_back(c);
  cudafft_features_config_init(&c); /* an odd size, END edges, spectrum energy, dither */
  c.fft_size = 375;
  c.hop = 100;
  c.edges = CUDAFFT_FEATURES_EDGES_END;
  c.span = CUDAFFT_FEATURES_SPAN_WINDOW;
  c.pad = CUDAFFT_FEATURES_PAD_CONSTANT;
  c.kind = CUDAFFT_FEATURES_LOG_MEL;
  c.log = CUDAFFT_FEATURES_LN_GUARD;
  c.energy = CUDAFFT_FEATURES_ENERGY_SPECTRUM;
  c.dither = 0.001f;
  c.n_mels = 30;
  c.channels = 2;
  c.format = CUDAFFT_SAMPLE_S32;
  all.push_back(c);
  c = preset("kaldi-mfcc", 16000.0, 0); /* MFCC straight from the frame kernel, its c0 the raw */
  c.channels = 3;                       /* energy: in the 512-point launch of the two above */
  all.push_back(c);
  c = preset("torchaudio", 48000.0, 40); /* 480 with a 400 window, magnitude, normalized */
  c.fft_size = 480;
  c.win_length = 400;
  c.hop = 240;
  c.power = 1;
  c.normalized = 2;
  c.output = CUDAFFT_FEATURES_OUTPUT_WINDOWS;
  c.window_frames = 9;
  c.window_stride = 12;
  c.channels = 5;
  all.push_back(c);
  return all;
}

/* Comparing ----------------------------------------------------------------------------------- */

/* Every value of two runs' outputs: log-domain values within 2e-3, linear ones within 1e-5 of
 * their output's largest (float FFTs of two algorithms, FFTW's and mixed_fft.cuh's). */
void
compare(const CudafftFeaturesConfig &c, const std::vector<unsigned char> &ours, size_t outputs,
        const FeaturesRun &cpu, const char *label)
{
  if (!test_check(outputs == cpu.outputs && ours.size() >= outputs * cpu.output_bytes,
                  "%s: %zu outputs, as the CPU backend's %zu", label, outputs, cpu.outputs))
    return;
  FeaturesRun mine{};
  mine.outputs = outputs;
  mine.output_bytes = cpu.output_bytes;
  mine.data = const_cast<unsigned char *>(ours.data());
  const size_t values = cpu.output_bytes / (c.precision == CUDAFFT_FEATURES_F16 ? 2 : 4);
  const bool linear = c.kind == CUDAFFT_FEATURES_MEL;
  size_t bad = 0, worst_o = 0, worst_v = 0;
  double worst = 0;
  for (size_t o = 0; o < outputs; ++o) {
    double scale = 1.0;
    if (linear) {
      scale = 0.0;
      for (size_t v = 0; v < values; ++v)
        scale = std::fmax(scale, std::fabs(features_run_value(&cpu, c.precision, o, v)));
    }
    for (size_t v = 0; v < values; ++v) {
      const double want = features_run_value(&cpu, c.precision, o, v);
      const double got = features_run_value(&mine, c.precision, o, v);
      const double half = c.precision == CUDAFFT_FEATURES_F16 ? std::fabs(want) / 1024.0 : 0.0;
      const double allowed = (linear ? 1e-5 * scale : 2e-3) + half;
      const double ratio = std::fabs(got - want) / allowed;
      if (!(ratio <= 1.0))
        ++bad;
      if (!(ratio <= worst)) {
        worst = ratio;
        worst_o = o;
        worst_v = v;
      }
    }
  }
  test_check(bad == 0,
             "%s: %zu values within their bound of the CPU backend's: worst %.2f of it at output "
             "%zu value %zu",
             label, outputs * values, worst, worst_o, worst_v);
}

/* Every configuration side by side in jobs of `budget`, against the CPU backend. */
void
run_all(const Budget &budget)
{
  const std::vector<CudafftFeaturesConfig> configs = configurations();
  const size_t count = configs.size();
  std::vector<Object> objects(count);
  std::vector<Object *> pointers;
  std::vector<TestSignal> signals(count);
  std::vector<std::vector<size_t>> pieces(count);
  std::vector<std::vector<unsigned char>> outputs(count);
  std::vector<size_t> written(count, 0), at(count, 0), pushed(count, 0);
  HostBlock block;
  TestRng order = test_rng("kernels thread order, %s", budget.name);
  for (size_t i = 0; i < count; ++i) {
    open_object(&objects[i], configs[i], budget);
    pointers.push_back(&objects[i]);
    const CudafftFeaturesConfig &c = configs[i];
    TestRng rng = test_rng("kernels %zu signal, %s", i, budget.name);
    test_signal_noise(&signals[i], &rng, c.format, c.channels, (unsigned)c.sample_rate,
                      budget.samples + 3333 * i, TEST_READ_POW2 | TEST_READ_F64_AS_FLOAT, 0.4);
    TestRng cut = test_rng("kernels %zu pieces, %s", i, budget.name);
    for (size_t left = signals[i].frames; left > 0;) {
      const size_t piece =
          test_rng_range(&cut, 1, left < budget.most_push ? left : budget.most_push);
      pieces[i].push_back(piece);
      left -= piece;
    }
  }
  /* the objects' calls side by side: each round one call of each (its steps collected, its
   * output buffer grown first), then batches of one step of each object until all have run */
  for (size_t round = 0;; ++round) {
    std::vector<size_t> due(count, 0);
    bool any = false;
    for (size_t i = 0; i < count; ++i) {
      if (round > pieces[i].size())
        continue;
      any = true;
      const CudafftFeaturesTimeline t = cudafft_features_timeline(&objects[i].config);
      const bool finish = round == pieces[i].size();
      const size_t piece = finish ? 0 : pieces[i][round];
      due[i] = finish ? cudafft_features_outputs_final(&t, pushed[i]) - written[i]
                      : cudafft_features_outputs_ready(&t, pushed[i] + piece) - written[i];
      outputs[i].resize((written[i] + due[i] + 1) * objects[i].shape.bytes);
    }
    if (!any)
      break;
    for (size_t i = 0; i < count; ++i) {
      if (round > pieces[i].size())
        continue;
      Object &ob = objects[i];
      const bool finish = round == pieces[i].size();
      const size_t piece = finish ? 0 : pieces[i][round];
      size_t got = 0;
      const unsigned char *in = signals[i].raw + at[i] * test_signal_frame_bytes(&signals[i]);
      const CudafftStatus status =
          cudafft_features_stepper_run(&ob.stepper, finish ? nullptr : in, piece, 0, finish,
                                       outputs[i].data() + written[i] * ob.shape.bytes, &got);
      if (status != CUDAFFT_STATUS_OK || got != due[i])
        test_abort("configuration %zu, call %zu, %s: %s, %zu outputs where %zu were due (%s)", i,
                   round, budget.name, cudafft_status_name(status), got, due[i],
                   cudafft_last_error_message());
      written[i] += got;
      at[i] += piece;
      pushed[i] = finish ? 0 : pushed[i] + piece;
    }
    while (run_batch(pointers, &block, &order)) {
    }
  }
  for (size_t i = 0; i < count; ++i) {
    char label[128];
    snprintf(label, sizeof label, "configuration %zu (%s, %u channels, fft %zu), %s", i,
             configs[i].output == CUDAFFT_FEATURES_OUTPUT_FRAMES    ? "frames"
             : configs[i].output == CUDAFFT_FEATURES_OUTPUT_WINDOWS ? "windows"
                                                                    : "chunks",
             configs[i].channels, configs[i].fft_size, budget.name);
    /* the CPU backend on the same pushes */
    FeaturesRun cpu;
    TestRng cut = test_rng("kernels %zu pieces, %s", i, budget.name);
    features_run(&cpu, CUDAFFT_BACKEND_CPU, &configs[i], signals[i].raw, signals[i].frames, &cut,
                 budget.most_push, label);
    if (cpu.ok)
      compare(configs[i], outputs[i], written[i], cpu, label);
    features_run_clear(&cpu);
    test_signal_clear(&signals[i]);
    cudafft_features_tables_free(&objects[i].tables);
  }
}

/* Pushes of 100 samples where frames start long after the samples pushed so far (Kaldi's edges
 * with a hop far past the span: frame 0 at sample 775): every call's steps are made, and the
 * outputs are the CPU backend's of one push. */
void
check_short_pushes()
{
  CudafftFeaturesConfig c;
  features_config_kaldi_long_hop(&c);
  Object ob;
  open_object(&ob, c, kBudgets[0]);
  std::vector<Object *> pointers = {&ob};
  TestSignal signal;
  TestRng rng = test_rng("kernels short pushes signal");
  test_signal_noise(&signal, &rng, c.format, c.channels, (unsigned)c.sample_rate, 12000,
                    TEST_READ_POW2, 0.4);
  const CudafftFeaturesTimeline t = cudafft_features_timeline(&ob.config);
  std::vector<unsigned char> out((cudafft_features_outputs_final(&t, signal.frames) + 1) *
                                 ob.shape.bytes);
  HostBlock block;
  TestRng order = test_rng("kernels short pushes thread order");
  size_t written = 0, calls = 0, refused = 0;
  for (size_t at = 0; at <= signal.frames; at += 100) {
    ++calls;
    const bool finish = at == signal.frames;
    const size_t piece = finish ? 0 : std::min<size_t>(100, signal.frames - at);
    size_t got = 0;
    if (cudafft_features_stepper_run(
            &ob.stepper, finish ? nullptr : signal.raw + at * test_signal_frame_bytes(&signal),
            piece, 0, finish, out.data() + written * ob.shape.bytes, &got) != CUDAFFT_STATUS_OK) {
      if (refused++ == 0)
        printf("# call %zu refused: %s\n", calls, cudafft_last_error_message());
      cudafft_features_stepper_reset(&ob.stepper);
    }
    written += got;
    while (run_batch(pointers, &block, &order)) {
    }
    if (finish)
      break;
  }
  if (test_check(refused == 0,
                 "Kaldi's edges with a hop of 1600 past a 50-sample span: %zu of %zu "
                 "calls of 100 samples refused",
                 refused, calls)) {
    FeaturesRun cpu;
    features_run(&cpu, CUDAFFT_BACKEND_CPU, &ob.config, signal.raw, signal.frames, nullptr, 0,
                 "Kaldi's edges, a hop past the span, on the CPU");
    if (cpu.ok)
      compare(ob.config, out, written, cpu,
              "Kaldi's edges with a hop past the span, pushes of 100");
    features_run_clear(&cpu);
  }
  test_signal_clear(&signal);
  cudafft_features_tables_free(&ob.tables);
}

} // namespace

int
main(int argc, char **argv)
{
  test_begin_every_backend(argc, argv);
  for (const Budget &budget : kBudgets)
    run_all(budget);
  check_short_pushes();
  return test_finish();
}
