/* gstcudaspectrumscopeproperties.h: cudaspectrumscope's own properties (the display's: style, the
 * band layout, the levels, colormap, time weighting, fft-size, multi-channel), their specs and
 * defaults, and the settings they hold; the backend properties are the element core's
 * (gstcudafftelementcore.h). All may change while playing: the element reads the settings under
 * its object lock and applies them at a frame boundary (gstcudaspectrumscope.c). A new property
 * starts here. */
#ifndef GST_CUDA_SPECTRUM_SCOPE_PROPERTIES_H
#define GST_CUDA_SPECTRUM_SCOPE_PROPERTIES_H

#include <cudafft/scope.h>
#include <gst/gst.h>

G_BEGIN_DECLS

/* The element's property ids: the backend ones last, which the element core holds (their order
 * is gst-inspect's). */
enum {
  GST_CUDA_SPECTRUM_SCOPE_PROP_0,
  GST_CUDA_SPECTRUM_SCOPE_PROP_STYLE,
  GST_CUDA_SPECTRUM_SCOPE_PROP_FREQUENCY_SCALE,
  GST_CUDA_SPECTRUM_SCOPE_PROP_BANDS_PER_OCTAVE,
  GST_CUDA_SPECTRUM_SCOPE_PROP_MIN_FREQUENCY,
  GST_CUDA_SPECTRUM_SCOPE_PROP_MAX_FREQUENCY,
  GST_CUDA_SPECTRUM_SCOPE_PROP_WEIGHTING,
  GST_CUDA_SPECTRUM_SCOPE_PROP_DB_MIN,
  GST_CUDA_SPECTRUM_SCOPE_PROP_DB_MAX,
  GST_CUDA_SPECTRUM_SCOPE_PROP_COLORMAP,
  GST_CUDA_SPECTRUM_SCOPE_PROP_SMOOTHING,
  GST_CUDA_SPECTRUM_SCOPE_PROP_PEAK_HOLD,
  GST_CUDA_SPECTRUM_SCOPE_PROP_PEAK_DECAY,
  GST_CUDA_SPECTRUM_SCOPE_PROP_FFT_SIZE,
  GST_CUDA_SPECTRUM_SCOPE_PROP_MULTI_CHANNEL,
  GST_CUDA_SPECTRUM_SCOPE_PROP_BACKEND,
  GST_CUDA_SPECTRUM_SCOPE_PROP_CUDA_DEVICE_ID,
};

/* The properties' values, under the element's object lock. */
typedef struct {
  CudafftScopeOptions options;
  guint fft_size;
} GstCudaSpectrumScopeSettings;

/* Installs the display's properties on cudaspectrumscope's class, whose set_property and
 * get_property call gst_cuda_spectrum_scope_properties_set() and _get() (and are set before this,
 * as GObject requires), and registers their enumerations' types as plugin API. */
void gst_cuda_spectrum_scope_properties_install(GObjectClass *gobject_class);

/* The defaults. */
void gst_cuda_spectrum_scope_settings_init(GstCudaSpectrumScopeSettings *settings);

/* set_property for `object`, whose settings are `settings`: takes the object lock; a refused
 * bands-per-octave keeps the value in effect with a warning. Values that only make sense together
 * (db-min below db-max, a band range with bands at the stream's rate) are taken as they come and
 * checked together when they take effect (gstcudaspectrumscope.c). */
void gst_cuda_spectrum_scope_properties_set(GObject *object, GstCudaSpectrumScopeSettings *settings,
                                            guint prop_id, const GValue *value, GParamSpec *pspec);

/* get_property from a copy of the settings taken under the object lock. */
void gst_cuda_spectrum_scope_properties_get(GObject *object,
                                            const GstCudaSpectrumScopeSettings *settings,
                                            guint prop_id, GValue *value, GParamSpec *pspec);

G_END_DECLS

#endif
