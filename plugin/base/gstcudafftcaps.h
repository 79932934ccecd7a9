/* gstcudafftcaps.h: the audio/x-fft frames format that cudafft produces and cudaifft consumes,
 * and the window and representation enums both elements expose.
 *
 *   audio/x-fft, format=F32LE, representation={complex,magnitude,power,db}, fft-size=(int),
 *   hop=(int), window={rectangular,hann,hamming,blackman,blackman-harris},
 *   bins=(int)fft-size/2+1, rate=(int), channels=(int)
 *
 * fft-size is any size the STFT takes (cudafft/stft.h: 16 to 16384 with no prime factor above 7);
 * bins is fft-size/2+1 rounded down.
 *
 * A buffer holds whole frames; a frame holds each channel's bins in turn (channel-major); a bin
 * is two floats (re, im) for complex and one otherwise. */
#ifndef GST_CUDAFFT_CAPS_H
#define GST_CUDAFFT_CAPS_H

#include <cudafft/stft.h>

#include <gst/gst.h>

G_BEGIN_DECLS

#define GST_CUDAFFT_FRAMES_MEDIA_TYPE "audio/x-fft"

/* CUDAFFT_MIN_SIZE, CUDAFFT_MAX_SIZE and CUDAFFT_FUSED_MIN_SIZE as text, for messages and property
 * blurbs. */
#define GST_CUDAFFT_MIN_SIZE_TEXT G_STRINGIFY(CUDAFFT_MIN_SIZE)
#define GST_CUDAFFT_MAX_SIZE_TEXT G_STRINGIFY(CUDAFFT_MAX_SIZE)
#define GST_CUDAFFT_FUSED_MIN_SIZE_TEXT G_STRINGIFY(CUDAFFT_FUSED_MIN_SIZE)

/* Values equal CudafftWindow's and CudafftRepresentation's. */
typedef enum {
  GST_CUDAFFT_WINDOW_RECTANGULAR = CUDAFFT_WINDOW_RECTANGULAR,
  GST_CUDAFFT_WINDOW_HANN = CUDAFFT_WINDOW_HANN,
  GST_CUDAFFT_WINDOW_HAMMING = CUDAFFT_WINDOW_HAMMING,
  GST_CUDAFFT_WINDOW_BLACKMAN = CUDAFFT_WINDOW_BLACKMAN,
  GST_CUDAFFT_WINDOW_BLACKMAN_HARRIS = CUDAFFT_WINDOW_BLACKMAN_HARRIS,
} GstCudafftWindow;

typedef enum {
  GST_CUDAFFT_REPRESENTATION_COMPLEX = CUDAFFT_REPRESENTATION_COMPLEX,
  GST_CUDAFFT_REPRESENTATION_MAGNITUDE = CUDAFFT_REPRESENTATION_MAGNITUDE,
  GST_CUDAFFT_REPRESENTATION_POWER = CUDAFFT_REPRESENTATION_POWER,
  GST_CUDAFFT_REPRESENTATION_DB = CUDAFFT_REPRESENTATION_DB,
} GstCudafftRepresentation;

#define GST_TYPE_CUDAFFT_WINDOW (gst_cudafft_window_get_type())
GType gst_cudafft_window_get_type(void);
#define GST_TYPE_CUDAFFT_REPRESENTATION (gst_cudafft_representation_get_type())
GType gst_cudafft_representation_get_type(void);

/* The enums' nicks, as the caps carry them. */
const gchar *gst_cudafft_window_nick(GstCudafftWindow window);
const gchar *gst_cudafft_representation_nick(GstCudafftRepresentation representation);

/* What a fixed audio/x-fft caps says. */
typedef struct {
  CudafftStftConfig config; /* fft_size, hop, window, representation, channels (format unused) */
  gint rate;
} GstCudafftFrameInfo;

/* Every audio/x-fft caps cudafft can make: the fft-size, hop and bins ranges follow from
 * CUDAFFT_MIN_SIZE and CUDAFFT_MAX_SIZE (a range cannot say which sizes in it are supported:
 * gst_cudafft_frames_caps_to_info() refuses the others, naming the nearest), the lists from the
 * enums; any channel count (the elements refuse more than CUDAFFT_MAX_CHANNELS themselves, with a
 * message). For a pad template. */
GstCaps *gst_cudafft_frames_template_caps(void);

/* An audio/x-fft structure for these settings, without rate and channels (the callers copy those
 * from the other side, fixed or not). */
GstStructure *gst_cudafft_frames_structure_new(guint fft_size, guint hop, GstCudafftWindow window,
                                               GstCudafftRepresentation representation);

/* Copies the rate and channels fields (fixed or not) of one structure to another, the part of
 * the caps that raw audio and frames share. */
void gst_cudafft_copy_rate_and_channels(const GstStructure *from, GstStructure *to);

/* Fixed caps for a whole frame info. */
GstCaps *gst_cudafft_frames_caps_from_info(const GstCudafftFrameInfo *info);

/* Reads fixed audio/x-fft caps; on failure returns FALSE and sets *why (free with g_free) to a
 * sentence naming the field and its value. */
gboolean gst_cudafft_frames_caps_to_info(const GstCaps *caps, GstCudafftFrameInfo *info,
                                         gchar **why);

/* Bytes of one frame. */
gsize gst_cudafft_frame_bytes(const GstCudafftFrameInfo *info);

/* Why the peer of `srcpad` refuses `ours` (the caps an element would make), for its ERROR: the
 * first field the peer takes only other values of ("downstream accepts F=X, but ELEMENT produces
 * F=Y (set the properties to match)"), else that downstream takes no `media` at all. Free with
 * g_free(). (Downstream that takes only CUDA memory where the element gives none is said before
 * this: gst_cudafft_element_core_check_downstream_memory.) */
gchar *gst_cudafft_caps_describe_refusal(GstPad *srcpad, GstCaps *ours, const gchar *element,
                                         const gchar *media);

G_END_DECLS

#endif
