/* gstcudafftproperties.h: what the elements' properties share, whatever their base class: the
 * fft-size enumeration (one type wherever an element has an fft-size), and one way to refuse a
 * value, so that every element refuses alike and visibly. */
#ifndef GST_CUDAFFT_PROPERTIES_H
#define GST_CUDAFFT_PROPERTIES_H

#include <gst/gst.h>

G_BEGIN_DECLS

/* The fft-size of cudaspectrum's band layouts and of cudaspectrumscope: the powers of two with
 * fused kernels (CUDAFFT_FUSED_MIN_SIZE to CUDAFFT_MAX_SIZE), each named by its value ("4096"):
 * gst-launch-1.0 refuses any other value with "could not set property", gst-inspect-1.0 lists the
 * valid ones, and g_object_set() with the number works. (cudafft's fft-size is an integer: every
 * size the STFT takes.) */
#define GST_TYPE_CUDAFFT_FFT_SIZE (gst_cudafft_fft_size_get_type())
GType gst_cudafft_fft_size_get_type(void);

/* Refuses a value given to a property of `element` (the caller keeps the value in effect), saying
 * so where the user sees it: a WARNING message on the bus where the element has one (a
 * gst-launch-1.0 user sees it printed), and otherwise GLib's log (g_warning), as GLib reports a
 * value outside a property's range: gst-launch-1.0 sets the properties of its line before the
 * elements are in a pipeline, where a message would reach no bus. `format` names the property,
 * the value refused and the one kept. Call it without the object lock. */
void gst_cudafft_refuse_value(GstElement *element, const gchar *format, ...) G_GNUC_PRINTF(2, 3);

/* Whether a change of a property that takes effect at the start (backend, cuda-device-id:
 * GST_PARAM_MUTABLE_READY) is refused: where `changes` (the value differs from `in_effect`, the
 * one in effect, as text) and `element` has started (PAUSED or PLAYING, or on its way there), it
 * is refused (gst_cudafft_refuse_value, naming the property and what stays), so that reading the
 * property back gives the value in effect. Call it without the object lock. */
gboolean gst_cudafft_refuse_while_started(GstElement *element, GParamSpec *pspec, gboolean changes,
                                          const gchar *in_effect);

/* The nick of `value` in the enumeration `type` ("?" where it has none), for messages. */
const gchar *gst_cudafft_enum_nick(GType type, gint value);

G_END_DECLS

#endif
