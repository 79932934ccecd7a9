/* gstcudamatrixconvolvesofawire.c: see the header. */
#include "gstcudamatrixconvolvesofawire.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#define MAGIC "GCFSOFA1"

/* The most text a problem may have: a message naming a file. */
#define MAX_TEXT_BYTES 65536

enum { KIND_SET = 1, KIND_PROBLEM = 2 };

/* The error domains a problem may have (GQuarks are the process's own). */
enum { DOMAIN_STREAM = 1, DOMAIN_RESOURCE, DOMAIN_CORE, DOMAIN_LIBRARY };

typedef struct {
  char magic[8];
  guint32 kind;
  guint32 measurements; /* a set's */
  guint32 receivers;
  gint32 rate;
  gint32 file_rate;
  guint32 domain; /* a problem's */
  gint32 code;
  guint32 text_bytes;
  guint64 taps; /* a set's */
} Header;

void
gst_cuda_matrix_convolve_sofa_set_free(GstCudaMatrixConvolveSofaSet *set)
{
  if (!set)
    return;
  g_free(set->directions);
  g_free(set->responses);
  g_free(set);
}

/* Writing ------------------------------------------------------------------------------------ */

static gboolean
write_all(int fd, const void *data, gsize size)
{
  const guint8 *at = data;
  while (size > 0) {
    const ssize_t n = write(fd, at, size);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return FALSE;
    at += n;
    size -= (gsize)n;
  }
  return TRUE;
}

static void
header_init(Header *header, guint32 kind)
{
  memset(header, 0, sizeof *header);
  memcpy(header->magic, MAGIC, sizeof header->magic);
  header->kind = kind;
}

gboolean
gst_cuda_matrix_convolve_sofa_wire_write_set(int fd, const GstCudaMatrixConvolveSofaSet *set)
{
  Header header;
  header_init(&header, KIND_SET);
  header.measurements = set->measurements;
  header.receivers = set->receivers;
  header.taps = set->taps;
  header.rate = set->rate;
  header.file_rate = set->file_rate;
  const gsize m = set->measurements;
  return write_all(fd, &header, sizeof header) &&
         write_all(fd, set->directions, m * 3 * sizeof(gdouble)) &&
         write_all(fd, set->responses, m * set->receivers * set->taps * sizeof(gdouble));
}

gboolean
gst_cuda_matrix_convolve_sofa_wire_write_problem(int fd,
                                                 const GstCudafftResponseFileProblem *problem)
{
  Header header;
  header_init(&header, KIND_PROBLEM);
  header.domain = problem->domain == GST_RESOURCE_ERROR  ? DOMAIN_RESOURCE
                  : problem->domain == GST_CORE_ERROR    ? DOMAIN_CORE
                  : problem->domain == GST_LIBRARY_ERROR ? DOMAIN_LIBRARY
                                                         : DOMAIN_STREAM;
  header.code = problem->code;
  const gchar *text = problem->text ? problem->text : "";
  header.text_bytes = (guint32)MIN(strlen(text), MAX_TEXT_BYTES);
  return write_all(fd, &header, sizeof header) && write_all(fd, text, header.text_bytes);
}

/* Reading ------------------------------------------------------------------------------------ */

static gboolean
not_an_answer(gchar **why, gchar *text)
{
  *why = text;
  return FALSE;
}

static gboolean
read_problem(GstCudaMatrixConvolveSofaWireRead read, gpointer source, const Header *header,
             GstCudafftResponseFileProblem *problem, gchar **why)
{
  GQuark domain;
  switch (header->domain) {
  case DOMAIN_STREAM:
    domain = GST_STREAM_ERROR;
    break;
  case DOMAIN_RESOURCE:
    domain = GST_RESOURCE_ERROR;
    break;
  case DOMAIN_CORE:
    domain = GST_CORE_ERROR;
    break;
  case DOMAIN_LIBRARY:
    domain = GST_LIBRARY_ERROR;
    break;
  default:
    return not_an_answer(why, g_strdup_printf("a problem of unknown domain %u", header->domain));
  }
  if (header->text_bytes == 0 || header->text_bytes > MAX_TEXT_BYTES)
    return not_an_answer(why, g_strdup_printf("a problem of %u bytes of text", header->text_bytes));
  gchar *text = g_malloc0(header->text_bytes + 1);
  if (!read(source, text, header->text_bytes)) {
    g_free(text);
    return FALSE;
  }
  problem->domain = domain;
  problem->code = header->code;
  problem->text = text;
  problem->debug = NULL;
  return TRUE;
}

static gboolean
read_set(GstCudaMatrixConvolveSofaWireRead read, gpointer source, const Header *header,
         GstCudaMatrixConvolveSofaSet **out, gchar **why)
{
  const gsize m = header->measurements, r = header->receivers;
  if (m == 0 || r == 0 || header->taps == 0 || header->rate <= 0 || header->file_rate <= 0 ||
      header->taps > GST_CUDA_MATRIX_CONVOLVE_SOFA_MAX_VALUES / (m * r))
    return not_an_answer(why, g_strdup_printf("a set of %u measurements of %u receivers and "
                                              "%" G_GUINT64_FORMAT " taps at %d Hz (from %d Hz)",
                                              header->measurements, header->receivers, header->taps,
                                              header->rate, header->file_rate));
  const gsize taps = (gsize)header->taps;
  GstCudaMatrixConvolveSofaSet *set = g_new0(GstCudaMatrixConvolveSofaSet, 1);
  set->measurements = header->measurements;
  set->receivers = header->receivers;
  set->taps = taps;
  set->rate = header->rate;
  set->file_rate = header->file_rate;
  set->directions = g_try_new(gdouble, m * 3);
  set->responses = g_try_new(gdouble, m * r * taps);
  if (!set->directions || !set->responses) {
    gst_cuda_matrix_convolve_sofa_set_free(set);
    return not_an_answer(
        why, g_strdup_printf("no memory for a set of %" G_GSIZE_FORMAT " values", m * r * taps));
  }
  if (!read(source, set->directions, m * 3 * sizeof(gdouble)) ||
      !read(source, set->responses, m * r * taps * sizeof(gdouble))) {
    gst_cuda_matrix_convolve_sofa_set_free(set);
    return FALSE;
  }
  *out = set;
  return TRUE;
}

gboolean
gst_cuda_matrix_convolve_sofa_wire_read(GstCudaMatrixConvolveSofaWireRead read, gpointer source,
                                        GstCudaMatrixConvolveSofaSet **set,
                                        GstCudafftResponseFileProblem *problem, gchar **why)
{
  *set = NULL;
  *why = NULL;
  Header header;
  if (!read(source, &header, sizeof header))
    return FALSE;
  if (memcmp(header.magic, MAGIC, sizeof header.magic) != 0)
    return not_an_answer(why, g_strdup("it does not begin as the reader's answer does"));
  switch (header.kind) {
  case KIND_SET:
    return read_set(read, source, &header, set, why);
  case KIND_PROBLEM:
    return read_problem(read, source, &header, problem, why);
  default:
    return not_an_answer(why, g_strdup_printf("an answer of unknown kind %u", header.kind));
  }
}
