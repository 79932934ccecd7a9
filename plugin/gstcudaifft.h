/* gstcudaifft.h: cudaifft, turning complex audio/x-fft frames back into audio on the GPU. */
#ifndef GST_CUDA_IFFT_H
#define GST_CUDA_IFFT_H

#include "gstcudafftaudiofilter.h"

G_BEGIN_DECLS

#define GST_TYPE_CUDA_IFFT (gst_cuda_ifft_get_type())
G_DECLARE_FINAL_TYPE(GstCudaIfft, gst_cuda_ifft, GST, CUDA_IFFT, GstCudafftAudioFilter)

GST_ELEMENT_REGISTER_DECLARE(cudaifft);

G_END_DECLS

#endif
