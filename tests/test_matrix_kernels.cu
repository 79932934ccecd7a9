/* test_matrix_kernels.cu: the matrix convolution's GPU arithmetic on the host, where no GPU is: the
 * kernels' per-thread functions (lib/matrix/matrix_kernel_math.cuh) run for every thread of each
 * launch, in the CUDA backend's order per block (frame the inputs, their transforms, pack into the
 * delay line, the multiply-accumulate over every (output, bin, split), the splits' sum, the
 * inverse transforms, emit), with FFTW in the same precision standing in for cuFFT, against the
 * double-precision direct matrix convolution: 1 x 1, 3 x 2 with empty entries and entries of
 * different lengths (one output fed by nothing), 8 x 4 with a crossover to a second set of another
 * length; block sizes 32, 64 and 256; float and double; every output sample. What it cannot check:
 * cuFFT, the launch geometry and the device's memory (the -cuda run of test_matrix does). No
 * argument. */
#include "matrix_kernel_math.cuh"

/* The tests' C headers, in C++: their C11 _Noreturn as C++'s attribute. */
#define _Noreturn [[noreturn]]
extern "C" {
#include "convolve_reference.h"
#include "test_harness.h"
}
#undef _Noreturn

#include <fftw3.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <vector>

namespace {

template <typename R> struct Fftw;
template <> struct Fftw<float> {
  static void
  r2c(size_t n, float *in, float2 *out)
  {
    fftwf_plan plan =
        fftwf_plan_dft_r2c_1d((int)n, in, reinterpret_cast<fftwf_complex *>(out), FFTW_ESTIMATE);
    fftwf_execute(plan);
    fftwf_destroy_plan(plan);
  }
  static void
  c2r(size_t n, float2 *in, float *out)
  {
    fftwf_plan plan =
        fftwf_plan_dft_c2r_1d((int)n, reinterpret_cast<fftwf_complex *>(in), out, FFTW_ESTIMATE);
    fftwf_execute(plan);
    fftwf_destroy_plan(plan);
  }
};
template <> struct Fftw<double> {
  static void
  r2c(size_t n, double *in, double2 *out)
  {
    fftw_plan plan =
        fftw_plan_dft_r2c_1d((int)n, in, reinterpret_cast<fftw_complex *>(out), FFTW_ESTIMATE);
    fftw_execute(plan);
    fftw_destroy_plan(plan);
  }
  static void
  c2r(size_t n, double2 *in, double *out)
  {
    fftw_plan plan =
        fftw_plan_dft_c2r_1d((int)n, reinterpret_cast<fftw_complex *>(in), out, FFTW_ESTIMATE);
    fftw_execute(plan);
    fftw_destroy_plan(plan);
  }
};

/* A set of responses as the CUDA backend keeps it (set_make / set_build), in host memory. */
template <typename R> struct HostSet {
  std::vector<MatrixDeviceEntry> entries;
  std::vector<unsigned> first;
  std::vector<MatrixComplex<R>> spectra;
  unsigned parts = 0;

  MatrixDeviceSet
  view() const
  {
    return MatrixDeviceSet{spectra.data(), entries.data(), first.data(), parts};
  }
};

template <typename R>
HostSet<R>
make_set(const std::vector<double> &h, size_t taps, unsigned inputs, unsigned outputs, unsigned L)
{
  HostSet<R> set;
  set.first.assign(outputs + 1, 0);
  size_t offset = 0;
  for (unsigned j = 0; j < outputs; j++) {
    for (unsigned i = 0; i < inputs; i++) {
      const double *r = h.data() + ((size_t)i * outputs + j) * taps;
      size_t last = taps;
      while (last > 0 && r[last - 1] == 0.0)
        last--;
      if (last == 0)
        continue;
      const unsigned parts = (unsigned)((last + L - 1) / L);
      set.entries.push_back(MatrixDeviceEntry{i, parts, offset});
      offset += parts;
      set.parts = parts > set.parts ? parts : set.parts;
    }
    set.first[j + 1] = (unsigned)set.entries.size();
  }
  set.spectra.resize(offset * L);
  std::vector<R> time(2 * L);
  std::vector<MatrixComplex<R>> bins(L + 1);
  for (const MatrixDeviceEntry &entry : set.entries) {
    const unsigned i = entry.input;
    unsigned j = 0;
    while (set.first[j + 1] <= (size_t)(&entry - set.entries.data()))
      j++;
    const double *r = h.data() + ((size_t)i * outputs + j) * taps;
    for (unsigned p = 0; p < entry.parts; p++) {
      for (unsigned t = 0; t < 2 * L; t++) {
        const size_t k = (size_t)p * L + t;
        time[t] = t < L && k < taps ? matrix_tap<R>(r[k], L) : R(0);
      }
      Fftw<R>::r2c(2 * L, time.data(), bins.data());
      for (unsigned k = 0; k < L; k++)
        matrix_pack_at<R>(k, 0, bins.data(), set.spectra.data() + (entry.offset + p) * L, L);
    }
  }
  return set;
}

/* The CUDA backend's object for one run of blocks, on the host. */
template <typename R> struct HostMatrix {
  unsigned inputs, outputs, L;
  size_t cap, block = 0;
  unsigned forced_splits = 0; /* 0: the backend's choice (cudafft_matrix_splits) */
  std::vector<MatrixComplex<R>> fdl, bins_in, partial, bins_out;
  std::vector<R> prev, time_in, time_out;

  HostMatrix(unsigned in, unsigned out, unsigned l, size_t slots)
      : inputs(in), outputs(out), L(l), cap(slots), fdl(slots * in * l), bins_in(in * (l + 1)),
        bins_out(2 * out * (l + 1)), prev(in * l), time_in(in * 2 * l), time_out(2 * out * 2 * l)
  {
  }

  /* One block: in (L frames x inputs) to out (L frames x outputs), crossing over to set1 where
   * fade. */
  void
  run_block(const R *in, R *out, const HostSet<R> &set0, const HostSet<R> *set1)
  {
    for (unsigned i = 0; i < inputs; i++)
      for (unsigned t = 0; t < L; t++)
        matrix_frame_input_at<R>(t, i, in, prev.data(), time_in.data(), inputs, L);
    for (unsigned i = 0; i < inputs; i++)
      Fftw<R>::r2c(2 * L, time_in.data() + (size_t)i * 2 * L, bins_in.data() + (size_t)i * (L + 1));
    const size_t slot = block % cap;
    for (unsigned c = 0; c < inputs; c++)
      for (unsigned k = 0; k < L; k++)
        matrix_pack_at<R>(k, c, bins_in.data(), fdl.data() + slot * inputs * L, L);
    block++;
    const unsigned sets = set1 ? 2 : 1, rows = outputs * sets;
    const unsigned parts = set1 && set1->parts > set0.parts ? set1->parts : set0.parts;
    const unsigned splits =
        forced_splits ? forced_splits : cudafft_matrix_splits(outputs, L, parts);
    partial.assign((size_t)splits * rows * L, MatrixComplex<R>{});
    const MatrixDeviceSet v0 = set0.view(), v1 = set1 ? set1->view() : v0;
    for (unsigned split = 0; split < splits; split++)
      for (unsigned row = 0; row < rows; row++)
        for (unsigned t = 0; t < L / matrix_bins_per_thread<R>(L); t++)
          matrix_accumulate_at<R>(t, row, split, fdl.data(), cap, slot, inputs, outputs, rows, L,
                                  v0, v1, splits, partial.data());
    for (unsigned row = 0; row < rows; row++)
      for (unsigned k = 0; k < L; k++)
        matrix_sum_splits_at<R>(k, row, partial.data(), splits, rows, L, bins_out.data());
    for (unsigned row = 0; row < rows; row++)
      Fftw<R>::c2r(2 * L, bins_out.data() + (size_t)row * (L + 1),
                   time_out.data() + (size_t)row * 2 * L);
    for (size_t n = 0; n < (size_t)L * outputs; n++)
      matrix_emit_at<R>(n, time_out.data(), out, outputs, L, set1 != nullptr);
  }
};

std::vector<double>
random_set(TestRng *rng, unsigned inputs, unsigned outputs, size_t taps, unsigned empty_every)
{
  std::vector<double> h((size_t)inputs * outputs * taps);
  for (size_t row = 0; row < (size_t)inputs * outputs; row++) {
    const bool empty = empty_every && row % empty_every == 1;
    const size_t length = row % 3 == 2 ? test_rng_range(rng, 1, taps) : taps;
    for (size_t k = 0; k < taps; k++)
      h[row * taps + k] = empty || k >= length ? 0.0
                                               : test_rng_uniform53(rng) / sqrt((double)inputs) *
                                                     exp(-3.0 * (double)k / (double)taps);
  }
  return h;
}

/* y (frames x outputs) = sum_i h_ij * x_i. */
std::vector<double>
reference(const std::vector<double> &h, size_t taps, unsigned inputs, unsigned outputs,
          const std::vector<double> &x, size_t frames)
{
  std::vector<double> y((size_t)frames * outputs, 0.0), term(frames);
  for (unsigned i = 0; i < inputs; i++)
    for (unsigned j = 0; j < outputs; j++) {
      const double *r = h.data() + ((size_t)i * outputs + j) * taps;
      convolve_reference_channel(r, taps, x.data(), inputs, i, frames, 0, frames, term.data());
      for (size_t n = 0; n < frames; n++)
        y[n * outputs + j] += term[n];
    }
  return y;
}

/* splits: the multiply-accumulate's splits of the partitions (0: the backend's choice, which for
 * these small matrices is one partition a split; 1 and 3 walk several partitions a thread, through
 * the delay line's wrap, as large matrices do). */
template <typename R>
void
run_case(const char *name, unsigned inputs, unsigned outputs, size_t taps, size_t taps2, unsigned L,
         unsigned empty_every, size_t blocks, size_t fade_block, unsigned splits)
{
  const char *precision = sizeof(R) == 8 ? "double" : "float";
  TestRng rng = test_rng("matrix kernels %s %s L%u", name, precision, L);
  const std::vector<double> h = random_set(&rng, inputs, outputs, taps, empty_every);
  const std::vector<double> h2 = random_set(&rng, inputs, outputs, taps2, 0);
  const size_t frames = blocks * L;
  std::vector<double> x((size_t)frames * inputs);
  for (double &v : x)
    v = test_rng_uniform(&rng);
  std::vector<R> in(x.begin(), x.end()), out((size_t)frames * outputs, R(NAN));

  const HostSet<R> set0 = make_set<R>(h, taps, inputs, outputs, L);
  const HostSet<R> set1 = make_set<R>(h2, taps2, inputs, outputs, L);
  const size_t slots = set0.parts > set1.parts ? set0.parts : set1.parts;
  HostMatrix<R> m(inputs, outputs, L, slots ? slots : 1);
  m.forced_splits = splits;
  bool faded = false;
  for (size_t b = 0; b < blocks; b++) {
    const bool fade = b == fade_block;
    m.run_block(in.data() + b * L * inputs, out.data() + b * L * outputs, faded ? set1 : set0,
                fade ? &set1 : nullptr);
    faded = faded || fade;
  }

  const std::vector<double> y0 = reference(h, taps, inputs, outputs, x, frames);
  const std::vector<double> y1 = reference(h2, taps2, inputs, outputs, x, frames);
  const double tolerance = sizeof(R) == 8 ? 1e-11 : 1e-5;
  double worst = 0;
  bool ok = true;
  const size_t change = fade_block * L;
  for (unsigned j = 0; j < outputs; j++) {
    double power = 0;
    for (size_t n = 0; n < frames; n++) {
      const double r = n < change ? 0 : n < change + L ? (double)(n - change + 1) / (L + 1) : 1;
      const double want = (1 - r) * y0[n * outputs + j] + r * y1[n * outputs + j];
      power += want * want;
    }
    const double rms = sqrt(power / (double)frames);
    for (size_t n = 0; n < frames; n++) {
      const double r = n < change ? 0 : n < change + L ? (double)(n - change + 1) / (L + 1) : 1;
      const double want = (1 - r) * y0[n * outputs + j] + r * y1[n * outputs + j];
      const double err = fabs((double)out[n * outputs + j] - want);
      double rel = rms > 0 ? err / rms : (err == 0 ? 0 : INFINITY);
      if (isnan(rel))
        rel = INFINITY;
      ok = ok && rel <= tolerance;
      worst = rel > worst ? rel : worst;
    }
  }
  test_check(
      ok,
      "%s %s L=%u splits %u: %zu blocks, crossover at block %zu, every sample within %.0e of "
      "the RMS (worst %.2e)",
      name, precision, L, splits, blocks, fade_block, tolerance, worst);
}

} // namespace

int
main(int argc, char **argv)
{
  test_begin_every_backend(argc, argv);
  for (unsigned splits : {0u, 1u, 3u}) {
    run_case<float>("1x1", 1, 1, 200, 90, 32, 0, 20, 9, splits);
    run_case<double>("1x1", 1, 1, 200, 90, 32, 0, 20, 9, splits);
    run_case<float>("3x2 empty entries", 3, 2, 300, 500, 64, 2, 16, 5, splits);
    run_case<double>("3x2 empty entries", 3, 2, 300, 500, 64, 2, 16, 5, splits);
    run_case<float>("8x4", 8, 4, 700, 300, 256, 3, 8, 3, splits);
    run_case<double>("8x4", 8, 4, 700, 300, 256, 3, 8, 3, splits);
  }
  return test_finish();
}
