/* gstcudamelspectrogram.h: cudamelspectrogram, the features speech and audio models take (mel
 * spectrograms, log-mel, Kaldi's filter banks, MFCC) from audio, as tensors, on the GPU. */
#ifndef GST_CUDA_MEL_SPECTROGRAM_H
#define GST_CUDA_MEL_SPECTROGRAM_H

#include "gstcudafftaudiofilter.h"

G_BEGIN_DECLS

#define GST_TYPE_CUDA_MEL_SPECTROGRAM (gst_cuda_mel_spectrogram_get_type())
G_DECLARE_FINAL_TYPE(GstCudaMelSpectrogram, gst_cuda_mel_spectrogram, GST, CUDA_MEL_SPECTROGRAM,
                     GstCudafftAudioFilter)

GST_ELEMENT_REGISTER_DECLARE(cudamelspectrogram);

G_END_DECLS

#endif
