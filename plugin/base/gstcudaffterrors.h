/* gstcudaffterrors.h: one failure, one ERROR, for every element of the plugin whatever its base
 * class (GstCudafftAudioFilter's elements and cudaspectrumscope).
 *
 * GStreamer reports a failure more than once unless the element that fails sees to it:
 * - caps negotiation retries a refused format, and every buffer upstream pushes retries the
 *   refused CAPS event: each retry fails the same way and posts the same ERROR;
 * - the refusal travels upstream as a fatal flow return (a refused CAPS event is NOT_NEGOTIATED,
 *   another refused event or a failed buffer ERROR), and the element whose streaming task gets it
 *   (GstBaseSrc, queue, a demuxer, a parser: every GST_ELEMENT_FLOW_ERROR caller) posts an
 *   "Internal data stream error" of its own for the same failure. Only FLUSHING (and EOS) stops an
 *   upstream task without an ERROR.
 *
 * So an element keeps a GstCudafftErrors, which:
 * - lets each ERROR of the element (by domain, code and message) through once per start: the
 *   same error again before the next start is that failure once more;
 * - wraps the element's sink pad's chain and event functions: where a call ends in a fatal flow
 *   return (NOT_LINKED or NOT_NEGOTIATED and below) or a refused event, and the failure is the
 *   element's own (it posted an ERROR, or would have posted one again, during that call; or, for
 *   a buffer, it has posted an ERROR since the start and the return is not what downstream last
 *   answered its src pad), upstream gets GST_FLOW_FLUSHING instead: its task pauses without a
 *   second ERROR. A refused CAPS event is refused with FLUSHING too, so that the buffer upstream
 *   pushes after it (which retries the event) returns FLUSHING. Fatal returns that are not the
 *   element's (downstream's NOT_NEGOTIATED, an unlinked src pad, a neighbour's own ERROR) go
 *   upstream as they are, for it to report as GStreamer does.
 *
 * The application learns of the failure from the element's ERROR; the pipeline stops there
 * (an ERROR means it must be stopped), and nothing further comes out of it: no EOS follows. */
#ifndef GST_CUDAFFT_ERRORS_H
#define GST_CUDAFFT_ERRORS_H

#include <gst/gst.h>

G_BEGIN_DECLS

typedef struct {
  GstPad *srcpad; /* the element's (it owns it): where downstream's answers are read */
  GstPadChainFunction chain;
  GstPadEventFunction event;
  gint seen; /* the element's ERRORs offered to the bus, ever, repeats included (atomic) */
  GMutex lock;
  GHashTable *posted; /* "domain code message" of the ERRORs posted since the start */
} GstCudafftErrors;

/* Wraps sinkpad's chain and event functions as they are now (call it once the element's own
 * are set, from its instance init). */
void gst_cudafft_errors_init(GstCudafftErrors *errors, GstPad *sinkpad, GstPad *srcpad);
void gst_cudafft_errors_clear(GstCudafftErrors *errors);

/* Forgets the ERRORs posted: at each start (READY to PAUSED). */
void gst_cudafft_errors_reset(GstCudafftErrors *errors);

/* From the element's post_message: TRUE where `message` is to be posted; FALSE, with the message
 * taken, where it is an ERROR of the element already posted since the start. */
gboolean gst_cudafft_errors_admit(GstCudafftErrors *errors, GstElement *element,
                                  GstMessage *message);

G_END_DECLS

#endif
