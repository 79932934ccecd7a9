/* gstcudafftfence.c: the fence meta (gstcudafftfence.h). It has no transform function: a copy of
 * the buffer (a new buffer of other memory) does not carry it, and it is tagged as describing the
 * memory, so that elements which keep metas across a change of memory drop it. Its free function
 * (the buffer freed, or back in its pool, which drops unpooled metas) waits for the fence, so that
 * neither the buffer's memory nor the input it keeps is written again before the work is done,
 * even where the buffer was dropped unread; then it lets the input go. */
#include "gstcudafftfence.h"

typedef struct {
  GstMeta meta;
  CudafftFence fence;
  GstBuffer *reads; /* a buffer whose memory the work reads, kept until the work is done */
} GstCudafftFenceMeta;

GType
gst_cudafft_fence_meta_api_get_type(void)
{
  static GType type = 0;
  if (g_once_init_enter(&type)) {
    static const gchar *tags[] = {GST_META_TAG_MEMORY_STR, NULL};
    const GType made = gst_meta_api_type_register("GstCudafftFenceMetaAPI", tags);
    g_once_init_leave(&type, made);
  }
  return type;
}

static gboolean
fence_meta_init(GstMeta *meta, gpointer params, GstBuffer *buffer)
{
  (void)params;
  (void)buffer;
  ((GstCudafftFenceMeta *)meta)->fence = (CudafftFence){0, 0};
  ((GstCudafftFenceMeta *)meta)->reads = NULL;
  return TRUE;
}

static void
fence_meta_free(GstMeta *meta, GstBuffer *buffer)
{
  (void)buffer;
  GstCudafftFenceMeta *fence = (GstCudafftFenceMeta *)meta;
  /* a failure of the work was reported to the element that queued it */
  (void)cudafft_fence_wait(fence->fence);
  if (fence->reads)
    gst_buffer_unref(fence->reads);
}

static const GstMetaInfo *
fence_meta_info(void)
{
  static const GstMetaInfo *info = NULL;
  if (g_once_init_enter(&info)) {
    const GstMetaInfo *made =
        gst_meta_register(gst_cudafft_fence_meta_api_get_type(), "GstCudafftFenceMeta",
                          sizeof(GstCudafftFenceMeta), fence_meta_init, fence_meta_free, NULL);
    g_once_init_leave(&info, made);
  }
  return info;
}

static GstCudafftFenceMeta *
fence_meta_of(GstBuffer *buffer)
{
  return (GstCudafftFenceMeta *)gst_buffer_get_meta(buffer, gst_cudafft_fence_meta_api_get_type());
}

gboolean
gst_cudafft_buffer_set_fence(GstBuffer *buffer, CudafftFence fence, GstBuffer *reads)
{
  if (fence.queue == 0)
    return TRUE;
  GstCudafftFenceMeta *meta = fence_meta_of(buffer);
  if (meta && cudafft_fence_wait(meta->fence) != CUDAFFT_STATUS_OK)
    return FALSE; /* an earlier fence of the same buffer: not expected, but it must not be lost */
  if (!meta)
    meta = (GstCudafftFenceMeta *)gst_buffer_add_meta(buffer, fence_meta_info(), NULL);
  if (!meta)
    return FALSE;
  meta->fence = fence;
  if (reads && reads != meta->reads) {
    if (meta->reads)
      gst_buffer_unref(meta->reads);
    meta->reads = gst_buffer_ref(reads);
  }
  return TRUE;
}

CudafftFence
gst_cudafft_buffer_get_fence(GstBuffer *buffer)
{
  const GstCudafftFenceMeta *meta = fence_meta_of(buffer);
  return meta ? meta->fence : (CudafftFence){0, 0};
}
