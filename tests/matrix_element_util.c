/* matrix_element_util.c: see the header. */
#include "matrix_element_util.h"

#include <math.h>

/* F32 streams are filtered in float: each output sums inputs x taps products rounded at 6e-8
 * through 2L-point FFTs (~1e-7 relative) and a sum over partitions and inputs: 1e-5 relative L2,
 * cudaconvolve's bound. F64 streams are filtered in double end to end: 1e-11. */
#define F32_TOLERANCE 1e-5
#define F64_TOLERANCE 1e-11

double
mx_tolerance(CudafftSampleFormat format)
{
  return format == CUDAFFT_SAMPLE_F64 ? F64_TOLERANCE : F32_TOLERANCE;
}

double *
mx_random_responses(TestRng *rng, guint rows, gsize taps, guint64 empty)
{
  double *h = g_new0(double, (gsize)rows *taps);
  for (guint r = 0; r < rows; r++)
    if (r >= 64 || !(empty >> r & 1))
      for (gsize k = 0; k < taps; k++)
        h[(gsize)r * taps + k] =
            (float)(test_rng_uniform(rng) * exp(-3.0 * (double)k / (double)taps));
  return h;
}

double *
mx_reference(const double *h, gsize taps, const TestSignal *x, guint outputs, gsize frames)
{
  const guint inputs = x->channels;
  double *y = g_new0(double, frames *outputs);
  for (guint i = 0; i < inputs; i++)
    for (guint j = 0; j < outputs; j++) {
      const double *hij = h + (gsize)(i * outputs + j) * taps;
      gsize last = 0; /* the entry's length: empty entries cost nothing here either */
      for (gsize k = 0; k < taps; k++)
        if (hij[k] != 0.0)
          last = k + 1;
      for (gsize n = 0; n < frames; n++) {
        double sum = 0.0;
        const gsize kmax = MIN(last, n + 1);
        for (gsize k = 0; k < kmax; k++) {
          const gsize m = n - k;
          if (m < x->frames)
            sum += hij[k] * x->values[m * inputs + i];
        }
        y[n * outputs + j] += sum;
      }
    }
  return y;
}

void
mx_check_values(const double *got, const double *want, gsize count, double tolerance,
                const char *row)
{
  double err2 = 0.0, ref2 = 0.0, peak = 0.0;
  for (gsize i = 0; i < count; i++) {
    if (!isfinite(got[i]))
      fail("%s: value %zu is not finite (%g)", row, i, got[i]);
    err2 += (got[i] - want[i]) * (got[i] - want[i]);
    ref2 += want[i] * want[i];
    peak = MAX(peak, fabs(want[i]));
  }
  const double rel = ref2 > 0.0 ? sqrt(err2 / ref2) : sqrt(err2);
  if (!(rel <= tolerance))
    fail("%s: relative L2 error %.3g > %g", row, rel, tolerance);
  for (gsize i = 0; i < count; i++)
    if (!(fabs(got[i] - want[i]) <= 20.0 * tolerance * MAX(peak, 1e-30)))
      fail("%s: value %zu: got %.9g, expected %.9g", row, i, got[i], want[i]);
}

double *
mx_read_run(GPtrArray *out, CudafftSampleFormat format, guint channels, guint rate,
            GstClockTime start, gsize *frames, const char *row)
{
  GArray *values = g_array_new(FALSE, FALSE, sizeof(double));
  const gsize sample = test_sample_bytes(format);
  guint64 n = 0;
  for (guint b = 0; b < out->len; b++) {
    GstBuffer *buf = g_ptr_array_index(out, b);
    const gsize count = gst_buffer_get_size(buf) / (sample * channels);
    fail_unless(gst_buffer_get_size(buf) == count * sample * channels,
                "%s: buffer %u holds a partial frame", row, b);
    fail_unless_equals_uint64(GST_BUFFER_PTS(buf), eu_sample_time(start, n, rate));
    fail_unless_equals_uint64(GST_BUFFER_DURATION(buf), eu_sample_time(start, n + count, rate) -
                                                            eu_sample_time(start, n, rate));
    fail_unless_equals_uint64(GST_BUFFER_OFFSET(buf), n);
    fail_unless_equals_uint64(GST_BUFFER_OFFSET_END(buf), n + count);
    fail_unless((b == 0) == GST_BUFFER_FLAG_IS_SET(buf, GST_BUFFER_FLAG_DISCONT),
                "%s: DISCONT on buffer %u", row, b);
    GstMapInfo map;
    fail_unless(gst_buffer_map(buf, &map, GST_MAP_READ));
    for (gsize i = 0; i < count * channels; i++) {
      const double v = test_sample_value(format, map.data, i, TEST_READ_POW2);
      g_array_append_val(values, v);
    }
    gst_buffer_unmap(buf, &map);
    n += count;
  }
  *frames = n;
  return (double *)g_array_free(values, FALSE);
}

/* The matrix property's value for rows x taps responses (row r of lengths[r] taps where given). */
static void
matrix_value(GValue *matrix, const double *h, guint rows, gsize taps, const gsize *lengths)
{
  g_value_init(matrix, GST_TYPE_ARRAY);
  for (guint r = 0; r < rows; r++) {
    GValue row = G_VALUE_INIT;
    g_value_init(&row, GST_TYPE_ARRAY);
    const gsize n = lengths ? lengths[r] : taps;
    for (gsize k = 0; k < n; k++) {
      GValue v = G_VALUE_INIT;
      g_value_init(&v, G_TYPE_DOUBLE);
      g_value_set_double(&v, h[(gsize)r * taps + k]);
      gst_value_array_append_and_take_value(&row, &v);
    }
    gst_value_array_append_and_take_value(matrix, &row);
  }
}

void
mx_set_matrix(GstElement *e, const double *h, guint rows, gsize taps, const gsize *lengths)
{
  GValue matrix = G_VALUE_INIT;
  matrix_value(&matrix, h, rows, taps, lengths);
  g_object_set_property(G_OBJECT(e), "matrix", &matrix);
  g_value_unset(&matrix);
}

void
mx_check_matrix_reads(GstElement *e, const double *h, guint rows, gsize taps, const char *what)
{
  GValue want = G_VALUE_INIT, got = G_VALUE_INIT;
  matrix_value(&want, h, rows, taps, NULL);
  g_value_init(&got, GST_TYPE_ARRAY);
  g_object_get_property(G_OBJECT(e), "matrix", &got);
  fail_unless(gst_value_array_get_size(&got) == rows, "%s: the matrix reads back %u rows, not %u",
              what, gst_value_array_get_size(&got), rows);
  fail_unless(gst_value_compare(&want, &got) == GST_VALUE_EQUAL,
              "%s: the matrix does not read back as the one in force", what);
  g_value_unset(&want);
  g_value_unset(&got);
}

void
mx_check_change(const double *got, const double *h_old, const double *h_new, gsize taps,
                const TestSignal *x, guint outputs, gsize frames, gsize change, guint block,
                const char *row)
{
  double *y_old = mx_reference(h_old, taps, x, outputs, frames);
  double *y_new = mx_reference(h_new, taps, x, outputs, frames);
  const gsize s = (change + block - 1) / block * block;
  double *want = g_new(double, frames *outputs);
  for (gsize n = 0; n < frames; n++)
    for (guint j = 0; j < outputs; j++) {
      const gsize k = n * outputs + j;
      if (n < s)
        want[k] = y_old[k];
      else if (n < s + block) {
        const double r = (double)(n - s + 1) / (double)(block + 1);
        want[k] = (1.0 - r) * y_old[k] + r * y_new[k];
      } else
        want[k] = y_new[k];
    }
  mx_check_values(got, want, frames * outputs, mx_tolerance(x->format), row);
  /* the crossover region alone, too: the whole-stream L2 could hide it */
  if (s < frames)
    mx_check_values(got + s * outputs, want + s * outputs, MIN((gsize)block, frames - s) * outputs,
                    mx_tolerance(x->format), "crossover region");
  g_free(want);
  g_free(y_old);
  g_free(y_new);
}

void
mx_check_with_tail(const double *got, gsize frames, const double *h, gsize taps,
                   const TestSignal *x, guint outputs, const char *row)
{
  fail_unless(frames == x->frames + taps - 1, "%s: %zu output samples, expected %zu", row, frames,
              x->frames + taps - 1);
  double *want = mx_reference(h, taps, x, outputs, frames);
  mx_check_values(got, want, frames * outputs, mx_tolerance(x->format), row);
  g_free(want);
}
