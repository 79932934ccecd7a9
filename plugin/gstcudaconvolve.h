/* gstcudaconvolve.h: cudaconvolve, long FIR filters and convolution reverb on the GPU; a drop-in
 * for audiofirfilter. */
#ifndef GST_CUDA_CONVOLVE_H
#define GST_CUDA_CONVOLVE_H

#include "gstcudafftaudiofilter.h"

G_BEGIN_DECLS

#define GST_TYPE_CUDA_CONVOLVE (gst_cuda_convolve_get_type())
G_DECLARE_FINAL_TYPE(GstCudaConvolve, gst_cuda_convolve, GST, CUDA_CONVOLVE, GstCudafftAudioFilter)

GST_ELEMENT_REGISTER_DECLARE(cudaconvolve);

G_END_DECLS

#endif
