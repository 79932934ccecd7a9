/* gstcudaspectrumscope.h: cudaspectrumscope, a spectrum display (scrolling spectrogram or bars)
 * drawn on the GPU: a GstAudioVisualizer over the cudafft library's scope engine. */
#ifndef GST_CUDA_SPECTRUM_SCOPE_H
#define GST_CUDA_SPECTRUM_SCOPE_H

#include <gst/pbutils/gstaudiovisualizer.h>

G_BEGIN_DECLS

#define GST_TYPE_CUDA_SPECTRUM_SCOPE (gst_cuda_spectrum_scope_get_type())
G_DECLARE_FINAL_TYPE(GstCudaSpectrumScope, gst_cuda_spectrum_scope, GST, CUDA_SPECTRUM_SCOPE,
                     GstAudioVisualizer)

GST_ELEMENT_REGISTER_DECLARE(cudaspectrumscope);

G_END_DECLS

#endif
