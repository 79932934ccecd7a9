/* plugin.c: the gstcudafft plugin. Each element registers itself here as its issue lands
 * (cudafft, cudaifft, cudaconvolve, cudaspectrum); until then the plugin loads and offers none. */
#include <gst/gst.h>

static gboolean
plugin_init(GstPlugin *plugin)
{
  (void)plugin;
  return TRUE;
}

GST_PLUGIN_DEFINE(GST_VERSION_MAJOR, GST_VERSION_MINOR, cudafft,
                  "Audio DSP on NVIDIA GPUs: block FFT, convolution and spectrum analysis",
                  plugin_init, VERSION, "LGPL", GST_PACKAGE_NAME, GST_PACKAGE_ORIGIN)
