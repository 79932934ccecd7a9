/* gstcudafft.h: cudafft, streaming audio to frequency-domain frames on the GPU. */
#ifndef GST_CUDA_FFT_H
#define GST_CUDA_FFT_H

#include "gstcudafftaudiofilter.h"

G_BEGIN_DECLS

#define GST_TYPE_CUDA_FFT (gst_cuda_fft_get_type())
G_DECLARE_FINAL_TYPE(GstCudaFft, gst_cuda_fft, GST, CUDA_FFT, GstCudafftAudioFilter)

GST_ELEMENT_REGISTER_DECLARE(cudafft);

G_END_DECLS

#endif
