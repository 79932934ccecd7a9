/* gstcudafftcaps.h: the audio/x-fft frames format that cudafft produces and cudaifft consumes,
 * and the window and representation enums both elements expose.
 *
 *   audio/x-fft, format=F32LE, representation={complex,magnitude,power,db}, fft-size=(int),
 *   hop=(int), window={rectangular,hann,hamming,blackman,blackman-harris},
 *   bins=(int)fft-size/2+1, rate=(int), channels=(int)
 *
 * A buffer holds whole frames; a frame holds each channel's bins in turn (channel-major); a bin
 * is two floats (re, im) for complex and one otherwise. */
#ifndef GST_CUDA_FFT_CAPS_H
#define GST_CUDA_FFT_CAPS_H

#include <cudafft/stft.h>

#include <gst/gst.h>

G_BEGIN_DECLS

#define GST_CUDA_FFT_MEDIA_TYPE "audio/x-fft"

/* Values equal CudafftWindow's and CudafftRepresentation's. */
typedef enum {
  GST_CUDA_FFT_WINDOW_RECTANGULAR = CUDAFFT_WINDOW_RECTANGULAR,
  GST_CUDA_FFT_WINDOW_HANN = CUDAFFT_WINDOW_HANN,
  GST_CUDA_FFT_WINDOW_HAMMING = CUDAFFT_WINDOW_HAMMING,
  GST_CUDA_FFT_WINDOW_BLACKMAN = CUDAFFT_WINDOW_BLACKMAN,
  GST_CUDA_FFT_WINDOW_BLACKMAN_HARRIS = CUDAFFT_WINDOW_BLACKMAN_HARRIS,
} GstCudaFftWindow;

typedef enum {
  GST_CUDA_FFT_REPRESENTATION_COMPLEX = CUDAFFT_REPRESENTATION_COMPLEX,
  GST_CUDA_FFT_REPRESENTATION_MAGNITUDE = CUDAFFT_REPRESENTATION_MAGNITUDE,
  GST_CUDA_FFT_REPRESENTATION_POWER = CUDAFFT_REPRESENTATION_POWER,
  GST_CUDA_FFT_REPRESENTATION_DB = CUDAFFT_REPRESENTATION_DB,
} GstCudaFftRepresentation;

#define GST_TYPE_CUDA_FFT_WINDOW (gst_cuda_fft_window_get_type())
GType gst_cuda_fft_window_get_type(void);
#define GST_TYPE_CUDA_FFT_REPRESENTATION (gst_cuda_fft_representation_get_type())
GType gst_cuda_fft_representation_get_type(void);

/* The enums' nicks, as the caps carry them. */
const gchar *gst_cuda_fft_window_nick(GstCudaFftWindow window);
const gchar *gst_cuda_fft_representation_nick(GstCudaFftRepresentation representation);

/* What a fixed audio/x-fft caps says. */
typedef struct {
  CudafftStftConfig config; /* fft_size, hop, window, representation, channels (format unused) */
  gint rate;
} GstCudaFftFrameInfo;

/* An audio/x-fft structure for these settings, without rate and channels (the callers copy those
 * from the other side, fixed or not). */
GstStructure *gst_cuda_fft_structure_new(guint fft_size, guint hop, GstCudaFftWindow window,
                                         GstCudaFftRepresentation representation);

/* Copies the rate and channels fields (fixed or not) of one structure to another, the part of
 * the caps that raw audio and frames share. */
void gst_cuda_fft_copy_rate_and_channels(const GstStructure *from, GstStructure *to);

/* Fixed caps for a whole frame info. */
GstCaps *gst_cuda_fft_caps_from_info(const GstCudaFftFrameInfo *info);

/* Reads fixed audio/x-fft caps; on failure returns FALSE and sets *why (free with g_free) to a
 * sentence naming the field and its value. */
gboolean gst_cuda_fft_caps_to_info(const GstCaps *caps, GstCudaFftFrameInfo *info, gchar **why);

/* Bytes of one frame. */
gsize gst_cuda_fft_frame_bytes(const GstCudaFftFrameInfo *info);

G_END_DECLS

#endif
