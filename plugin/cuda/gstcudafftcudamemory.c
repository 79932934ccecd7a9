/* gstcudafftcudamemory.c: see gstcudafftcudamemory.h. CUDA memory (memory:CUDAMemory) between
 * elements: caps, pools, device maps and cuts. With gstcudafftcontext.c one of the two plugin files
 * built with GStreamer's CUDA library and CUDA's headers (plugin/meson.build builds them where
 * gstreamer-cuda-1.0 is found, and gstcudafftcudamemorystub.c otherwise). */
#define GST_USE_UNSTABLE_API /* gst/cuda is unstable API in 1.22 */
#include "gstcudafftcudamemory.h"

#include <gst/cuda/gstcudabufferpool.h>
#include <gst/cuda/gstcudacontext.h>
#include <gst/cuda/gstcudamemory.h>
#include <gst/cuda/gstcudautils.h>
#include <gst/video/video.h>

/* gstcudafftcontext.c's: contexts and memory log together */
GST_DEBUG_CATEGORY_EXTERN(gst_cudafft_context_debug);
#define GST_CAT_DEFAULT gst_cudafft_context_debug

GstCaps *
gst_cudafft_caps_in_cuda_memory(GstCaps *caps)
{
  caps = gst_caps_make_writable(caps);
  const guint n = gst_caps_get_size(caps);
  for (guint i = 0; i < n; i++)
    gst_caps_set_features(caps, i,
                          gst_caps_features_new(GST_CAPS_FEATURE_MEMORY_CUDA_MEMORY, NULL));
  return caps;
}

GstCaps *
gst_cudafft_caps_add_cuda_memory(GstCaps *caps)
{
  return gst_caps_merge(caps, gst_cudafft_caps_in_cuda_memory(gst_caps_copy(caps)));
}

gboolean
gst_cudafft_is_cuda_memory(GstMemory *memory)
{
  return gst_cudafft_context_available() && gst_is_cuda_memory(memory);
}

gboolean
gst_cudafft_context_holds_memory(GstCudafftContext *c, GstMemory *memory)
{
  if (!gst_cudafft_is_cuda_memory(memory))
    return FALSE;
  GstObject *held = gst_cudafft_context_get(c);
  GstCudaContext *theirs = GST_CUDA_MEMORY_CAST(memory)->context;
  /* one CUcontext may be wrapped twice (two pipelines each wrapping a device's primary context):
   * the driver's handle decides, not the wrapper */
  const gboolean ours =
      held && theirs &&
      gst_cuda_context_get_handle(GST_CUDA_CONTEXT(held)) == gst_cuda_context_get_handle(theirs);
  gst_clear_object(&held);
  return ours;
}

gboolean
gst_cudafft_caps_is_cuda_memory(const GstCaps *caps)
{
  if (!caps || gst_caps_is_empty(caps) || gst_caps_is_any(caps))
    return FALSE;
  const GstCapsFeatures *features = gst_caps_get_features(caps, 0);
  return features && gst_caps_features_contains(features, GST_CAPS_FEATURE_MEMORY_CUDA_MEMORY);
}

GstCaps *
gst_cudafft_caps_without_cuda_memory(const GstCaps *caps)
{
  GstCaps *kept = gst_caps_new_empty();
  if (gst_caps_is_any(caps)) {
    gst_caps_unref(kept);
    return gst_caps_new_any();
  }
  for (guint i = 0; i < gst_caps_get_size(caps); i++) {
    const GstCapsFeatures *features = gst_caps_get_features(caps, i);
    if (features && !gst_caps_features_is_any(features) &&
        gst_caps_features_contains(features, GST_CAPS_FEATURE_MEMORY_CUDA_MEMORY))
      continue;
    gst_caps_append_structure_full(kept, gst_structure_copy(gst_caps_get_structure(caps, i)),
                                   features ? gst_caps_features_copy(features) : NULL);
  }
  return kept;
}

GstCaps *
gst_cudafft_caps_in_system_memory(const GstCaps *caps)
{
  GstCaps *copy = gst_caps_copy(caps);
  for (guint i = 0; i < gst_caps_get_size(copy); i++) {
    const GstCapsFeatures *features = gst_caps_get_features(copy, i);
    if (features && !gst_caps_features_is_any(features) &&
        gst_caps_features_contains(features, GST_CAPS_FEATURE_MEMORY_CUDA_MEMORY))
      gst_caps_set_features(copy, i, NULL);
  }
  return gst_caps_simplify(copy);
}

GstCaps *
gst_cudafft_caps_prefer_memory(GstCaps *candidates, GstPad *srcpad)
{
  GstCaps *system = gst_cudafft_caps_without_cuda_memory(candidates);
  if (gst_caps_is_empty(system) || gst_caps_is_equal(system, candidates)) {
    gst_caps_unref(system);
    return candidates;
  }
  GstCaps *theirs = gst_pad_peer_query_caps(srcpad, NULL);
  GstCaps *their_system = gst_cudafft_caps_without_cuda_memory(theirs);
  const gboolean names_cuda = theirs && !gst_caps_is_any(theirs) &&
                              gst_caps_get_size(their_system) < gst_caps_get_size(theirs);
  gst_caps_unref(their_system);
  gst_clear_caps(&theirs);
  if (!names_cuda) {
    gst_caps_unref(candidates);
    return system;
  }
  gst_caps_unref(system);
  /* the CUDA-memory ones: those the system-memory ones are not */
  GstCaps *cuda = gst_caps_new_empty();
  for (guint i = 0; i < gst_caps_get_size(candidates); i++) {
    GstCapsFeatures *features = gst_caps_get_features(candidates, i);
    if (features && gst_caps_features_contains(features, GST_CAPS_FEATURE_MEMORY_CUDA_MEMORY))
      gst_caps_append_structure_full(cuda,
                                     gst_structure_copy(gst_caps_get_structure(candidates, i)),
                                     gst_caps_features_copy(features));
  }
  gst_caps_unref(candidates);
  return cuda;
}

/* A configured pool of GStreamer's CUDA memory in `context` for video `caps` (the frames' and the
 * audio's description alike), buffers of `size` bytes; a GstVideoMeta on each where video_meta.
 * NULL where the pool refuses the configuration. */
static GstBufferPool *
cuda_pool(GstObject *context, GstCaps *caps, guint size, guint min, guint max, gboolean video_meta)
{
  GstBufferPool *pool = gst_cuda_buffer_pool_new(GST_CUDA_CONTEXT(context));
  GstStructure *config = gst_buffer_pool_get_config(pool);
  gst_buffer_pool_config_set_params(config, caps, size, min, max);
  if (video_meta)
    gst_buffer_pool_config_add_option(config, GST_BUFFER_POOL_OPTION_VIDEO_META);
  if (!gst_buffer_pool_set_config(pool, config)) {
    gst_object_unref(pool);
    return NULL;
  }
  return pool;
}

GstBufferPool *
gst_cudafft_context_video_pool(GstCudafftContext *c, GstCaps *caps, guint min, guint max)
{
  GstObject *held = gst_cudafft_context_get(c);
  GstVideoInfo info;
  GstBufferPool *pool =
      held && gst_video_info_from_caps(&info, caps)
          ? cuda_pool(held, caps, (guint)GST_VIDEO_INFO_SIZE(&info), min, max, TRUE)
          : NULL;
  gst_clear_object(&held);
  return pool;
}

/* GStreamer 1.24's stream model: CUDA memory may carry the CUDA stream its producer (cudaupload,
 * nvcodec's decoders and converters) queued its writes on, flagged as not yet synchronised; a
 * device map (an upload of a host copy) may queue more there. Our engines' kernels run on streams
 * of their own, ordered by nothing of that stream, so the memory's stream is waited for once
 * mapped, before any kernel of ours reads or writes it (gst_cuda_memory_sync: a no-op for memory
 * without a stream or with nothing pending). Memory of our own pools carries no stream: between our
 * elements the fences of gstcudafftfence.h order the work as before. Before 1.24 CUDA memory has no
 * stream and GStreamer's own copies complete before the memory is handed on: nothing to wait for.
 */
static void
sync_memory_stream(GstMemory *memory)
{
#if GST_CHECK_VERSION(1, 24, 0)
  gst_cuda_memory_sync(GST_CUDA_MEMORY_CAST(memory));
#else
  (void)memory;
#endif
}

gboolean
gst_cudafft_map_cuda(GstBuffer *buffer, GstMapFlags flags, GstMapInfo *info, gpointer *device_data,
                     gsize *pitch)
{
  if (gst_buffer_n_memory(buffer) != 1)
    return FALSE;
  GstMemory *memory = gst_buffer_peek_memory(buffer, 0);
  if (!gst_is_cuda_memory(memory))
    return FALSE;
  /* GST_MAP_CUDA: the device pointer, no copy (a host copy written since goes up first); writing
   * marks the host copy stale */
  if (!gst_memory_map(memory, info, flags | GST_MAP_CUDA))
    return FALSE;
  sync_memory_stream(memory);
  *device_data = info->data;
  if (pitch)
    *pitch = (gsize)GST_VIDEO_INFO_PLANE_STRIDE(&GST_CUDA_MEMORY_CAST(memory)->info, 0);
  return TRUE;
}

gboolean
gst_cudafft_map_is_cuda(const GstMapInfo *info)
{
  return (info->flags & GST_MAP_CUDA) == GST_MAP_CUDA;
}

/* Lets go of pool i (its buffers still out are freed when they come back). */
static void
drop_audio_pool(GstCudafftCudaBuffers *b, guint i)
{
  if (b->pools[i]) {
    gst_buffer_pool_set_active(b->pools[i], FALSE);
    gst_object_unref(b->pools[i]);
  }
  b->pools[i] = NULL;
  b->sizes[i] = 0;
}

void
gst_cudafft_cuda_buffers_clear(GstCudafftCudaBuffers *b)
{
  for (guint i = 0; i < GST_CUDAFFT_CUDA_BUFFER_SIZES; i++)
    drop_audio_pool(b, i);
  b->next = 0;
}

/* A new pool of `bytes`-byte CUDA buffers (RGBA, one row: see the header), active. */
static GstBufferPool *
audio_pool(GstObject *context, gsize bytes)
{
  /* GStreamer 1.22's CUDA allocator takes only its video formats (not GRAY8): four bytes a
   * "pixel" */
  if (bytes % 4 != 0 || bytes / 4 > G_MAXINT)
    return NULL;
  GstCaps *caps = gst_caps_new_simple("video/x-raw", "format", G_TYPE_STRING, "RGBA", "width",
                                      G_TYPE_INT, (gint)(bytes / 4), "height", G_TYPE_INT, 1,
                                      "framerate", GST_TYPE_FRACTION, 0, 1, NULL);
  GstBufferPool *pool = cuda_pool(context, caps, (guint)bytes, 0, 0, FALSE);
  gst_caps_unref(caps);
  if (pool && !gst_buffer_pool_set_active(pool, TRUE))
    gst_clear_object(&pool);
  return pool;
}

/* foreach_meta: drops a meta the pool did not put there. */
static gboolean
drop_unpooled_meta(GstBuffer *buffer, GstMeta **meta, gpointer unused)
{
  (void)buffer, (void)unused;
  if (!GST_META_FLAG_IS_SET(*meta, GST_META_FLAG_POOLED)) {
    GST_META_FLAG_UNSET(*meta, GST_META_FLAG_LOCKED);
    *meta = NULL;
  }
  return TRUE;
}

GstBuffer *
gst_cudafft_cuda_buffer(GstCudafftContext *c, GstCudafftCudaBuffers *b, gsize bytes)
{
  guint i = 0;
  while (i < GST_CUDAFFT_CUDA_BUFFER_SIZES && b->sizes[i] != bytes)
    i++;
  if (i == GST_CUDAFFT_CUDA_BUFFER_SIZES) {
    /* a new size: it replaces the pool made longest ago */
    i = b->next;
    b->next = (b->next + 1) % GST_CUDAFFT_CUDA_BUFFER_SIZES;
    drop_audio_pool(b, i);
    GstObject *held = gst_cudafft_context_get(c);
    if (held) {
      b->pools[i] = audio_pool(held, bytes);
      gst_object_unref(held);
    }
    if (!b->pools[i]) {
      GST_WARNING("no pool of %" G_GSIZE_FORMAT "-byte CUDA buffers (no context, or refused)",
                  bytes);
      return NULL;
    }
    b->sizes[i] = bytes;
  }
  GstBuffer *buffer = NULL;
  if (gst_buffer_pool_acquire_buffer(b->pools[i], &buffer, NULL) != GST_FLOW_OK)
    return NULL;
  /* GStreamer 1.22's CUDA pool hands a buffer back with what it carried last time (a clipping
   * meta, flags): it leaves as a new one would */
  gst_buffer_foreach_meta(buffer, drop_unpooled_meta, NULL);
  GST_BUFFER_FLAGS(buffer) &= GST_BUFFER_FLAG_TAG_MEMORY;
  /* the allocation is pitched (the row rounded up): the buffer holds exactly the bytes */
  gst_buffer_set_size(buffer, (gssize)bytes);
  if (gst_buffer_get_size(buffer) != bytes) {
    GST_WARNING("a %" G_GSIZE_FORMAT "-byte CUDA buffer could not be cut to %" G_GSIZE_FORMAT
                " bytes",
                gst_buffer_get_size(buffer), bytes);
    gst_buffer_unref(buffer);
    return NULL;
  }
  return buffer;
}

GstBuffer *
gst_cudafft_cuda_buffer_cut(GstCudafftContext *c, GstCudafftCudaBuffers *b, GstBuffer *buffer,
                            gsize offset, gsize bytes)
{
  GstBuffer *cut = gst_cudafft_cuda_buffer(c, b, bytes);
  GstObject *held = gst_cudafft_context_get(c);
  GstMapInfo from, to;
  gpointer src = NULL, dst = NULL;
  gboolean copied = FALSE;
  if (cut && held && gst_cudafft_map_cuda(buffer, GST_MAP_READ, &from, &src, NULL)) {
    if (offset + bytes <= from.size && gst_cudafft_map_cuda(cut, GST_MAP_WRITE, &to, &dst, NULL)) {
      CUDA_MEMCPY2D copy = {0};
      copy.srcMemoryType = CU_MEMORYTYPE_DEVICE;
      copy.srcDevice = (CUdeviceptr)((guint8 *)src + offset);
      copy.dstMemoryType = CU_MEMORYTYPE_DEVICE;
      copy.dstDevice = (CUdeviceptr)dst;
      copy.WidthInBytes = bytes;
      copy.Height = 1;
      GstCudaContext *context = GST_CUDA_CONTEXT(held);
      /* waited for (as GStreamer's own copies are): a device-to-device copy returns before it
       * is done, and the consumer's streams need not wait for the default one */
      if (gst_cuda_context_push(context)) {
        copied = gst_cuda_result(CuMemcpy2DAsync(&copy, NULL)) &&
                 gst_cuda_result(CuStreamSynchronize(NULL));
        gst_cuda_context_pop(NULL);
      }
      gst_memory_unmap(to.memory, &to);
    }
    gst_memory_unmap(from.memory, &from);
  }
  if (held)
    gst_object_unref(held);
  if (!copied) {
    GST_WARNING("cannot copy %" G_GSIZE_FORMAT " bytes of CUDA memory from byte %" G_GSIZE_FORMAT,
                bytes, offset);
    gst_clear_buffer(&cut);
  }
  return cut;
}
