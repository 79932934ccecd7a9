/* gstcudamatrixconvolveprivate.h: what cudamatrixconvolve's two files share: the instance (its
 * settings under the object lock and the streaming thread's state), the responses it runs and where
 * they came from, and the calls between the element (properties, responses, caps, events:
 * gstcudamatrixconvolve.c) and its runs through the engine (gstcudamatrixconvolverun.c). */
#ifndef GST_CUDA_MATRIX_CONVOLVE_PRIVATE_H
#define GST_CUDA_MATRIX_CONVOLVE_PRIVATE_H

#include "gstcudaconvolveir.h"
#include "gstcudafftaudiofilter.h"
#include "gstcudamatrixconvolve.h"

#include <cudafft/matrix.h>
#include <gst/audio/audio.h>

G_BEGIN_DECLS

GST_DEBUG_CATEGORY_EXTERN(gst_cuda_matrix_convolve_debug);

typedef struct {
  gdouble *matrix; /* rows x taps, row-major; NULL: not set */
  guint rows;
  gsize taps;
  guint serial; /* bumped by every change of matrix */
  guint outputs;
  guint block_size;
  gboolean drain_tail;
} Settings;

/* Where responses came from: the file of request `ir_request`, or where that is 0 the matrix
 * property at `serial`. */
typedef struct {
  guint64 ir_request;
  guint serial;
} Source;

/* Responses for the engine: rows x taps, row-major, rows = inputs x outputs. */
typedef struct {
  gdouble *data;
  gsize taps;
  guint rows;
  guint outputs;
} Responses;

struct _GstCudaMatrixConvolve {
  GstCudafftAudioFilter parent;

  Settings settings; /* the properties, under the object lock */

  /* streaming thread only */
  GstAudioInfo info;     /* input */
  GstAudioInfo out_info; /* output */
  Source engine_source;  /* where the engine's responses came from */
  guint engine_outputs;
  gboolean end_tail; /* whether the drain in progress pushes the tail (EOS, segment) */

  gint latency_frames; /* atomic: the block size of the engine */
  gint latency_rate;   /* atomic */

  GstCudaConvolveIr *ir; /* the ir-location file and its decoding (thread-safe) */
};

/* The engine the base class holds for the element. */
static inline CudafftMatrix *
gst_cuda_matrix_convolve_engine(GstCudaMatrixConvolve *self)
{
  return gst_cudafft_audio_filter_get_engine(GST_CUDAFFT_AUDIO_FILTER(self));
}

GstFlowReturn gst_cuda_matrix_convolve_end_run(GstCudaMatrixConvolve *self, gboolean tail);

GstFlowReturn gst_cuda_matrix_convolve_prepare(GstCudafftAudioFilter *filter);

GstFlowReturn gst_cuda_matrix_convolve_process(GstCudafftAudioFilter *filter, GstBuffer *inbuf,
                                               const GstMapInfo *map, GstBuffer **outbuf);

void gst_cuda_matrix_convolve_update_latency(GstCudaMatrixConvolve *self);

GstClockTime gst_cuda_matrix_convolve_get_latency(GstCudafftAudioFilter *filter);

GstCudaConvolveIrState gst_cuda_matrix_convolve_responses_source(GstCudaMatrixConvolve *self,
                                                                 gboolean wait, Source *source,
                                                                 GstCudaConvolveIrResult **ir);

gboolean gst_cuda_matrix_convolve_same_source(const Source *a, const Source *b);

gboolean gst_cuda_matrix_convolve_make_responses(GstCudaMatrixConvolve *self,
                                                 const GstCudaConvolveIrResult *ir, guint inputs,
                                                 GstCudaConvolveIrProblem *problem, Responses *out);

gboolean gst_cuda_matrix_convolve_open_engine(GstCudaMatrixConvolve *self, const Source *source,
                                              const GstCudaConvolveIrResult *ir);

G_END_DECLS

#endif /* GST_CUDA_MATRIX_CONVOLVE_PRIVATE_H */
