/* gstcudafftbackend.c: see the header. */
#include "gstcudafftbackend.h"

GST_DEBUG_CATEGORY_STATIC(gst_cudafft_backend_debug);
#define GST_CAT_DEFAULT gst_cudafft_backend_debug

GType
gst_cudafft_backend_get_type(void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
      {GST_CUDAFFT_BACKEND_AUTO, "The GPU when one is usable, otherwise the CPU", "auto"},
      {GST_CUDAFFT_BACKEND_CUDA, "The GPU (CUDA); fail if there is none", "cuda"},
      {GST_CUDAFFT_BACKEND_CPU, "The CPU (FFTW)", "cpu"},
      {0, NULL, NULL},
  };
  if (g_once_init_enter(&type)) {
    GType t = g_enum_register_static("GstCudafftBackend", values);
    GST_DEBUG_CATEGORY_INIT(gst_cudafft_backend_debug, "cudafftbackend", 0,
                            "gst-cudafft: the choice of backend");
    g_once_init_leave(&type, t);
  }
  return type;
}

void
gst_cudafft_backend_install_properties(GObjectClass *klass, guint prop_backend,
                                       guint prop_device_id)
{
  g_object_class_install_property(
      klass, prop_backend,
      g_param_spec_enum("backend", "Backend",
                        "Where the DSP runs: auto (the GPU where one is usable, else the CPU), "
                        "cuda (the GPU or an error) or cpu (FFTW)",
                        GST_TYPE_CUDAFFT_BACKEND, GST_CUDAFFT_DEFAULT_BACKEND,
                        G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY));
  g_object_class_install_property(
      klass, prop_device_id,
      g_param_spec_int("cuda-device-id", "CUDA device id",
                       "The CUDA device to run on; -1: automatic (device 0 with one GPU; with "
                       "several, the least loaded)",
                       -1, G_MAXINT, GST_CUDAFFT_DEFAULT_DEVICE_ID,
                       G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY));
  gst_type_mark_as_plugin_api(GST_TYPE_CUDAFFT_BACKEND, 0);
}

static const gchar *
backend_name(CudafftBackend backend)
{
  return backend == CUDAFFT_BACKEND_CUDA ? "cuda" : backend == CUDAFFT_BACKEND_CPU ? "cpu" : "auto";
}

gchar *
gst_cudafft_no_device_reason(void)
{
  /* read first: the calls below may set a message of their own */
  gchar *last = g_strdup(cudafft_last_error_message());
  char unavailable[256];
  gchar *why = NULL;
  if (cudafft_cuda_unavailable_reason(unavailable, sizeof unavailable) > 0)
    why = g_strdup(unavailable);
  else if (last && *last)
    why = g_strdup(last);
  else
    why = g_strdup("the library chose the CPU backend");
  g_free(last);
  return why;
}

void
gst_cudafft_say_cpu_fallback(GstElement *element, const gchar *why)
{
  GST_WARNING_OBJECT(element, "backend=auto runs on the CPU backend: %s", why);
  /* gst-launch-1.0 prints an INFO message's debug text: the sentence is there too */
  gchar *text = g_strdup_printf("Running on the CPU (FFTW), as backend=auto does where no GPU is "
                                "usable: %s. Set backend=cpu to choose the CPU, or backend=cuda "
                                "to require the GPU.",
                                why);
  GST_ELEMENT_INFO(element, RESOURCE, NOT_FOUND, ("%s", text), ("%s", text));
  g_free(text);
}

gpointer
gst_cudafft_engine_new(GstElement *element, const GstCudafftEngineClass *engine_class,
                       CudafftBackend requested, CudafftBackend chosen, int device_id,
                       gconstpointer config, const gchar *memory_hint, CudafftBackend *actual,
                       gchar **fell_back)
{
  const gchar *what = engine_class->name;
  gpointer made = NULL;
  *fell_back = NULL;
  /* Issue 30: a GstCudaContext shared by the pipeline will pin the device here (its id for -1). */
  CudafftStatus status = engine_class->create(&made, chosen, device_id, config);
  gboolean said = chosen == CUDAFFT_BACKEND_CPU; /* the start's probe has said why */
  if (requested == CUDAFFT_BACKEND_AUTO && chosen != CUDAFFT_BACKEND_CPU &&
      (status == CUDAFFT_STATUS_UNSUPPORTED || status == CUDAFFT_STATUS_NO_DEVICE)) {
    gchar *why = gst_cudafft_no_device_reason();
    *fell_back = g_strdup_printf("the GPU cannot run %s (%s)", what, why);
    g_free(why);
    said = TRUE;
    status = engine_class->create(&made, CUDAFFT_BACKEND_CPU, device_id, config);
  }
  if (status != CUDAFFT_STATUS_OK) {
    g_clear_pointer(fell_back, g_free);
    gst_cudafft_post_engine_error(element, status, what, memory_hint);
    return NULL;
  }
  *actual = engine_class->get_backend(made);
  if (requested == CUDAFFT_BACKEND_AUTO && *actual == CUDAFFT_BACKEND_CPU && !said)
    *fell_back = gst_cudafft_no_device_reason();
  GST_INFO_OBJECT(element, "%s runs on the %s backend (asked for %s, device %d)", what,
                  backend_name(*actual), backend_name(requested), device_id);
  return made;
}

void
gst_cudafft_post_engine_error(GstElement *element, CudafftStatus status, const gchar *what,
                              const gchar *memory_hint)
{
  gst_cudafft_post_status_error(element, status, what, cudafft_last_error_message(), memory_hint);
}

void
gst_cudafft_post_status_error(GstElement *element, CudafftStatus status, const gchar *what,
                              const gchar *detail, const gchar *memory_hint)
{
  switch (status) {
  case CUDAFFT_STATUS_NO_DEVICE:
    GST_ELEMENT_ERROR(element, RESOURCE, NOT_FOUND,
                      ("No usable CUDA device found; set backend=cpu, pick another "
                       "cuda-device-id, or check the NVIDIA driver."),
                      ("%s: %s", what, detail));
    break;
  case CUDAFFT_STATUS_BACKEND_UNAVAILABLE:
    GST_ELEMENT_ERROR(element, RESOURCE, NOT_FOUND,
                      ("This build of gst-cudafft has no CUDA support; set backend=cpu, or "
                       "rebuild it with the CUDA toolkit installed."),
                      ("%s: %s", what, detail));
    break;
  case CUDAFFT_STATUS_DEVICE_OUT_OF_MEMORY:
    GST_ELEMENT_ERROR(element, RESOURCE, NO_SPACE_LEFT,
                      ("Out of GPU memory; %s, free the GPU, or set backend=cpu.", memory_hint),
                      ("%s: %s", what, detail));
    break;
  case CUDAFFT_STATUS_HOST_OUT_OF_MEMORY:
    GST_ELEMENT_ERROR(element, RESOURCE, NO_SPACE_LEFT, ("Out of memory; %s.", memory_hint),
                      ("%s: %s", what, detail));
    break;
  case CUDAFFT_STATUS_WRONG_DEVICE_MEMORY:
    GST_ELEMENT_ERROR(element, STREAM, FAILED,
                      ("A buffer of GPU memory belongs to another GPU or CUDA context than this "
                       "element's; share one CUDA context between the elements (or set "
                       "cuda-device-id to the buffer's GPU)."),
                      ("%s: %s", what, detail));
    break;
  case CUDAFFT_STATUS_UNSUPPORTED:
    GST_ELEMENT_ERROR(element, CORE, NOT_IMPLEMENTED,
                      ("These settings are not supported here: %s", detail), ("%s failed", what));
    break;
  case CUDAFFT_STATUS_INVALID_SIZE:
  case CUDAFFT_STATUS_INVALID_BATCH:
  case CUDAFFT_STATUS_INVALID_VALUE:
  case CUDAFFT_STATUS_NULL_POINTER:
    GST_ELEMENT_ERROR(element, CORE, NEGOTIATION, ("Invalid settings: %s", detail),
                      ("%s failed", what));
    break;
  default:
    GST_ELEMENT_ERROR(
        element, RESOURCE, FAILED,
        ("The GPU failed (%s); set backend=cpu to run without it.", cudafft_status_name(status)),
        ("%s: %s", what, detail));
    break;
  }
}

gboolean
gst_cudafft_check_channels(GstElement *element, GstCaps *caps)
{
  gint channels = 0;
  if (!caps || gst_caps_get_size(caps) == 0 ||
      !gst_structure_get_int(gst_caps_get_structure(caps, 0), "channels", &channels) ||
      channels <= CUDAFFT_MAX_CHANNELS)
    return TRUE;
  GstElementFactory *factory = gst_element_get_factory(element);
  GST_ELEMENT_ERROR(element, STREAM, FORMAT,
                    ("%s takes 1 to %d channels; this stream has %d. Mix it down first "
                     "(audioconvert) or split it (deinterleave).",
                     factory ? GST_OBJECT_NAME(factory) : GST_OBJECT_NAME(element),
                     CUDAFFT_MAX_CHANNELS, channels),
                    ("caps %" GST_PTR_FORMAT, caps));
  return FALSE;
}
