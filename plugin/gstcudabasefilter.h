/* gstcudabasefilter.h: the abstract base of every element in this plugin. It owns what they all
 * have: the backend and cuda-device-id properties, the rule for falling back to the CPU, and the
 * one place where an engine status becomes an error a user can act on. */
#ifndef GST_CUDA_BASE_FILTER_H
#define GST_CUDA_BASE_FILTER_H

#include <cudafft/common.h>

#include <gst/base/gstbasetransform.h>
#include <gst/gst.h>

G_BEGIN_DECLS

/* Values equal CudafftBackend's. */
typedef enum {
  GST_CUDA_BACKEND_AUTO = CUDAFFT_BACKEND_AUTO,
  GST_CUDA_BACKEND_CUDA = CUDAFFT_BACKEND_CUDA,
  GST_CUDA_BACKEND_CPU = CUDAFFT_BACKEND_CPU,
} GstCudaBackend;

#define GST_TYPE_CUDA_BACKEND (gst_cuda_backend_get_type())
GType gst_cuda_backend_get_type(void);

#define GST_TYPE_CUDA_BASE_FILTER (gst_cuda_base_filter_get_type())
G_DECLARE_DERIVABLE_TYPE(GstCudaBaseFilter, gst_cuda_base_filter, GST, CUDA_BASE_FILTER,
                         GstBaseTransform)

struct _GstCudaBaseFilterClass {
  GstBaseTransformClass parent_class;

  /* Releases the subclass's engine objects. Called from stop (so on every way to NULL) and may be
   * called again; must tolerate having nothing to release. */
  void (*close)(GstCudaBaseFilter *filter);

  /* The stream events every element here treats alike, from the base class's sink_event: `drain`
   * ends the current run, pushing what it still holds (before EOS, a new segment or caps that
   * differ); `flush` forgets it (FLUSH_STOP). Segments other than TIME are refused before either
   * is called. */
  GstFlowReturn (*drain)(GstCudaBaseFilter *filter);
  void (*flush)(GstCudaBaseFilter *filter);

  /* The element's own algorithmic latency, which the base class adds to upstream's in the
   * LATENCY query. */
  GstClockTime (*get_latency)(GstCudaBaseFilter *filter);

  /* What the out-of-memory errors tell the user to shrink, naming the element's own properties
   * (the base class sets "use a smaller fft-size or fewer channels"; a subclass may replace it in
   * its class_init). */
  const gchar *memory_hint;
};

/* Makes an engine object: `create` is called with the backend and device the properties ask for
 * (and once more with the CPU backend where `auto` meets a GPU that cannot run these settings). It
 * returns the status and, on success, the backend the object runs on. On failure this posts a
 * GST_ELEMENT_ERROR saying what to do and returns FALSE. `what` names the object in messages. */
typedef CudafftStatus (*GstCudaEngineCreate)(gpointer user_data, CudafftBackend backend,
                                             int device_id, CudafftBackend *actual);
gboolean gst_cuda_base_filter_create_engine(GstCudaBaseFilter *filter, const gchar *what,
                                            GstCudaEngineCreate create, gpointer user_data);

/* Posts the GST_ELEMENT_ERROR for a failed engine call; `what` says which call. */
void gst_cuda_base_filter_post_error(GstCudaBaseFilter *filter, CudafftStatus status,
                                     const gchar *what);

G_END_DECLS

#endif
