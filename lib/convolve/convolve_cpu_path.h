/* convolve_cpu_path.h: the CPU backend's two paths (direct and partitioned) in one precision,
 * included by convolve_cpu.c once per precision: float on FFTW single precision for F32 streams,
 * double on FFTW double for F64 streams. One body, so that the two precisions cannot drift apart;
 * no include guard, on purpose. Internal to convolve_cpu.c.
 *
 * The includer defines:
 *   REAL          float or double: the samples, history, spectra and transforms
 *   SUFFIX        f32 or f64: appended to every function's name, and the CpuPlan member
 *   FFTW(name)    fftwf_##name or fftw_##name
 *   OWN_PLAN      cudafft_cpu_own_plan or cudafft_cpu_own_double_plan
 *   DESTROY_PLAN  cudafft_fftw_destroy or cudafft_fftw_destroy_double (NULL allowed)
 * and CpuFilter, BLOCK, FFT_SIZE, BIN_STRIDE, DIRECT_CHUNK and CLONES; this file undefines its
 * parameters at the end. */

#define PATH_CAT_(name, suffix) name##_##suffix
#define PATH_CAT(name, suffix) PATH_CAT_(name, suffix)
#define FN(name) PATH_CAT(name, SUFFIX)

/* count samples of one channel, every `stride` samples from in (NULL: zeros), as REALs: exact for
 * the stream's own format (F32 into float, F64 into double). */
static void
FN(load_channel)(CudafftSampleFormat format, const void *in, size_t stride, size_t count,
                 REAL *restrict dst)
{
  if (!in) {
    memset(dst, 0, count * sizeof *dst);
    return;
  }
  for (size_t i = 0; i < count; i++)
    dst[i] = (REAL)cudafft_sample_double(format, in, i * stride);
}

/* Direct path ---------------------------------------------------------------------------------- */

/* sums[i] = sum_k coef[k] line[i + k] for i < n, k in increasing order. Eight outputs at a time
 * with the taps outside: eight independent sums that the compiler vectorizes, where one sum at a
 * time is a chain of dependent additions. */
CLONES static void
FN(direct_sums)(const double *restrict coef, size_t taps, const REAL *restrict line, size_t n,
                double *restrict sums)
{
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    double acc[8] = {0};
    for (size_t k = 0; k < taps; k++)
      for (size_t j = 0; j < 8; j++)
        acc[j] += coef[k] * line[i + j + k];
    memcpy(sums + i, acc, sizeof acc);
  }
  for (; i < n; i++) {
    double acc = 0.0;
    for (size_t k = 0; k < taps; k++)
      acc += coef[k] * line[i + k];
    sums[i] = acc;
  }
}

static void
FN(direct_process)(CpuFilter *f, const void *in, void *out, size_t frames, double mix)
{
  const size_t taps = f->taps, history = taps - 1, width = history + DIRECT_CHUNK;
  const size_t sample = cudafft_sample_size(f->format), channels = f->channels;
  const double wet = mix, dry = 1.0 - mix;
  for (size_t done = 0; done < frames;) {
    const size_t n = frames - done < DIRECT_CHUNK ? frames - done : DIRECT_CHUNK;
    for (size_t c = 0; c < channels; c++) {
      REAL *line = (REAL *)f->line + c * width;
      const double *coef = f->coef + (f->rows == 1 ? 0 : c) * taps;
      FN(load_channel)
      (f->format, in ? (const uint8_t *)in + (done * channels + c) * sample : NULL, channels, n,
       line + history);
      double sums[DIRECT_CHUNK];
      FN(direct_sums)(coef, taps, line, n, sums);
      for (size_t i = 0; i < n; i++) {
        /* mix 1 leaves the sum alone, so that a delta kernel gives the input back exactly */
        const double y = mix == 1.0 ? sums[i] : wet * sums[i] + dry * line[history + i];
        cudafft_sample_store(f->format, out, (done + i) * channels + c, y);
      }
      memmove(line, line + n, history * sizeof *line);
    }
    done += n;
  }
}

/* Partitioned path ----------------------------------------------------------------------------- */

/* Plans the transforms on f's arrays (allocated by the includer) and fills the kernel's partition
 * spectra. */
static CudafftStatus
FN(partitioned_plan)(CpuFilter *f, const CudafftConvolveKernel *kernel)
{
  REAL *blocks = f->blocks, *time = f->time;
  REAL *x_re = f->x_re, *x_im = f->x_im, *acc_re = f->acc_re, *acc_im = f->acc_im;
  REAL *h_re = f->h_re, *h_im = f->h_im;

  /* Our own aligned arrays, so FFTW may use SIMD; FFTW_ESTIMATE plans at once. Split real and
   * imaginary parts: the multiply-accumulate reads them as plain arrays. A split plan runs only on
   * arrays whose imaginary part lies as far from the real part as where it was planned (FFTW's
   * new-array execute; a solver may take that distance as a constant, as aarch64's do, which then
   * write past the arrays): so the input ring's transform is planned on the ring, the kernel's
   * (kernel_plan, used only here) on the kernel spectra, and the inverse on the sums. */
  const FFTW(iodim) dim = {.n = (int)FFT_SIZE, .is = 1, .os = 1};
  cudafft_fftw_planner_lock();
  f->forward.SUFFIX =
      FFTW(plan_guru_split_dft_r2c)(1, &dim, 0, NULL, blocks, x_re, x_im, FFTW_ESTIMATE);
  f->inverse.SUFFIX =
      FFTW(plan_guru_split_dft_c2r)(1, &dim, 0, NULL, acc_re, acc_im, time, FFTW_ESTIMATE);
  FFTW(plan)
  kernel_plan = FFTW(plan_guru_split_dft_r2c)(1, &dim, 0, NULL, time, h_re, h_im, FFTW_ESTIMATE);
  cudafft_fftw_planner_unlock();
  OWN_PLAN(&f->base, f->forward.SUFFIX);
  OWN_PLAN(&f->base, f->inverse.SUFFIX);
  if (!f->forward.SUFFIX || !f->inverse.SUFFIX || !kernel_plan) {
    DESTROY_PLAN(kernel_plan);
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY,
                        "CPU backend: FFTW could not plan %zu-point real transforms", FFT_SIZE);
  }

  /* Partition p of a row: taps p B .. p B + B - 1, zero-padded to N, its spectrum scaled by 1/N
   * (exact: N is a power of two) so that the inverse transform needs no scaling. */
  const double scale = 1.0 / (double)FFT_SIZE;
  const size_t parts = f->parts;
  for (size_t r = 0; r < kernel->rows; r++) {
    const double *taps = kernel->taps_data + r * kernel->taps;
    for (size_t p = 0; p < parts; p++) {
      const size_t start = p * BLOCK;
      const size_t count = kernel->taps - start < BLOCK ? kernel->taps - start : BLOCK;
      for (size_t i = 0; i < FFT_SIZE; i++)
        time[i] = i < count ? (REAL)(taps[start + i] * scale) : (REAL)0;
      const size_t offset = (r * parts + p) * BIN_STRIDE;
      FFTW(execute_split_dft_r2c)(kernel_plan, time, h_re + offset, h_im + offset);
    }
  }
  DESTROY_PLAN(kernel_plan);
  return CUDAFFT_STATUS_OK;
}

CLONES static void
FN(mac_first)(REAL *restrict acc_re, REAL *restrict acc_im, const REAL *restrict x_re,
              const REAL *restrict x_im, const REAL *restrict h_re, const REAL *restrict h_im)
{
  for (size_t k = 0; k < BIN_STRIDE; k++) {
    acc_re[k] = x_re[k] * h_re[k] - x_im[k] * h_im[k];
    acc_im[k] = x_re[k] * h_im[k] + x_im[k] * h_re[k];
  }
}

CLONES static void
FN(mac_add)(REAL *restrict acc_re, REAL *restrict acc_im, const REAL *restrict x_re,
            const REAL *restrict x_im, const REAL *restrict h_re, const REAL *restrict h_im)
{
  for (size_t k = 0; k < BIN_STRIDE; k++) {
    acc_re[k] += x_re[k] * h_re[k] - x_im[k] * h_im[k];
    acc_im[k] += x_re[k] * h_im[k] + x_im[k] * h_re[k];
  }
}

static void
FN(partitioned_process)(CpuFilter *f, const void *in, void *out, size_t frames, double mix)
{
  const size_t parts = f->parts, channels = f->channels, count = frames / BLOCK;
  const size_t sample = cudafft_sample_size(f->format);
  const REAL wet = (REAL)mix, dry = (REAL)(1.0 - mix);
  REAL *acc_re = f->acc_re, *acc_im = f->acc_im, *time = f->time;
  for (size_t c = 0; c < channels; c++) {
    const size_t row = (f->rows == 1 ? 0 : c) * parts * BIN_STRIDE;
    const REAL *h_re = (const REAL *)f->h_re + row, *h_im = (const REAL *)f->h_im + row;
    REAL *x_re = (REAL *)f->x_re + c * parts * BIN_STRIDE;
    REAL *x_im = (REAL *)f->x_im + c * parts * BIN_STRIDE;
    REAL *blocks = (REAL *)f->blocks + c * FFT_SIZE, *current = blocks + BLOCK;
    size_t head = f->head;
    for (size_t j = 0; j < count; j++) {
      const size_t first = j * BLOCK * channels + c;
      FN(load_channel)
      (f->format, in ? (const uint8_t *)in + first * sample : NULL, channels, BLOCK, current);
      head = head + 1 == parts ? 0 : head + 1;
      FFTW(execute_split_dft_r2c)
      (f->forward.SUFFIX, blocks, x_re + head * BIN_STRIDE, x_im + head * BIN_STRIDE);
      /* X[j - p] H[p]: the ring runs backwards from the newest spectrum */
      for (size_t p = 0, slot = head; p < parts; p++, slot = slot ? slot - 1 : parts - 1) {
        const size_t x = slot * BIN_STRIDE, h = p * BIN_STRIDE;
        if (p == 0)
          FN(mac_first)(acc_re, acc_im, x_re + x, x_im + x, h_re + h, h_im + h);
        else
          FN(mac_add)(acc_re, acc_im, x_re + x, x_im + x, h_re + h, h_im + h);
      }
      FFTW(execute_split_dft_c2r)(f->inverse.SUFFIX, acc_re, acc_im, time);
      const REAL *y = time + BLOCK;
      for (size_t i = 0; i < BLOCK; i++) {
        const REAL v = mix == 1.0 ? y[i] : wet * y[i] + dry * current[i];
        cudafft_sample_store(f->format, out, first + i * channels, v);
      }
      memcpy(blocks, current, BLOCK * sizeof *blocks);
    }
  }
  f->head = (f->head + count) % parts;
}

#undef FN
#undef PATH_CAT
#undef PATH_CAT_
#undef REAL
#undef SUFFIX
#undef FFTW
#undef OWN_PLAN
#undef DESTROY_PLAN
