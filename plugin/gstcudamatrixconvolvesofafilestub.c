/* gstcudamatrixconvolvesofafilestub.c: gstcudamatrixconvolvesofafile.h where the plugin is built
 * without libmysofa (meson option sofa): every load fails, saying so. */
#include "gstcudamatrixconvolvesofafile.h"

GstCudaMatrixConvolveSofaSet *
gst_cuda_matrix_convolve_sofa_set_load(const gchar *location, gint rate,
                                       GstCudaConvolveIrProblem *problem)
{
  (void)rate;
  problem->domain = GST_CORE_ERROR;
  problem->code = GST_CORE_ERROR_NOT_IMPLEMENTED;
  problem->text = g_strdup_printf("Cannot read the SOFA file \"%s\" (sofa-location): this build "
                                  "of the plugin has no SOFA support (it was built without "
                                  "libmysofa, Debian's libmysofa-dev).",
                                  location);
  problem->debug = NULL;
  return NULL;
}

void
gst_cuda_matrix_convolve_sofa_set_free(GstCudaMatrixConvolveSofaSet *set)
{
  g_free(set);
}
