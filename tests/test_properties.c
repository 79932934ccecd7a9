/* test_properties.c: what every element of the plugin does with its properties, on the backend
 * named by argv[1] (cpu|cuda): a property of the same name has the same type in every element
 * (fft-size an unsigned integer 16..16384 in cudafft, cudaspectrum, cudaspectrumscope and
 * cudamelspectrogram, set from a launch line's number, each refusing the sizes it does not take
 * with the nearest it does); a value refused outside a pipeline (as gst-launch-1.0 sets its line's
 * properties) is said in GLib's log, one refused in a pipeline by a WARNING message on the bus,
 * each naming the property and the value kept, which reading the property back gives; values a
 * property's type cannot hold fail gst-launch-1.0's parse ("could not set property"); backend and
 * cuda-device-id, which take effect at the start, are refused once the element runs (PAUSED or
 * PLAYING) with a WARNING, the value in effect read back, setting the same value again says
 * nothing, and back in NULL a change is taken; cudafft's texts say when changes apply and what its
 * dB is, and a sine reads what they say; every description says the element runs on the CPU too,
 * and every property's is a line or two (at most 130 characters).
 * Values that only make sense together (db-min and db-max, hop and fft-size, a band layout) are
 * taken in either order and checked when they take effect: an ERROR at the start, a WARNING while
 * playing, and a refused value reads back as the value in force. */
#include "element_util.h"

#include <math.h>
#include <string.h>

static const char *const factories[] = {
    "cudafft",           "cudaifft",           "cudaspectrum",      "cudaconvolve",
    "cudaspectrumscope", "cudamatrixconvolve", "cudamelspectrogram"};

/* A property refused outside a pipeline: the value (gst_util_set_object_arg's text), the words the
 * warning must hold, and the value read back (as text). */
typedef struct {
  const char *factory, *property, *value, *kept;
} Refusal;

static const Refusal refusals[] = {
    {"cudaspectrumscope", "bands-per-octave", "5", "3"},
    {"cudaspectrum", "bands-per-octave", "5", "3"},
    {"cudaspectrum", "bands-per-octave", "2", "3"},
    {"cudaconvolve", "block-size", "100", "2048"},
    {"cudamatrixconvolve", "block-size", "100", "2048"},
    {"cudafft", "fft-size", "1001", "4096"},
    {"cudafft", "fft-size", "4097", "4096"},
    {"cudaspectrumscope", "fft-size", "1001", "4096"},
    {"cudaspectrum", "fft-size", "1001", "4096"},
    {"cudaspectrum", "fft-size", "1125", "4096"}, /* odd: the layouts' analysis is even */
    {"cudamelspectrogram", "fft-size", "1001", "400"},
    {"cudamelspectrogram", "hop-length", "0", "160"},
};

/* The property's value as text (enumerations by nick, numbers as GStreamer serialises them). */
static gchar *
value_text(GstElement *e, const char *property)
{
  GParamSpec *spec = g_object_class_find_property(G_OBJECT_GET_CLASS(e), property);
  fail_unless(spec != NULL, "no property %s", property);
  GValue v = G_VALUE_INIT;
  g_value_init(&v, spec->value_type);
  g_object_get_property(G_OBJECT(e), property, &v);
  gchar *text;
  if (G_IS_PARAM_SPEC_ENUM(spec)) {
    GEnumClass *klass = g_type_class_ref(spec->value_type);
    GEnumValue *ev = g_enum_get_value(klass, g_value_get_enum(&v));
    text = g_strdup(ev ? ev->value_nick : "?");
    g_type_class_unref(klass);
  } else if (G_IS_PARAM_SPEC_DOUBLE(spec)) {
    text = g_strdup_printf("%g", g_value_get_double(&v));
  } else {
    text = gst_value_serialize(&v);
  }
  g_value_unset(&v);
  return text;
}

static void
expect_value(GstElement *e, const char *property, const char *want, const char *row)
{
  gchar *got = value_text(e, property);
  fail_unless(strcmp(got, want) == 0, "%s: %s reads %s, expected %s", row, property, got, want);
  g_free(got);
}

/* The next WARNING on the bus (within a second) names the property and the value kept. */
static void
expect_warning(GstBus *bus, const char *property, const char *kept, const char *row)
{
  GstMessage *m = gst_bus_timed_pop_filtered(bus, GST_SECOND, GST_MESSAGE_WARNING);
  fail_unless(m != NULL, "%s: no WARNING on the bus", row);
  GError *err = NULL;
  gst_message_parse_warning(m, &err, NULL);
  gchar *kept_words = g_strdup_printf("%s=%s", property, kept);
  fail_unless(err && strstr(err->message, property) && strstr(err->message, kept_words),
              "%s: the WARNING does not name %s and \"%s\": %s", row, property, kept_words,
              err ? err->message : "");
  g_free(kept_words);
  g_clear_error(&err);
  gst_message_unref(m);
}

static void
expect_no_warning(GstBus *bus, const char *row)
{
  GstMessage *m = gst_bus_pop_filtered(bus, GST_MESSAGE_WARNING);
  if (m) {
    GError *err = NULL;
    gst_message_parse_warning(m, &err, NULL);
    fail("%s: an unexpected WARNING: %s", row, err ? err->message : "");
  }
}

/* The property specs of factories[f] (g_free them), and in *e the element made for them, kept alive
 * while they are read (class data, alive while the class is): unref it after. */
static GParamSpec **
element_specs(guint f, GstElement **e, guint *n)
{
  *e = gst_element_factory_make(factories[f], NULL);
  fail_unless(*e != NULL, "cannot make %s", factories[f]);
  return g_object_class_list_properties(G_OBJECT_GET_CLASS(*e), n);
}

GST_START_TEST(test_same_property_same_type)
{
  GHashTable *seen = g_hash_table_new(g_str_hash, g_str_equal); /* name -> GParamSpec */
  GHashTable *owner = g_hash_table_new(g_str_hash, g_str_equal);
  guint shared = 0;
  for (guint f = 0; f < G_N_ELEMENTS(factories); f++) {
    GstElement *e = NULL;
    guint n = 0;
    GParamSpec **specs = element_specs(f, &e, &n);
    for (guint i = 0; i < n; i++) {
      GParamSpec *other = g_hash_table_lookup(seen, specs[i]->name);
      if (!other) {
        g_hash_table_insert(seen, (gpointer)specs[i]->name, specs[i]);
        g_hash_table_insert(owner, (gpointer)specs[i]->name, (gpointer)factories[f]);
        continue;
      }
      shared++;
      fail_unless(G_PARAM_SPEC_TYPE(other) == G_PARAM_SPEC_TYPE(specs[i]) &&
                      other->value_type == specs[i]->value_type,
                  "%s is a %s of %s in %s but a %s of %s in %s", specs[i]->name,
                  G_PARAM_SPEC_TYPE_NAME(other), g_type_name(other->value_type),
                  (const char *)g_hash_table_lookup(owner, specs[i]->name),
                  G_PARAM_SPEC_TYPE_NAME(specs[i]), g_type_name(specs[i]->value_type),
                  factories[f]);
    }
    g_free(specs);
    gst_object_unref(e);
  }
  fail_unless(shared > 10, "only %u shared properties: are the elements all there?", shared);
  static const struct {
    const char *factory;
    guint default_size;
  } sized[] = {{"cudafft", 4096},
               {"cudaspectrum", 4096},
               {"cudaspectrumscope", 4096},
               {"cudamelspectrogram", 400}};
  for (guint f = 0; f < G_N_ELEMENTS(sized); f++) {
    GstElement *e = gst_element_factory_make(sized[f].factory, NULL);
    GParamSpec *size = g_object_class_find_property(G_OBJECT_GET_CLASS(e), "fft-size");
    fail_unless(size && G_IS_PARAM_SPEC_UINT(size) &&
                    G_PARAM_SPEC_UINT(size)->minimum == CUDAFFT_MIN_SIZE &&
                    G_PARAM_SPEC_UINT(size)->maximum == CUDAFFT_MAX_SIZE &&
                    G_PARAM_SPEC_UINT(size)->default_value == sized[f].default_size,
                "%s's fft-size is not an unsigned integer from %d to %d, default %u",
                sized[f].factory, CUDAFFT_MIN_SIZE, CUDAFFT_MAX_SIZE, sized[f].default_size);
    gst_object_unref(e);
  }
  g_hash_table_unref(seen);
  g_hash_table_unref(owner);
}
GST_END_TEST;

/* Outside a pipeline there is no bus: GLib's log says it (a g_warning, which gst-check catches
 * here), and the old value stays. */
GST_START_TEST(test_refused_outside_pipeline)
{
  for (guint i = 0; i < G_N_ELEMENTS(refusals); i++) {
    const Refusal *r = &refusals[i];
    gchar *row = g_strdup_printf("%s %s=%s alone", r->factory, r->property, r->value);
    GstElement *e = gst_element_factory_make(r->factory, NULL);
    ASSERT_WARNING(gst_util_set_object_arg(G_OBJECT(e), r->property, r->value));
    expect_value(e, r->property, r->kept, row);
    gst_object_unref(e);
    g_free(row);
    /* gst-launch-1.0's way: the line's properties are set while it is parsed */
    row = g_strdup_printf("%s %s=%s in a launch line", r->factory, r->property, r->value);
    gchar *line = g_strdup_printf("%s name=e %s=%s", r->factory, r->property, r->value);
    GstElement *parsed = NULL;
    GError *error = NULL;
    ASSERT_WARNING(parsed = gst_parse_launch(line, &error));
    fail_unless(parsed != NULL && error == NULL, "%s: %s", row, error ? error->message : "");
    expect_value(parsed, r->property, r->kept, row);
    gst_object_unref(parsed);
    g_free(line);
    g_free(row);
  }
}
GST_END_TEST;

/* In a pipeline: a WARNING on the bus, the old value stays. */
GST_START_TEST(test_refused_in_pipeline)
{
  for (guint i = 0; i < G_N_ELEMENTS(refusals); i++) {
    const Refusal *r = &refusals[i];
    gchar *row = g_strdup_printf("%s %s=%s in a pipeline", r->factory, r->property, r->value);
    GstElement *pipeline = gst_pipeline_new(NULL);
    GstElement *e = gst_element_factory_make(r->factory, NULL);
    gst_bin_add(GST_BIN(pipeline), e);
    GstBus *bus = gst_element_get_bus(pipeline);
    gst_util_set_object_arg(G_OBJECT(e), r->property, r->value);
    expect_warning(bus, r->property, r->kept, row);
    expect_value(e, r->property, r->kept, row);
    gst_object_unref(bus);
    gst_object_unref(pipeline);
    g_free(row);
  }
}
GST_END_TEST;

/* fft-size in a launch line: sizes the element takes are set from their number (old pipelines'
 * powers of two among them) and read back; a value that is not a number fails the parse, as
 * gst-launch-1.0 reports it; one outside 16..16384 is GLib's own warning, the size in effect
 * staying; a size within the range that the element does not take is refused naming the nearest
 * sizes it takes (cudaspectrum's are even); g_object_set() with an int works alike. */
GST_START_TEST(test_fft_size_from_launch_lines)
{
  static const struct {
    const char *factory;
    guint size;
  } taken[] = {{"cudafft", 1000},      {"cudaspectrum", 1000},      {"cudaspectrumscope", 1000},
               {"cudaspectrum", 4096}, {"cudaspectrumscope", 4096}, {"cudaspectrum", 480},
               {"cudaspectrum", 16},   {"cudaspectrumscope", 1125}, {"cudaspectrumscope", 16384}};
  for (guint i = 0; i < G_N_ELEMENTS(taken); i++) {
    gchar *line = g_strdup_printf("%s name=e fft-size=%u", taken[i].factory, taken[i].size);
    GError *error = NULL;
    GstElement *parsed = gst_parse_launch(line, &error);
    fail_unless(parsed != NULL && error == NULL, "\"%s\": %s", line,
                error ? error->message : "no element");
    guint got = 0;
    g_object_get(parsed, "fft-size", &got, NULL);
    fail_unless(got == taken[i].size, "\"%s\": fft-size reads %u", line, got);
    gst_object_unref(parsed);
    g_free(line);
  }
  /* not a number: the parse fails, as gst-launch-1.0 reports it */
  static const char *const words[] = {"cudaspectrum fft-size=abc", "cudaspectrumscope fft-size=1e3",
                                      "cudafft fft-size=1000.5"};
  for (guint i = 0; i < G_N_ELEMENTS(words); i++) {
    GError *error = NULL;
    GstElement *parsed = gst_parse_launch(words[i], &error);
    fail_unless(error != NULL &&
                    g_error_matches(error, GST_PARSE_ERROR, GST_PARSE_ERROR_COULD_NOT_SET_PROPERTY),
                "\"%s\" parsed without \"could not set property\"", words[i]);
    g_clear_error(&error);
    if (parsed)
      gst_object_unref(parsed);
  }
  /* outside the range: GLib's own warning, and the size in effect stays */
  static const char *const outside[] = {"cudaspectrum name=e fft-size=100000",
                                        "cudaspectrumscope name=e fft-size=8",
                                        "cudafft name=e fft-size=32768"};
  for (guint i = 0; i < G_N_ELEMENTS(outside); i++) {
    GError *error = NULL;
    GstElement *parsed = NULL;
    ASSERT_WARNING(parsed = gst_parse_launch(outside[i], &error));
    fail_unless(parsed != NULL && error == NULL, "\"%s\": %s", outside[i],
                error ? error->message : "no element");
    expect_value(parsed, "fft-size", "4096", outside[i]);
    g_clear_error(&error);
    gst_object_unref(parsed);
  }
  /* in a pipeline: the WARNING names the nearest sizes the element takes */
  static const struct {
    const char *factory;
    guint size, below, above;
  } refused[] = {{"cudaspectrumscope", 1001, 1000, 1008},
                 {"cudaspectrumscope", 16383, 16200, 16384},
                 {"cudaspectrum", 1001, 1000, 1008},
                 {"cudaspectrum", 1125, 1120, 1134},
                 {"cudaspectrum", 17, 16, 18},
                 {"cudafft", 1125 + 2, 1125, 1134}};
  for (guint i = 0; i < G_N_ELEMENTS(refused); i++) {
    GstElement *pipeline = gst_pipeline_new(NULL);
    GstElement *e = gst_element_factory_make(refused[i].factory, NULL);
    gst_bin_add(GST_BIN(pipeline), e);
    g_object_set(e, "fft-size", 2048, NULL);
    GstBus *bus = gst_element_get_bus(pipeline);
    g_object_set(e, "fft-size", (gint)refused[i].size, NULL);
    GstMessage *m = gst_bus_timed_pop_filtered(bus, GST_SECOND, GST_MESSAGE_WARNING);
    fail_unless(m != NULL, "%s fft-size=%u: no WARNING", refused[i].factory, refused[i].size);
    GError *err = NULL;
    gst_message_parse_warning(m, &err, NULL);
    gchar *nearest =
        g_strdup_printf("the nearest are %u and %u", refused[i].below, refused[i].above);
    fail_unless(err && strstr(err->message, nearest) && strstr(err->message, "fft-size=2048"),
                "%s fft-size=%u: the WARNING does not say \"%s\" and \"fft-size=2048\": %s",
                refused[i].factory, refused[i].size, nearest, err ? err->message : "");
    expect_value(e, "fft-size", "2048", refused[i].factory);
    g_free(nearest);
    g_clear_error(&err);
    gst_message_unref(m);
    gst_object_unref(bus);
    gst_object_unref(pipeline);
  }
}
GST_END_TEST;

/* The pipeline running each element on this backend, the element named e. */
static gchar *
running_line(const char *factory)
{
  const char *src = "audiotestsrc is-live=true samplesperbuffer=480 ! "
                    "audio/x-raw,format=F32LE,rate=48000,channels=2";
  if (strcmp(factory, "cudaifft") == 0)
    return g_strdup_printf("%s ! cudafft backend=%s ! cudaifft name=e backend=%s ! fakesink "
                           "sync=false",
                           src, eu_backend, eu_backend);
  if (strcmp(factory, "cudaspectrumscope") == 0)
    return g_strdup_printf("%s ! cudaspectrumscope name=e backend=%s ! fakesink sync=false", src,
                           eu_backend);
  if (strcmp(factory, "cudamelspectrogram") == 0) /* the engine's defaults are for 16 kHz */
    return g_strdup_printf("%s ! cudamelspectrogram name=e backend=%s preset=kaldi-fbank ! "
                           "fakesink sync=false",
                           src, eu_backend);
  if (strcmp(factory, "cudamatrixconvolve") == 0) /* it needs responses to run */
    return g_strdup_printf("%s ! cudamatrixconvolve name=e backend=%s "
                           "matrix=\"<<1, 0.5>, <0>, <0>, <1>>\" ! fakesink sync=false",
                           src, eu_backend);
  return g_strdup_printf("%s ! %s name=e backend=%s ! fakesink sync=false", src, factory,
                         eu_backend);
}

/* backend and cuda-device-id take effect at the start: once running they are refused with a
 * WARNING, in PAUSED and PLAYING; the same value again says nothing; in NULL a change is taken. */
GST_START_TEST(test_start_properties_refused_while_running)
{
  const char *other_backend = strcmp(eu_backend, "cpu") == 0 ? "auto" : "cpu";
  for (guint f = 0; f < G_N_ELEMENTS(factories); f++) {
    for (guint state = GST_STATE_PAUSED; state <= GST_STATE_PLAYING; state++) {
      gchar *row = g_strdup_printf("%s in %s", factories[f], gst_element_state_get_name(state));
      gchar *line = running_line(factories[f]);
      GError *error = NULL;
      GstElement *pipeline = gst_parse_launch(line, &error);
      fail_unless(pipeline && !error, "%s: %s", line, error ? error->message : "");
      GstElement *e = gst_bin_get_by_name(GST_BIN(pipeline), "e");
      GstBus *bus = gst_element_get_bus(pipeline);
      gst_element_set_state(pipeline, state);
      fail_unless(gst_element_get_state(pipeline, NULL, NULL, 10 * GST_SECOND) !=
                      GST_STATE_CHANGE_FAILURE,
                  "%s: does not start", row);
      expect_no_warning(bus, row);
      gst_util_set_object_arg(G_OBJECT(e), "backend", other_backend);
      expect_warning(bus, "backend", eu_backend, row);
      expect_value(e, "backend", eu_backend, row);
      g_object_set(e, "cuda-device-id", 3, NULL);
      expect_warning(bus, "cuda-device-id", "-1", row);
      expect_value(e, "cuda-device-id", "-1", row);
      /* no change: nothing to refuse */
      gst_util_set_object_arg(G_OBJECT(e), "backend", eu_backend);
      g_object_set(e, "cuda-device-id", -1, NULL);
      expect_no_warning(bus, row);
      /* the element runs on: no ERROR */
      GstMessage *m = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR);
      fail_unless(m == NULL, "%s: an ERROR", row);
      gst_element_set_state(pipeline, GST_STATE_NULL);
      gst_util_set_object_arg(G_OBJECT(e), "backend", other_backend);
      g_object_set(e, "cuda-device-id", 3, NULL);
      expect_no_warning(bus, row);
      expect_value(e, "backend", other_backend, row);
      expect_value(e, "cuda-device-id", "3", row);
      gst_object_unref(bus);
      gst_object_unref(e);
      gst_object_unref(pipeline);
      g_free(line);
      g_free(row);
    }
  }
}
GST_END_TEST;

/* What gst-inspect-1.0 says agrees with what the element does and docs/elements.md says:
 * cudafft's settings change at the next input buffer (the run ends there, the frames tests check
 * that), and its db is of the unnormalised DFT: a sine of amplitude 0.8 at a bin centre, 1024
 * points, hann (sum(w) = 512), reads 20 log10(0.8 * 512 / 2) = +46.2 dB, as the texts say. */
GST_START_TEST(test_documented_texts)
{
  GstElement *e = gst_element_factory_make("cudafft", NULL);
  static const struct {
    const char *property, *words;
  } texts[] = {{"fft-size", "next input buffer"},
               {"representation", "unnormalised DFT"},
               {"representation", "20 log10(A sum(w) / 2)"}};
  for (guint i = 0; i < G_N_ELEMENTS(texts); i++) {
    GParamSpec *spec = g_object_class_find_property(G_OBJECT_GET_CLASS(e), texts[i].property);
    fail_unless(spec && strstr(g_param_spec_get_blurb(spec), texts[i].words),
                "%s's text does not say \"%s\"", texts[i].property, texts[i].words);
  }
  gst_object_unref(e);

  const guint n = 1024, bin = 37, rate = 48000;
  GstHarness *h = eu_harness_new(
      "cudafft backend=%s fft-size=1024 hop=512 window=hann representation=db", eu_backend);
  gst_harness_set_src_caps(h, eu_raw_caps(CUDAFFT_SAMPLE_F32, rate, 1));
  const gsize samples = 8 * n;
  GstBuffer *in = gst_buffer_new_allocate(NULL, samples * sizeof(float), NULL);
  GstMapInfo map;
  gst_buffer_map(in, &map, GST_MAP_WRITE);
  for (gsize i = 0; i < samples; i++)
    ((float *)map.data)[i] = (float)(0.8 * sin(2.0 * G_PI * bin * (double)i / n));
  gst_buffer_unmap(in, &map);
  GST_BUFFER_PTS(in) = 0;
  fail_unless_equals_int(gst_harness_push(h, in), GST_FLOW_OK);
  const double want = 20.0 * log10(0.8 * (n / 2) / 2.0);
  guint frames = 0;
  GstBuffer *out;
  while ((out = gst_harness_try_pull(h)) != NULL) {
    gst_buffer_map(out, &map, GST_MAP_READ);
    const gsize count = map.size / ((n / 2 + 1) * sizeof(float));
    for (gsize f = 0; f < count; f++, frames++) {
      const float *db = (const float *)map.data + f * (n / 2 + 1);
      /* the first frames hold the lead of zeros: from the third on, every sample is the sine */
      if (frames >= 2)
        fail_unless(fabs(db[bin] - want) < 0.01, "frame %u: %g dB at the sine's bin, expected %g",
                    frames, db[bin], want);
    }
    gst_buffer_unmap(out, &map);
    gst_buffer_unref(out);
  }
  fail_unless(frames >= 10, "only %u frames", frames);
  gst_harness_teardown(h);
}
GST_END_TEST;

/* gst-inspect-1.0's description line of every element says that it runs on the CPU too, and how
 * (backend=cpu, FFTW), as its doc block does. */
GST_START_TEST(test_descriptions_say_cpu)
{
  for (guint f = 0; f < G_N_ELEMENTS(factories); f++) {
    GstElementFactory *factory = gst_element_factory_find(factories[f]);
    fail_unless(factory != NULL, "no %s", factories[f]);
    const gchar *description =
        gst_element_factory_get_metadata(factory, GST_ELEMENT_METADATA_DESCRIPTION);
    fail_unless(description && strstr(description, "GPU") && strstr(description, "CPU") &&
                    strstr(description, "backend=cpu") && strstr(description, "FFTW"),
                "%s's description does not say it runs on the CPU (backend=cpu, FFTW) too: %s",
                factories[f], description ? description : "(none)");
    gst_object_unref(factory);
  }
  GstPlugin *plugin = gst_registry_find_plugin(gst_registry_get(), "cudafft");
  fail_unless(plugin != NULL, "no cudafft plugin");
  const gchar *description = gst_plugin_get_description(plugin);
  fail_unless(description && strstr(description, "backend=cpu") && strstr(description, "FFTW"),
              "the plugin's description does not say it runs on the CPU too: %s",
              description ? description : "(none)");
  gst_object_unref(plugin);
}
GST_END_TEST;

/* Every property of ours is described in a line or two of gst-inspect-1.0, as GStreamer's own
 * (spectrum's longest is about 100 characters); the rules behind it are docs/elements.md's. The
 * properties of GStreamer's base classes (GstBaseTransform's qos, GstAudioVisualizer's shader)
 * are theirs. */
#define MAX_BLURB 130

GST_START_TEST(test_blurbs_short)
{
  guint checked = 0;
  for (guint f = 0; f < G_N_ELEMENTS(factories); f++) {
    GstElement *e = NULL;
    guint n = 0;
    GParamSpec **specs = element_specs(f, &e, &n);
    for (guint i = 0; i < n; i++) {
      if (!g_str_has_prefix(g_type_name(specs[i]->owner_type), "GstCuda"))
        continue;
      const gchar *blurb = g_param_spec_get_blurb(specs[i]);
      const gsize length = blurb ? strlen(blurb) : 0;
      if (length == 0 || length > MAX_BLURB)
        fail("%s's %s: a description of %" G_GSIZE_FORMAT " characters (1 to %d): %s", factories[f],
             specs[i]->name, length, MAX_BLURB, blurb ? blurb : "(none)");
      checked++;
    }
    g_free(specs);
    gst_object_unref(e);
  }
  fail_unless(checked > 60, "only %u properties checked: are the elements all there?", checked);
}
GST_END_TEST;

/* Pairs in either order ---------------------------------------------------------------------- */

#define PAIR_RATE 48000
#define PAIR_CAPS "audio/x-raw,format=F32LE,rate=48000,channels=2"

/* Two values that only make sense together, each of which the element takes alone from its
 * defaults in one order only (or in neither, where noted): the pair is checked when it takes
 * effect, so both orders give it. `start` is set first, by itself (a layout the pair moves). */
typedef struct {
  const char *factory, *start;
  const char *first, *second;
  double first_value, second_value;
} Pair;

static const Pair pairs[] = {
    /* db-min=10 alone is above db-max's default 0, db-max=-100 alone below db-min's -90 */
    {"cudaspectrumscope", "", "db-min", "db-max", 10.0, 20.0},
    {"cudaspectrumscope", "", "db-max", "db-min", -100.0, -120.0},
    /* a range moved past the one set before: min 3000 alone is above max 2000 */
    {"cudaspectrumscope", "min-frequency=1000 max-frequency=2000", "min-frequency", "max-frequency",
     3000.0, 6000.0},
    {"cudaspectrumscope", "min-frequency=3000 max-frequency=6000", "max-frequency", "min-frequency",
     2000.0, 1000.0},
    {"cudaspectrum", "frequency-scale=log min-frequency=1000 max-frequency=2000", "min-frequency",
     "max-frequency", 3000.0, 6000.0},
    {"cudaspectrum", "frequency-scale=log min-frequency=3000 max-frequency=6000", "max-frequency",
     "min-frequency", 2000.0, 1000.0},
};

static void
expect_double(GstElement *e, const char *property, double want, const char *row)
{
  double got = 0.0;
  g_object_get(e, property, &got, NULL);
  fail_unless(got == want, "%s: %s reads %g, expected %g", row, property, got, want);
}

/* Runs `pipeline` (its element under test named e) to EOS: no WARNING, no ERROR. */
static void
run_clean(GstElement *pipeline, const char *row)
{
  GstBus *bus = gst_element_get_bus(pipeline);
  gst_element_set_state(pipeline, GST_STATE_PLAYING);
  GstMessage *m = gst_bus_timed_pop_filtered(
      bus, 30 * GST_SECOND, GST_MESSAGE_EOS | GST_MESSAGE_ERROR | GST_MESSAGE_WARNING);
  GError *err = NULL;
  if (m && GST_MESSAGE_TYPE(m) == GST_MESSAGE_ERROR)
    gst_message_parse_error(m, &err, NULL);
  else if (m && GST_MESSAGE_TYPE(m) == GST_MESSAGE_WARNING)
    gst_message_parse_warning(m, &err, NULL);
  fail_unless(m && GST_MESSAGE_TYPE(m) == GST_MESSAGE_EOS, "%s: %s instead of EOS: %s", row,
              m ? GST_MESSAGE_TYPE_NAME(m) : "nothing", err ? err->message : "");
  gst_message_unref(m);
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(bus);
}

static gchar *
pair_line(const Pair *p, const char *properties)
{
  return g_strdup_printf("audiotestsrc num-buffers=10 ! " PAIR_CAPS " ! %s name=e backend=%s %s "
                         "%s ! fakesink",
                         p->factory, eu_backend, p->start, properties);
}

/* gst-launch-1.0 sets a line's properties in its order, an application in its own: both orders
 * of each pair, in a launch line and by g_object_set(), are taken as they are, read back as
 * set, and the element runs with them (no WARNING, no ERROR). */
GST_START_TEST(test_pairs_in_either_order)
{
  for (guint i = 0; i < G_N_ELEMENTS(pairs); i++) {
    const Pair *p = &pairs[i];
    for (guint order = 0; order < 2; order++) {
      const char *a = order ? p->second : p->first, *b = order ? p->first : p->second;
      const double va = order ? p->second_value : p->first_value;
      const double vb = order ? p->first_value : p->second_value;
      /* a launch line */
      gchar *properties = g_strdup_printf("%s=%g %s=%g", a, va, b, vb);
      gchar *line = pair_line(p, properties);
      GError *error = NULL;
      GstElement *pipeline = gst_parse_launch(line, &error); /* a g_warning fails the test */
      fail_unless(pipeline && !error, "%s: %s", line, error ? error->message : "");
      GstElement *e = gst_bin_get_by_name(GST_BIN(pipeline), "e");
      expect_double(e, a, va, line);
      expect_double(e, b, vb, line);
      run_clean(pipeline, line);
      gst_object_unref(e);
      gst_object_unref(pipeline);
      g_free(line);
      /* g_object_set(), one property at a time in this order, then in one call */
      for (guint call = 0; call < 2; call++) {
        gchar *row = g_strdup_printf("%s %s: g_object_set %s", p->factory, properties,
                                     call ? "in one call" : "one at a time");
        line = pair_line(p, "");
        pipeline = gst_parse_launch(line, &error);
        fail_unless(pipeline && !error, "%s: %s", line, error ? error->message : "");
        e = gst_bin_get_by_name(GST_BIN(pipeline), "e");
        if (call) {
          g_object_set(e, a, va, b, vb, NULL);
        } else {
          g_object_set(e, a, va, NULL);
          g_object_set(e, b, vb, NULL);
        }
        expect_double(e, a, va, row);
        expect_double(e, b, vb, row);
        run_clean(pipeline, row);
        gst_object_unref(e);
        gst_object_unref(pipeline);
        g_free(line);
        g_free(row);
      }
      g_free(properties);
    }
  }
}
GST_END_TEST;

/* A band layout without bands at the stream's rate: cudaspectrum and cudaspectrumscope answer
 * alike. At the start, one ERROR in the whole pipeline, the element's, naming the values, the
 * rate and what would give bands (the Nyquist frequency; the nearest midbands). */
GST_START_TEST(test_layout_without_bands_at_start)
{
  static const struct {
    const char *properties;
    const char *words[4];
  } layouts[] = {
      {"frequency-scale=log min-frequency=30000",
       {"min-frequency=30000", "48000 Hz", "24000 Hz", NULL}},
      {"frequency-scale=octave bands-per-octave=1 min-frequency=1100 max-frequency=1900",
       {"min-frequency=1100", "max-frequency=1900", "1000 Hz and 1995.3 Hz", NULL}},
  };
  static const char *const elements[] = {"cudaspectrum", "cudaspectrumscope"};
  for (guint f = 0; f < G_N_ELEMENTS(elements); f++)
    for (guint i = 0; i < G_N_ELEMENTS(layouts); i++) {
      gchar *line = g_strdup_printf("audiotestsrc num-buffers=20 ! " PAIR_CAPS " ! %s name=e "
                                    "backend=%s %s ! fakesink",
                                    elements[f], eu_backend, layouts[i].properties);
      eu_check_one_error(line, 2, layouts[i].words);
      g_free(line);
    }
}
GST_END_TEST;

/* `frames` frames of a stereo 1 kHz sine at PAIR_RATE from *pts on (advanced). */
static void
push_audio(GstHarness *h, gsize frames, GstClockTime *pts)
{
  GstBuffer *buffer = gst_buffer_new_allocate(NULL, frames * 2 * sizeof(float), NULL);
  GstMapInfo map;
  gst_buffer_map(buffer, &map, GST_MAP_WRITE);
  float *x = (float *)map.data;
  const guint64 first = gst_util_uint64_scale_round(*pts, PAIR_RATE, GST_SECOND);
  for (gsize i = 0; i < frames; i++)
    x[2 * i] = x[2 * i + 1] = (float)(0.5 * sin(2.0 * G_PI * 1000.0 * (first + i) / PAIR_RATE));
  gst_buffer_unmap(buffer, &map);
  GST_BUFFER_PTS(buffer) = *pts;
  GST_BUFFER_DURATION(buffer) = gst_util_uint64_scale_round(frames, GST_SECOND, PAIR_RATE);
  *pts += GST_BUFFER_DURATION(buffer);
  fail_unless_equals_int(gst_harness_push(h, buffer), GST_FLOW_OK);
  GstBuffer *out;
  while ((out = gst_harness_try_pull(h)) != NULL)
    gst_buffer_unref(out);
}

/* The element `factory` with `properties`, named e, in a harness fed PAIR_CAPS. */
static GstHarness *
playing_harness(const char *factory, const char *properties, GstBus **bus, GstElement **e)
{
  GstHarness *h = eu_harness_new("%s name=e backend=%s %s", factory, eu_backend, properties);
  if (strcmp(factory, "cudaspectrumscope") == 0)
    gst_harness_set_sink_caps_str(h, "video/x-raw,format=BGRx,width=64,height=64,framerate=25/1");
  gst_harness_set_src_caps(h, eu_raw_caps(CUDAFFT_SAMPLE_F32, PAIR_RATE, 2));
  *bus = eu_harness_bus(h);
  *e = eu_harness_element(h, "e");
  return h;
}

/* While playing, a layout without bands is refused with a WARNING naming the layout kept, the
 * layout in force stays, and the properties read back what is in force; a layout with bands set
 * after it is taken. */
GST_START_TEST(test_layout_without_bands_while_playing)
{
  static const char *const elements[] = {"cudaspectrum", "cudaspectrumscope"};
  for (guint f = 0; f < G_N_ELEMENTS(elements); f++) {
    GstBus *bus;
    GstElement *e;
    gchar *properties =
        g_strdup_printf("%s frequency-scale=log min-frequency=100 max-frequency=10000",
                        strcmp(elements[f], "cudaspectrum") == 0 ? "interval=20000000" : "");
    GstHarness *h = playing_harness(elements[f], properties, &bus, &e);
    g_free(properties);
    GstClockTime pts = 0;
    push_audio(h, 4800, &pts);
    expect_no_warning(bus, elements[f]);
    g_object_set(e, "min-frequency", 30000.0, NULL);
    push_audio(h, 4800, &pts);
    expect_warning(bus, "min-frequency", "100", elements[f]);
    expect_no_warning(bus, elements[f]); /* once */
    expect_double(e, "min-frequency", 100.0, elements[f]);
    expect_double(e, "max-frequency", 10000.0, elements[f]);
    push_audio(h, 4800, &pts);
    expect_no_warning(bus, elements[f]);
    g_object_set(e, "min-frequency", 200.0, "max-frequency", 20000.0, NULL);
    push_audio(h, 4800, &pts);
    expect_no_warning(bus, elements[f]);
    expect_double(e, "min-frequency", 200.0, elements[f]);
    expect_double(e, "max-frequency", 20000.0, elements[f]);
    GstMessage *m = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR);
    fail_unless(m == NULL, "%s: an ERROR", elements[f]);
    gst_object_unref(e);
    eu_harness_teardown(h, bus);
  }
}
GST_END_TEST;

/* A refused value reads back as the value in force: cudafft's hop larger than fft-size, set
 * either way while playing (the frames in force go on), and cudaspectrumscope's db-min not below
 * db-max while playing; a pair moved past each other between two buffers is taken. */
GST_START_TEST(test_refused_reads_back_in_force)
{
  GstBus *bus;
  GstElement *e;
  GstHarness *h = playing_harness("cudafft", "fft-size=1024 hop=512", &bus, &e);
  GstClockTime pts = 0;
  push_audio(h, 4096, &pts);
  g_object_set(e, "hop", 4096, NULL);
  push_audio(h, 4096, &pts);
  expect_warning(bus, "hop", "512", "cudafft hop=4096");
  expect_value(e, "hop", "512", "cudafft hop=4096");
  expect_value(e, "fft-size", "1024", "cudafft hop=4096");
  g_object_set(e, "fft-size", 256, NULL);
  push_audio(h, 4096, &pts);
  expect_warning(bus, "fft-size", "1024", "cudafft fft-size=256");
  expect_value(e, "hop", "512", "cudafft fft-size=256");
  expect_value(e, "fft-size", "1024", "cudafft fft-size=256");
  /* hop 0 (fft-size / 2) in force: it reads back 0 */
  g_object_set(e, "hop", 0, NULL);
  push_audio(h, 4096, &pts);
  g_object_set(e, "fft-size", 256, "hop", 1024, NULL);
  push_audio(h, 4096, &pts);
  expect_warning(bus, "hop", "0", "cudafft fft-size=256 hop=1024");
  expect_value(e, "hop", "0", "cudafft fft-size=256 hop=1024");
  expect_value(e, "fft-size", "1024", "cudafft fft-size=256 hop=1024");
  /* the same refused value again is refused again */
  g_object_set(e, "hop", 4096, NULL);
  push_audio(h, 4096, &pts);
  expect_warning(bus, "hop", "0", "cudafft hop=4096 again");
  expect_value(e, "hop", "0", "cudafft hop=4096 again");
  /* both moved, in either order, between two buffers */
  g_object_set(e, "hop", 2048, NULL);
  g_object_set(e, "fft-size", 4096, NULL);
  push_audio(h, 4096, &pts);
  expect_no_warning(bus, "cudafft hop=2048 fft-size=4096");
  expect_value(e, "hop", "2048", "cudafft hop=2048 fft-size=4096");
  expect_value(e, "fft-size", "4096", "cudafft hop=2048 fft-size=4096");
  gst_object_unref(e);
  eu_harness_teardown(h, bus);

  h = playing_harness("cudaspectrumscope", "", &bus, &e);
  pts = 0;
  push_audio(h, 4800, &pts);
  g_object_set(e, "db-min", 10.0, NULL);
  push_audio(h, 4800, &pts);
  expect_warning(bus, "db-min", "-90", "cudaspectrumscope db-min=10");
  expect_double(e, "db-min", -90.0, "cudaspectrumscope db-min=10");
  expect_double(e, "db-max", 0.0, "cudaspectrumscope db-min=10");
  g_object_set(e, "db-max", -100.0, NULL);
  g_object_set(e, "db-min", -120.0, NULL);
  push_audio(h, 4800, &pts);
  expect_no_warning(bus, "cudaspectrumscope db-max=-100 db-min=-120");
  expect_double(e, "db-min", -120.0, "cudaspectrumscope db-max=-100 db-min=-120");
  expect_double(e, "db-max", -100.0, "cudaspectrumscope db-max=-100 db-min=-120");
  GstMessage *m = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR);
  fail_unless(m == NULL, "an ERROR");
  gst_object_unref(e);
  eu_harness_teardown(h, bus);
}
GST_END_TEST;

static Suite *
properties_suite(void)
{
  TCase *tc;
  Suite *s = eu_suite("properties", &tc);
  tcase_add_test(tc, test_same_property_same_type);
  tcase_add_test(tc, test_refused_outside_pipeline);
  tcase_add_test(tc, test_refused_in_pipeline);
  tcase_add_test(tc, test_fft_size_from_launch_lines);
  tcase_add_test(tc, test_start_properties_refused_while_running);
  tcase_add_test(tc, test_documented_texts);
  tcase_add_test(tc, test_descriptions_say_cpu);
  tcase_add_test(tc, test_blurbs_short);
  tcase_add_test(tc, test_pairs_in_either_order);
  tcase_add_test(tc, test_layout_without_bands_at_start);
  tcase_add_test(tc, test_layout_without_bands_while_playing);
  tcase_add_test(tc, test_refused_reads_back_in_force);
  return s;
}

EU_MAIN(properties_suite)
