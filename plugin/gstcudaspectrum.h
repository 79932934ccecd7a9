/* gstcudaspectrum.h: cudaspectrum, GStreamer's `spectrum` analyser with its work on the GPU. */
#ifndef GST_CUDA_SPECTRUM_H
#define GST_CUDA_SPECTRUM_H

#include "gstcudafftaudiofilter.h"

G_BEGIN_DECLS

#define GST_TYPE_CUDA_SPECTRUM (gst_cuda_spectrum_get_type())
G_DECLARE_FINAL_TYPE(GstCudaSpectrum, gst_cuda_spectrum, GST, CUDA_SPECTRUM, GstCudafftAudioFilter)

GST_ELEMENT_REGISTER_DECLARE(cudaspectrum);

G_END_DECLS

#endif
