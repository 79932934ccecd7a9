/* gstcudamatrixconvolvesofawire.h: the SOFA reader's answer to cudamatrixconvolve, over the pipe
 * that is the reader's standard output: the HRTF set it read, or why the file cannot be one.
 * Written by the reader (gstcudamatrixconvolvesofareadermain.c), read by the element's side
 * (gstcudamatrixconvolvesofareader.c). Both are built from one tree for one machine: the answer is
 * in the machine's byte order, a fixed header then the values, and the magic names the layout.
 *
 *   header   the magic "GCFSOFA1", what follows (a set or a problem) and its sizes
 *   set      measurements x 3 directions, then measurements x receivers x taps responses, doubles
 *   problem  the text (naming the file), text_bytes bytes without a terminator
 *
 * Nothing else follows: the reader exits after it. */
#ifndef GST_CUDA_MATRIX_CONVOLVE_SOFA_WIRE_H
#define GST_CUDA_MATRIX_CONVOLVE_SOFA_WIRE_H

#include "gstcudafftresponsefile.h"
#include "gstcudamatrixconvolvesofafile.h"

#include <gst/gst.h>

G_BEGIN_DECLS

/* Writes the answer to `fd` (all of it, retrying short writes); FALSE where it cannot. */
gboolean gst_cuda_matrix_convolve_sofa_wire_write_set(int fd,
                                                      const GstCudaMatrixConvolveSofaSet *set);
gboolean
gst_cuda_matrix_convolve_sofa_wire_write_problem(int fd,
                                                 const GstCudafftResponseFileProblem *problem);

/* Fills `size` bytes at `data` from the answer; FALSE where it cannot (the caller knows why). */
typedef gboolean (*GstCudaMatrixConvolveSofaWireRead)(gpointer source, void *data, gsize size);

/* Reads one answer through `read`: TRUE with either *set or *problem filled; FALSE where the
 * answer cannot be read, or is not one (*why says how, unless `read` failed: then *why is NULL).
 * Sizes are checked before anything is allocated for them. */
gboolean gst_cuda_matrix_convolve_sofa_wire_read(GstCudaMatrixConvolveSofaWireRead read,
                                                 gpointer source,
                                                 GstCudaMatrixConvolveSofaSet **set,
                                                 GstCudafftResponseFileProblem *problem,
                                                 gchar **why);

G_END_DECLS

#endif /* GST_CUDA_MATRIX_CONVOLVE_SOFA_WIRE_H */
