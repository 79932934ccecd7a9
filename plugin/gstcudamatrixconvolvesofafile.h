/* gstcudamatrixconvolvesofafile.h: an HRTF set from an AES69 SOFA file (sofa-location of
 * cudamatrixconvolve): the SimpleFreeFieldHRIR convention (two receivers, the ears; one emitter;
 * FIR data), read with libmysofa and resampled by it to the stream's rate where the file has
 * another. Built without libmysofa, loading fails and says so
 * (gstcudamatrixconvolvesofafilestub.c).
 */
#ifndef GST_CUDA_MATRIX_CONVOLVE_SOFA_FILE_H
#define GST_CUDA_MATRIX_CONVOLVE_SOFA_FILE_H

#include "gstcudaconvolveir.h"

#include <gst/gst.h>

G_BEGIN_DECLS

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

/* Loads `location` for a stream of `rate` Hz, or fills *problem (naming the file and what is wrong
 * with it) and returns NULL. A file that is not a regular file is refused before it is opened. */
GstCudaMatrixConvolveSofaSet *
gst_cuda_matrix_convolve_sofa_set_load(const gchar *location, gint rate,
                                       GstCudaConvolveIrProblem *problem);

void gst_cuda_matrix_convolve_sofa_set_free(GstCudaMatrixConvolveSofaSet *set);

G_END_DECLS

#endif /* GST_CUDA_MATRIX_CONVOLVE_SOFA_FILE_H */
