/* gstcudamatrixconvolve.h: cudamatrixconvolve, matrix convolution (N inputs x M outputs:
 * true-stereo reverb, surround to binaural, loudspeaker arrays) on the GPU. */
#ifndef GST_CUDA_MATRIX_CONVOLVE_H
#define GST_CUDA_MATRIX_CONVOLVE_H

#include "gstcudafftaudiofilter.h"

G_BEGIN_DECLS

#define GST_TYPE_CUDA_MATRIX_CONVOLVE (gst_cuda_matrix_convolve_get_type())
G_DECLARE_FINAL_TYPE(GstCudaMatrixConvolve, gst_cuda_matrix_convolve, GST, CUDA_MATRIX_CONVOLVE,
                     GstCudafftAudioFilter)

GST_ELEMENT_REGISTER_DECLARE(cudamatrixconvolve);

G_END_DECLS

#endif
