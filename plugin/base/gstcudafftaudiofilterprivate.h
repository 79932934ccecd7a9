/* gstcudafftaudiofilterprivate.h: the base class's private state, shared by its two files:
 * gstcudafftaudiofilter.c (the engine, the run, split frames, processing, lifetime, events) and
 * gstcudafftaudiofilterdevice.c (its share in GPU-resident pipelines: CUDA memory and the fences
 * between our elements). Not for the elements: they use gstcudafftaudiofilter.h. */
#ifndef GST_CUDAFFT_AUDIO_FILTER_PRIVATE_H
#define GST_CUDAFFT_AUDIO_FILTER_PRIVATE_H

#include "gstcudafftaudiofilter.h"
#include "gstcudafftcudamemory.h"
#include "gstcudafftelementcore.h"
#include "gstcudaffthostmemory.h"

G_BEGIN_DECLS

GST_DEBUG_CATEGORY_EXTERN(gst_cudafft_audio_filter_debug);

typedef struct {
  /* the backend properties, the shared CUDA context and one failure, one ERROR, as every element
   * of the plugin has them (gstcudafftelementcore.h) */
  GstCudafftElementCore core;

  /* the start's probe: the backend engines are made on (CUDA or CPU); AUTO before any start */
  CudafftBackend probed;

  /* streaming thread only (and stop, once streaming has stopped) */
  const GstCudafftEngineClass *engine_class;
  gpointer engine;
  CudafftBackend engine_backend; /* the backend the engine runs on */
  GstCudafftOutputPool pool;     /* output buffers: page-locked for the CUDA backend */
  GstAllocator
      *upstream_allocator; /* offered upstream for input buffers, kept for the next query */
  GstCudafftRun run;
  guint64 tolerance; /* samples a timestamp may be off and still continue the run */

  /* the start of a frame split between input buffers (streaming thread only) */
  gsize frame_bytes;
  guint8 *held; /* frame_bytes of room once needed */
  gsize held_bytes;
  guint8 *joined; /* the held bytes and the next buffer's whole frames, joined */
  gsize joined_capacity;
  gboolean warned_split;

  /* the CUDA-memory output buffers made in the core's shared context (streaming thread only) */
  GstCudafftCudaBuffers cuda_buffers;
  gboolean input_on_device; /* during process: its map is device memory */
  gboolean warned_foreign;  /* CUDA memory of another context came in (logged once a run) */
  /* during process of a CUDA-memory buffer: the buffer, and the fence its bytes are complete at */
  GstBuffer *input_buffer;
  CudafftFence input_fence;
  CudafftFence output_fence; /* an engine push's that did not wait, until fence_output */
} GstCudafftAudioFilterPrivate;

GstCudafftAudioFilterPrivate *gst_cudafft_audio_filter_private(GstCudafftAudioFilter *filter);

G_END_DECLS

#endif
