/* gstcudaconvolveprivate.h: what cudaconvolve's files share: the instance (its settings under the
 * object lock and the streaming thread's state), the kernel it runs and where that came from, and
 * the calls between its files, which go one way: the element (properties, caps, events:
 * gstcudaconvolve.c) calls its runs through the engine (gstcudaconvolverun.c) and its kernel and
 * engine (gstcudaconvolvekernel.c: the kernel in force, the engine made from it, its latency);
 * the runs call the kernel's file; that file calls neither. */
#ifndef GST_CUDA_CONVOLVE_PRIVATE_H
#define GST_CUDA_CONVOLVE_PRIVATE_H

#include "gstcudaconvolve.h"
#include "gstcudafftresponsefile.h"
#include "gstcudafftaudiofilter.h"
#include "gstcudafftrun.h"

#include <cudafft/convolve.h>
#include <gst/audio/audio.h>

G_BEGIN_DECLS

GST_DEBUG_CATEGORY_EXTERN(gst_cuda_convolve_debug);

typedef struct {
  gdouble *kernel; /* the kernel property: never empty */
  guint taps;
  guint64 latency;
  gdouble mix;
  gboolean drain_tail;
  guint block_size;
  gboolean low_latency, drain_on_changes; /* audiofirfilter's; no effect here */
  guint serial;                           /* bumped by every change of kernel */
} Settings;

/* A kernel for the engine: rows x taps, row-major. */
typedef struct {
  gdouble *data;
  gsize taps;
  guint rows;
} Kernel;

struct _GstCudaConvolve {
  GstCudafftAudioFilter parent;

  Settings settings; /* the properties, under the object lock */

  /* streaming thread only */
  GstAudioInfo info;
  gint signalled_rate;                    /* the rate rate-changed was last emitted for */
  GstCudafftResponseSource engine_source; /* where the engine's kernel came from */
  gdouble engine_mix;                     /* the wet fraction the engine runs */
  guint engine_block_size; /* the block size last given to the engine, taken or refused */
  /* the base class's run: run.samples, input frames; run.produced, output frames pushed */
  guint64 run_latency; /* the latency property when the run started */
  guint64 filtered;    /* output frames the engine wrote in the run, dropped ones included */
  gboolean end_tail;   /* whether the drain in progress pushes the tail (EOS, segment) */
  gboolean cuda_out;   /* the src caps carry memory:CUDAMemory */

  GstCudafftLatency latency; /* the engine's, as last announced */

  GstCudafftResponseFile *ir; /* the ir-location file and its decoding (thread-safe) */
};

/* The engine the base class holds for the element. */
static inline CudafftConvolve *
gst_cuda_convolve_engine(GstCudaConvolve *self)
{
  return gst_cudafft_audio_filter_get_engine(GST_CUDAFFT_AUDIO_FILTER(self));
}

/* gstcudaconvolverun.c: the runs through the engine (the element's vfuncs and its drain) */
GstFlowReturn gst_cuda_convolve_end_run(GstCudaConvolve *self, gboolean tail);

GstFlowReturn gst_cuda_convolve_prepare(GstCudafftAudioFilter *filter);

GstFlowReturn gst_cuda_convolve_begin_run(GstCudafftAudioFilter *filter, GstBuffer *first);

GstFlowReturn gst_cuda_convolve_process(GstCudafftAudioFilter *filter, GstBuffer *inbuf,
                                        const GstMapInfo *map, GstBuffer **outbuf);

/* gstcudaconvolvekernel.c: the kernel in force, the engine made from it, its latency */
GstCudafftResponseFileState gst_cuda_convolve_kernel_source(GstCudaConvolve *self, gboolean wait,
                                                            GstCudafftResponseSource *source,
                                                            GstCudafftResponseFileResult **ir);

gboolean gst_cuda_convolve_make_kernel(GstCudaConvolve *self,
                                       const GstCudafftResponseFileResult *ir, gboolean fatal,
                                       Kernel *kernel);

CudafftConvolveKernel gst_cuda_convolve_engine_kernel(const Kernel *kernel);

gdouble gst_cuda_convolve_current_mix(GstCudaConvolve *self);

guint gst_cuda_convolve_current_block_size(GstCudaConvolve *self);

gboolean gst_cuda_convolve_open_engine(GstCudaConvolve *self,
                                       const GstCudafftResponseSource *source,
                                       const GstCudafftResponseFileResult *ir);

void gst_cuda_convolve_update_latency(GstCudaConvolve *self);

GstClockTime gst_cuda_convolve_get_latency(GstCudafftAudioFilter *filter);

G_END_DECLS

#endif /* GST_CUDA_CONVOLVE_PRIVATE_H */
