/* gstcudamatrixconvolveprivate.h: what cudamatrixconvolve's files share: the instance (its
 * settings under the object lock and the streaming thread's state), the responses it runs and where
 * they came from, and the calls between its files, which go one way: the element (properties,
 * caps, events: gstcudamatrixconvolve.c) calls its runs through the engine
 * (gstcudamatrixconvolverun.c), its responses and engine (gstcudamatrixconvolveresponses.c: the
 * responses in force, the engine made from them, its latency), its array properties' values
 * (gstcudamatrixconvolvevalues.c) and its HRTF sets (gstcudamatrixconvolvesofa.c); the runs call
 * the responses' file, which calls the HRTF sets' alone. */
#ifndef GST_CUDA_MATRIX_CONVOLVE_PRIVATE_H
#define GST_CUDA_MATRIX_CONVOLVE_PRIVATE_H

#include "gstcudafftresponsefile.h"
#include "gstcudafftaudiofilter.h"
#include "gstcudafftrun.h"
#include "gstcudamatrixconvolve.h"
#include "gstcudamatrixconvolvesofafile.h"
#include "gstcudamatrixconvolvesofareader.h"

#include <cudafft/matrix.h>
#include <gst/audio/audio.h>

G_BEGIN_DECLS

GST_DEBUG_CATEGORY_EXTERN(gst_cuda_matrix_convolve_debug);

typedef struct {
  gdouble *matrix; /* rows x taps, row-major; NULL: not set */
  guint rows;
  gsize taps;
  guint serial;         /* bumped by every change of matrix, sofa-location or directions */
  gchar **ir_locations; /* the ir-locations list in force; NULL: none (ir-location's file) */
  gchar *sofa_location; /* NULL: none */
  guint sofa_serial;    /* bumped by every change of sofa-location */
  gdouble *directions;  /* n_directions x <azimuth, elevation>, degrees; NULL: the positions' */
  guint n_directions;
  guint outputs;
  guint block_size;
  gboolean drain_tail;
} Settings;

/* Responses for the engine: rows x taps, row-major, rows = inputs x outputs. */
typedef struct {
  gdouble *data;
  gsize taps;
  guint rows;
  guint outputs;
} Responses;

struct _GstCudaMatrixConvolve {
  GstCudafftAudioFilter parent;

  Settings settings; /* the properties, under the object lock */

  /* streaming thread only */
  GstAudioInfo info;                      /* input */
  GstAudioInfo out_info;                  /* output */
  GstCudafftResponseSource engine_source; /* where the engine's responses came from */
  /* the matrix property's value the engine's responses were made from (NULL where they came from
   * a file or a SOFA set): what a matrix refused while playing reads back as */
  gdouble *engine_matrix;
  guint engine_matrix_rows;
  gsize engine_matrix_taps;
  guint engine_outputs;
  gboolean cuda_out;   /* the src caps carry memory:CUDAMemory */
  gboolean end_tail;   /* whether the drain in progress pushes the tail (EOS, segment) */
  gint signalled_rate; /* the rate rate-changed was last emitted for */

  GstCudafftLatency latency; /* the engine's block size, as last announced */

  GstCudafftResponseFile *ir; /* the ir-location file and its decoding (thread-safe) */

  /* streaming thread only: the sofa-location set as loaded for sofa_serial at its rate */
  GstCudaMatrixConvolveSofaSet *sofa;
  guint sofa_loaded_serial;
  GstCudaMatrixConvolveSofaReader *sofa_reader; /* its reads (stopped from any thread) */
};

/* The engine the base class holds for the element. */
static inline CudafftMatrix *
gst_cuda_matrix_convolve_engine(GstCudaMatrixConvolve *self)
{
  return gst_cudafft_audio_filter_get_engine(GST_CUDAFFT_AUDIO_FILTER(self));
}

/* gstcudamatrixconvolverun.c: the runs through the engine (the element's vfuncs and its drain) */
GstFlowReturn gst_cuda_matrix_convolve_end_run(GstCudaMatrixConvolve *self, gboolean tail);

GstFlowReturn gst_cuda_matrix_convolve_prepare(GstCudafftAudioFilter *filter);

GstFlowReturn gst_cuda_matrix_convolve_process(GstCudafftAudioFilter *filter, GstBuffer *inbuf,
                                               const GstMapInfo *map, GstBuffer **outbuf);

/* gstcudamatrixconvolveresponses.c: the responses in force, the engine made from them, its
 * latency */
GstCudafftResponseFileState
gst_cuda_matrix_convolve_responses_source(GstCudaMatrixConvolve *self, gboolean wait,
                                          GstCudafftResponseSource *source,
                                          GstCudafftResponseFileResult **ir);

/* The number of outputs for `inputs` input channels: the outputs property, 2 for a SOFA set, else
 * the entries' count / inputs; 0 where that is not known or not whole. */
guint gst_cuda_matrix_convolve_outputs_for(GstCudaMatrixConvolve *self, guint inputs,
                                           const GstCudafftResponseFileResult *ir);

gboolean gst_cuda_matrix_convolve_make_responses(GstCudaMatrixConvolve *self,
                                                 const GstCudafftResponseFileResult *ir,
                                                 guint inputs,
                                                 GstCudafftResponseFileProblem *problem,
                                                 Responses *out);

/* GST_FLOW_OK; GST_FLOW_ERROR with the ERROR posted; GST_FLOW_FLUSHING where the element stopped
 * while the responses were read (nothing posted). */
GstFlowReturn gst_cuda_matrix_convolve_open_engine(GstCudaMatrixConvolve *self,
                                                   const GstCudafftResponseSource *source,
                                                   const GstCudafftResponseFileResult *ir);

/* Records which matrix property value the engine's responses `r` came from (none where `ir` or a
 * SOFA set gave them). */
void gst_cuda_matrix_convolve_keep_matrix_in_force(GstCudaMatrixConvolve *self,
                                                   const GstCudafftResponseFileResult *ir,
                                                   const Responses *r);

/* After the matrix property's value of settings serial `serial` was refused while playing: the
 * property reads back the matrix in force again, unless it was set anew since. */
void gst_cuda_matrix_convolve_restore_matrix_in_force(GstCudaMatrixConvolve *self, guint serial);

void gst_cuda_matrix_convolve_update_latency(GstCudaMatrixConvolve *self);

GstClockTime gst_cuda_matrix_convolve_get_latency(GstCudafftAudioFilter *filter);

/* gstcudamatrixconvolvevalues.c: the array-valued properties */
gboolean gst_cuda_matrix_convolve_matrix_from_value(const GValue *value, gdouble **data,
                                                    guint *rows, gsize *taps, gchar **why);
void gst_cuda_matrix_convolve_matrix_to_value(const gdouble *matrix, guint rows, gsize taps,
                                              GValue *value);
gboolean gst_cuda_matrix_convolve_locations_from_value(const GValue *value, gchar ***locations,
                                                       gchar **why);
gboolean gst_cuda_matrix_convolve_directions_from_value(const GValue *value, gdouble **pairs,
                                                        guint *count, gchar **why);
void gst_cuda_matrix_convolve_directions_to_value(const gdouble *pairs, guint count, GValue *value);

/* gstcudamatrixconvolvesofa.c: responses from the sofa-location set, one left- and one right-ear
 * response per input channel (2 outputs), from the measured direction nearest to the channel's
 * (the directions property's, else its position's standard loudspeaker direction). FALSE with
 * *problem filled where the set or the directions cannot be used; FALSE with problem->text NULL
 * where the set's read was stopped (the element stops). */
gboolean gst_cuda_matrix_convolve_sofa_in_force(GstCudaMatrixConvolve *self);
gboolean gst_cuda_matrix_convolve_sofa_responses(GstCudaMatrixConvolve *self, guint inputs,
                                                 GstCudafftResponseFileProblem *problem,
                                                 Responses *out);
/* The standard loudspeaker direction of a channel position, in degrees (SOFA's convention: azimuth
 * counter-clockwise from the front, elevation up); FALSE for positions that have none. */
gboolean gst_cuda_matrix_convolve_default_direction(GstAudioChannelPosition position,
                                                    gdouble *azimuth, gdouble *elevation);
/* The measurement of `set` nearest to a direction (the largest cosine of the angle between them;
 * the first of equals). */
guint gst_cuda_matrix_convolve_sofa_nearest(const GstCudaMatrixConvolveSofaSet *set,
                                            gdouble azimuth, gdouble elevation);

G_END_DECLS

#endif /* GST_CUDA_MATRIX_CONVOLVE_PRIVATE_H */
