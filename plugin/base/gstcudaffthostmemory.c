/* gstcudaffthostmemory.c: see the header. */
#include "gstcudaffthostmemory.h"

#include <cudafft/common.h>

typedef struct {
  GstMemory mem;
  guint8 *data; /* of the allocation (shared memories point into their parent's) */
  int pinned;
} GstCudafftHostMemory;

struct _GstCudafftHostAllocator {
  GstAllocator parent;
  gboolean pinned;
};

G_DEFINE_TYPE(GstCudafftHostAllocator, gst_cudafft_host_allocator, GST_TYPE_ALLOCATOR);

static GstMemory *
host_alloc(GstAllocator *allocator, gsize size, GstAllocationParams *params)
{
  GstCudafftHostAllocator *self = GST_CUDAFFT_HOST_ALLOCATOR(allocator);
  const gsize maxsize = size + params->prefix + params->padding;
  /* both kinds are at least 64-byte aligned (pinned memory is page aligned) */
  if (params->align >= 64) {
    GST_WARNING_OBJECT(self, "alignment %zu is more than this allocator gives", params->align + 1);
    return NULL;
  }
  int pinned = 0;
  guint8 *data = cudafft_pinned_alloc(maxsize, self->pinned, &pinned);
  if (!data)
    return NULL;
  GstCudafftHostMemory *mem = g_new0(GstCudafftHostMemory, 1);
  gst_memory_init(GST_MEMORY_CAST(mem), params->flags, allocator, NULL, maxsize, 63, params->prefix,
                  size);
  mem->data = data;
  mem->pinned = pinned;
  return GST_MEMORY_CAST(mem);
}

static void
host_free(GstAllocator *allocator, GstMemory *memory)
{
  (void)allocator;
  GstCudafftHostMemory *mem = (GstCudafftHostMemory *)memory;
  if (!memory->parent)
    cudafft_pinned_free(mem->data, mem->pinned);
  g_free(mem);
}

static gpointer
host_map(GstMemory *memory, gsize maxsize, GstMapFlags flags)
{
  (void)maxsize;
  (void)flags;
  return ((GstCudafftHostMemory *)memory)->data;
}

static void
host_unmap(GstMemory *memory)
{
  (void)memory;
}

static GstMemory *
host_share(GstMemory *memory, gssize offset, gssize size)
{
  GstCudafftHostMemory *parent = (GstCudafftHostMemory *)memory;
  GstMemory *root = memory->parent ? memory->parent : memory;
  if (size == -1)
    size = memory->size - offset;
  GstCudafftHostMemory *sub = g_new0(GstCudafftHostMemory, 1);
  gst_memory_init(
      GST_MEMORY_CAST(sub), GST_MINI_OBJECT_FLAGS(root) | GST_MINI_OBJECT_FLAG_LOCK_READONLY,
      memory->allocator, root, memory->maxsize, memory->align, memory->offset + offset, size);
  sub->data = parent->data;
  sub->pinned = parent->pinned;
  return GST_MEMORY_CAST(sub);
}

static void
gst_cudafft_host_allocator_class_init(GstCudafftHostAllocatorClass *klass)
{
  GstAllocatorClass *allocator_class = GST_ALLOCATOR_CLASS(klass);
  allocator_class->alloc = host_alloc;
  allocator_class->free = host_free;
}

static void
gst_cudafft_host_allocator_init(GstCudafftHostAllocator *self)
{
  GstAllocator *allocator = GST_ALLOCATOR(self);
  allocator->mem_type = GST_CUDAFFT_HOST_MEMORY_TYPE;
  allocator->mem_map = host_map;
  allocator->mem_unmap = host_unmap;
  allocator->mem_share = host_share;
  GST_OBJECT_FLAG_SET(self, GST_ALLOCATOR_FLAG_CUSTOM_ALLOC);
}

GstAllocator *
gst_cudafft_host_allocator_new(gboolean pinned)
{
  GstCudafftHostAllocator *self = g_object_new(GST_TYPE_CUDAFFT_HOST_ALLOCATOR, NULL);
  gst_object_ref_sink(self);
  self->pinned = pinned;
  return GST_ALLOCATOR(self);
}

void
gst_cudafft_host_allocator_propose(GstAllocator **allocator, GstQuery *query)
{
  if (!*allocator)
    *allocator = gst_cudafft_host_allocator_new(TRUE);
  gst_query_add_allocation_param(query, *allocator, NULL);
}

GstBufferPool *
gst_cudafft_host_pool_new(gboolean pinned, GstCaps *caps, guint size)
{
  GstAllocator *allocator = gst_cudafft_host_allocator_new(pinned);
  GstBufferPool *pool = gst_buffer_pool_new();
  GstStructure *config = gst_buffer_pool_get_config(pool);
  gst_buffer_pool_config_set_params(config, caps, size, 0, 0);
  gst_buffer_pool_config_set_allocator(config, allocator, NULL);
  gboolean ok = gst_buffer_pool_set_config(pool, config) && gst_buffer_pool_set_active(pool, TRUE);
  gst_object_unref(allocator);
  if (!ok) {
    gst_object_unref(pool);
    return NULL;
  }
  return pool;
}

void
gst_cudafft_output_pool_clear(GstCudafftOutputPool *pool)
{
  if (pool->pool) {
    gst_buffer_pool_set_active(pool->pool, FALSE);
    gst_object_unref(pool->pool);
  }
  pool->pool = NULL;
  pool->size = 0;
}

/* Plain memory, or NULL when there is none: gst_buffer_new_allocate() would abort the process. */
static GstBuffer *
try_plain_buffer(gsize bytes)
{
  gpointer data = g_try_malloc(MAX(bytes, 1));
  if (!data)
    return NULL;
  return gst_buffer_new_wrapped_full(0, data, bytes, 0, bytes, data, g_free);
}

GstBuffer *
gst_cudafft_output_pool_acquire(GstCudafftOutputPool *pool, GstPad *srcpad, gboolean pinned,
                                gsize bytes, gsize spare)
{
  /* a pool's buffer size is a guint: larger buffers come without one */
  const gboolean poolable = bytes <= G_MAXUINT - MIN(spare, G_MAXUINT);
  if (poolable && (!pool->pool || pool->size < bytes)) {
    gst_cudafft_output_pool_clear(pool);
    const gsize size = bytes + spare;
    GstCaps *caps = gst_pad_get_current_caps(srcpad);
    pool->pool = gst_cudafft_host_pool_new(pinned, caps, (guint)size);
    if (caps)
      gst_caps_unref(caps);
    pool->size = pool->pool ? size : 0;
  }
  GstBuffer *buffer = NULL;
  if (poolable && pool->pool &&
      gst_buffer_pool_acquire_buffer(pool->pool, &buffer, NULL) == GST_FLOW_OK) {
    gst_buffer_set_size(buffer, bytes);
    return buffer;
  }
  GST_DEBUG_OBJECT(srcpad, "no pooled buffer of %zu bytes; allocating one", bytes);
  return try_plain_buffer(bytes);
}
