/* test_cuda_memory_audio.c: audio and frames in CUDA memory between our elements
 * (memory:CUDAMemory; plugin/cuda/gstcudafftcudamemory.h), on the backend named by argv[1].
 *
 * cuda:
 * - cudafft's frames in CUDA memory into an appsink, and cudafft ! cudaifft, which agree on CUDA
 *   memory between them by themselves: byte for byte the system-memory path's, timestamps too;
 * - cudaconvolve ! cudaconvolve with the link in CUDA memory, in system memory, and the output in
 *   CUDA memory (mixed chains), the second filter dropping its first samples (latency=100): every
 *   chain byte for byte the all-system-memory chain's;
 * - cudaconvolve ! cudaspectrum linked in CUDA memory by themselves: the spectrum's magnitudes bit
 *   for bit those of the system-memory link, the audio passed through byte for byte;
 * - cudaconvolve ! cudafft ! cudaifft ! cudaconvolve, every link in CUDA memory (cudafft reading
 *   and cudaifft writing raw audio there), in system memory, and mixed: byte for byte alike; and
 *   cudaifft's samples alone in CUDA memory, its padding cut on the device;
 * - cudamelspectrogram's tensors in CUDA memory (a tensor a frame, windows cut from one finish on
 *   the device, float16) and fed in CUDA memory by cudaconvolve: byte for byte the system-memory
 *   path's;
 * - EOS, a flush and state cycles while CUDA memory flows through that chain; the samples read
 *   after the state change (they outlive it);
 * - between two of ours in CUDA memory (directly or through a capsfilter) the producer pushes
 *   before its device work is done (the buffer carries its fence), and never else: counted on
 *   cv0's, cudafft's and cudaifft's output in every chain above.
 * - CUDA memory of a context not the element's (GStreamer's allocator's in a GstCudaContext made
 *   apart, on device 0 and on device 1 where there is one) into cudafft, cudaconvolve,
 *   cudamatrixconvolve, cudaspectrum and cudaifft: read as system memory, never handed to a
 *   kernel, the output byte for byte system memory's (cudamatrixconvolve between our elements:
 *   test_cuda_memory_matrix.c). cpu (CI, no GPU needed): cudafft, cudaconvolve, cudaspectrum,
 *   cudaifft and cudamelspectrogram with backend=cpu (and auto without a usable GPU) linked to
 *   CUDA-memory-only caps fail at the start with one ERROR saying why; the state cycles in system
 *   memory. */
#define GST_USE_UNSTABLE_API /* gst/cuda is unstable API in 1.22 */
#include "cuda_memory_util.h"

#include <cudafft/common.h>

#include <gst/app/gstappsink.h>
#include <gst/app/gstappsrc.h>
#include <gst/cuda/gstcudacontext.h>
#include <gst/cuda/gstcudaloader.h>
#include <gst/cuda/gstcudamemory.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* ---- audio: cudafft's frames and cudaifft's input ---- */

#define FFT "cudafft fft-size=1024 hop=256"

GST_START_TEST(test_fft_frames_in_cuda_memory)
{
  TestSignal s;
  random_signal(&s, "cudafft frames in CUDA memory");
  GPtrArray *system = frame_list(), *cuda = frame_list(), *any = frame_list();
  run_audio(&s, FFT " ! audio/x-fft", system);
  run_audio(&s, FFT " ! audio/x-fft(memory:CUDAMemory)", cuda);
  guint in_cuda = 0;
  for (guint i = 0; i < cuda->len; i++) {
    GstSample *sample = g_ptr_array_index(cuda, i);
    in_cuda += is_cuda_memory(gst_sample_get_buffer(sample)) &&
               caps_have_cuda_memory(gst_sample_get_caps(sample));
  }
  fail_unless_equals_int(in_cuda, cuda->len);
  test_check(TRUE,
             "every cudafft buffer is GstCudaMemory under audio/x-fft(memory:CUDAMemory) "
             "(%u)",
             in_cuda);
  check_same_buffers(cuda, system, "cudafft frames in CUDA memory into appsink");
  /* a sink that takes anything keeps system memory */
  run_audio(&s, FFT, any);
  fail_unless(any->len > 0 &&
                  !caps_have_cuda_memory(gst_sample_get_caps(g_ptr_array_index(any, 0))),
              "cudafft gave an appsink that takes anything CUDA memory");
  g_ptr_array_unref(any);
  g_ptr_array_unref(cuda);
  g_ptr_array_unref(system);
  test_signal_clear(&s);
}
GST_END_TEST;

GST_START_TEST(test_fft_ifft_cuda_link)
{
  TestSignal s;
  random_signal(&s, "cudafft ! cudaifft in CUDA memory");
  GPtrArray *system = frame_list(), *cuda = frame_list();
  run_audio(&s, FFT " ! audio/x-fft ! cudaifft", system);
  /* nothing asked: the two agree on CUDA memory between them */
  GstElement *pipeline = audio_pipeline(&s, FFT " name=fft ! cudaifft");
  GstElement *fft = gst_bin_get_by_name(GST_BIN(pipeline), "fft");
  GstPad *fft_src = gst_element_get_static_pad(fft, "src");
  GstCaps *link = NULL;
  gint fenced = 0;
  gst_pad_add_probe(fft_src, GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM, keep_caps, &link, NULL);
  watch_fences(pipeline, "fft", &fenced);
  play_to_eos(pipeline, &s, cuda);
  gst_element_set_state(pipeline, GST_STATE_NULL);
  fail_unless(link && caps_have_cuda_memory(link), "cudafft ! cudaifft linked in %" GST_PTR_FORMAT,
              link);
  fail_unless(fenced > 0, "cudafft waited for the device before every push into cudaifft");
  test_check(TRUE,
             "cudafft ! cudaifft agree on CUDA memory between them; %d buffers of frames went on "
             "before their device work was done",
             fenced);
  gst_caps_unref(link);
  gst_object_unref(fft_src);
  gst_object_unref(fft);
  gst_object_unref(pipeline);
  check_same_buffers(cuda, system, "cudafft ! cudaifft through CUDA memory");
  g_ptr_array_unref(cuda);
  g_ptr_array_unref(system);
  test_signal_clear(&s);
}
GST_END_TEST;

/* ---- audio: cudaconvolve both ways ---- */

/* Bus sync handler: every float of the "spectrum" messages' magnitudes appended to the GArray
 * (under the array's lock: the messages come from the streaming and message threads), in order
 * (one analyser posts them in order); the messages dropped. The handler collects before anything
 * pops: popping an ERROR later discards the messages before it. */
typedef struct {
  GMutex lock;
  GArray *values;
} Magnitudes;

/* Appends the floats of v to values: a float, or a list or array of them (spectrum's magnitude
 * is a list of floats, or with multi-channel an array of such lists, one per channel). */
static void
append_floats(GArray *values, const GValue *v)
{
  if (GST_VALUE_HOLDS_ARRAY(v)) {
    for (guint i = 0; i < gst_value_array_get_size(v); i++)
      append_floats(values, gst_value_array_get_value(v, i));
  } else if (GST_VALUE_HOLDS_LIST(v)) {
    for (guint i = 0; i < gst_value_list_get_size(v); i++)
      append_floats(values, gst_value_list_get_value(v, i));
  } else {
    const gfloat f = G_VALUE_HOLDS_FLOAT(v) ? g_value_get_float(v) : NAN;
    g_array_append_val(values, f);
  }
}

static GstBusSyncReply
keep_magnitudes(GstBus *bus, GstMessage *msg, gpointer data)
{
  (void)bus;
  Magnitudes *m = data;
  if (GST_MESSAGE_TYPE(msg) != GST_MESSAGE_ELEMENT || !gst_message_has_name(msg, "spectrum"))
    return GST_BUS_PASS;
  const GValue *magnitude = gst_structure_get_value(gst_message_get_structure(msg), "magnitude");
  g_mutex_lock(&m->lock);
  if (magnitude)
    append_floats(m->values, magnitude);
  g_mutex_unlock(&m->lock);
  gst_message_unref(msg);
  return GST_BUS_DROP;
}

/* The buffers pushed before their device work was done, counted on the output of cv0 and, where
 * the chain has one, of the cudaifft named ifft. */
typedef struct {
  gint cv0, ifft;
} Fenced;

/* appsrc ! MIDDLE ! appsink for s, where MIDDLE's cudaconvolve elements are named cv0, cv1 (those
 * present get the kernel); the caps of cv0's output go into *link (NULL: not kept), and the
 * buffers pushed before their device work is done are counted into *fenced (NULL: not counted). */
static GstElement *
convolve_pipeline(const TestSignal *s, const char *middle, const double *taps, gsize n,
                  GstCaps **link, Fenced *fenced)
{
  GstElement *pipeline = audio_pipeline(s, middle);
  for (guint i = 0; i < 2; i++) {
    gchar *name = g_strdup_printf("cv%u", i);
    GstElement *cv = gst_bin_get_by_name(GST_BIN(pipeline), name);
    g_free(name);
    if (!cv)
      continue;
    eu_set_kernel(cv, taps, n);
    if (i == 0 && link) {
      GstPad *pad = gst_element_get_static_pad(cv, "src");
      gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM, keep_caps, link, NULL);
      gst_object_unref(pad);
    }
    gst_object_unref(cv);
  }
  if (fenced) {
    watch_fences(pipeline, "cv0", &fenced->cv0);
    GstElement *ifft = gst_bin_get_by_name(GST_BIN(pipeline), "ifft");
    if (ifft)
      watch_fences(pipeline, "ifft", &fenced->ifft);
    gst_clear_object(&ifft);
  }
  return pipeline;
}

/* Runs convolve_pipeline() over s to EOS: the buffers into out, the caps of cv0's output into
 * *link, its buffers pushed before their device work was done counted into *fenced, and where
 * `magnitudes` is given the spectrum messages' magnitudes into it. */
static void
run_convolve(const TestSignal *s, const char *middle, const double *taps, gsize n, GPtrArray *out,
             GstCaps **link, Fenced *fenced, GArray **magnitudes)
{
  GstElement *pipeline = convolve_pipeline(s, middle, taps, n, link, fenced);
  Magnitudes kept;
  g_mutex_init(&kept.lock);
  kept.values = g_array_new(FALSE, FALSE, sizeof(gfloat));
  GstBus *bus = gst_element_get_bus(pipeline);
  if (magnitudes)
    gst_bus_set_sync_handler(bus, keep_magnitudes, &kept, NULL);
  play_to_eos(pipeline, s, out);
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_bus_set_sync_handler(bus, NULL, NULL, NULL);
  gst_object_unref(bus);
  if (magnitudes)
    *magnitudes = g_array_ref(kept.values);
  g_array_unref(kept.values);
  g_mutex_clear(&kept.lock);
  gst_object_unref(pipeline);
}

/* A chain for run_convolve, where its first link and its output should be CUDA memory, and
 * (checked where the chain has a cudaifft named ifft) whether its output goes into one of ours in
 * CUDA memory. */
typedef struct {
  const char *middle;
  gboolean link_cuda, out_cuda, ifft_into_ours;
} Chain;

/* Runs each chain over s with the kernel taps: its first link and its output where the chain
 * says, its samples byte for byte want's. */
static void
check_chains(const TestSignal *s, const Chain *chains, guint count, const double *taps, gsize n,
             GPtrArray *want)
{
  for (guint i = 0; i < count; i++) {
    GPtrArray *got = frame_list();
    GstCaps *link = NULL;
    Fenced fenced = {0, 0};
    run_convolve(s, chains[i].middle, taps, n, got, &link, &fenced, NULL);
    fail_unless(link && caps_have_cuda_memory(link) == chains[i].link_cuda,
                "%s: linked in %" GST_PTR_FORMAT, chains[i].middle, link);
    /* into one of ours in CUDA memory, cv0 (and cudaifft) push without waiting for the device;
     * never else */
    fail_unless((fenced.cv0 > 0) == chains[i].link_cuda, "%s: %d buffers pushed before their work",
                chains[i].middle, fenced.cv0);
    fail_unless((fenced.ifft > 0) == chains[i].ifft_into_ours,
                "%s: %d of cudaifft's buffers pushed before their work", chains[i].middle,
                fenced.ifft);
    test_check(TRUE,
               "%s: %d of cv0's buffers and %d of cudaifft's went on before their device work was "
               "done",
               chains[i].middle, fenced.cv0, fenced.ifft);
    gst_clear_caps(&link);
    fail_unless_equals_int(count_cuda_memory(got), chains[i].out_cuda ? got->len : 0);
    check_same_buffers(got, want, chains[i].middle);
    g_ptr_array_unref(got);
  }
}

/* cudaconvolve ! cudaconvolve: the link in CUDA memory when nothing else is asked, in system
 * memory where a capsfilter says so, and the output in CUDA memory where the sink asks for it;
 * every chain gives the samples of the one whose links are all system memory, byte for byte (the
 * same kernels run on the same samples), its timestamps too. The second filter drops its first
 * 100 samples (latency=100), so that its output buffers start inside their memory. */
GST_START_TEST(test_convolve_cuda_links)
{
  TestSignal s;
  random_signal(&s, "cudaconvolve in CUDA memory");
  TestRng rng = test_rng("cudaconvolve kernel");
  enum { TAPS = 3000 };
  double *taps = g_new(double, TAPS);
  for (gsize k = 0; k < TAPS; k++)
    taps[k] = (test_rng_uniform53(&rng) - 0.5) * 0.1 * exp(-4.0 * (double)k / TAPS);
  const Chain chains[] = {
      {"cudaconvolve name=cv0 ! cudaconvolve name=cv1 latency=100", TRUE, FALSE, FALSE},
      {"cudaconvolve name=cv0 ! cudaconvolve name=cv1 latency=100 ! "
       "audio/x-raw(memory:CUDAMemory)",
       TRUE, TRUE, FALSE},
      {"cudaconvolve name=cv0 ! audio/x-raw ! cudaconvolve name=cv1 latency=100 ! "
       "audio/x-raw(memory:CUDAMemory)",
       FALSE, TRUE, FALSE},
      {"cudaconvolve name=cv0 ! audio/x-raw(memory:CUDAMemory) ! cudaconvolve name=cv1 "
       "latency=100 ! audio/x-raw",
       TRUE, FALSE, FALSE},
  };
  GPtrArray *system = frame_list();
  GstCaps *link = NULL;
  run_convolve(&s, "cudaconvolve name=cv0 ! audio/x-raw ! cudaconvolve name=cv1 latency=100", taps,
               TAPS, system, &link, NULL, NULL);
  fail_unless(link && !caps_have_cuda_memory(link));
  gst_clear_caps(&link);
  check_chains(&s, chains, G_N_ELEMENTS(chains), taps, TAPS, system);
  g_ptr_array_unref(system);
  g_free(taps);
  test_signal_clear(&s);
}
GST_END_TEST;

/* cudaconvolve ! cudaspectrum: linked in CUDA memory by themselves, the spectrum analysed on the
 * device where the samples are; its messages' magnitudes bit for bit those of the system-memory
 * link, and the audio passed through byte for byte. */
GST_START_TEST(test_convolve_spectrum_cuda_link)
{
  TestSignal s;
  random_signal(&s, "cudaconvolve ! cudaspectrum in CUDA memory");
  const double taps[] = {0.5, -0.25, 0.125, 0.3, 0.05};
#define SPECTRUM "cudaspectrum bands=513 interval=10000000 post-messages=true multi-channel=true"
  GPtrArray *system = frame_list(), *cuda = frame_list();
  GstCaps *link = NULL;
  GArray *want = NULL, *got = NULL;
  run_convolve(&s, "cudaconvolve name=cv0 ! audio/x-raw ! " SPECTRUM, taps, G_N_ELEMENTS(taps),
               system, &link, NULL, &want);
  fail_unless(link && !caps_have_cuda_memory(link));
  gst_clear_caps(&link);
  Fenced fenced = {0, 0};
  run_convolve(&s, "cudaconvolve name=cv0 ! " SPECTRUM " ! audio/x-raw(memory:CUDAMemory)", taps,
               G_N_ELEMENTS(taps), cuda, &link, &fenced, &got);
  fail_unless(link && caps_have_cuda_memory(link),
              "cudaconvolve ! cudaspectrum linked in %" GST_PTR_FORMAT, link);
  fail_unless(fenced.cv0 > 0,
              "cudaconvolve waited for the device before every push into cudaspectrum");
  gst_clear_caps(&link);
  fail_unless(want->len > 1000 && got->len == want->len,
              "%u magnitudes through CUDA memory, %u through system memory", got->len, want->len);
  fail_unless(memcmp(got->data, want->data, want->len * sizeof(gfloat)) == 0,
              "the magnitudes differ from the system-memory link's");
  test_check(TRUE,
             "cudaconvolve ! cudaspectrum agree on CUDA memory, %d buffers pushed before their "
             "device work was done; %u magnitudes bit for bit the system-memory link's",
             fenced.cv0, got->len);
  check_same_buffers(cuda, system, "cudaconvolve ! cudaspectrum passing CUDA memory through");
#undef SPECTRUM
  g_array_unref(want);
  g_array_unref(got);
  g_ptr_array_unref(cuda);
  g_ptr_array_unref(system);
  test_signal_clear(&s);
}
GST_END_TEST;

/* cudaconvolve ! cudafft ! cudaifft ! cudaconvolve: every link in CUDA memory by itself (the raw
 * audio into cudafft and out of cudaifft too), and the samples byte for byte those of the same
 * chain with every link in system memory, and of one whose middle link alone is system memory;
 * then cudaifft's output alone in CUDA memory (its first and last samples, the padding cudafft
 * added, are cut on the device). */
GST_START_TEST(test_fft_ifft_between_filters)
{
  TestSignal s;
  random_signal(&s, "cudafft and cudaifft between filters in CUDA memory");
  const double taps[] = {0.9, 0.2, -0.1};
  GPtrArray *system = frame_list();
  GstCaps *link = NULL;
  run_convolve(&s,
               "cudaconvolve name=cv0 ! audio/x-raw ! " FFT " ! audio/x-fft ! cudaifft ! "
               "audio/x-raw ! cudaconvolve name=cv1",
               taps, G_N_ELEMENTS(taps), system, &link, NULL, NULL);
  fail_unless(link && !caps_have_cuda_memory(link));
  gst_clear_caps(&link);
  const Chain chains[] = {
      {"cudaconvolve name=cv0 ! " FFT " ! cudaifft name=ifft ! cudaconvolve name=cv1 ! "
       "audio/x-raw(memory:CUDAMemory)",
       TRUE, TRUE, TRUE},
      {"cudaconvolve name=cv0 ! " FFT " ! audio/x-fft ! cudaifft name=ifft ! "
       "audio/x-raw(memory:CUDAMemory) ! cudaconvolve name=cv1",
       TRUE, FALSE, TRUE},
      {"cudaconvolve name=cv0 ! audio/x-raw ! " FFT " ! cudaifft name=ifft ! audio/x-raw ! "
       "cudaconvolve name=cv1 ! audio/x-raw",
       FALSE, FALSE, FALSE},
  };
  check_chains(&s, chains, G_N_ELEMENTS(chains), taps, G_N_ELEMENTS(taps), system);
  /* cudaifft's samples alone in CUDA memory, against the system-memory round trip */
  GPtrArray *round_trip = frame_list(), *cuda = frame_list();
  run_audio(&s, FFT " ! cudaifft ! audio/x-raw", round_trip);
  run_audio(&s, FFT " ! cudaifft ! audio/x-raw(memory:CUDAMemory)", cuda);
  check_same_buffers(cuda, round_trip, "cudaifft's samples in CUDA memory");
  g_ptr_array_unref(round_trip);
  g_ptr_array_unref(cuda);
  g_ptr_array_unref(system);
  test_signal_clear(&s);
}
GST_END_TEST;

/* EOS, a flush and state cycles (READY and NULL) while CUDA memory flows through
 * cudaconvolve ! cudafft ! cudaifft ! cudaconvolve: every cycle's samples byte for byte those of
 * the chain in system memory, read after the state change (they outlive it). On the CPU the same
 * cycles in system memory. */
GST_START_TEST(test_cycles_while_audio_flows)
{
  TestSignal s;
  random_signal(&s, "audio in CUDA memory through state cycles");
  const double taps[] = {0.7, -0.3, 0.2, 0.05};
  /* the reference on the same backend (the two backends' samples differ by rounding) */
  const gboolean cpu = !strcmp(eu_backend, "cpu");
  const char *const b = eu_backend;
  gchar *reference = g_strdup_printf("cudaconvolve name=cv0 backend=%s ! audio/x-raw ! " FFT
                                     " backend=%s ! audio/x-fft ! cudaifft backend=%s ! "
                                     "audio/x-raw ! cudaconvolve name=cv1 backend=%s ! audio/x-raw",
                                     b, b, b, b);
  GPtrArray *system = frame_list();
  run_convolve(&s, reference, taps, G_N_ELEMENTS(taps), system, NULL, NULL, NULL);
  g_free(reference);
  gchar *middle =
      g_strdup_printf("cudaconvolve name=cv0 backend=%s ! " FFT " backend=%s ! "
                      "cudaifft name=ifft backend=%s ! cudaconvolve name=cv1 backend=%s ! %s",
                      b, b, b, b, cpu ? "audio/x-raw" : "audio/x-raw(memory:CUDAMemory)");
  Fenced fenced = {0, 0};
  GstElement *pipeline = convolve_pipeline(&s, middle, taps, G_N_ELEMENTS(taps), NULL, &fenced);
  for (guint cycle = 0; cycle < 4; cycle++) {
    GPtrArray *got = frame_list();
    play_cycle(pipeline, &s, cycle, got);
    fail_unless_equals_int(count_cuda_memory(got), cpu ? 0 : got->len);
    check_same_buffers(got, system, "a state cycle's samples");
    g_ptr_array_unref(got);
  }
  /* on the GPU cv0 hands its buffers to cudafft, and cudaifft its own to cv1, before their device
   * work is done */
  fail_unless(cpu ? fenced.cv0 == 0 : fenced.cv0 > 0,
              "%d of cv0's buffers went on before their work", fenced.cv0);
  fail_unless(cpu ? fenced.ifft == 0 : fenced.ifft > 0,
              "%d of cudaifft's buffers went on before their work", fenced.ifft);
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(pipeline);
  g_free(middle);
  g_ptr_array_unref(system);
  test_signal_clear(&s);
}
GST_END_TEST;

/* ---- CPU ---- */

/* A link to caps in CUDA memory alone, where the element gives none: made (as gst-launch-1.0
 * makes it, before the start), then, at the start, one ERROR in the whole pipeline, the
 * element's, that names the caps, the element and why (backend=cpu; with backend=auto on a host
 * without a usable GPU, the library's reason) instead of gst-launch-1.0's bare "could not link";
 * two runs each. cudaspectrum passes its audio through, so upstream's memory is downstream's. */
GST_START_TEST(test_cpu_refuses_cuda_memory)
{
  char reason[256];
  const gboolean gpu = cudafft_cuda_unavailable_reason(reason, sizeof reason) == 0;
  static const struct {
    const char *factory, *upstream, *caps;
  } links[] = {
      {"cudafft", "", "audio/x-fft(memory:CUDAMemory)"},
      {"cudaconvolve", "audio/x-raw,format=F32LE ! ", "audio/x-raw(memory:CUDAMemory)"},
      {"cudaspectrum", "", "audio/x-raw(memory:CUDAMemory)"},
      {"cudaifft", "cudafft backend=cpu ! ", "audio/x-raw(memory:CUDAMemory)"},
      {"cudamelspectrogram", "audio/x-raw,rate=16000 ! ", "other/tensors(memory:CUDAMemory)"},
  };
  for (guint i = 0; i < G_N_ELEMENTS(links); i++)
    for (guint automatic = 0; automatic < 2; automatic++) {
      if (automatic && gpu) /* auto gives CUDA memory there */
        continue;
      gchar *line = g_strdup_printf("audiotestsrc num-buffers=20 ! %s%s name=e backend=%s ! %s ! "
                                    "fakesink",
                                    links[i].upstream, links[i].factory, automatic ? "auto" : "cpu",
                                    links[i].caps);
      const char *const words[] = {"memory:CUDAMemory", links[i].factory,
                                   automatic ? reason : "backend=cpu", NULL};
      eu_check_one_error(line, 2, words);
      test_check(TRUE, "%s: one ERROR saying why", line);
      g_free(line);
    }
  /* caps that allow both: system memory, and the stream runs */
  GError *error = NULL;
  GstElement *pipeline = gst_parse_launch("audiotestsrc num-buffers=20 ! cudafft backend=cpu ! "
                                          "audio/x-fft(memory:CUDAMemory);audio/x-fft ! fakesink",
                                          &error);
  fail_unless(pipeline && !error, "%s", error ? error->message : "");
  gst_element_set_state(pipeline, GST_STATE_PLAYING);
  GstBus *bus = gst_element_get_bus(pipeline);
  GstMessage *m =
      gst_bus_timed_pop_filtered(bus, 30 * GST_SECOND, GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  fail_unless(m && GST_MESSAGE_TYPE(m) == GST_MESSAGE_EOS,
              "cudafft backend=cpu to caps in either memory did not run to EOS");
  gst_message_unref(m);
  gst_object_unref(bus);
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(pipeline);
}
GST_END_TEST;

/* ---- CUDA memory of a context not the element's ---- */

/* CUDA memory of a context no element of ours shares: GStreamer's own allocator's, in a
 * GstCudaContext made apart on `device` (another device's memory where there are two; on one
 * device, memory of another context on it, which a kernel of ours cannot read either). Each buffer
 * gets a memory of one row of its size (a GstCudaMemory cut below its frame's row fails to map in
 * 1.24: the map's 2D copy moves the whole row). */
typedef struct {
  GstCudaContext *context;
  GstCudaAllocator *allocator; /* the one gst_cuda_memory_init_once() registers: before 1.24,
                                * gst_cuda_allocator_alloc() takes no NULL for it */
} Foreign;

static void
foreign_open(Foreign *f, int device)
{
  fail_unless(gst_cuda_load_library(), "GStreamer's CUDA library cannot load the driver");
  gst_cuda_memory_init_once();
  f->context = gst_cuda_context_new((guint)device);
  fail_unless(f->context != NULL, "no GstCudaContext on device %d", device);
  f->allocator = (GstCudaAllocator *)gst_allocator_find(GST_CUDA_MEMORY_TYPE_NAME);
  fail_unless(f->allocator != NULL, "GStreamer's CUDA allocator is not registered");
}

static void
foreign_close(Foreign *f)
{
  gst_object_unref(f->allocator);
  gst_object_unref(f->context);
}

/* src's bytes in a buffer of the foreign context's CUDA memory, with src's flags, timestamps,
 * offsets and metas. */
static GstBuffer *
foreign_buffer(Foreign *f, GstBuffer *src)
{
  GstMapInfo in, out;
  fail_unless(gst_buffer_map(src, &in, GST_MAP_READ));
  /* the audio as GStreamer's CUDA allocator takes it: RGBA, one row of size / 4 pixels */
  fail_unless(in.size > 0 && in.size % 4 == 0, "a buffer of %" G_GSIZE_FORMAT " bytes", in.size);
  GstVideoInfo info;
  gst_video_info_set_format(&info, GST_VIDEO_FORMAT_RGBA, (guint)(in.size / 4), 1);
#if GST_CHECK_VERSION(1, 24, 0)
  GstMemory *memory = gst_cuda_allocator_alloc(f->allocator, f->context, NULL, &info);
#else
  GstMemory *memory = gst_cuda_allocator_alloc(f->allocator, f->context, &info);
#endif
  fail_unless(memory != NULL && gst_memory_get_sizes(memory, NULL, NULL) >= in.size,
              "no CUDA memory of %" G_GSIZE_FORMAT " bytes", in.size);
  /* from 1.24 the rows are pitched (the memory is larger than its one row): cut to the row, which
   * is all that the map's 2D copy moves */
  gst_memory_resize(memory, 0, (gssize)in.size);
  fail_unless(gst_memory_map(memory, &out, GST_MAP_WRITE));
  memcpy(out.data, in.data, in.size);
  gst_memory_unmap(memory, &out);
  const gsize size = in.size;
  gst_buffer_unmap(src, &in);
  GstBuffer *buffer = gst_buffer_new();
  gst_buffer_append_memory(buffer, memory);
  gst_buffer_copy_into(buffer, src,
                       GST_BUFFER_COPY_FLAGS | GST_BUFFER_COPY_TIMESTAMPS | GST_BUFFER_COPY_META, 0,
                       -1);
  fail_unless_equals_uint64(gst_buffer_get_size(buffer), size);
  return buffer;
}

/* appsrc (caps, in CUDA memory of `foreign` where given, else in system memory) ! MIDDLE ! appsink
 * over `inputs` (GstBuffer) to EOS, no ERROR: the output into out, the spectrum messages'
 * magnitudes into *magnitudes where given; cv0, where MIDDLE has one, gets the kernel taps. */
static void
run_inputs(const char *middle, GstCaps *caps, GPtrArray *inputs, Foreign *foreign,
           const double *taps, gsize n, GPtrArray *out, GArray **magnitudes)
{
  GstElement *pipeline =
      launch("appsrc name=src format=time ! %s ! appsink name=sink sync=false", middle);
  GstElement *src = gst_bin_get_by_name(GST_BIN(pipeline), "src");
  GstCaps *src_caps = foreign ? gst_caps_copy(caps) : gst_caps_ref(caps);
  if (foreign)
    gst_caps_set_features(src_caps, 0, gst_caps_features_new("memory:CUDAMemory", NULL));
  g_object_set(src, "caps", src_caps, NULL);
  gst_caps_unref(src_caps);
  GstElement *cv = gst_bin_get_by_name(GST_BIN(pipeline), "cv0");
  if (cv)
    eu_set_kernel(cv, taps, n);
  gst_clear_object(&cv);
  Magnitudes kept;
  g_mutex_init(&kept.lock);
  kept.values = g_array_new(FALSE, FALSE, sizeof(gfloat));
  GstBus *bus = gst_element_get_bus(pipeline);
  gst_bus_set_sync_handler(bus, keep_magnitudes, &kept, NULL);
  fail_unless(gst_element_set_state(pipeline, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE);
  for (guint i = 0; i < inputs->len; i++) {
    GstBuffer *input = g_ptr_array_index(inputs, i);
    GstBuffer *buffer = foreign ? foreign_buffer(foreign, input) : gst_buffer_ref(input);
    fail_unless_equals_int(gst_app_src_push_buffer(GST_APP_SRC(src), buffer), GST_FLOW_OK);
  }
  gst_app_src_end_of_stream(GST_APP_SRC(src));
  pull_all(pipeline, out);
  gchar *text = NULL;
  fail_if(pipeline_error(pipeline, &text), "%s from CUDA memory of another context: %s", middle,
          text);
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_bus_set_sync_handler(bus, NULL, NULL, NULL);
  gst_object_unref(bus);
  if (magnitudes)
    *magnitudes = g_array_ref(kept.values);
  g_array_unref(kept.values);
  g_mutex_clear(&kept.lock);
  gst_object_unref(src);
  gst_object_unref(pipeline);
}

/* Every audio element fed CUDA memory of a context not its own (on device 0 and, where there are
 * two, on device 1): it must not hand it to a kernel (a fault would end CUDA work in the process),
 * but read it as system memory: its output byte for byte that of the same input in system memory
 * (cudaspectrum's magnitudes bit for bit too), no ERROR. cudaifft gets cudafft's frames so. */
GST_START_TEST(test_foreign_context_memory)
{
  TestSignal s;
  random_signal(&s, "CUDA memory of another context");
  GstCaps *audio_caps = eu_raw_caps(s.format, s.rate, s.channels);
  GPtrArray *audio = eu_buffer_list();
  for (gsize first = 0; first < s.frames; first += 480)
    g_ptr_array_add(audio, eu_signal_buffer(&s, first, MIN(480, s.frames - first), 0));
  /* cudaifft's input: cudafft's frames, in system memory */
  GPtrArray *frames = frame_list();
  run_audio(&s, FFT " ! audio/x-fft", frames);
  fail_unless(frames->len > 5);
  GstCaps *frame_caps = gst_caps_ref(gst_sample_get_caps(g_ptr_array_index(frames, 0)));
  GPtrArray *frame_buffers = eu_buffer_list();
  for (guint i = 0; i < frames->len; i++)
    g_ptr_array_add(frame_buffers,
                    gst_buffer_ref(gst_sample_get_buffer(g_ptr_array_index(frames, i))));
  const double taps[] = {0.5, -0.25, 0.125, 0.3, 0.05};
  static const struct {
    const char *middle;
    gboolean frames;
  } elements[] = {
      {FFT, FALSE},
      {"cudaconvolve name=cv0", FALSE},
      {"cudamatrixconvolve block-size=64 matrix=\"<<0.5, -0.25, 0.125>, <0.3>, <0.05, 0.1>, "
       "<1.0>>\"",
       FALSE},
      {"cudaspectrum bands=513 interval=10000000 post-messages=true multi-channel=true", FALSE},
      {"cudaifft", TRUE},
  };
  const int devices = MIN(cudafft_cuda_device_count(), 2);
  for (int device = 0; device < devices; device++) {
    for (guint e = 0; e < G_N_ELEMENTS(elements); e++) {
      GstCaps *caps = elements[e].frames ? frame_caps : audio_caps;
      GPtrArray *inputs = elements[e].frames ? frame_buffers : audio;
      Foreign foreign;
      foreign_open(&foreign, device);
      GPtrArray *want = frame_list(), *got = frame_list();
      GArray *want_levels = NULL, *got_levels = NULL;
      run_inputs(elements[e].middle, caps, inputs, NULL, taps, G_N_ELEMENTS(taps), want,
                 &want_levels);
      run_inputs(elements[e].middle, caps, inputs, &foreign, taps, G_N_ELEMENTS(taps), got,
                 &got_levels);
      gchar *what = g_strdup_printf("%s fed CUDA memory of a context of device %d not its own",
                                    elements[e].middle, device);
      check_same_buffers(got, want, what);
      fail_unless(
          got_levels->len == want_levels->len &&
              memcmp(got_levels->data, want_levels->data, want_levels->len * sizeof(gfloat)) == 0,
          "%s: the spectrum's %u magnitudes differ from system memory's (%u)", what,
          got_levels->len, want_levels->len);
      if (want_levels->len > 0)
        test_check(TRUE, "%s: %u magnitudes bit for bit system memory's", what, got_levels->len);
      g_free(what);
      g_array_unref(want_levels);
      g_array_unref(got_levels);
      g_ptr_array_unref(want);
      g_ptr_array_unref(got);
      foreign_close(&foreign);
    }
  }
  gst_caps_unref(frame_caps);
  gst_caps_unref(audio_caps);
  g_ptr_array_unref(frame_buffers);
  g_ptr_array_unref(frames);
  g_ptr_array_unref(audio);
  test_signal_clear(&s);
}
GST_END_TEST;

/* ---- cudamelspectrogram's tensors ---- */

/* cudamelspectrogram's tensors in CUDA memory into an appsink, byte for byte and timestamp for
 * timestamp the system-memory path's: Kaldi's fbank (a tensor a frame, an engine call each),
 * librosa's log-mel in windows of 10 frames every 3 (several windows at the end of the run, cut
 * from one finish on the device), Kaldi's MFCC with deltas in float16; fed in CUDA memory by
 * cudaconvolve, which pushes into it before its device work is done (the samples read where they
 * are, after that work); a sink that takes anything keeps system memory. */
GST_START_TEST(test_melspec_tensors_in_cuda_memory)
{
  TestSignal s;
  random_signal(&s, "cudamelspectrogram in CUDA memory");
  static const struct {
    const char *settings, *caps;
  } rows[] = {
      {"preset=kaldi-fbank", "other/tensors"},
      {"preset=librosa kind=log-mel output=windows window-frames=10 window-stride=3",
       "other/tensors"},
      {"preset=kaldi-mfcc delta-order=2", "other/tensors,types=float16"},
  };
  for (guint i = 0; i < G_N_ELEMENTS(rows); i++) {
    GPtrArray *system = frame_list(), *cuda = frame_list();
    gchar *in_system =
        g_strdup_printf("cudamelspectrogram %s ! %s", rows[i].settings, rows[i].caps);
    /* the same caps in CUDA memory: the feature after the media type */
    gchar *feature = g_strdup_printf("other/tensors(memory:CUDAMemory)%s",
                                     rows[i].caps + strlen("other/tensors"));
    gchar *in_cuda = g_strdup_printf("cudamelspectrogram %s ! %s", rows[i].settings, feature);
    run_audio(&s, in_system, system);
    run_audio(&s, in_cuda, cuda);
    fail_unless(cuda->len > 0 && count_cuda_memory(cuda) == cuda->len,
                "%s: %u of %u in CUDA memory", in_cuda, count_cuda_memory(cuda), cuda->len);
    check_same_buffers(cuda, system, in_cuda);
    g_free(feature);
    g_free(in_system);
    g_free(in_cuda);
    g_ptr_array_unref(cuda);
    g_ptr_array_unref(system);
  }
  /* fed in CUDA memory by cudaconvolve (a delta: the samples as they were) */
  const double delta[] = {1.0};
  GPtrArray *system = frame_list(), *cuda = frame_list(), *any = frame_list();
  GstCaps *link = NULL;
  Fenced fenced = {0, 0};
  run_convolve(&s,
               "cudaconvolve name=cv0 ! audio/x-raw ! cudamelspectrogram preset=kaldi-fbank ! "
               "other/tensors",
               delta, 1, system, NULL, NULL, NULL);
  run_convolve(&s,
               "cudaconvolve name=cv0 ! cudamelspectrogram preset=kaldi-fbank ! "
               "other/tensors(memory:CUDAMemory)",
               delta, 1, cuda, &link, &fenced, NULL);
  fail_unless(link && caps_have_cuda_memory(link) && fenced.cv0 > 0,
              "cudaconvolve ! cudamelspectrogram linked in %" GST_PTR_FORMAT
              ", %d buffers pushed before their work",
              link, fenced.cv0);
  test_check(TRUE,
             "cudaconvolve ! cudamelspectrogram agree on CUDA memory; %d buffers went on before "
             "their device work was done",
             fenced.cv0);
  fail_unless_equals_int(count_cuda_memory(cuda), cuda->len);
  check_same_buffers(cuda, system, "cudaconvolve ! cudamelspectrogram in CUDA memory");
  run_audio(&s, "cudamelspectrogram preset=kaldi-fbank", any);
  fail_unless(any->len > 0 &&
                  !caps_have_cuda_memory(gst_sample_get_caps(g_ptr_array_index(any, 0))),
              "cudamelspectrogram gave an appsink that takes anything CUDA memory");
  gst_clear_caps(&link);
  g_ptr_array_unref(any);
  g_ptr_array_unref(cuda);
  g_ptr_array_unref(system);
  test_signal_clear(&s);
}
GST_END_TEST;

static Suite *
cuda_memory_audio_suite(void)
{
  TCase *tc;
  Suite *suite = eu_suite("cuda-memory-audio", &tc);
  if (!strcmp(eu_backend, "cpu")) {
    tcase_add_test(tc, test_cpu_refuses_cuda_memory);
    tcase_add_test(tc, test_cycles_while_audio_flows);
    return suite;
  }
  tcase_add_test(tc, test_fft_frames_in_cuda_memory);
  tcase_add_test(tc, test_fft_ifft_cuda_link);
  tcase_add_test(tc, test_convolve_cuda_links);
  tcase_add_test(tc, test_convolve_spectrum_cuda_link);
  tcase_add_test(tc, test_fft_ifft_between_filters);
  tcase_add_test(tc, test_cycles_while_audio_flows);
  tcase_add_test(tc, test_foreign_context_memory);
  tcase_add_test(tc, test_melspec_tensors_in_cuda_memory);
  return suite;
}

EU_MAIN(cuda_memory_audio_suite)
