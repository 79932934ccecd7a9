/* test_cudaspectrumscope_element.c: the cudaspectrumscope element against its contract, through
 * GstHarness and pipelines, on the backend named by argv[1] (cpu|cuda): metadata, properties and
 * refused values; caps negotiation (sizes, frame rates, the six RGB layouts, the default caps);
 * frames at exactly the negotiated rate, stamped from the audio's sample counts whatever the
 * buffer sizes; every frame byte for byte what the scope engine (cudafft/scope.h) draws from the
 * same samples; every property changed while playing; EOS, flush and DISCONT; too many lanes for
 * the frame refused with a message; one failure, one ERROR (too many lanes, too many channels, a
 * device that does not exist); 100 state cycles; two pipelines at once; the LATENCY query live
 * only where the source is. */
#include "element_util.h"

#include <cudafft/scope.h>

#include <gst/video/video.h>
#include <math.h>
#include <string.h>

#define RATE 48000

static const double pi = 3.14159265358979323846;

/* Noise and a tone per channel. */
static void
scope_signal(TestSignal *s, const char *label, CudafftSampleFormat format, guint channels,
             guint rate, gsize frames)
{
  TestRng rng = test_rng("%s", label);
  test_signal_alloc(s, format, channels, rate, frames, TEST_READ_POW2 | TEST_READ_F64_AS_FLOAT);
  for (guint c = 0; c < channels; c++)
    for (gsize j = 0; j < frames; j++)
      test_signal_set(s, j, c,
                      0.4 * sin(2.0 * pi * 500.0 * (c + 1) * j / rate) +
                          0.02 * test_rng_uniform53(&rng));
}

static GstHarness *
scope_harness(const TestSignal *s, const char *props, const char *video_caps)
{
  GstHarness *h = eu_harness_new("cudaspectrumscope name=scope backend=%s %s", eu_backend, props);
  if (video_caps)
    gst_harness_set_sink_caps_str(h, video_caps);
  eu_harness_signal_caps(h, s);
  return h;
}

/* Pushes samples [first, first + count) in buffers of random sizes (1 .. max_chunk), stamped
 * from start, collecting the frames. */
static void
push_random(GstHarness *h, TestRng *rng, const TestSignal *s, gsize first, gsize count,
            gsize max_chunk, GstClockTime start, GPtrArray *out)
{
  for (gsize done = 0; done < count;) {
    const gsize r = test_rng_range(rng, 1, max_chunk); /* once: MIN evaluates twice */
    const gsize n = MIN(r, count - done);
    eu_push_signal(h, s, first + done, n, n, start, out);
    done += n;
  }
}

/* The first sample of frame k at `rate` and frame rate n/d. */
static guint64
frame_first(guint64 k, guint rate, gint n, gint d)
{
  return gst_util_uint64_scale(k, (guint64)rate * d, (guint64)n);
}

/* The negotiated video info of the harness's output. */
static void
output_info(GstHarness *h, GstVideoInfo *info)
{
  GstCaps *caps = gst_pad_get_current_caps(h->sinkpad);
  fail_unless(caps != NULL, "no caps on the output");
  fail_unless(gst_video_info_from_caps(info, caps), "cannot read %" GST_PTR_FORMAT, caps);
  gst_caps_unref(caps);
}

/* Frames at the rate, each stamped with its first sample's time from start and lasting until the
 * next; `frames` of them. */
static void
check_frame_times(GPtrArray *out, guint first_index, guint frames, GstClockTime start, guint rate,
                  gint n, gint d, const char *row)
{
  fail_unless(out->len - first_index == frames, "%s: %u frames, want %u", row,
              out->len - first_index, frames);
  for (guint k = 0; k < frames; k++) {
    GstBuffer *b = g_ptr_array_index(out, first_index + k);
    const GstClockTime pts = eu_sample_time(start, frame_first(k, rate, n, d), rate);
    const GstClockTime end = eu_sample_time(start, frame_first(k + 1, rate, n, d), rate);
    fail_unless(GST_BUFFER_PTS(b) == pts && GST_BUFFER_DURATION(b) == end - pts,
                "%s: frame %u at %" GST_TIME_FORMAT " lasting %" GST_TIME_FORMAT
                ", want %" GST_TIME_FORMAT " lasting %" GST_TIME_FORMAT,
                row, k, GST_TIME_ARGS(GST_BUFFER_PTS(b)), GST_TIME_ARGS(GST_BUFFER_DURATION(b)),
                GST_TIME_ARGS(pts), GST_TIME_ARGS(end - pts));
  }
}

/* What the element must draw: the engine fed the same frames of samples. */
static CudafftScopeConfig
engine_config(const TestSignal *s, const GstVideoInfo *v, const CudafftScopeOptions *o,
              size_t fft_size)
{
  static const GstVideoFormat formats[] = {GST_VIDEO_FORMAT_RGBx, GST_VIDEO_FORMAT_BGRx,
                                           GST_VIDEO_FORMAT_xRGB, GST_VIDEO_FORMAT_xBGR,
                                           GST_VIDEO_FORMAT_RGB,  GST_VIDEO_FORMAT_BGR};
  CudafftPixelFormat pixels = CUDAFFT_PIXELS_COUNT_;
  for (int i = 0; i < 6; i++)
    if (formats[i] == GST_VIDEO_INFO_FORMAT(v))
      pixels = (CudafftPixelFormat)i;
  const guint64 num = (guint64)s->rate * GST_VIDEO_INFO_FPS_D(v);
  const guint64 den = (guint64)GST_VIDEO_INFO_FPS_N(v);
  const CudafftScopeConfig c = {
      .channels = s->channels,
      .rate = s->rate,
      .format = s->format,
      .fft_size = fft_size,
      .max_frames = (size_t)((num + den - 1) / den),
      .width = (unsigned)GST_VIDEO_INFO_WIDTH(v),
      .height = (unsigned)GST_VIDEO_INFO_HEIGHT(v),
      .pixels = pixels,
      .stride = (size_t)GST_VIDEO_INFO_PLANE_STRIDE(v, 0),
      .frame_seconds = (double)GST_VIDEO_INFO_FPS_D(v) / GST_VIDEO_INFO_FPS_N(v),
      .options = *o,
  };
  return c;
}

static CudafftScopeOptions
element_defaults(void)
{
  const CudafftScopeOptions o = {
      .style = CUDAFFT_SCOPE_SPECTROGRAM,
      .multi_channel = 1,
      .scale = CUDAFFT_SCALE_LOG,
      .bands_per_octave = 3,
      .weighting = CUDAFFT_WEIGHTING_Z,
      .db_min = -90.0f,
      .db_max = 0.0f,
      .colormap = CUDAFFT_COLORMAP_VIRIDIS,
      .smoothing_ms = 0.0f,
      .peak_hold_ms = 1000.0f,
      .peak_decay_db_per_s = 20.0f,
  };
  return o;
}

/* Every frame of out (from first_index) byte for byte against the engine fed frame k's samples
 * [frame_first(k), frame_first(k + 1)) of s. */
static void
check_frames_match_engine(GPtrArray *out, guint first_index, const TestSignal *s,
                          const GstVideoInfo *v, const CudafftScopeOptions *o, size_t fft_size,
                          const char *row)
{
  const CudafftScopeConfig config = engine_config(s, v, o, fft_size);
  CudafftScope *scope = NULL;
  const CudafftBackend backend =
      strcmp(eu_backend, "cuda") == 0 ? CUDAFFT_BACKEND_CUDA : CUDAFFT_BACKEND_CPU;
  fail_unless(cudafft_scope_create(&scope, backend, -1, &config) == CUDAFFT_STATUS_OK,
              "%s: the engine: %s", row, cudafft_last_error_message());
  const gsize size = GST_VIDEO_INFO_SIZE(v),
              row_bytes = config.width * cudafft_scope_pixel_bytes(config.pixels);
  guint8 *want = g_malloc0(size);
  const gsize fb = test_signal_frame_bytes(s);
  for (guint k = 0; first_index + k < out->len; k++) {
    const guint64 a = frame_first(k, s->rate, GST_VIDEO_INFO_FPS_N(v), GST_VIDEO_INFO_FPS_D(v));
    const guint64 b = frame_first(k + 1, s->rate, GST_VIDEO_INFO_FPS_N(v), GST_VIDEO_INFO_FPS_D(v));
    fail_unless(cudafft_scope_render(scope, s->raw + a * fb, b - a, want) == CUDAFFT_STATUS_OK);
    GstBuffer *frame = g_ptr_array_index(out, first_index + k);
    GstMapInfo map;
    fail_unless(gst_buffer_map(frame, &map, GST_MAP_READ));
    fail_unless(map.size >= size, "%s: frame %u has %zu bytes, want %zu", row, k, map.size, size);
    for (guint y = 0; y < config.height; y++) {
      const guint8 *got = map.data + y * config.stride, *ref = want + y * config.stride;
      if (memcmp(got, ref, row_bytes) != 0) {
        gsize i = 0;
        while (got[i] == ref[i])
          i++;
        gst_buffer_unmap(frame, &map);
        fail("%s: frame %u row %u byte %zu is %d, the engine's %d", row, k, y, i, got[i], ref[i]);
      }
    }
    gst_buffer_unmap(frame, &map);
  }
  g_free(want);
  cudafft_scope_destroy(scope);
}

/* Metadata and properties ------------------------------------------------------------------- */

GST_START_TEST(test_metadata)
{
  eu_check_element_metadata("cudaspectrumscope", "audio/x-raw", "video/x-raw");
}
GST_END_TEST;

GST_START_TEST(test_property_defaults)
{
  GstElement *e = gst_element_factory_make("cudaspectrumscope", NULL);
  fail_unless(e != NULL);
  guint bpo = 0, fft = 0;
  gdouble lo = -1, hi = -1, db_min = 0, db_max = 1, smoothing = -1, hold = 0, decay = 0;
  gboolean multi = FALSE;
  gint device = 0;
  g_object_get(e, "bands-per-octave", &bpo, "fft-size", &fft, "min-frequency", &lo, "max-frequency",
               &hi, "db-min", &db_min, "db-max", &db_max, "smoothing", &smoothing, "peak-hold",
               &hold, "peak-decay", &decay, "multi-channel", &multi, "cuda-device-id", &device,
               NULL);
  fail_unless(bpo == 3 && fft == 4096 && lo == 0.0 && hi == 0.0 && db_min == -90.0 &&
              db_max == 0.0 && smoothing == 0.0 && hold == 1000.0 && decay == 20.0 && multi &&
              device == -1);
  static const struct {
    const char *property, *nick;
  } enums[] = {{"style", "spectrogram"}, {"frequency-scale", "log"}, {"weighting", "z"},
               {"colormap", "viridis"},  {"backend", "auto"},        {"shader", "none"}};
  for (guint i = 0; i < G_N_ELEMENTS(enums); i++) {
    GParamSpec *spec = g_object_class_find_property(G_OBJECT_GET_CLASS(e), enums[i].property);
    fail_unless(spec && G_IS_PARAM_SPEC_ENUM(spec), "no enum property %s", enums[i].property);
    GValue value = G_VALUE_INIT;
    g_value_init(&value, spec->value_type);
    g_object_get_property(G_OBJECT(e), enums[i].property, &value);
    GEnumClass *klass = g_type_class_ref(spec->value_type);
    GEnumValue *v = g_enum_get_value(klass, g_value_get_enum(&value));
    fail_unless(v && strcmp(v->value_nick, enums[i].nick) == 0, "%s is %s, want %s",
                enums[i].property, v ? v->value_nick : "?", enums[i].nick);
    g_type_class_unref(klass);
    g_value_unset(&value);
  }
  /* the names, each changeable while playing except the backend's two */
  static const char *const playing[] = {
      "style",     "frequency-scale", "bands-per-octave", "min-frequency", "max-frequency",
      "weighting", "db-min",          "db-max",           "colormap",      "smoothing",
      "peak-hold", "peak-decay",      "fft-size",         "multi-channel"};
  for (guint i = 0; i < G_N_ELEMENTS(playing); i++) {
    GParamSpec *spec = g_object_class_find_property(G_OBJECT_GET_CLASS(e), playing[i]);
    fail_unless(spec && (spec->flags & GST_PARAM_MUTABLE_PLAYING),
                "%s is not changeable while "
                "playing",
                playing[i]);
  }
  gst_object_unref(e);
}
GST_END_TEST;

/* Values the setters refuse: a warning on the bus (the element has one here; without, GLib's log:
 * test_properties.c), and the old value stays. fft-size is an enumeration, which GLib itself
 * refuses other values for (test_properties.c). db-min and db-max, a pair, are taken as they are
 * set and checked together when they take effect (test_properties.c). */
GST_START_TEST(test_bad_values_refused)
{
  GstElement *e = gst_element_factory_make("cudaspectrumscope", NULL);
  GstBus *bus = gst_bus_new();
  gst_element_set_bus(e, bus);
  static const struct {
    const char *property;
    guint value;
  } cases[] = {{"bands-per-octave", 5}, {"bands-per-octave", 2}};
  for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_object_set(e, cases[i].property, cases[i].value, NULL);
    GstMessage *m = gst_bus_pop_filtered(bus, GST_MESSAGE_WARNING);
    fail_unless(m != NULL, "%s: no warning", cases[i].property);
    GError *err = NULL;
    gst_message_parse_warning(m, &err, NULL);
    fail_unless(err && strstr(err->message, cases[i].property) != NULL,
                "%s: the warning does not name it: %s", cases[i].property, err ? err->message : "");
    g_clear_error(&err);
    gst_message_unref(m);
  }
  guint bpo = 0, fft = 0;
  gdouble db_min = 0, db_max = 0;
  g_object_get(e, "bands-per-octave", &bpo, "fft-size", &fft, "db-min", &db_min, "db-max", &db_max,
               NULL);
  fail_unless(bpo == 3 && fft == 4096 && db_min == -90.0 && db_max == 0.0);
  g_object_set(e, "bands-per-octave", 24, "fft-size", 16384, "db-max", -100.0, NULL);
  fail_unless(gst_bus_pop_filtered(bus, GST_MESSAGE_WARNING) == NULL, "db-max=-100 refused");
  g_object_set(e, "db-min", -120.0, NULL);
  g_object_get(e, "bands-per-octave", &bpo, "fft-size", &fft, "db-min", &db_min, "db-max", &db_max,
               NULL);
  fail_unless(bpo == 24 && fft == 16384 && db_min == -120.0 && db_max == -100.0);
  gst_element_set_bus(e, NULL);
  gst_object_unref(bus);
  gst_object_unref(e);
}
GST_END_TEST;

/* Caps, frame rates, sizes, layouts ------------------------------------------------------------ */

static const struct {
  const char *format;
  gint width, height, fps_n, fps_d;
  guint channels, rate;
  CudafftSampleFormat sample;
} caps_rows[] = {
    {"BGRx", 320, 200, 25, 1, 2, 44100, CUDAFFT_SAMPLE_S16},
    {"RGBx", 640, 360, 60, 1, 1, 48000, CUDAFFT_SAMPLE_F32},
    {"xRGB", 16, 16, 1, 2, 1, 8000, CUDAFFT_SAMPLE_S32},
    {"xBGR", 333, 77, 30000, 1001, 3, 48000, CUDAFFT_SAMPLE_S24},
    {"RGB", 1920, 1080, 30, 1, 2, 48000, CUDAFFT_SAMPLE_F64},
    {"BGR", 101, 99, 50, 1, 6, 96000, CUDAFFT_SAMPLE_F32},
};

/* The caps asked for come out; frames come at exactly that rate and carry the audio's times,
 * whatever the buffer sizes; and each is what the engine draws from its samples. */
GST_START_TEST(test_caps_rates_and_frames)
{
  const guint i = (guint)__i__;
  char row[96];
  g_snprintf(row, sizeof row, "%s %dx%d at %d/%d, %u channels at %u Hz", caps_rows[i].format,
             caps_rows[i].width, caps_rows[i].height, caps_rows[i].fps_n, caps_rows[i].fps_d,
             caps_rows[i].channels, caps_rows[i].rate);
  TestRng rng = test_rng("%s", row);
  TestSignal s;
  /* about 12 frames' worth, at least a second at 1/2 fps */
  const gsize frames = (gsize)MAX(
      (gsize)caps_rows[i].rate * 2,
      (gsize)((guint64)caps_rows[i].rate * caps_rows[i].fps_d * 12 / caps_rows[i].fps_n));
  scope_signal(&s, row, caps_rows[i].sample, caps_rows[i].channels, caps_rows[i].rate, frames);
  gchar *caps = g_strdup_printf("video/x-raw,format=%s,width=%d,height=%d,framerate=%d/%d",
                                caps_rows[i].format, caps_rows[i].width, caps_rows[i].height,
                                caps_rows[i].fps_n, caps_rows[i].fps_d);
  GstHarness *h = scope_harness(&s, "", caps);
  GPtrArray *out = eu_buffer_list();
  const GstClockTime start = 3 * GST_SECOND + 7;
  push_random(h, &rng, &s, 0, s.frames, s.rate / 10, start, out);
  GstVideoInfo info;
  output_info(h, &info);
  fail_unless(
      strcmp(gst_video_format_to_string(GST_VIDEO_INFO_FORMAT(&info)), caps_rows[i].format) == 0 &&
          GST_VIDEO_INFO_WIDTH(&info) == caps_rows[i].width &&
          GST_VIDEO_INFO_HEIGHT(&info) == caps_rows[i].height &&
          GST_VIDEO_INFO_FPS_N(&info) == caps_rows[i].fps_n &&
          GST_VIDEO_INFO_FPS_D(&info) == caps_rows[i].fps_d,
      "%s: negotiated %s %dx%d at %d/%d", row,
      gst_video_format_to_string(GST_VIDEO_INFO_FORMAT(&info)), GST_VIDEO_INFO_WIDTH(&info),
      GST_VIDEO_INFO_HEIGHT(&info), GST_VIDEO_INFO_FPS_N(&info), GST_VIDEO_INFO_FPS_D(&info));
  /* complete frames only: the samples of a last, incomplete frame wait */
  guint want = 0;
  while (frame_first(want + 1, s.rate, caps_rows[i].fps_n, caps_rows[i].fps_d) <= s.frames)
    want++;
  check_frame_times(out, 0, want, start, s.rate, caps_rows[i].fps_n, caps_rows[i].fps_d, row);
  const CudafftScopeOptions o = element_defaults();
  check_frames_match_engine(out, 0, &s, &info, &o, 4096, row);
  g_ptr_array_unref(out);
  gst_harness_teardown(h);
  g_free(caps);
  test_signal_clear(&s);
}
GST_END_TEST;

/* Without constraints downstream, the base class's defaults: 320x200 at 25 fps, and the first
 * layout of the template (BGRx, GStreamer's native xRGB word). */
GST_START_TEST(test_default_caps)
{
  TestSignal s;
  scope_signal(&s, "default caps", CUDAFFT_SAMPLE_F32, 2, RATE, RATE / 2);
  GstHarness *h = scope_harness(&s, "", NULL);
  GPtrArray *out = eu_buffer_list();
  eu_push_signal(h, &s, 0, s.frames, 4000, 0, out);
  GstVideoInfo info;
  output_info(h, &info);
  fail_unless(GST_VIDEO_INFO_FORMAT(&info) == GST_VIDEO_FORMAT_BGRx &&
              GST_VIDEO_INFO_WIDTH(&info) == 320 && GST_VIDEO_INFO_HEIGHT(&info) == 200 &&
              GST_VIDEO_INFO_FPS_N(&info) == 25 && GST_VIDEO_INFO_FPS_D(&info) == 1);
  fail_unless_equals_int(out->len, 12);
  g_ptr_array_unref(out);
  gst_harness_teardown(h);
  test_signal_clear(&s);
}
GST_END_TEST;

/* Styles and layouts through the element: the engine's pixels for the properties set. */
static const struct {
  const char *props;
  CudafftScopeStyle style;
  CudafftFrequencyScale scale;
  CudafftWeighting weighting;
  CudafftColormap colormap;
  int multi;
  guint bands_per_octave;
  float smoothing, hold, decay;
  double lo, hi;
} style_rows[] = {
    {"style=bars frequency-scale=octave bands-per-octave=6 weighting=a colormap=magma "
     "smoothing=125 peak-hold=300 peak-decay=40",
     CUDAFFT_SCOPE_BARS, CUDAFFT_SCALE_OCTAVE, CUDAFFT_WEIGHTING_A, CUDAFFT_COLORMAP_MAGMA, 1, 6,
     125.0f, 300.0f, 40.0f, 0.0, 0.0},
    {"frequency-scale=mel multi-channel=false colormap=grey min-frequency=100 max-frequency=8000",
     CUDAFFT_SCOPE_SPECTROGRAM, CUDAFFT_SCALE_MEL, CUDAFFT_WEIGHTING_Z, CUDAFFT_COLORMAP_GREY, 0, 3,
     0.0f, 1000.0f, 20.0f, 100.0, 8000.0},
    {"style=bars frequency-scale=linear weighting=c", CUDAFFT_SCOPE_BARS, CUDAFFT_SCALE_LINEAR,
     CUDAFFT_WEIGHTING_C, CUDAFFT_COLORMAP_VIRIDIS, 1, 3, 0.0f, 1000.0f, 20.0f, 0.0, 0.0},
};

GST_START_TEST(test_styles_match_engine)
{
  const guint i = (guint)__i__;
  TestRng rng = test_rng("styles %u", i);
  TestSignal s;
  scope_signal(&s, style_rows[i].props, CUDAFFT_SAMPLE_S16, 3, RATE, RATE);
  GstHarness *h = scope_harness(&s, style_rows[i].props,
                                "video/x-raw,format=BGRx,width=200,height=150,framerate=60/1");
  GPtrArray *out = eu_buffer_list();
  push_random(h, &rng, &s, 0, s.frames, 3000, 0, out);
  GstVideoInfo info;
  output_info(h, &info);
  CudafftScopeOptions o = element_defaults();
  o.style = style_rows[i].style;
  o.scale = style_rows[i].scale;
  o.weighting = style_rows[i].weighting;
  o.colormap = style_rows[i].colormap;
  o.multi_channel = style_rows[i].multi;
  o.bands_per_octave = style_rows[i].bands_per_octave;
  o.smoothing_ms = style_rows[i].smoothing;
  o.peak_hold_ms = style_rows[i].hold;
  o.peak_decay_db_per_s = style_rows[i].decay;
  o.min_frequency = style_rows[i].lo;
  o.max_frequency = style_rows[i].hi;
  fail_unless_equals_int(out->len, 60);
  check_frames_match_engine(out, 0, &s, &info, &o, 4096, style_rows[i].props);
  g_ptr_array_unref(out);
  gst_harness_teardown(h);
  test_signal_clear(&s);
}
GST_END_TEST;

/* Changes while playing ---------------------------------------------------------------------- */

/* Every property changed while frames flow: no error, a frame for every frame's worth of audio,
 * and the changes show (the frames after differ from the frames before). A value the engine
 * refuses at this rate warns and the frames go on. */
GST_START_TEST(test_every_property_while_playing)
{
  TestSignal s;
  scope_signal(&s, "while playing", CUDAFFT_SAMPLE_F32, 2, RATE, 12 * RATE);
  GstHarness *h =
      scope_harness(&s, "", "video/x-raw,format=RGBx,width=128,height=96,framerate=50/1");
  GstBus *bus = eu_harness_bus(h);
  GstElement *e = eu_harness_element(h, "scope");
  static const char *const changes[] = {"style=bars",          "frequency-scale=octave",
                                        "bands-per-octave=12", "min-frequency=50",
                                        "max-frequency=12000", "weighting=a",
                                        "db-min=-70",          "db-max=-6",
                                        "colormap=magma",      "smoothing=200",
                                        "peak-hold=100",       "peak-decay=90",
                                        "fft-size=1024",       "multi-channel=false",
                                        "style=spectrogram",   "frequency-scale=mel",
                                        "colormap=grey",       "fft-size=8192",
                                        "shader=fade",         "min-frequency=30000"};
  const gsize per_step = RATE / 2;
  GPtrArray *out = eu_buffer_list();
  eu_push_signal(h, &s, 0, per_step, 960, 0, out);
  for (guint i = 0; i < G_N_ELEMENTS(changes); i++) {
    gchar **kv = g_strsplit(changes[i], "=", 2);
    gst_util_set_object_arg(G_OBJECT(e), kv[0], kv[1]);
    g_strfreev(kv);
    const guint before = out->len;
    GstBuffer *last = before > 0 ? gst_buffer_ref(g_ptr_array_index(out, before - 1)) : NULL;
    eu_push_signal(h, &s, (i + 1) * per_step, per_step, 960, 0, out);
    fail_unless_equals_int(out->len - before, 25);
    if (last && i + 1 < G_N_ELEMENTS(changes) - 1 && strcmp(changes[i], "shader=fade") != 0 &&
        strncmp(changes[i], "peak", 4) != 0 && strncmp(changes[i], "smoothing", 9) != 0) {
      /* the next frame differs from the last one before the change */
      GstMapInfo a, b;
      GstBuffer *next = g_ptr_array_index(out, before);
      gst_buffer_map(last, &a, GST_MAP_READ);
      gst_buffer_map(next, &b, GST_MAP_READ);
      fail_unless(a.size != b.size || memcmp(a.data, b.data, a.size) != 0,
                  "%s: the frame did not change", changes[i]);
      gst_buffer_unmap(last, &a);
      gst_buffer_unmap(next, &b);
    }
    if (last)
      gst_buffer_unref(last);
    /* no error; a warning only for the last change */
    GstMessage *m;
    guint warnings = 0;
    while ((m = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR | GST_MESSAGE_WARNING)) != NULL) {
      fail_if(GST_MESSAGE_TYPE(m) == GST_MESSAGE_ERROR, "%s: an error", changes[i]);
      warnings++;
      gst_message_unref(m);
    }
    const gboolean final = i + 1 == G_N_ELEMENTS(changes);
    fail_unless(warnings == (final ? 1u : 0u), "%s: %u warnings", changes[i], warnings);
  }
  gst_object_unref(e);
  g_ptr_array_unref(out);
  eu_harness_teardown(h, bus);
  test_signal_clear(&s);
}
GST_END_TEST;

/* Stream events ------------------------------------------------------------------------------ */

/* A BYTES segment (filesrc's, straight into the scope) has no running time to time frames by: one
 * ERROR, the scope's, naming TIME; none from the source. */
GST_START_TEST(test_non_time_segment_refused)
{
  eu_check_time_segment("cudaspectrumscope");
}
GST_END_TEST;

/* EOS goes downstream; the samples of an incomplete last frame make no frame. */
GST_START_TEST(test_eos)
{
  TestSignal s;
  scope_signal(&s, "eos", CUDAFFT_SAMPLE_F32, 1, RATE, 10 * 800 + 799);
  GstHarness *h =
      scope_harness(&s, "", "video/x-raw,format=BGRx,width=64,height=64,framerate=60/1");
  GPtrArray *out = eu_buffer_list();
  eu_push_signal(h, &s, 0, s.frames, 1234, 0, out);
  eu_push_eos(h, out);
  fail_unless_equals_int(out->len, 10);
  gboolean eos = FALSE;
  GstEvent *ev;
  while ((ev = gst_harness_try_pull_event(h)) != NULL) {
    eos |= GST_EVENT_TYPE(ev) == GST_EVENT_EOS;
    gst_event_unref(ev);
  }
  fail_unless(eos, "no EOS downstream");
  g_ptr_array_unref(out);
  gst_harness_teardown(h);
  test_signal_clear(&s);
}
GST_END_TEST;

/* After a flush or a DISCONT buffer the display starts afresh: the same audio again gives the
 * frames a new element gives, stamped from the new run's start. */
static void
check_restart(gboolean flush)
{
  TestSignal s;
  scope_signal(&s, flush ? "flush" : "discont", CUDAFFT_SAMPLE_F32, 2, RATE, RATE / 2);
  GstHarness *h =
      scope_harness(&s, "style=bars", "video/x-raw,format=BGRx,width=96,height=64,framerate=60/1");
  GPtrArray *before = eu_buffer_list(), *after = eu_buffer_list();
  eu_push_signal(h, &s, 0, s.frames, 1000, 0, before);
  const GstClockTime start = 7 * GST_SECOND;
  if (flush) {
    eu_flush(h, NULL);
  }
  for (gsize done = 0; done < s.frames; done += 1000) {
    GstBuffer *b = eu_signal_buffer(&s, done, MIN(1000, s.frames - done), start);
    if (!flush && done == 0)
      GST_BUFFER_FLAG_SET(b, GST_BUFFER_FLAG_DISCONT);
    fail_unless_equals_int(gst_harness_push(h, b), GST_FLOW_OK);
    eu_pull_all(h, after);
  }
  fail_unless_equals_int(before->len, 30);
  fail_unless_equals_int(after->len, 30);
  for (guint k = 0; k < 30; k++) {
    GstBuffer *a = g_ptr_array_index(before, k), *b = g_ptr_array_index(after, k);
    fail_unless(GST_BUFFER_PTS(b) == start + GST_BUFFER_PTS(a), "frame %u at %" GST_TIME_FORMAT, k,
                GST_TIME_ARGS(GST_BUFFER_PTS(b)));
    GstMapInfo ma, mb;
    gst_buffer_map(a, &ma, GST_MAP_READ);
    gst_buffer_map(b, &mb, GST_MAP_READ);
    fail_unless(ma.size == mb.size && memcmp(ma.data, mb.data, ma.size) == 0,
                "%s: frame %u differs from a fresh start's", flush ? "flush" : "discont", k);
    gst_buffer_unmap(a, &ma);
    gst_buffer_unmap(b, &mb);
  }
  g_ptr_array_unref(before);
  g_ptr_array_unref(after);
  gst_harness_teardown(h);
  test_signal_clear(&s);
}

GST_START_TEST(test_flush_restarts)
{
  check_restart(TRUE);
}
GST_END_TEST;

GST_START_TEST(test_discont_restarts)
{
  check_restart(FALSE);
}
GST_END_TEST;

/* A frame too small for a lane per channel: an error that says so, no crash. */
GST_START_TEST(test_too_many_lanes)
{
  TestSignal s;
  scope_signal(&s, "lanes", CUDAFFT_SAMPLE_F32, 32, RATE, 2000);
  GstHarness *h = eu_harness_new("cudaspectrumscope name=scope backend=%s", eu_backend);
  gst_harness_set_sink_caps_str(h, "video/x-raw,format=BGRx,width=64,height=16,framerate=60/1");
  GstBus *bus = eu_harness_bus(h);
  gst_harness_set_src_caps(h, eu_raw_caps(s.format, s.rate, s.channels));
  /* refused with an ERROR at the CAPS event; the push that retries the caps is answered FLUSHING,
   * which stops upstream without an ERROR of its own (one failure, one ERROR) */
  const GstFlowReturn flow = gst_harness_push(h, eu_signal_buffer(&s, 0, s.frames, 0));
  fail_unless(flow == GST_FLOW_FLUSHING, "32 lanes in 16 rows: the push returned %s",
              gst_flow_get_name(flow));
  gchar *text = NULL;
  fail_unless(eu_bus_pop_error(bus, NULL, &text), "no error message");
  fail_unless(strstr(text, "lanes") != NULL && strstr(text, "multi-channel") != NULL,
              "the error does not say what to do: %s", text);
  g_free(text);
  eu_harness_teardown(h, bus);
  test_signal_clear(&s);
}
GST_END_TEST;

/* One failure, one ERROR: GstAudioVisualizer negotiates a refused format again at every buffer,
 * and the source reported the refusal as an "Internal data stream error" of its own (before: nine
 * ERRORs a run). Each of these posts exactly one in the whole pipeline, from the scope: more
 * channels than the default 200-row frame has rows for lanes, more than the engines' 1024, and a
 * CUDA device that does not exist (the scope makes its engine at the caps: the start itself
 * succeeds). */
GST_START_TEST(test_one_error_per_failure)
{
  gchar *line = g_strdup_printf("audiotestsrc num-buffers=10 ! audio/x-raw,channels=300 ! "
                                "cudaspectrumscope name=e backend=%s ! fakesink",
                                eu_backend);
  static const char *const lanes[] = {"300 channels", "multi-channel", NULL};
  eu_check_one_error(line, 3, lanes);
  g_free(line);
  eu_check_channel_limit("cudaspectrumscope", "");
  static const char *const device[] = {"backend=cpu", NULL};
  eu_check_one_error("audiotestsrc num-buffers=10 ! cudaspectrumscope name=e backend=cuda "
                     "cuda-device-id=4096 ! fakesink",
                     3, device);
}
GST_END_TEST;

/* Lifetime ----------------------------------------------------------------------------------- */

typedef struct {
  const char *props;
  guint cycles;
  guint frames; /* frames each run must give */
  gchar *failure;
} PipelineJob;

static void
count_frame(GstElement *sink, GstBuffer *buffer, GstPad *pad, gpointer user_data)
{
  (void)sink;
  (void)buffer;
  (void)pad;
  (*(guint *)user_data)++;
}

/* Runs "audiotestsrc ! cudaspectrumscope ! fakesink" to EOS `cycles` times (NULL -> PLAYING ->
 * NULL), counting the frames of each run. */
static gpointer
run_pipelines(gpointer data)
{
  PipelineJob *job = data;
  gchar *line = g_strdup_printf(
      "audiotestsrc num-buffers=10 samplesperbuffer=1000 wave=pink-noise ! "
      "audio/x-raw,rate=48000,channels=2 ! cudaspectrumscope backend=%s %s ! "
      "video/x-raw,width=80,height=60,framerate=48/1 ! fakesink name=sink signal-handoffs=true",
      eu_backend, job->props);
  GstElement *pipeline = gst_parse_launch(line, NULL);
  g_free(line);
  if (!pipeline) {
    job->failure = g_strdup("cannot make the pipeline");
    return NULL;
  }
  GstElement *sink = gst_bin_get_by_name(GST_BIN(pipeline), "sink");
  guint frames = 0;
  g_signal_connect(sink, "handoff", G_CALLBACK(count_frame), &frames);
  GstBus *bus = gst_element_get_bus(pipeline);
  for (guint c = 0; c < job->cycles && !job->failure; c++) {
    frames = 0;
    gst_element_set_state(pipeline, GST_STATE_PLAYING);
    GstMessage *m =
        gst_bus_timed_pop_filtered(bus, 30 * GST_SECOND, GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
    if (!m || GST_MESSAGE_TYPE(m) != GST_MESSAGE_EOS)
      job->failure = g_strdup_printf("cycle %u: %s", c, m ? "an error" : "no EOS in 30 s");
    else if (frames != job->frames)
      job->failure = g_strdup_printf("cycle %u: %u frames, want %u", c, frames, job->frames);
    if (m)
      gst_message_unref(m);
    gst_element_set_state(pipeline, GST_STATE_NULL);
  }
  gst_object_unref(bus);
  gst_object_unref(sink);
  gst_object_unref(pipeline);
  return NULL;
}

GST_START_TEST(test_state_cycles)
{
  /* 10000 samples at 48 kHz, 48 frames a second: 10 frames */
  PipelineJob job = {"style=bars", eu_state_cycles(100), 10, NULL};
  run_pipelines(&job);
  fail_if(job.failure, "%s", job.failure);
  g_free(job.failure);
}
GST_END_TEST;

GST_START_TEST(test_two_pipelines_at_once)
{
  PipelineJob jobs[2] = {{"frequency-scale=octave colormap=magma", 20, 10, NULL},
                         {"style=bars weighting=a fft-size=2048", 20, 10, NULL}};
  eu_run_threads(run_pipelines, jobs, sizeof jobs[0], 2);
  for (guint i = 0; i < 2; i++) {
    fail_if(jobs[i].failure, "pipeline %u: %s", i, jobs[i].failure);
    g_free(jobs[i].failure);
  }
}
GST_END_TEST;

/* The LATENCY query downstream of the scope says live exactly where the source is (the base class
 * says live for any source, and a compositor after a file then mixes on a deadline, adding frames
 * past the end), with at least one frame of its own latency (800 samples at 48 kHz and 60/1). */
static void
check_latency_live(gboolean live_source)
{
  gchar *line = g_strdup_printf(
      "audiotestsrc is-live=%s samplesperbuffer=480 ! audio/x-raw,rate=48000,channels=1 ! "
      "cudaspectrumscope backend=%s ! video/x-raw,width=64,height=64,framerate=60/1 ! "
      "fakesink name=sink",
      live_source ? "true" : "false", eu_backend);
  GstElement *pipeline = gst_parse_launch(line, NULL);
  g_free(line);
  fail_unless(pipeline != NULL);
  GstElement *sink = gst_bin_get_by_name(GST_BIN(pipeline), "sink");
  GstPad *pad = gst_element_get_static_pad(sink, "sink");
  gst_element_set_state(pipeline, GST_STATE_PLAYING);
  /* the base class answers once the audio caps are known: wait for the first frame's caps */
  GstCaps *caps = NULL;
  for (guint i = 0; i < 1000 && !(caps = gst_pad_get_current_caps(pad)); i++)
    g_usleep(10000);
  fail_unless(caps != NULL, "no frame in 10 s");
  gst_caps_unref(caps);
  GstQuery *query = gst_query_new_latency();
  fail_unless(gst_pad_peer_query(pad, query), "the LATENCY query was not answered");
  gboolean live;
  GstClockTime min, max;
  gst_query_parse_latency(query, &live, &min, &max);
  fail_unless(live == live_source, "live=%d downstream of a %s source", live,
              live_source ? "live" : "non-live");
  fail_unless(min >= gst_util_uint64_scale_int(800, GST_SECOND, RATE) && min <= max,
              "latency %" GST_TIME_FORMAT " .. %" GST_TIME_FORMAT, GST_TIME_ARGS(min),
              GST_TIME_ARGS(max));
  gst_query_unref(query);
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(pad);
  gst_object_unref(sink);
  gst_object_unref(pipeline);
}

GST_START_TEST(test_latency_live_as_upstream)
{
  check_latency_live(FALSE);
  check_latency_live(TRUE);
}
GST_END_TEST;

static Suite *
cudaspectrumscope_suite(void)
{
  TCase *tc;
  Suite *s = eu_suite("cudaspectrumscope", &tc);
  tcase_add_test(tc, test_metadata);
  tcase_add_test(tc, test_property_defaults);
  tcase_add_test(tc, test_bad_values_refused);
  tcase_add_loop_test(tc, test_caps_rates_and_frames, 0, G_N_ELEMENTS(caps_rows));
  tcase_add_test(tc, test_default_caps);
  tcase_add_loop_test(tc, test_styles_match_engine, 0, G_N_ELEMENTS(style_rows));
  tcase_add_test(tc, test_every_property_while_playing);
  tcase_add_test(tc, test_eos);
  tcase_add_test(tc, test_non_time_segment_refused);
  tcase_add_test(tc, test_flush_restarts);
  tcase_add_test(tc, test_discont_restarts);
  tcase_add_test(tc, test_too_many_lanes);
  tcase_add_test(tc, test_one_error_per_failure);
  tcase_add_test(tc, test_state_cycles);
  tcase_add_test(tc, test_two_pipelines_at_once);
  tcase_add_test(tc, test_latency_live_as_upstream);
  return s;
}

EU_MAIN(cudaspectrumscope_suite)
