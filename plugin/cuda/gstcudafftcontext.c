/* gstcudafftcontext.c: see the header. The context negotiation; with gstcudafftcudamemory.c one
 * of the two plugin files built with GStreamer's CUDA library and CUDA's headers
 * (plugin/meson.build builds them where gstreamer-cuda-1.0 is found, and gstcudafftcudamemorystub.c
 * otherwise). */
#define GST_USE_UNSTABLE_API /* gst/cuda is unstable API in 1.22 */
#include "gstcudafftcontext.h"

#include <cudafft/common.h>

#include <gst/cuda/gstcudacontext.h>
#include <gst/cuda/gstcudaloader.h>
#include <gst/cuda/gstcudamemory.h>
#include <gst/cuda/gstcudautils.h>

/* shared with gstcudafftcudamemory.c: one category for the whole CUDA hand-off */
GST_DEBUG_CATEGORY(gst_cudafft_context_debug);
#define GST_CAT_DEFAULT gst_cudafft_context_debug

/* GStreamer's name for the context type (gstcudautils.c's GST_CUDA_CONTEXT_TYPE) */
#define CONTEXT_TYPE "gst.cuda.context"

static gpointer
load_once(gpointer unused)
{
  (void)unused;
  GST_DEBUG_CATEGORY_INIT(gst_cudafft_context_debug, "cudafftcontext", 0,
                          "gst-cudafft: shared CUDA contexts and CUDA memory");
  /* the driver (libcuda) through GStreamer's loader: without it no context can be wrapped */
  const gboolean loaded =
      cudafft_has_cuda_backend() && cudafft_cuda_device_count() > 0 && gst_cuda_load_library();
  if (loaded)
    gst_cuda_memory_init_once();
  GST_INFO("CUDA contexts and memory %s", loaded ? "available" : "not available");
  return GINT_TO_POINTER(loaded);
}

void
gst_cudafft_context_finalize(GstCudafftContext *c)
{
  gst_cudafft_context_clear(c);
  g_mutex_clear(&c->lock);
}

gboolean
gst_cudafft_context_available(void)
{
  static GOnce once = G_ONCE_INIT;
  return GPOINTER_TO_INT(g_once(&once, load_once, NULL));
}

/* Lets go of the context held (under the lock). */
static void
drop_locked(GstCudafftContext *c)
{
  /* a context held is attached (adopt_locked) */
  if (c->context)
    cudafft_cuda_context_detach(c->engine_device);
  gst_clear_object(&c->context);
  c->engine_device = -1;
}

void
gst_cudafft_context_clear(GstCudafftContext *c)
{
  g_mutex_lock(&c->lock);
  drop_locked(c);
  g_mutex_unlock(&c->lock);
}

/* Takes `found` (a reference) as the element's context, under the lock: the engines' id for it
 * from the library (its ordinal for a primary context). FALSE (found dropped) where the library
 * cannot take it. */
static gboolean
adopt_locked(GstCudafftContext *c, GstElement *element, GstCudaContext *found)
{
  gint device = -1, engine_device = -1;
  g_object_get(found, "cuda-device-id", &device, NULL);
  const CudafftStatus status =
      cudafft_cuda_context_attach(gst_cuda_context_get_handle(found), &engine_device);
  if (status != CUDAFFT_STATUS_OK) {
    GST_WARNING_OBJECT(element, "cannot run in the pipeline's CUDA context of device %d (%s): %s",
                       device, cudafft_status_name(status), cudafft_last_error_message());
    gst_object_unref(found);
    return FALSE;
  }
  drop_locked(c);
  c->context = GST_OBJECT(found);
  c->engine_device = engine_device;
  GST_INFO_OBJECT(element, "CUDA context %p of device %d (%s), engines on id %d", found, device,
                  engine_device == device ? "its primary context" : "a context of its own",
                  engine_device);
  return TRUE;
}

void
gst_cudafft_context_set(GstCudafftContext *c, GstElement *element, GstContext *context,
                        gint device_id)
{
  if (!gst_cudafft_context_available())
    return;
  GstCudaContext *found = NULL;
  /* takes the context only where its device is device_id's (-1: any), with a reference */
  if (!gst_cuda_handle_set_context(element, context, device_id, &found) || !found)
    return;
  g_mutex_lock(&c->lock);
  /* GStreamer's rule (gst_cuda_handle_set_context): a context held is not replaced */
  if (c->context)
    gst_object_unref(found);
  else
    adopt_locked(c, element, found);
  g_mutex_unlock(&c->lock);
}

/* The device a context made on demand goes to for device id -1: the one whose engines hold the
 * least GPU state, then the fewest objects (the library's own first rules, cudafft/common.h). */
static gint
least_loaded_device(void)
{
  const int count = cudafft_cuda_device_count();
  gint best = 0;
  size_t best_bytes = (size_t)-1;
  unsigned best_objects = (unsigned)-1;
  for (int d = 0; d < count; d++) {
    unsigned objects = 0;
    size_t bytes = 0;
    if (cudafft_cuda_device_load(d, &objects, &bytes) != CUDAFFT_STATUS_OK)
      continue;
    if (bytes < best_bytes || (bytes == best_bytes && objects < best_objects)) {
      best = d;
      best_bytes = bytes;
      best_objects = objects;
    }
  }
  return best;
}

/* Wraps device's primary context as the element's context, under the lock. Returns the GstContext
 * to post (have-context) once the lock is let go (an application's sync handler may call
 * set_context from the post), or NULL where nothing was wrapped. */
static GstContext *
wrap_primary_locked(GstCudafftContext *c, GstElement *element, gint device)
{
  void *handle = NULL;
  const CudafftStatus status = cudafft_cuda_primary_context(device, &handle);
  CUdevice cu_device = 0;
  if (status != CUDAFFT_STATUS_OK || CuDeviceGet(&cu_device, device) != CUDA_SUCCESS) {
    GST_WARNING_OBJECT(element, "no primary CUDA context of device %d to share: %s", device,
                       cudafft_last_error_message());
    return NULL;
  }
  GstCudaContext *made = gst_cuda_context_new_wrapped((CUcontext)handle, cu_device);
  if (!made || !adopt_locked(c, element, made))
    return NULL;
  GST_INFO_OBJECT(element, "sharing device %d's primary CUDA context", device);
  return gst_context_new_cuda_context(made);
}

/* Posts what wrap_primary_locked made (NULL: nothing). */
static void
post_context(GstElement *element, GstContext *context)
{
  if (context)
    gst_element_post_message(element,
                             gst_message_new_have_context(GST_OBJECT_CAST(element), context));
}

gboolean
gst_cudafft_context_query(GstCudafftContext *c, GstElement *element, GstQuery *query,
                          gint device_id)
{
  const gchar *type = NULL;
  if (GST_QUERY_TYPE(query) != GST_QUERY_CONTEXT || !gst_query_parse_context_type(query, &type) ||
      g_strcmp0(type, CONTEXT_TYPE) != 0 || !gst_cudafft_context_available())
    return FALSE;
  g_mutex_lock(&c->lock);
  /* a neighbour that starts before us (cudadownload downstream) asks: share ours from now on */
  GstContext *made = NULL;
  if (!c->context && !c->busy)
    made = wrap_primary_locked(c, element, device_id >= 0 ? device_id : least_loaded_device());
  GstCudaContext *held = c->context ? gst_object_ref(GST_CUDA_CONTEXT(c->context)) : NULL;
  g_mutex_unlock(&c->lock);
  post_context(element, made);
  if (!held)
    return FALSE;
  const gboolean answered = gst_cuda_handle_context_query(element, query, held);
  gst_object_unref(held);
  return answered;
}

/* Runs query on the peers of the element's pads of one direction; TRUE once one answered. */
static gboolean
query_peer(const GValue *item, GValue *value, gpointer query)
{
  GstPad *pad = g_value_get_object(item);
  if (gst_pad_peer_query(pad, query)) {
    g_value_set_boolean(value, TRUE);
    return FALSE; /* stop */
  }
  return TRUE;
}

static gboolean
query_peers(GstElement *element, GstQuery *query, GstPadDirection direction)
{
  GstIterator *it = direction == GST_PAD_SRC ? gst_element_iterate_src_pads(element)
                                             : gst_element_iterate_sink_pads(element);
  GValue answered = G_VALUE_INIT;
  g_value_init(&answered, G_TYPE_BOOLEAN);
  g_value_set_boolean(&answered, FALSE);
  while (gst_iterator_fold(it, query_peer, &answered, query) == GST_ITERATOR_RESYNC)
    gst_iterator_resync(it);
  gst_iterator_free(it);
  return g_value_get_boolean(&answered);
}

/* Whether the element holds a context now. */
static gboolean
holds(GstCudafftContext *c)
{
  g_mutex_lock(&c->lock);
  const gboolean held = c->context != NULL;
  g_mutex_unlock(&c->lock);
  return held;
}

void
gst_cudafft_context_find(GstCudafftContext *c, GstElement *element, gint device_id)
{
  if (!gst_cudafft_context_available())
    return;
  g_mutex_lock(&c->lock);
  const gboolean held = c->context != NULL;
  c->busy = !held;
  g_mutex_unlock(&c->lock);
  if (held)
    return;
  /* downstream first, then upstream: GStreamer's own order (gst_cuda_ensure_element_context) */
  GstQuery *query = gst_query_new_context(CONTEXT_TYPE);
  for (int pass = 0; pass < 2 && !holds(c); pass++) {
    if (!query_peers(element, query, pass == 0 ? GST_PAD_SRC : GST_PAD_SINK))
      continue;
    GstContext *context = NULL;
    gst_query_parse_context(query, &context);
    if (context) {
      GST_DEBUG_OBJECT(element, "a neighbour answered the CUDA context query");
      gst_cudafft_context_set(c, element, context, device_id);
    }
  }
  gst_query_unref(query);
  /* the application or the bin answers with gst_element_set_context(), before this returns */
  if (!holds(c))
    gst_element_post_message(element,
                             gst_message_new_need_context(GST_OBJECT_CAST(element), CONTEXT_TYPE));
  g_mutex_lock(&c->lock);
  c->busy = FALSE;
  GST_DEBUG_OBJECT(element, "%s", c->context ? "found a CUDA context" : "no CUDA context yet");
  g_mutex_unlock(&c->lock);
}

gint
gst_cudafft_context_engine_device(GstCudafftContext *c, GstElement *element, gint device_id)
{
  gst_cudafft_context_find(c, element, device_id);
  g_mutex_lock(&c->lock);
  const gint id = c->context ? c->engine_device : device_id;
  g_mutex_unlock(&c->lock);
  return id;
}

void
gst_cudafft_context_publish(GstCudafftContext *c, GstElement *element, gint device)
{
  if (!gst_cudafft_context_available())
    return;
  const gint ordinal = cudafft_cuda_context_device(device);
  g_mutex_lock(&c->lock);
  GstContext *made = !c->context && ordinal >= 0 ? wrap_primary_locked(c, element, ordinal) : NULL;
  g_mutex_unlock(&c->lock);
  post_context(element, made);
}

GstObject *
gst_cudafft_context_get(GstCudafftContext *c)
{
  g_mutex_lock(&c->lock);
  GstObject *held = c->context ? gst_object_ref(c->context) : NULL;
  g_mutex_unlock(&c->lock);
  return held;
}
