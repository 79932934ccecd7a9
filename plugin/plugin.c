/* plugin.c: the gstcudafft plugin and its elements. */
#include "gstcudaconvolve.h"
#include "gstcudafft.h"
#include "gstcudaifft.h"
#include "gstcudamatrixconvolve.h"
#include "gstcudamelspectrogram.h"
#include "gstcudaspectrum.h"
#include "gstcudaspectrumscope.h"

#include <gst/gst.h>

static gboolean
plugin_init(GstPlugin *plugin)
{
  gboolean ok = GST_ELEMENT_REGISTER(cudafft, plugin);
  ok &= GST_ELEMENT_REGISTER(cudaifft, plugin);
  ok &= GST_ELEMENT_REGISTER(cudaspectrum, plugin);
  ok &= GST_ELEMENT_REGISTER(cudaconvolve, plugin);
  ok &= GST_ELEMENT_REGISTER(cudamatrixconvolve, plugin);
  ok &= GST_ELEMENT_REGISTER(cudaspectrumscope, plugin);
  ok &= GST_ELEMENT_REGISTER(cudamelspectrogram, plugin);
  return ok;
}

/* GST_CUDAFFT_BUILD_NOTE (plugin/meson.build): what this build lacks for GStreamer's version or
 * the build's options, for gst-inspect-1.0's plugin description; empty where nothing is missing */
GST_PLUGIN_DEFINE(GST_VERSION_MAJOR, GST_VERSION_MINOR, cudafft,
                  "Audio DSP on NVIDIA GPUs, or the CPU (backend=cpu, FFTW): block FFT, "
                  "convolution, spectrum analysis, displays and model features" GST_CUDAFFT_BUILD_NOTE,
                  plugin_init, VERSION, "LGPL", GST_PACKAGE_NAME, GST_PACKAGE_ORIGIN)
