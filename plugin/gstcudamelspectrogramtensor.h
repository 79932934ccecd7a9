/* gstcudamelspectrogramtensor.h: how cudamelspectrogram's output describes itself as a tensor:
 * its caps and, where GStreamer's analytics library (1.26 and later) is built in, a GstTensorMeta
 * on every buffer.
 *
 * Caps: NNStreamer's static tensor stream, which GStreamer inference pipelines take
 * (tensor_filter with its TensorRT, ONNX Runtime, TensorFlow Lite and PyTorch sub-plugins,
 * tensor_sink, tensor_transform):
 *
 *   other/tensors, format=static, num_tensors=1, types={float32,float16},
 *   dimensions="A:B:C" (innermost first, NNStreamer's order), framerate=outputs per second
 *
 * A buffer holds one tensor, one output of the engine: [channel][frame][feature] (layout
 * frame-major: dimensions "features:frames:channels") or [channel][feature][frame]
 * (feature-major: "frames:features:channels"). GStreamer itself has no media type for a buffer
 * that is a tensor (1.26's analytics describe tensors as metadata of the media they were computed
 * from, in a `tensors` field of that media's caps); the GstTensorMeta says the same as the caps,
 * outermost dimension first (row-major), for applications and elements that read the meta. */
#ifndef GST_CUDA_MEL_SPECTROGRAM_TENSOR_H
#define GST_CUDA_MEL_SPECTROGRAM_TENSOR_H

#include <cudafft/features.h>
#include <gst/gst.h>

G_BEGIN_DECLS

#define GST_CUDA_MEL_SPECTROGRAM_TENSOR_MEDIA_TYPE "other/tensors"

/* Every tensor caps the element makes (no dimensions: any), for the src pad template. */
GstCaps *gst_cuda_mel_spectrogram_tensor_template_caps(void);

/* The tensor caps structure for a valid configuration (its precision ignored) and its shape: both
 * types, for the precision to be negotiated. */
GstStructure *gst_cuda_mel_spectrogram_tensor_structure(const CudafftFeaturesConfig *config,
                                                        const CudafftFeaturesShape *shape);

/* The tensor caps structure of any shape (no dimensions, no framerate): for caps whose rate or
 * channels are not fixed yet, or settings the engine refuses (set_caps says why). */
GstStructure *gst_cuda_mel_spectrogram_tensor_structure_any(void);

/* The precision fixed caps ask for; FALSE, with *why (g_free), where they name no type the
 * element makes. */
gboolean gst_cuda_mel_spectrogram_tensor_precision(const GstCaps *caps,
                                                   CudafftFeaturesPrecision *precision,
                                                   gchar **why);

/* The dimensions fixed caps give (dimensions="A:B:C", innermost first), into dims[0..2]
 * outermost first; FALSE where there are not three. */
gboolean gst_cuda_mel_spectrogram_tensor_dims(const GstCaps *caps, gsize dims[3]);

/* The tensor's dimensions, outermost first: channels, then frames and features in the layout's
 * order. */
void gst_cuda_mel_spectrogram_tensor_shape(const CudafftFeaturesConfig *config,
                                           const CudafftFeaturesShape *shape, gsize dims[3]);

/* Whether this build puts a GstTensorMeta on the buffers (GStreamer's analytics library, 1.26 or
 * later, found at build time). */
gboolean gst_cuda_mel_spectrogram_has_tensor_meta(void);

/* Puts on `buffer` (one output of `config` and `shape`) a GstTensorMeta of one tensor whose data
 * is the buffer's memory (shared, not copied), id "cudamelspectrogram/<kind>"; nothing in builds
 * without the analytics library. FALSE where the meta could not be made. */
gboolean gst_cuda_mel_spectrogram_add_tensor_meta(GstBuffer *buffer,
                                                  const CudafftFeaturesConfig *config,
                                                  const CudafftFeaturesShape *shape);

G_END_DECLS

#endif
