/* gstcudamatrixconvolvevalues.c: cudamatrixconvolve's array-valued properties to and from
 * GValues: the matrix (rows of taps), the list of files (ir-locations) and the directions (azimuth
 * and elevation per input channel), each checked as it is set, so that a value refused leaves the
 * one in force. */
#include "gstcudamatrixconvolveprivate.h"

#include <math.h>

static gboolean
double_of(const GValue *v, gdouble *out)
{
  if (G_VALUE_HOLDS_DOUBLE(v)) {
    *out = g_value_get_double(v);
    return TRUE;
  }
  if (!g_value_type_transformable(G_VALUE_TYPE(v), G_TYPE_DOUBLE))
    return FALSE;
  GValue d = G_VALUE_INIT;
  g_value_init(&d, G_TYPE_DOUBLE);
  const gboolean ok = g_value_transform(v, &d);
  *out = g_value_get_double(&d);
  g_value_unset(&d);
  return ok;
}

/* Reads the matrix property: a GstValueArray of rows, each a GstValueArray of numbers (rows may
 * differ in length: the shorter are padded with zeros; an empty row is an empty entry). FALSE,
 * with the reason, for no rows, no taps at all, or a value that is not a finite number. The float
 * range is checked against the stream's format when the responses are used. */
gboolean
gst_cuda_matrix_convolve_matrix_from_value(const GValue *value, gdouble **data, guint *rows,
                                           gsize *taps, gchar **why)
{
  const guint n = GST_VALUE_HOLDS_ARRAY(value) ? gst_value_array_get_size(value) : 0;
  if (n == 0) {
    *why = g_strdup("a matrix of no entries has no outputs");
    return FALSE;
  }
  gsize longest = 0;
  for (guint r = 0; r < n; r++) {
    const GValue *row = gst_value_array_get_value(value, r);
    if (!GST_VALUE_HOLDS_ARRAY(row)) {
      *why = g_strdup_printf("row %u is not an array of numbers", r);
      return FALSE;
    }
    longest = MAX(longest, gst_value_array_get_size(row));
  }
  if (longest == 0) {
    *why = g_strdup("every row is empty: the matrix has no taps");
    return FALSE;
  }
  if (longest > CUDAFFT_MATRIX_MAX_TAPS) {
    *why = g_strdup_printf("%" G_GSIZE_FORMAT " taps is more than %u", longest,
                           CUDAFFT_MATRIX_MAX_TAPS);
    return FALSE;
  }
  gdouble *values = g_try_new0(gdouble, (gsize)n * longest);
  if (!values) {
    *why = g_strdup_printf("out of memory for %u rows of %" G_GSIZE_FORMAT " taps", n, longest);
    return FALSE;
  }
  for (guint r = 0; r < n; r++) {
    const GValue *row = gst_value_array_get_value(value, r);
    const guint count = gst_value_array_get_size(row);
    for (guint t = 0; t < count; t++) {
      gdouble x = NAN;
      if (!double_of(gst_value_array_get_value(row, t), &x) || !isfinite(x)) {
        *why = g_strdup_printf("tap %u of row %u is not a finite number", t, r);
        g_free(values);
        return FALSE;
      }
      values[(gsize)r * longest + t] = x;
    }
  }
  *data = values;
  *rows = n;
  *taps = longest;
  return TRUE;
}

void
gst_cuda_matrix_convolve_matrix_to_value(const gdouble *matrix, guint rows, gsize taps,
                                         GValue *value)
{
  for (guint r = 0; r < rows; r++) {
    GValue row = G_VALUE_INIT;
    g_value_init(&row, GST_TYPE_ARRAY);
    for (gsize t = 0; t < taps; t++) {
      GValue v = G_VALUE_INIT;
      g_value_init(&v, G_TYPE_DOUBLE);
      g_value_set_double(&v, matrix[(gsize)r * taps + t]);
      gst_value_array_append_and_take_value(&row, &v);
    }
    gst_value_array_append_and_take_value(value, &row);
  }
}

/* Reads the directions property: a GstValueArray of <azimuth, elevation> pairs of numbers, in
 * degrees (azimuth -360 to 360, elevation -90 to 90); an empty array is none (the channels'
 * positions decide). FALSE, with the reason, for anything else. */
gboolean
gst_cuda_matrix_convolve_directions_from_value(const GValue *value, gdouble **pairs, guint *count,
                                               gchar **why)
{
  const guint n = GST_VALUE_HOLDS_ARRAY(value) ? gst_value_array_get_size(value) : 0;
  gdouble *values = g_new(gdouble, 2 * (gsize)MAX(n, 1));
  for (guint c = 0; c < n; c++) {
    const GValue *pair = gst_value_array_get_value(value, c);
    gdouble azimuth = NAN, elevation = NAN;
    if (!GST_VALUE_HOLDS_ARRAY(pair) || gst_value_array_get_size(pair) != 2 ||
        !double_of(gst_value_array_get_value(pair, 0), &azimuth) ||
        !double_of(gst_value_array_get_value(pair, 1), &elevation)) {
      *why = g_strdup_printf("direction %u is not a pair of numbers <azimuth, elevation>", c);
      g_free(values);
      return FALSE;
    }
    if (!(azimuth >= -360.0 && azimuth <= 360.0) || !(elevation >= -90.0 && elevation <= 90.0)) {
      *why = g_strdup_printf("direction %u (azimuth %g, elevation %g degrees) is out of range: "
                             "azimuth -360 to 360, elevation -90 to 90",
                             c, azimuth, elevation);
      g_free(values);
      return FALSE;
    }
    values[2 * c] = azimuth;
    values[2 * c + 1] = elevation;
  }
  if (n == 0) {
    g_free(values);
    values = NULL;
  }
  *pairs = values;
  *count = n;
  return TRUE;
}

void
gst_cuda_matrix_convolve_directions_to_value(const gdouble *pairs, guint count, GValue *value)
{
  for (guint c = 0; c < count; c++) {
    GValue pair = G_VALUE_INIT;
    g_value_init(&pair, GST_TYPE_ARRAY);
    for (guint k = 0; k < 2; k++) {
      GValue v = G_VALUE_INIT;
      g_value_init(&v, G_TYPE_DOUBLE);
      g_value_set_double(&v, pairs[2 * c + k]);
      gst_value_array_append_and_take_value(&pair, &v);
    }
    gst_value_array_append_and_take_value(value, &pair);
  }
}

/* Reads the ir-locations property: a GstValueArray of strings (files, or "" for an empty entry);
 * an empty array is none (*locations NULL). FALSE, with the reason, for a value that is not a
 * string. */
gboolean
gst_cuda_matrix_convolve_locations_from_value(const GValue *value, gchar ***locations, gchar **why)
{
  const guint n = GST_VALUE_HOLDS_ARRAY(value) ? gst_value_array_get_size(value) : 0;
  gchar **list = n ? g_new0(gchar *, n + 1) : NULL;
  for (guint k = 0; k < n; k++) {
    const GValue *v = gst_value_array_get_value(value, k);
    if (!G_VALUE_HOLDS_STRING(v)) {
      *why = g_strdup_printf("entry %u is not a file name", k);
      g_strfreev(list);
      return FALSE;
    }
    list[k] = g_strdup(g_value_get_string(v) ? g_value_get_string(v) : "");
  }
  *locations = list;
  return TRUE;
}
