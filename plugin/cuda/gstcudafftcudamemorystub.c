/* gstcudafftcudamemorystub.c: gstcudafftcontext.h and gstcudafftcudamemory.h for builds without
 * GStreamer's CUDA library (gstreamer-cuda-1.0): no context to share and no CUDA memory; every
 * element negotiates system memory and its engines run where the library puts them. */
#include "gstcudafftcudamemory.h"

#include <string.h>

void
gst_cudafft_context_clear(GstCudafftContext *c)
{
  (void)c;
}

void
gst_cudafft_context_finalize(GstCudafftContext *c)
{
  g_mutex_clear(&c->lock);
}

gboolean
gst_cudafft_context_available(void)
{
  return FALSE;
}

void
gst_cudafft_context_set(GstCudafftContext *c, GstElement *element, GstContext *context,
                        gint device_id)
{
  (void)c, (void)element, (void)context, (void)device_id;
}

gboolean
gst_cudafft_context_query(GstCudafftContext *c, GstElement *element, GstQuery *query,
                          gint device_id)
{
  (void)c, (void)element, (void)query, (void)device_id;
  return FALSE;
}

void
gst_cudafft_context_find(GstCudafftContext *c, GstElement *element, gint device_id)
{
  (void)c, (void)element, (void)device_id;
}

gint
gst_cudafft_context_engine_device(GstCudafftContext *c, GstElement *element, gint device_id)
{
  (void)c, (void)element;
  return device_id;
}

void
gst_cudafft_context_publish(GstCudafftContext *c, GstElement *element, gint device)
{
  (void)c, (void)element, (void)device;
}

GstObject *
gst_cudafft_context_get(GstCudafftContext *c)
{
  (void)c;
  return NULL;
}

GstCaps *
gst_cudafft_caps_in_cuda_memory(GstCaps *caps)
{
  return caps;
}

GstCaps *
gst_cudafft_caps_add_cuda_memory(GstCaps *caps)
{
  return caps;
}

gboolean
gst_cudafft_context_holds_memory(GstCudafftContext *c, GstMemory *memory)
{
  (void)c, (void)memory;
  return FALSE;
}

gboolean
gst_cudafft_is_cuda_memory(GstMemory *memory)
{
  (void)memory;
  return FALSE;
}

gboolean
gst_cudafft_caps_is_cuda_memory(const GstCaps *caps)
{
  (void)caps;
  return FALSE;
}

GstCaps *
gst_cudafft_caps_without_cuda_memory(const GstCaps *caps)
{
  return gst_caps_copy(caps);
}

GstCaps *
gst_cudafft_caps_in_system_memory(const GstCaps *caps)
{
  return gst_caps_copy(caps);
}

GstCaps *
gst_cudafft_caps_prefer_memory(GstCaps *candidates, GstPad *srcpad)
{
  (void)srcpad;
  return candidates;
}

GstBufferPool *
gst_cudafft_context_video_pool(GstCudafftContext *c, GstCaps *caps, guint min, guint max)
{
  (void)c, (void)caps, (void)min, (void)max;
  return NULL;
}

gboolean
gst_cudafft_map_cuda(GstBuffer *buffer, GstMapFlags flags, GstMapInfo *info, gpointer *device_data,
                     gsize *pitch)
{
  (void)buffer, (void)flags, (void)info, (void)device_data, (void)pitch;
  return FALSE;
}

gboolean
gst_cudafft_map_is_cuda(const GstMapInfo *info)
{
  (void)info;
  return FALSE;
}

GstBuffer *
gst_cudafft_cuda_buffer(GstCudafftContext *c, GstCudafftCudaBuffers *b, gsize bytes)
{
  (void)c, (void)b, (void)bytes;
  return NULL;
}

void
gst_cudafft_cuda_buffers_clear(GstCudafftCudaBuffers *b)
{
  memset(b, 0, sizeof *b);
}

GstBuffer *
gst_cudafft_cuda_buffer_cut(GstCudafftContext *c, GstCudafftCudaBuffers *b, GstBuffer *buffer,
                            gsize offset, gsize bytes)
{
  (void)c, (void)b, (void)buffer, (void)offset, (void)bytes;
  return NULL;
}
