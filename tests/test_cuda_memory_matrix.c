/* test_cuda_memory_matrix.c: cudamatrixconvolve in CUDA memory (memory:CUDAMemory;
 * plugin/cuda/gstcudafftcudamemory.h) between our elements, on the backend named by argv[1].
 * GStreamer's cudaupload and cudadownload take video only: the audio reaches the matrix in CUDA
 * memory from cudaconvolve, and leaves it into cudaconvolve or an appsink that asks for CUDA
 * memory.
 *
 * cuda:
 * - cudaconvolve with its default kernel (a delta: the input exactly) ! cudamatrixconvolve (2 x 3,
 *   an empty entry) ! appsink, both of the matrix's links in CUDA memory, at block sizes 2048, 64
 *   and 0: every output sample, the tail's too, against the double-precision direct matrix
 *   convolution (matrix_element_util.h), the stamps those of the run, every buffer CUDA memory; and
 *   byte for byte the same pipeline's with both links in system memory;
 * - cudaconvolve ! cudamatrixconvolve ! cudaconvolve (a random kernel), with the matrix's input,
 *   output, both or neither in CUDA memory and the chain's output into the appsink in CUDA memory
 *   or not: byte for byte the all-system-memory chain's; into the matrix in CUDA memory
 *   cudaconvolve pushes before its device work is done (the matrix's work is ordered after the
 *   buffer's fence), and the matrix never does (its output is complete when its engine's push
 *   returns, cudafft/matrix.h);
 * - EOS, flushes and state cycles (READY and NULL) while CUDA memory flows through the matrix:
 *   every cycle's samples byte for byte the chain's in system memory.
 * cpu (CI, no GPU needed): the pad templates offer memory:CUDAMemory on both pads, as every audio
 * filter's; backend=cpu refuses a link to CUDA-memory-only caps on either side, naming them; the
 * state cycles in system memory.
 * (CUDA memory of a context not the element's: test_cuda_memory_audio.c, with the others.) */
#include "cuda_memory_util.h"
#include "matrix_element_util.h"

#include <math.h>
#include <string.h>

#define INPUTS CM_CHANNELS
#define OUTPUTS 3
#define TAPS 500

/* The matrix of every test: 2 x 3 random responses of TAPS taps, entry (1, 1) empty. */
static double *
test_matrix(void)
{
  TestRng rng = test_rng("cudamatrixconvolve in CUDA memory: responses");
  return mx_random_responses(&rng, INPUTS * OUTPUTS, TAPS, (guint64)1 << (1 * OUTPUTS + 1));
}

/* appsrc ! MIDDLE ! appsink for s, where MIDDLE's cudamatrixconvolve is named mx (it gets the
 * matrix h) and its cudaconvolve elements, where present, cv0 and cv1 (those get `kernel`, where
 * given); the caps of mx's input and output go into *in_link and *out_link (NULL: not kept), and
 * the buffers cv0 and mx push before their device work is done are counted into *cv0_fenced and
 * *mx_fenced (NULL: not counted). */
static GstElement *
matrix_pipeline(const TestSignal *s, const char *middle, const double *h, const double *kernel,
                gsize n, GstCaps **in_link, GstCaps **out_link, gint *cv0_fenced, gint *mx_fenced)
{
  GstElement *pipeline = audio_pipeline(s, middle);
  GstElement *mx = gst_bin_get_by_name(GST_BIN(pipeline), "mx");
  fail_unless(mx != NULL, "%s: no element mx", middle);
  mx_set_matrix(mx, h, INPUTS * OUTPUTS, TAPS, NULL);
  const struct {
    const char *pad;
    GstCaps **caps;
  } links[] = {{"sink", in_link}, {"src", out_link}};
  for (guint i = 0; i < G_N_ELEMENTS(links); i++)
    if (links[i].caps) {
      GstPad *pad = gst_element_get_static_pad(mx, links[i].pad);
      gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM, keep_caps, links[i].caps, NULL);
      gst_object_unref(pad);
    }
  gst_object_unref(mx);
  for (guint i = 0; kernel && i < 2; i++) {
    gchar *name = g_strdup_printf("cv%u", i);
    GstElement *cv = gst_bin_get_by_name(GST_BIN(pipeline), name);
    g_free(name);
    if (cv)
      eu_set_kernel(cv, kernel, n);
    gst_clear_object(&cv);
  }
  if (cv0_fenced)
    watch_fences(pipeline, "cv0", cv0_fenced);
  if (mx_fenced)
    watch_fences(pipeline, "mx", mx_fenced);
  return pipeline;
}

/* Runs matrix_pipeline() over s to EOS, its samples into out. */
static void
run_matrix(const TestSignal *s, const char *middle, const double *h, const double *kernel, gsize n,
           GPtrArray *out, GstCaps **in_link, GstCaps **out_link, gint *cv0_fenced, gint *mx_fenced)
{
  GstElement *pipeline =
      matrix_pipeline(s, middle, h, kernel, n, in_link, out_link, cv0_fenced, mx_fenced);
  play_to_eos(pipeline, s, out);
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(pipeline);
}

/* Whether caps were kept and carry CUDA memory as `cuda` says. */
static gboolean
link_is(GstCaps *caps, gboolean cuda)
{
  return caps && caps_have_cuda_memory(caps) == cuda;
}

/* Both of the matrix's links in CUDA memory, its input the signal exactly (cudaconvolve's default
 * kernel is a delta, its direct path gives the input back exactly): every output sample against the
 * double-precision matrix convolution, at each block size; then the same with both links in
 * system memory, byte for byte. */
GST_START_TEST(test_matrix_in_cuda_memory)
{
  TestSignal s;
  random_signal(&s, "cudamatrixconvolve in CUDA memory");
  double *h = test_matrix();
  const guint block_sizes[] = {2048, 64, 0};
  for (guint b = 0; b < G_N_ELEMENTS(block_sizes); b++) {
    gchar *cuda = g_strdup_printf("cudaconvolve ! cudamatrixconvolve name=mx block-size=%u ! "
                                  "audio/x-raw(memory:CUDAMemory)",
                                  block_sizes[b]);
    gchar *system = g_strdup_printf("cudaconvolve ! audio/x-raw ! cudamatrixconvolve name=mx "
                                    "block-size=%u ! audio/x-raw",
                                    block_sizes[b]);
    GPtrArray *got = frame_list(), *want = frame_list();
    GstCaps *in_link = NULL, *out_link = NULL;
    gint fenced = 0;
    run_matrix(&s, cuda, h, NULL, 0, got, &in_link, &out_link, NULL, &fenced);
    fail_unless(link_is(in_link, TRUE) && link_is(out_link, TRUE),
                "%s: linked in %" GST_PTR_FORMAT " and out %" GST_PTR_FORMAT, cuda, in_link,
                out_link);
    fail_unless_equals_int(count_cuda_memory(got), got->len);
    fail_unless_equals_int(fenced, 0);
    GPtrArray *buffers = eu_buffer_list();
    for (guint i = 0; i < got->len; i++)
      g_ptr_array_add(buffers, gst_buffer_ref(gst_sample_get_buffer(g_ptr_array_index(got, i))));
    gsize frames = 0;
    double *values = mx_read_run(buffers, CUDAFFT_SAMPLE_F32, OUTPUTS, CM_RATE, 0, &frames, cuda);
    mx_check_with_tail(values, frames, h, TAPS, &s, OUTPUTS, cuda);
    test_check(TRUE,
               "%s: %u buffers of CUDA memory in and out, %" G_GSIZE_FORMAT " frames x %d outputs "
               "(the tail's too) against the double-precision matrix convolution",
               cuda, got->len, frames, OUTPUTS);
    g_free(values);
    g_ptr_array_unref(buffers);
    gst_clear_caps(&in_link);
    gst_clear_caps(&out_link);
    run_matrix(&s, system, h, NULL, 0, want, &in_link, &out_link, NULL, NULL);
    fail_unless(link_is(in_link, FALSE) && link_is(out_link, FALSE));
    check_same_buffers(got, want, cuda);
    gst_clear_caps(&in_link);
    gst_clear_caps(&out_link);
    g_ptr_array_unref(got);
    g_ptr_array_unref(want);
    g_free(cuda);
    g_free(system);
  }
  g_free(h);
  test_signal_clear(&s);
}
GST_END_TEST;

/* A chain of cudaconvolve ! cudamatrixconvolve ! cudaconvolve: the matrix's block size, its
 * input and output links in CUDA memory or not, and the chain's output. */
typedef struct {
  const char *middle;
  guint block;
  gboolean in_cuda, out_cuda, sink_cuda;
} Chain;

/* The chain with the matrix's block size and every link in system memory. */
static void
run_system_chain(const TestSignal *s, guint block, const double *h, const double *kernel, gsize n,
                 GPtrArray *out)
{
  gchar *middle =
      g_strdup_printf("cudaconvolve name=cv0 ! audio/x-raw ! cudamatrixconvolve name=mx "
                      "block-size=%u ! audio/x-raw ! cudaconvolve name=cv1 "
                      "latency=100 ! audio/x-raw",
                      block);
  GstCaps *in_link = NULL, *out_link = NULL;
  run_matrix(s, middle, h, kernel, n, out, &in_link, &out_link, NULL, NULL);
  fail_unless(link_is(in_link, FALSE) && link_is(out_link, FALSE), "%s: linked in CUDA memory",
              middle);
  gst_clear_caps(&in_link);
  gst_clear_caps(&out_link);
  g_free(middle);
}

/* cudaconvolve ! cudamatrixconvolve ! cudaconvolve with each of the matrix's links in CUDA memory
 * or in system memory, the output into the appsink in either: byte for byte the chain whose links
 * are all system memory (the same kernels run on the same samples), timestamps too. cv1 drops its
 * first 100 samples (latency=100), so that its output buffers start inside their memory. */
GST_START_TEST(test_matrix_cuda_links)
{
  TestSignal s;
  random_signal(&s, "cudamatrixconvolve between filters in CUDA memory");
  double *h = test_matrix();
  TestRng rng = test_rng("cudamatrixconvolve chain kernel");
  enum { KERNEL = 3000 };
  double *kernel = g_new(double, KERNEL);
  for (gsize k = 0; k < KERNEL; k++)
    kernel[k] = (test_rng_uniform53(&rng) - 0.5) * 0.1 * exp(-4.0 * (double)k / KERNEL);
  const Chain chains[] = {
      {"cudaconvolve name=cv0 ! cudamatrixconvolve name=mx block-size=256 ! cudaconvolve name=cv1 "
       "latency=100",
       256, TRUE, TRUE, FALSE},
      {"cudaconvolve name=cv0 ! cudamatrixconvolve name=mx block-size=256 ! cudaconvolve name=cv1 "
       "latency=100 ! audio/x-raw(memory:CUDAMemory)",
       256, TRUE, TRUE, TRUE},
      {"cudaconvolve name=cv0 ! audio/x-raw(memory:CUDAMemory) ! cudamatrixconvolve name=mx "
       "block-size=256 ! audio/x-raw ! cudaconvolve name=cv1 latency=100",
       256, TRUE, FALSE, FALSE},
      {"cudaconvolve name=cv0 ! audio/x-raw ! cudamatrixconvolve name=mx block-size=256 ! "
       "audio/x-raw(memory:CUDAMemory) ! cudaconvolve name=cv1 latency=100 ! audio/x-raw",
       256, FALSE, TRUE, FALSE},
      {"cudaconvolve name=cv0 ! cudamatrixconvolve name=mx block-size=0 ! cudaconvolve name=cv1 "
       "latency=100 ! audio/x-raw(memory:CUDAMemory)",
       0, TRUE, TRUE, TRUE},
  };
  GPtrArray *want[2] = {frame_list(), frame_list()}; /* block sizes 256 and 0 */
  run_system_chain(&s, 256, h, kernel, KERNEL, want[0]);
  run_system_chain(&s, 0, h, kernel, KERNEL, want[1]);
  for (guint i = 0; i < G_N_ELEMENTS(chains); i++) {
    GPtrArray *got = frame_list();
    GstCaps *in_link = NULL, *out_link = NULL;
    gint cv0_fenced = 0, mx_fenced = 0;
    run_matrix(&s, chains[i].middle, h, kernel, KERNEL, got, &in_link, &out_link, &cv0_fenced,
               &mx_fenced);
    fail_unless(link_is(in_link, chains[i].in_cuda) && link_is(out_link, chains[i].out_cuda),
                "%s: linked in %" GST_PTR_FORMAT " and out %" GST_PTR_FORMAT, chains[i].middle,
                in_link, out_link);
    /* into the matrix in CUDA memory, cv0 pushes before its device work is done; the matrix's
     * output is always complete */
    fail_unless((cv0_fenced > 0) == chains[i].in_cuda && mx_fenced == 0,
                "%s: %d of cv0's buffers and %d of the matrix's pushed before their device work",
                chains[i].middle, cv0_fenced, mx_fenced);
    fail_unless_equals_int(count_cuda_memory(got), chains[i].sink_cuda ? got->len : 0);
    test_check(TRUE, "%s: %d of cv0's buffers went on into the matrix before their device work",
               chains[i].middle, cv0_fenced);
    check_same_buffers(got, want[chains[i].block ? 0 : 1], chains[i].middle);
    gst_clear_caps(&in_link);
    gst_clear_caps(&out_link);
    g_ptr_array_unref(got);
  }
  g_ptr_array_unref(want[0]);
  g_ptr_array_unref(want[1]);
  g_free(kernel);
  g_free(h);
  test_signal_clear(&s);
}
GST_END_TEST;

/* EOS, a flush and state cycles (READY and NULL) while CUDA memory flows through
 * cudaconvolve ! cudamatrixconvolve ! cudaconvolve: every cycle's samples byte for byte those of
 * the chain in system memory, read after the state change (they outlive it). On the CPU the same
 * cycles in system memory. */
GST_START_TEST(test_cycles_through_the_matrix)
{
  TestSignal s;
  random_signal(&s, "cudamatrixconvolve in CUDA memory through state cycles");
  double *h = test_matrix();
  const double kernel[] = {0.7, -0.3, 0.2, 0.05};
  const gboolean cpu = !strcmp(eu_backend, "cpu");
  const char *const b = eu_backend;
  /* the reference on the same backend (the two backends' samples differ by rounding) */
  gchar *reference = g_strdup_printf("cudaconvolve name=cv0 backend=%s ! audio/x-raw ! "
                                     "cudamatrixconvolve name=mx backend=%s block-size=128 ! "
                                     "audio/x-raw ! cudaconvolve name=cv1 backend=%s ! audio/x-raw",
                                     b, b, b);
  GPtrArray *system = frame_list();
  run_matrix(&s, reference, h, kernel, G_N_ELEMENTS(kernel), system, NULL, NULL, NULL, NULL);
  g_free(reference);
  gchar *middle = g_strdup_printf("cudaconvolve name=cv0 backend=%s ! cudamatrixconvolve name=mx "
                                  "backend=%s block-size=128 ! cudaconvolve name=cv1 backend=%s ! "
                                  "%s",
                                  b, b, b, cpu ? "audio/x-raw" : "audio/x-raw(memory:CUDAMemory)");
  GstCaps *in_link = NULL, *out_link = NULL;
  gint cv0_fenced = 0;
  GstElement *pipeline = matrix_pipeline(&s, middle, h, kernel, G_N_ELEMENTS(kernel), &in_link,
                                         &out_link, &cv0_fenced, NULL);
  for (guint cycle = 0; cycle < 4; cycle++) {
    GPtrArray *got = frame_list();
    play_cycle(pipeline, &s, cycle, got);
    fail_unless_equals_int(count_cuda_memory(got), cpu ? 0 : got->len);
    check_same_buffers(got, system, "a state cycle's samples");
    g_ptr_array_unref(got);
  }
  fail_unless(link_is(in_link, !cpu) && link_is(out_link, !cpu),
              "the matrix linked in %" GST_PTR_FORMAT " and out %" GST_PTR_FORMAT, in_link,
              out_link);
  fail_unless(cpu ? cv0_fenced == 0 : cv0_fenced > 0,
              "%d of cv0's buffers went into the matrix before their work", cv0_fenced);
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(pipeline);
  gst_clear_caps(&in_link);
  gst_clear_caps(&out_link);
  g_free(middle);
  g_ptr_array_unref(system);
  g_free(h);
  test_signal_clear(&s);
}
GST_END_TEST;

/* ---- CPU ---- */

/* Both pad templates offer the audio in system memory and in CUDA memory, as every audio filter's
 * (what gst-inspect-1.0 shows). */
GST_START_TEST(test_templates_offer_cuda_memory)
{
  GstElementFactory *factory = gst_element_factory_find("cudamatrixconvolve");
  fail_unless(factory != NULL);
  guint offered = 0;
  for (const GList *l = gst_element_factory_get_static_pad_templates(factory); l; l = l->next) {
    GstStaticPadTemplate *templ = l->data;
    GstCaps *caps = gst_static_caps_get(&templ->static_caps);
    gboolean system = FALSE, cuda = FALSE;
    for (guint i = 0; i < gst_caps_get_size(caps); i++) {
      GstCapsFeatures *features = gst_caps_get_features(caps, i);
      if (features && gst_caps_features_contains(features, "memory:CUDAMemory"))
        cuda = TRUE;
      else
        system = TRUE;
    }
    fail_unless(system && cuda, "the %s template: %" GST_PTR_FORMAT, templ->name_template, caps);
    offered++;
    gst_caps_unref(caps);
  }
  fail_unless_equals_int(offered, 2);
  test_check(TRUE, "cudamatrixconvolve's sink and src templates offer system and CUDA memory");
  gst_object_unref(factory);
}
GST_END_TEST;

/* backend=cpu never gives CUDA memory. Downstream: the link is made (as gst-launch-1.0 makes it,
 * before the start) and the start fails with one ERROR in the whole pipeline, the element's,
 * naming the caps, the element and why, as every audio filter's (test_cuda_memory_audio.c).
 * Upstream offering CUDA memory alone: the link is refused where it is made, naming the caps. */
GST_START_TEST(test_cpu_refuses_cuda_memory)
{
  const char *const words[] = {"memory:CUDAMemory", "cudamatrixconvolve", "backend=cpu", NULL};
  eu_check_one_error("audiotestsrc num-buffers=20 ! audio/x-raw,format=F32LE,channels=2 ! "
                     "cudamatrixconvolve name=e backend=cpu matrix=\"<<1.0>, <0.5>>\" ! "
                     "audio/x-raw(memory:CUDAMemory) ! fakesink",
                     2, words);
  test_check(TRUE, "cudamatrixconvolve backend=cpu to CUDA-memory-only caps: one ERROR saying why");
  const char *upstream =
      "appsrc ! audio/x-raw(memory:CUDAMemory),format=F32LE,channels=2,rate=48000,"
      "layout=interleaved ! cudamatrixconvolve backend=cpu matrix=\"<<1.0>, "
      "<0.5>>\" ! fakesink";
  GError *error = NULL;
  GstElement *pipeline = gst_parse_launch(upstream, &error);
  fail_unless(error && strstr(error->message, "memory:CUDAMemory"),
              "%s: linked to CUDA-memory-only caps (%s)", upstream,
              error ? error->message : "no error");
  test_check(TRUE,
             "cudamatrixconvolve backend=cpu will not link to CUDA-memory-only caps "
             "upstream: %s",
             error->message);
  g_clear_error(&error);
  gst_clear_object(&pipeline);
}
GST_END_TEST;

static Suite *
cuda_memory_matrix_suite(void)
{
  TCase *tc;
  Suite *suite = eu_suite("cuda-memory-matrix", &tc);
  tcase_add_test(tc, test_templates_offer_cuda_memory);
  tcase_add_test(tc, test_cycles_through_the_matrix);
  if (!strcmp(eu_backend, "cpu")) {
    tcase_add_test(tc, test_cpu_refuses_cuda_memory);
    return suite;
  }
  tcase_add_test(tc, test_matrix_in_cuda_memory);
  tcase_add_test(tc, test_matrix_cuda_links);
  return suite;
}

EU_MAIN(cuda_memory_matrix_suite)
