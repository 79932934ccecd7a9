/* gstcudafftproperties.c: see the header. */
#include "gstcudafftproperties.h"

#include <cudafft/common.h>

#include <stdarg.h>

GParamSpec *
gst_cudafft_fft_size_param(const gchar *blurb, guint default_size, GParamFlags flags)
{
  return g_param_spec_uint("fft-size", "FFT size", blurb, CUDAFFT_MIN_SIZE, CUDAFFT_MAX_SIZE,
                           default_size, flags);
}

static gboolean
size_taken(guint n, gboolean even_only)
{
  return cudafft_fft_size_supported(n) && (!even_only || n % 2 == 0);
}

gboolean
gst_cudafft_fft_size_check(GstElement *element, guint size, gboolean even_only)
{
  if (size_taken(size, even_only))
    return TRUE;
  /* the sizes lie a few percent apart at most, and both ends of the range are taken */
  guint below = 0, above = 0;
  for (guint m = size; m >= CUDAFFT_MIN_SIZE && !below; m--)
    below = size_taken(m, even_only) ? m : 0;
  for (guint m = size; m <= CUDAFFT_MAX_SIZE && !above; m++)
    above = size_taken(m, even_only) ? m : 0;
  guint in_effect = 0;
  g_object_get(element, "fft-size", &in_effect, NULL);
  gst_cudafft_refuse_value(element,
                           "fft-size %u refused: sizes are %s%d to %d with no prime factor above "
                           "7; the nearest are %u and %u. Keeping fft-size=%u.",
                           size, even_only ? "the even numbers " : "", CUDAFFT_MIN_SIZE,
                           CUDAFFT_MAX_SIZE, below, above, in_effect);
  return FALSE;
}

static void refuse(GstElement *element, GQuark domain, gint code, const gchar *debug,
                   const gchar *format, va_list args) G_GNUC_PRINTF(5, 0);

static void
refuse(GstElement *element, GQuark domain, gint code, const gchar *debug, const gchar *format,
       va_list args)
{
  gchar *text = g_strdup_vprintf(format, args);
  GST_WARNING_OBJECT(element, "%s", text);
  GstBus *bus = gst_element_get_bus(element);
  if (bus)
    gst_element_message_full(element, GST_MESSAGE_WARNING, domain, code, g_strdup(text),
                             g_strdup(debug), __FILE__, GST_FUNCTION, __LINE__);
  else
    g_warning("%s: %s", GST_OBJECT_NAME(element), text);
  g_clear_object(&bus);
  g_free(text);
}

void
gst_cudafft_refuse_value(GstElement *element, const gchar *format, ...)
{
  va_list args;
  va_start(args, format);
  refuse(element, GST_LIBRARY_ERROR, GST_LIBRARY_ERROR_SETTINGS, NULL, format, args);
  va_end(args);
}

void
gst_cudafft_refuse_value_full(GstElement *element, GQuark domain, gint code, const gchar *debug,
                              const gchar *format, ...)
{
  va_list args;
  va_start(args, format);
  refuse(element, domain, code, debug, format, args);
  va_end(args);
}

gboolean
gst_cudafft_refuse_while_started(GstElement *element, GParamSpec *pspec, gboolean changes,
                                 const gchar *in_effect)
{
  if (!changes)
    return FALSE;
  GST_OBJECT_LOCK(element);
  const gboolean started =
      GST_STATE(element) >= GST_STATE_PAUSED || GST_STATE_NEXT(element) >= GST_STATE_PAUSED;
  GST_OBJECT_UNLOCK(element);
  if (started)
    gst_cudafft_refuse_value(element,
                             "%s cannot change while the element runs (PAUSED or PLAYING): it "
                             "takes effect when the element starts; set it in the READY or NULL "
                             "state. Keeping %s=%s.",
                             pspec->name, pspec->name, in_effect);
  return started;
}

const gchar *
gst_cudafft_enum_nick(GType type, gint value)
{
  GEnumClass *klass = g_type_class_ref(type);
  const GEnumValue *v = g_enum_get_value(klass, value);
  const gchar *nick = v ? v->value_nick : "?"; /* static strings, registered for good */
  g_type_class_unref(klass);
  return nick;
}
