/* gstcudafftproperties.h: what the elements' properties share, whatever their base class: the
 * fft-size property (one type and one refusal wherever an element has an fft-size), and one way to
 * refuse a value, so that every element refuses alike and visibly. */
#ifndef GST_CUDAFFT_PROPERTIES_H
#define GST_CUDAFFT_PROPERTIES_H

#include <gst/gst.h>

G_BEGIN_DECLS

/* fft-size, alike in cudafft, cudaspectrum, cudaspectrumscope and cudamelspectrogram: an unsigned
 * integer from CUDAFFT_MIN_SIZE to CUDAFFT_MAX_SIZE, default `default_size`
 * (GST_CUDAFFT_DEFAULT_FFT_SIZE but in cudamelspectrogram, whose default is its engine's), so that
 * gst-launch-1.0 sets any size from its number (fft-size=1000), g_object_set() takes the number,
 * and pipelines written for the earlier enumeration of powers of two (fft-size=4096) run as they
 * did; a value outside the range fails gst-launch-1.0's parse ("could not set property"). `blurb`
 * says what the element does with it. */
#define GST_CUDAFFT_DEFAULT_FFT_SIZE 4096
GParamSpec *gst_cudafft_fft_size_param(const gchar *blurb, guint default_size, GParamFlags flags);

/* Whether an element takes fft-size `size` (within the range): every supported size
 * (cudafft_fft_size_supported(): no prime factor above 7), or with even_only the even ones.
 * Otherwise it is refused (gst_cudafft_refuse_value) with the nearest sizes the element takes and
 * the size in effect ("fft-size 1001 refused: sizes are 16 to 16384 with no prime factor above 7;
 * the nearest are 1000 and 1008. Keeping fft-size=4096."), which the caller keeps. Call it without
 * the object lock. */
gboolean gst_cudafft_fft_size_check(GstElement *element, guint size, gboolean even_only);

/* Refuses a value given to a property of `element` (the caller keeps the value in effect), saying
 * so where the user sees it: a WARNING message on the bus where the element has one (a
 * gst-launch-1.0 user sees it printed), and otherwise GLib's log (g_warning), as GLib reports a
 * value outside a property's range: gst-launch-1.0 sets the properties of its line before the
 * elements are in a pipeline, where a message would reach no bus. `format` names the property,
 * the value refused and the one kept. Call it without the object lock. Every refusal of a setting
 * goes through it (or gst_cudafft_refuse_value_full), where the value is set and where it is
 * applied while streaming alike. */
void gst_cudafft_refuse_value(GstElement *element, const gchar *format, ...) G_GNUC_PRINTF(2, 3);

/* As gst_cudafft_refuse_value, where the WARNING names another cause than the setting itself
 * (LIBRARY SETTINGS): out of memory for it (RESOURCE NO_SPACE_LEFT), a file that cannot be used
 * (the file's own domain and code); `debug` is the message's debug text (NULL: none). */
void gst_cudafft_refuse_value_full(GstElement *element, GQuark domain, gint code,
                                   const gchar *debug, const gchar *format, ...)
    G_GNUC_PRINTF(5, 6);

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
