/* matrix_cpu_path.h: the CPU matrix convolution's work in one precision, included by matrix_cpu.c
 * once for float (F32 streams, FFTW single) and once for double (F64 streams, FFTW double) with
 *   R        the real type,
 *   FFTW(x)  FFTW's name x in that precision (fftwf_x or fftw_x),
 *   PATH(x)  this file's name x for that precision (x_f32, x_f64), matrix_values.h's too,
 *   DESTROY_PLAN  fftw_planner.h's destroy in that precision (under the planner's lock).
 * Arrays are split spectra (re and im apart, `stride` values a spectrum), so that the
 * multiply-accumulate is one loop over bins that the compiler vectorizes. No include guard: meant
 * to be included twice. */

/* A forward (r2c) split plan of 2L points from m->time into re and im: runs only on arrays whose
 * im lies as far from re as these (FFTW's new-array execute takes that distance as planned; on
 * aarch64 a solver writes past other arrays), so each pair of spectra arrays has its own. NULL
 * where FFTW cannot plan it. */
static FFTW(plan) PATH(plan_forward)(CpuMatrix *m, void *re, void *im)
{
  FFTW(iodim) dim = {.n = (int)(2 * m->block_size), .is = 1, .os = 1};
  cudafft_fftw_planner_lock();
  FFTW(plan)
  plan = FFTW(plan_guru_split_dft_r2c)(1, &dim, 0, NULL, (R *)m->time, re, im, FFTW_ESTIMATE);
  cudafft_fftw_planner_unlock();
  return plan;
}

/* The spectra of set's non-empty entries into dst: per entry `parts` spectra of its partitions of
 * L taps zero-padded to 2L points, scaled by 1 / 2L (the inverse transform's normalisation). */
static CudafftStatus
PATH(set_build)(CpuMatrix *m, const CudafftMatrixSet *set, CpuSet *dst)
{
  const size_t L = m->block_size, n = 2 * L, stride = m->stride;
  R *time = m->time;
  FFTW(plan) plan = PATH(plan_forward)(m, dst->re, dst->im);
  if (!plan)
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY,
                        "CPU backend: FFTW could not plan a %zu-point real transform", n);
  for (size_t e = 0; e < set->count; e++) {
    const CudafftMatrixEntry *entry = &set->entries[e];
    const double *h =
        set->taps_data + ((size_t)entry->input * m->outputs + entry->output) * set->taps;
    for (size_t p = 0; p < entry->parts; p++) {
      const size_t first = p * L, count = first + L <= set->taps ? L : set->taps - first;
      for (size_t t = 0; t < count; t++)
        time[t] = PATH(cudafft_matrix_tap)(h[first + t], L);
      for (size_t t = count; t < n; t++)
        time[t] = 0;
      const size_t at = (dst->offset[e] + p) * stride;
      FFTW(execute_split_dft_r2c)(plan, time, (R *)dst->re + at, (R *)dst->im + at);
    }
  }
  DESTROY_PLAN(plan);
  return CUDAFFT_STATUS_OK;
}

/* acc += x h over `stride` bins (a multiple of 16), in runs of 16: loops of constant length on
 * restrict pointers, which gcc -O2 vectorizes (its cheap cost model takes no loop of unknown
 * length). */
static void
PATH(mac_add)(R *restrict acc_re, R *restrict acc_im, const R *restrict xr, const R *restrict xi,
              const R *restrict hr, const R *restrict hi, size_t stride)
{
  for (size_t k0 = 0; k0 < stride; k0 += 16) {
    R *restrict ar = acc_re + k0, *restrict ai = acc_im + k0;
    const R *restrict a = xr + k0, *restrict b = xi + k0, *restrict c = hr + k0,
                      *restrict d = hi + k0;
    for (size_t k = 0; k < 16; k++) {
      ar[k] += a[k] * c[k] - b[k] * d[k];
      ai[k] += a[k] * d[k] + b[k] * c[k];
    }
  }
}

/* out[t] = sum over output j's entries and their partitions of X[block - p] H[p], inverse
 * transformed, second half: output j's block from the delay line (newest slot `slot`). */
static void
PATH(output_block)(CpuMatrix *m, const CpuSet *set, unsigned j, size_t slot, R *out)
{
  const size_t L = m->block_size, stride = m->stride, cap = m->cap;
  R *restrict acc_re = m->acc_re, *restrict acc_im = m->acc_im;
  const R *fdl_re = m->fdl_re, *fdl_im = m->fdl_im;
  if (set->first[j] == set->first[j + 1]) { /* no entry feeds output j */
    for (size_t t = 0; t < L; t++)
      out[t] = 0;
    return;
  }
  for (size_t k = 0; k < stride; k++)
    acc_re[k] = acc_im[k] = 0;
  for (size_t e = set->first[j]; e < set->first[j + 1]; e++) {
    const CudafftMatrixEntry *entry = &set->entries[e];
    for (size_t p = 0; p < entry->parts; p++) {
      const size_t x_at = (((slot + cap - p) % cap) * m->inputs + entry->input) * stride;
      const size_t h_at = (set->offset[e] + p) * stride;
      const R *restrict xr = fdl_re + x_at, *restrict xi = fdl_im + x_at;
      const R *restrict hr = (const R *)set->re + h_at, *restrict hi = (const R *)set->im + h_at;
      PATH(mac_add)(acc_re, acc_im, xr, xi, hr, hi, stride);
    }
  }
  R *time = m->time;
  FFTW(execute_split_dft_c2r)(m->inverse.PATH(plan), acc_re, acc_im, time);
  for (size_t t = 0; t < L; t++)
    out[t] = time[L + t];
}

static void
PATH(run_blocks)(CpuMatrix *m, const CudafftMatrixJob *job)
{
  const size_t L = m->block_size, stride = m->stride, inputs = m->inputs, outputs = m->outputs;
  R *time = m->time, *prev = m->prev, *y_cur = m->y_cur, *y_next = m->y_next;
  for (size_t b = 0; b < job->blocks; b++) {
    const R *in = job->in ? (const R *)job->in + b * L * inputs : NULL;
    R *out = (R *)job->out + b * L * outputs;
    const size_t slot = m->block % m->cap;
    /* Each input's spectrum of its previous and this block, into the delay line's newest slot. */
    for (size_t i = 0; i < inputs; i++) {
      R *last = prev + i * L;
      for (size_t t = 0; t < L; t++) {
        time[t] = last[t];
        last[t] = time[L + t] = in ? in[t * inputs + i] : 0;
      }
      const size_t at = (slot * inputs + i) * stride;
      FFTW(execute_split_dft_r2c)
      (m->forward.PATH(plan), time, (R *)m->fdl_re + at, (R *)m->fdl_im + at);
    }
    m->block++;
    const int fade = (b == job->change_block[0] || b == job->change_block[1]) && m->next.made;
    for (unsigned j = 0; j < outputs; j++) {
      PATH(output_block)(m, &m->cur, j, slot, y_cur + j * L);
      if (fade)
        PATH(output_block)(m, &m->next, j, slot, y_next + j * L);
    }
    if (fade) {
      for (size_t t = 0; t < L; t++)
        for (size_t j = 0; j < outputs; j++)
          out[t * outputs + j] =
              PATH(cudafft_matrix_blend)(y_cur[j * L + t], y_next[j * L + t], t, L);
      promote(m);
    } else {
      for (size_t t = 0; t < L; t++)
        for (size_t j = 0; j < outputs; j++)
          out[t * outputs + j] = y_cur[j * L + t];
    }
  }
}
