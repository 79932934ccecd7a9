/* gstcudafftbackend.h: what every element of the plugin shares about where its engine runs,
 * whatever its base class (GstCudafftAudioFilter for the audio filters, GstAudioVisualizer for
 * cudaspectrumscope): the backend enum and the backend and cuda-device-id properties, the making
 * of an engine with AUTO's fallback to the CPU, the one mapping of an engine status to an error a
 * user can act on, and the engines' channel limit. */
#ifndef GST_CUDAFFT_BACKEND_H
#define GST_CUDAFFT_BACKEND_H

#include <cudafft/common.h>

#include <gst/gst.h>

G_BEGIN_DECLS

/* Values equal CudafftBackend's. */
typedef enum {
  GST_CUDAFFT_BACKEND_AUTO = CUDAFFT_BACKEND_AUTO,
  GST_CUDAFFT_BACKEND_CUDA = CUDAFFT_BACKEND_CUDA,
  GST_CUDAFFT_BACKEND_CPU = CUDAFFT_BACKEND_CPU,
} GstCudafftBackend;

#define GST_TYPE_CUDAFFT_BACKEND (gst_cudafft_backend_get_type())
GType gst_cudafft_backend_get_type(void);

#define GST_CUDAFFT_DEFAULT_BACKEND GST_CUDAFFT_BACKEND_AUTO
#define GST_CUDAFFT_DEFAULT_DEVICE_ID -1

/* Installs the backend and cuda-device-id properties (changeable up to READY) on klass under the
 * ids prop_backend and prop_device_id; the class's set/get_property handle them. */
void gst_cudafft_backend_install_properties(GObjectClass *klass, guint prop_backend,
                                            guint prop_device_id);

/* One of the library's engines: the functions every engine has (cudafft_<engine>_create,
 * _destroy, _get_backend, _get_device, _reset), on untyped pointers. Define one with
 * GST_CUDAFFT_DEFINE_ENGINE_CLASS. */
typedef struct {
  const gchar *name; /* names the engine in messages: "the STFT analyser" */
  CudafftStatus (*create)(gpointer *engine, CudafftBackend backend, int device_id,
                          gconstpointer config);
  void (*destroy)(gpointer engine);
  CudafftBackend (*get_backend)(gconstpointer engine);
  int (*get_device)(gconstpointer engine);
  void (*reset)(gpointer engine);
} GstCudafftEngineClass;

/* Defines `static const GstCudafftEngineClass var` for the engine whose functions are
 * cudafft_<engine>_*, whose objects are `Type` and whose create takes a `const Config *`. */
#define GST_CUDAFFT_DEFINE_ENGINE_CLASS(var, engine, Type, Config, label)                          \
  static CudafftStatus var##_create(gpointer *object, CudafftBackend backend, int device_id,       \
                                    gconstpointer config)                                          \
  {                                                                                                \
    Type *made = NULL;                                                                             \
    const CudafftStatus status =                                                                   \
        cudafft_##engine##_create(&made, backend, device_id, (const Config *)config);              \
    *object = made;                                                                                \
    return status;                                                                                 \
  }                                                                                                \
  static void var##_destroy(gpointer object)                                                       \
  {                                                                                                \
    cudafft_##engine##_destroy((Type *)object);                                                    \
  }                                                                                                \
  static CudafftBackend var##_get_backend(gconstpointer object)                                    \
  {                                                                                                \
    return cudafft_##engine##_get_backend((const Type *)object);                                   \
  }                                                                                                \
  static int var##_get_device(gconstpointer object)                                                \
  {                                                                                                \
    return cudafft_##engine##_get_device((const Type *)object);                                    \
  }                                                                                                \
  static void var##_reset(gpointer object)                                                         \
  {                                                                                                \
    cudafft_##engine##_reset((Type *)object);                                                      \
  }                                                                                                \
  static const GstCudafftEngineClass var = {                                                       \
      label, var##_create, var##_destroy, var##_get_backend, var##_get_device, var##_reset};

/* Makes an engine of `engine_class` for `config` on device_id: first on `chosen` (the backend the
 * element's start probed for, or `requested`, the property, where nothing was probed), then, where
 * the property asks for `auto` and the GPU cannot run these settings (UNSUPPORTED) or has no
 * usable device, on the CPU. Returns it, and its backend in *actual, and in *fell_back (g_free;
 * NULL where not) why `auto` ended on the CPU where no probe has said so, for the caller to say
 * (gst_cudafft_say_cpu_fallback); or NULL after posting the GST_ELEMENT_ERROR for the failure
 * (memory_hint: what the out-of-memory errors tell the user to shrink, naming the element's own
 * properties). */
gpointer gst_cudafft_engine_new(GstElement *element, const GstCudafftEngineClass *engine_class,
                                CudafftBackend requested, CudafftBackend chosen, int device_id,
                                gconstpointer config, const gchar *memory_hint,
                                CudafftBackend *actual, gchar **fell_back);

/* Why no CUDA device is used (never empty): the library's words for a host without a usable
 * device (no CUDA backend in this build, no NVIDIA driver, a driver too old, no device:
 * cudafft_cuda_unavailable_reason), else its last message. */
gchar *gst_cudafft_no_device_reason(void);

/* Says that backend=auto runs `element` on the CPU, and `why`, where a user sees it: an INFO
 * message on the bus (gst-launch-1.0 prints it) and a WARNING in the debug log. Once per start:
 * the element core sees to that (gst_cudafft_element_core_say_cpu_fallback). */
void gst_cudafft_say_cpu_fallback(GstElement *element, const gchar *why);

/* Posts the GST_ELEMENT_ERROR for `status`, from `what` (which call or check), with `detail`
 * (CUDA's or the library's own words) for the debug part. The one place a status becomes an
 * error a user can act on. */
void gst_cudafft_post_status_error(GstElement *element, CudafftStatus status, const gchar *what,
                                   const gchar *detail, const gchar *memory_hint);

/* The same for a failed engine call, with the library's message of the failure as the detail. */
void gst_cudafft_post_engine_error(GstElement *element, CudafftStatus status, const gchar *what,
                                   const gchar *memory_hint);

/* Whether caps (raw audio or audio/x-fft) have at most CUDAFFT_MAX_CHANNELS channels; if not,
 * posts an error naming the limit and the count. Every element checks each CAPS event with it
 * before anything else looks at the caps: any count links, so that the refusal says why. */
gboolean gst_cudafft_check_channels(GstElement *element, GstCaps *caps);

G_END_DECLS

#endif
