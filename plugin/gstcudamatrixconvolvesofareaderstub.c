/* gstcudamatrixconvolvesofareaderstub.c: gstcudamatrixconvolvesofareader.h where the plugin is
 * built without libmysofa (meson option sofa), and so without the SOFA reader: every load fails,
 * saying so. */
#include "gstcudamatrixconvolvesofareader.h"

struct _GstCudaMatrixConvolveSofaReader {
  int unused;
};

GstCudaMatrixConvolveSofaReader *
gst_cuda_matrix_convolve_sofa_reader_new(void)
{
  return g_new0(GstCudaMatrixConvolveSofaReader, 1);
}

void
gst_cuda_matrix_convolve_sofa_reader_free(GstCudaMatrixConvolveSofaReader *reader)
{
  g_free(reader);
}

void
gst_cuda_matrix_convolve_sofa_reader_set_stopped(GstCudaMatrixConvolveSofaReader *reader,
                                                 gboolean stopped)
{
  (void)reader;
  (void)stopped;
}

GstCudaMatrixConvolveSofaSet *
gst_cuda_matrix_convolve_sofa_reader_load(GstCudaMatrixConvolveSofaReader *reader,
                                          const gchar *location, gint rate,
                                          GstCudafftResponseFileProblem *problem)
{
  (void)reader;
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
  if (!set)
    return;
  g_free(set->directions);
  g_free(set->responses);
  g_free(set);
}
