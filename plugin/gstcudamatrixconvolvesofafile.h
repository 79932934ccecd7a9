/* gstcudamatrixconvolvesofafile.h: an HRTF set from an AES69 SOFA file (sofa-location of
 * cudamatrixconvolve): the SimpleFreeFieldHRIR convention (two receivers, the ears; one emitter;
 * FIR data), read with libmysofa and resampled by it to the stream's rate where the file has
 * another. The reading runs in a process of its own, the SOFA reader (gst-cudafft-sofa-reader,
 * gstcudamatrixconvolvesofareadermain.c), never in the element's: the element starts it for each
 * file with a time limit and takes the set from its answer (gstcudamatrixconvolvesofareader.h).
 */
#ifndef GST_CUDA_MATRIX_CONVOLVE_SOFA_FILE_H
#define GST_CUDA_MATRIX_CONVOLVE_SOFA_FILE_H

#include "gstcudafftresponsefile.h"

#include <gst/gst.h>

G_BEGIN_DECLS

/* The most values (measurements x receivers x taps) a set may have once resampled: 1 GiB of
 * doubles, as for ir-location files. */
#define GST_CUDA_MATRIX_CONVOLVE_SOFA_MAX_VALUES ((gsize)1 << 27)

typedef struct {
  guint measurements;
  guint receivers; /* 2: left ear, right ear */
  gsize taps;      /* of each response, its receiver's delay (Data.Delay) included as zeros */
  gint rate;
  gint file_rate;      /* the file's, where it was resampled from */
  gdouble *directions; /* measurements x 3: unit vectors (x to the front, y to the left, z up);
                          NaN where the measurement has no direction (the listener's position) */
  gdouble *responses;  /* measurements x receivers x taps */
} GstCudaMatrixConvolveSofaSet;

/* In the SOFA reader: reads `location` with libmysofa for a stream of `rate` Hz, or fills *problem
 * (naming the file and what is wrong with it) and returns NULL. */
GstCudaMatrixConvolveSofaSet *
gst_cuda_matrix_convolve_sofa_file_read(const gchar *location, gint rate,
                                        GstCudafftResponseFileProblem *problem);

void gst_cuda_matrix_convolve_sofa_set_free(GstCudaMatrixConvolveSofaSet *set);

G_END_DECLS

#endif /* GST_CUDA_MATRIX_CONVOLVE_SOFA_FILE_H */
