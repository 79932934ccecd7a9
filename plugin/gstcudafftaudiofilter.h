/* gstcudafftaudiofilter.h: the abstract base of every element in this plugin. It owns what they all
 * have: the backend and cuda-device-id properties, the rule for falling back to the CPU, and the
 * one place where an engine status becomes an error a user can act on. */
#ifndef GST_CUDAFFT_AUDIO_FILTER_H
#define GST_CUDAFFT_AUDIO_FILTER_H

#include <cudafft/common.h>

#include <gst/base/gstbasetransform.h>
#include <gst/gst.h>

G_BEGIN_DECLS

/* Values equal CudafftBackend's. */
typedef enum {
  GST_CUDAFFT_BACKEND_AUTO = CUDAFFT_BACKEND_AUTO,
  GST_CUDAFFT_BACKEND_CUDA = CUDAFFT_BACKEND_CUDA,
  GST_CUDAFFT_BACKEND_CPU = CUDAFFT_BACKEND_CPU,
} GstCudafftBackend;

#define GST_TYPE_CUDAFFT_BACKEND (gst_cudafft_backend_get_type())
GType gst_cudafft_backend_get_type(void);

#define GST_TYPE_CUDAFFT_AUDIO_FILTER (gst_cudafft_audio_filter_get_type())
G_DECLARE_DERIVABLE_TYPE(GstCudafftAudioFilter, gst_cudafft_audio_filter, GST, CUDAFFT_AUDIO_FILTER,
                         GstBaseTransform)

struct _GstCudafftAudioFilterClass {
  GstBaseTransformClass parent_class;

  /* Releases the subclass's engine objects. Called from stop (so on every way to NULL) and may be
   * called again; must tolerate having nothing to release. */
  void (*close)(GstCudafftAudioFilter *filter);

  /* The stream events every element here treats alike, from the base class's sink_event: `drain`
   * ends the current run, pushing what it still holds (before EOS, a new segment or caps that
   * differ); `flush` forgets it (FLUSH_STOP). Segments other than TIME are refused before either
   * is called. */
  GstFlowReturn (*drain)(GstCudafftAudioFilter *filter);
  void (*flush)(GstCudafftAudioFilter *filter);

  /* The element's own algorithmic latency, which the base class adds to upstream's in the
   * LATENCY query. */
  GstClockTime (*get_latency)(GstCudafftAudioFilter *filter);

  /* What the out-of-memory errors tell the user to shrink, naming the element's own properties
   * (the base class sets "use a smaller fft-size or fewer channels"; a subclass may replace it in
   * its class_init). */
  const gchar *memory_hint;
};

/* Makes an engine object: `create` is called with the backend and device the properties ask for
 * (and once more with the CPU backend where `auto` meets a GPU that cannot run these settings). It
 * returns the status and, on success, the backend the object runs on. On failure this posts a
 * GST_ELEMENT_ERROR saying what to do and returns FALSE. `what` names the object in messages. */
typedef CudafftStatus (*GstCudafftEngineCreate)(gpointer user_data, CudafftBackend backend,
                                                int device_id, CudafftBackend *actual);
gboolean gst_cudafft_audio_filter_create_engine(GstCudafftAudioFilter *filter, const gchar *what,
                                                GstCudafftEngineCreate create, gpointer user_data);

/* Posts the GST_ELEMENT_ERROR for a failed engine call; `what` says which call. */
void gst_cudafft_audio_filter_post_error(GstCudafftAudioFilter *filter, CudafftStatus status,
                                         const gchar *what);

G_END_DECLS

#endif
