/* gstcudaspectrumscopeframes.c: see the header. */
#include "gstcudaspectrumscopeframes.h"

#include "gstcudafftbackend.h"
#include "gstcudaffthostmemory.h"

#include <gst/video/gstvideopool.h>

GST_DEBUG_CATEGORY_EXTERN(gst_cuda_spectrum_scope_debug);
#define GST_CAT_DEFAULT gst_cuda_spectrum_scope_debug

void
gst_cuda_spectrum_scope_frames_init(GstCudaSpectrumScopeFrames *f, GstElement *element,
                                    GstCudafftContext *context)
{
  f->context = context;
  f->allocator = NULL;
  f->pool = NULL;
  f->pool_active = FALSE;
  f->cuda_memory = FALSE;
  f->element = element;
}

void
gst_cuda_spectrum_scope_frames_drop_pool(GstCudaSpectrumScopeFrames *f)
{
  f->cuda_memory = FALSE;
  if (!f->pool)
    return;
  gst_buffer_pool_set_active(f->pool, FALSE);
  gst_object_unref(f->pool);
  f->pool = NULL;
  f->pool_active = FALSE;
}

void
gst_cuda_spectrum_scope_frames_clear(GstCudaSpectrumScopeFrames *f)
{
  gst_cuda_spectrum_scope_frames_drop_pool(f);
  gst_clear_object(&f->allocator);
}

/* The pool downstream proposed: its minimum and maximum, and the larger size. */
static void
their_pool(GstQuery *query, guint *size, guint *min, guint *max)
{
  *min = *max = 0;
  if (gst_query_get_n_allocation_pools(query) == 0)
    return;
  GstBufferPool *theirs = NULL;
  guint their_size = 0;
  gst_query_parse_nth_allocation_pool(query, 0, &theirs, &their_size, min, max);
  gst_clear_object(&theirs);
  *size = MAX(*size, their_size);
}

/* Puts pool (and allocator, where not NULL) in the query in place of what downstream proposed. */
static void
offer(GstQuery *query, GstBufferPool *pool, GstAllocator *allocator, guint size, guint min,
      guint max)
{
  if (gst_query_get_n_allocation_pools(query) > 0)
    gst_query_set_nth_allocation_pool(query, 0, pool, size, min, max);
  else
    gst_query_add_allocation_pool(query, pool, size, min, max);
  if (!allocator)
    return;
  if (gst_query_get_n_allocation_params(query) > 0)
    gst_query_set_nth_allocation_param(query, 0, allocator, NULL);
  else
    gst_query_add_allocation_param(query, allocator, NULL);
}

gboolean
gst_cuda_spectrum_scope_frames_decide(GstCudaSpectrumScopeFrames *f, GstElement *element,
                                      GstQuery *query)
{
  gst_cuda_spectrum_scope_frames_drop_pool(f);
  GstCaps *caps = NULL;
  gst_query_parse_allocation(query, &caps, NULL);
  GstVideoInfo info;
  if (!caps || !gst_video_info_from_caps(&info, caps))
    return FALSE;
  guint size = (guint)GST_VIDEO_INFO_SIZE(&info), min = 0, max = 0;
  their_pool(query, &size, &min, &max);
  if (gst_cudafft_caps_is_cuda_memory(caps)) {
    /* GStreamer's CUDA pool sizes its pitched frames itself */
    GstBufferPool *pool = gst_cudafft_context_video_pool(f->context, caps, min, max);
    if (!pool) {
      GST_ELEMENT_ERROR(element, RESOURCE, SETTINGS,
                        ("Cannot make a pool of CUDA memory for the frames: no CUDA context is "
                         "shared with this element (see the debug log, category cudafftcontext)."),
                        ("caps %" GST_PTR_FORMAT, caps));
      return FALSE;
    }
    offer(query, pool, NULL, size, min, max);
    f->pool = pool; /* the query holds a reference of its own */
    f->cuda_memory = TRUE;
    GST_DEBUG_OBJECT(element, "frames in CUDA memory of the shared context");
    return TRUE;
  }
  if (!f->allocator)
    f->allocator = gst_cudafft_host_allocator_new(TRUE);
  GstBufferPool *pool = gst_video_buffer_pool_new();
  GstStructure *config = gst_buffer_pool_get_config(pool);
  gst_buffer_pool_config_set_params(config, caps, size, min, max);
  gst_buffer_pool_config_set_allocator(config, f->allocator, NULL);
  gst_buffer_pool_config_add_option(config, GST_BUFFER_POOL_OPTION_VIDEO_META);
  if (!gst_buffer_pool_set_config(pool, config)) {
    /* plain buffers then (acquire without a pool) */
    GST_WARNING_OBJECT(element, "cannot configure a page-locked pool; plain frame buffers");
    gst_object_unref(pool);
    return TRUE;
  }
  offer(query, pool, f->allocator, size, min, max);
  f->pool = pool;
  GST_DEBUG_OBJECT(element, "frames from a page-locked pool of %u-byte buffers", size);
  return TRUE;
}

GstFlowReturn
gst_cuda_spectrum_scope_frames_acquire(GstCudaSpectrumScopeFrames *f, GstElement *element,
                                       gsize size, GstBuffer **out)
{
  if (!f->pool) {
    *out = gst_buffer_new_allocate(NULL, size, NULL);
    return *out ? GST_FLOW_OK : GST_FLOW_ERROR;
  }
  if (!f->pool_active) {
    if (!gst_buffer_pool_set_active(f->pool, TRUE)) {
      GST_ELEMENT_ERROR(element, RESOURCE, SETTINGS, ("Cannot activate the frame buffer pool."),
                        (NULL));
      return GST_FLOW_ERROR;
    }
    f->pool_active = TRUE;
  }
  return gst_buffer_pool_acquire_buffer(f->pool, out, NULL);
}

GstFlowReturn
gst_cuda_spectrum_scope_frames_draw(GstCudaSpectrumScopeFrames *f, CudafftScope *scope,
                                    const GstVideoInfo *vinfo, const void *samples, gsize count,
                                    GstBuffer *out, const gchar *memory_hint)
{
  CudafftStatus status;
  const gchar *what;
  if (f->cuda_memory) {
    GstMapInfo map;
    gpointer device_data = NULL;
    gsize pitch = 0;
    if (!gst_cudafft_map_cuda(out, GST_MAP_WRITE, &map, &device_data, &pitch)) {
      GST_ELEMENT_ERROR(f->element, RESOURCE, WRITE,
                        ("Cannot map a frame of CUDA memory on the device."), (NULL));
      return GST_FLOW_ERROR;
    }
    what = "cudafft_scope_render_device";
    status = cudafft_scope_render_device(scope, samples, count, device_data, pitch);
    gst_memory_unmap(map.memory, &map);
  } else {
    GstVideoFrame frame;
    if (!gst_video_frame_map(&frame, vinfo, out, GST_MAP_WRITE)) {
      GST_ELEMENT_ERROR(f->element, RESOURCE, WRITE, ("Cannot map a video frame."), (NULL));
      return GST_FLOW_ERROR;
    }
    what = "cudafft_scope_render";
    status = cudafft_scope_render(scope, samples, count, GST_VIDEO_FRAME_PLANE_DATA(&frame, 0));
    gst_video_frame_unmap(&frame);
  }
  if (status == CUDAFFT_STATUS_OK)
    return GST_FLOW_OK;
  gst_cudafft_post_engine_error(f->element, status, what, memory_hint);
  return GST_FLOW_ERROR;
}
