/* gstcudafftproperties.c: see the header. */
#include "gstcudafftproperties.h"

#include <cudafft/common.h>

#include <stdarg.h>

GType
gst_cudafft_fft_size_get_type(void)
{
  static GType type = 0;
  if (g_once_init_enter(&type)) {
    guint count = 0;
    for (guint n = CUDAFFT_FUSED_MIN_SIZE; n <= CUDAFFT_MAX_SIZE; n *= 2)
      count++;
    /* kept for the life of the type, as g_enum_register_static() requires */
    GEnumValue *values = g_new0(GEnumValue, count + 1);
    guint i = 0;
    for (guint n = CUDAFFT_FUSED_MIN_SIZE; n <= CUDAFFT_MAX_SIZE; n *= 2, i++) {
      values[i].value = (gint)n;
      values[i].value_name = g_strdup_printf("%u samples", n);
      values[i].value_nick = g_strdup_printf("%u", n);
    }
    GType t = g_enum_register_static("GstCudafftFftSize", values);
    g_once_init_leave(&type, t);
  }
  return type;
}

void
gst_cudafft_refuse_value(GstElement *element, const gchar *format, ...)
{
  va_list args;
  va_start(args, format);
  gchar *text = g_strdup_vprintf(format, args);
  va_end(args);
  GST_WARNING_OBJECT(element, "%s", text);
  GstBus *bus = gst_element_get_bus(element);
  if (bus)
    GST_ELEMENT_WARNING(element, LIBRARY, SETTINGS, ("%s", text), (NULL));
  else
    g_warning("%s: %s", GST_OBJECT_NAME(element), text);
  g_clear_object(&bus);
  g_free(text);
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
