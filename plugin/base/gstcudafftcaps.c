/* gstcudafftcaps.c: see the header. */
#include "gstcudafftcaps.h"

static const GEnumValue window_values[] = {
    {GST_CUDAFFT_WINDOW_RECTANGULAR, "Rectangular (no window)", "rectangular"},
    {GST_CUDAFFT_WINDOW_HANN, "Hann", "hann"},
    {GST_CUDAFFT_WINDOW_HAMMING, "Hamming", "hamming"},
    {GST_CUDAFFT_WINDOW_BLACKMAN, "Blackman", "blackman"},
    {GST_CUDAFFT_WINDOW_BLACKMAN_HARRIS, "Blackman-Harris (4 terms)", "blackman-harris"},
    {0, NULL, NULL},
};

static const GEnumValue representation_values[] = {
    {GST_CUDAFFT_REPRESENTATION_COMPLEX, "Complex bins (re, im)", "complex"},
    {GST_CUDAFFT_REPRESENTATION_MAGNITUDE, "Magnitudes |X|", "magnitude"},
    {GST_CUDAFFT_REPRESENTATION_POWER, "Powers |X|^2", "power"},
    {GST_CUDAFFT_REPRESENTATION_DB,
     "Powers in dB of the unnormalised DFT, 10 log10 |X|^2 (floor -200 dB): not dBFS", "db"},
    {0, NULL, NULL},
};

GType
gst_cudafft_window_get_type(void)
{
  static GType type = 0;
  if (g_once_init_enter(&type)) {
    GType t = g_enum_register_static("GstCudafftWindow", window_values);
    g_once_init_leave(&type, t);
  }
  return type;
}

GType
gst_cudafft_representation_get_type(void)
{
  static GType type = 0;
  if (g_once_init_enter(&type)) {
    GType t = g_enum_register_static("GstCudafftRepresentation", representation_values);
    g_once_init_leave(&type, t);
  }
  return type;
}

static const gchar *
nick_of(const GEnumValue *values, gint value)
{
  for (; values->value_nick; values++)
    if (values->value == value)
      return values->value_nick;
  return NULL;
}

static gboolean
value_of(const GEnumValue *values, const gchar *nick, gint *value)
{
  for (; nick && values->value_nick; values++)
    if (g_str_equal(values->value_nick, nick)) {
      *value = values->value;
      return TRUE;
    }
  return FALSE;
}

const gchar *
gst_cudafft_window_nick(GstCudafftWindow window)
{
  return nick_of(window_values, window);
}

const gchar *
gst_cudafft_representation_nick(GstCudafftRepresentation representation)
{
  return nick_of(representation_values, representation);
}

/* A list of the nicks of `values`. */
static void
set_nicks(GstStructure *s, const gchar *field, const GEnumValue *values)
{
  GValue list = G_VALUE_INIT;
  gst_value_list_init(&list, 0);
  for (; values->value_nick; values++) {
    GValue nick = G_VALUE_INIT;
    g_value_init(&nick, G_TYPE_STRING);
    g_value_set_static_string(&nick, values->value_nick);
    gst_value_list_append_and_take_value(&list, &nick);
  }
  gst_structure_take_value(s, field, &list);
}

GstCaps *
gst_cudafft_frames_template_caps(void)
{
  GstStructure *s =
      gst_structure_new(GST_CUDAFFT_FRAMES_MEDIA_TYPE, "format", G_TYPE_STRING, "F32LE", NULL);
  set_nicks(s, "representation", representation_values);
  gst_structure_set(s, "fft-size", GST_TYPE_INT_RANGE, CUDAFFT_MIN_SIZE, CUDAFFT_MAX_SIZE, "hop",
                    GST_TYPE_INT_RANGE, 1, CUDAFFT_MAX_SIZE, NULL);
  set_nicks(s, "window", window_values);
  /* channels: any count, so that more than CUDAFFT_MAX_CHANNELS is refused by the element with a
   * message (gstcudafftaudiofilter.h) rather than by a link */
  gst_structure_set(s, "bins", GST_TYPE_INT_RANGE, CUDAFFT_MIN_SIZE / 2 + 1,
                    CUDAFFT_MAX_SIZE / 2 + 1, "rate", GST_TYPE_INT_RANGE, 1, G_MAXINT, "channels",
                    GST_TYPE_INT_RANGE, 1, G_MAXINT, NULL);
  return gst_caps_new_full(s, NULL);
}

GstStructure *
gst_cudafft_frames_structure_new(guint fft_size, guint hop, GstCudafftWindow window,
                                 GstCudafftRepresentation representation)
{
  return gst_structure_new(
      GST_CUDAFFT_FRAMES_MEDIA_TYPE, "format", G_TYPE_STRING, "F32LE", "representation",
      G_TYPE_STRING, gst_cudafft_representation_nick(representation), "fft-size", G_TYPE_INT,
      (gint)fft_size, "hop", G_TYPE_INT, (gint)hop, "window", G_TYPE_STRING,
      gst_cudafft_window_nick(window), "bins", G_TYPE_INT, (gint)(fft_size / 2 + 1), NULL);
}

void
gst_cudafft_copy_rate_and_channels(const GstStructure *from, GstStructure *to)
{
  const GValue *rate = gst_structure_get_value(from, "rate");
  const GValue *channels = gst_structure_get_value(from, "channels");
  if (rate)
    gst_structure_set_value(to, "rate", rate);
  if (channels)
    gst_structure_set_value(to, "channels", channels);
}

GstCaps *
gst_cudafft_frames_caps_from_info(const GstCudafftFrameInfo *info)
{
  GstStructure *s = gst_cudafft_frames_structure_new(
      (guint)info->config.fft_size, (guint)info->config.hop, (GstCudafftWindow)info->config.window,
      (GstCudafftRepresentation)info->config.representation);
  gst_structure_set(s, "rate", G_TYPE_INT, info->rate, "channels", G_TYPE_INT,
                    (gint)info->config.channels, NULL);
  return gst_caps_new_full(s, NULL);
}

static gboolean
get_int(const GstStructure *s, const gchar *field, gint *value, gchar **why)
{
  if (gst_structure_get_int(s, field, value))
    return TRUE;
  *why = g_strdup_printf("the %s field is missing or not a fixed integer", field);
  return FALSE;
}

gboolean
gst_cudafft_frames_caps_to_info(const GstCaps *caps, GstCudafftFrameInfo *info, gchar **why)
{
  *why = NULL;
  if (!caps || gst_caps_get_size(caps) != 1 || !gst_caps_is_fixed(caps)) {
    *why = g_strdup("the caps are not fixed");
    return FALSE;
  }
  const GstStructure *s = gst_caps_get_structure(caps, 0);
  if (!gst_structure_has_name(s, GST_CUDAFFT_FRAMES_MEDIA_TYPE)) {
    *why = g_strdup_printf("the media type is %s, not " GST_CUDAFFT_FRAMES_MEDIA_TYPE,
                           gst_structure_get_name(s));
    return FALSE;
  }
  const gchar *format = gst_structure_get_string(s, "format");
  if (!format || !g_str_equal(format, "F32LE")) {
    *why = g_strdup_printf("format is %s, not F32LE", format ? format : "missing");
    return FALSE;
  }
  gint window = 0, representation = 0, fft_size = 0, hop = 0, bins = 0, rate = 0, channels = 0;
  const gchar *nick = gst_structure_get_string(s, "representation");
  if (!value_of(representation_values, nick, &representation)) {
    *why = g_strdup_printf("representation %s is unknown", nick ? nick : "is missing and");
    return FALSE;
  }
  nick = gst_structure_get_string(s, "window");
  if (!value_of(window_values, nick, &window)) {
    *why = g_strdup_printf("window %s is unknown", nick ? nick : "is missing and");
    return FALSE;
  }
  if (!get_int(s, "fft-size", &fft_size, why) || !get_int(s, "hop", &hop, why) ||
      !get_int(s, "bins", &bins, why) || !get_int(s, "rate", &rate, why) ||
      !get_int(s, "channels", &channels, why))
    return FALSE;
  if (fft_size < 0 || !cudafft_fft_size_supported((size_t)fft_size)) {
    size_t below = 0, above = 0;
    cudafft_fft_size_nearest(fft_size < 0 ? 0 : (size_t)fft_size, &below, &above);
    *why = g_strdup_printf("fft-size %d is not a supported size (%d to %d with no prime factor "
                           "above 7; the nearest are %zu and %zu)",
                           fft_size, CUDAFFT_MIN_SIZE, CUDAFFT_MAX_SIZE, below, above);
    return FALSE;
  }
  if (hop < 1 || hop > fft_size) {
    *why = g_strdup_printf("hop %d is not in 1..%d (the fft-size)", hop, fft_size);
    return FALSE;
  }
  if (bins != fft_size / 2 + 1) {
    *why = g_strdup_printf("bins is %d, but fft-size %d has %d", bins, fft_size, fft_size / 2 + 1);
    return FALSE;
  }
  if (rate < 1 || channels < 1 || channels > CUDAFFT_MAX_CHANNELS) {
    *why = g_strdup_printf("rate %d or channels %d is out of range (rate >= 1, 1 to %d channels)",
                           rate, channels, CUDAFFT_MAX_CHANNELS);
    return FALSE;
  }
  info->config.fft_size = (size_t)fft_size;
  info->config.hop = (size_t)hop;
  info->config.window = (CudafftWindow)window;
  info->config.representation = (CudafftRepresentation)representation;
  info->config.channels = (unsigned)channels;
  info->config.format = CUDAFFT_SAMPLE_F32;
  info->rate = rate;
  return TRUE;
}

gsize
gst_cudafft_frame_bytes(const GstCudafftFrameInfo *info)
{
  const gsize floats = info->config.representation == CUDAFFT_REPRESENTATION_COMPLEX ? 2 : 1;
  return info->config.channels * (info->config.fft_size / 2 + 1) * floats * sizeof(float);
}

gchar *
gst_cudafft_caps_describe_refusal(GstPad *srcpad, GstCaps *ours, const gchar *element,
                                  const gchar *media)
{
  GstCaps *theirs = gst_pad_peer_query_caps(srcpad, NULL);
  gchar *text = NULL;
  const GstStructure *mine = gst_caps_get_structure(ours, 0);
  for (guint i = 0; !text && i < gst_caps_get_size(theirs); i++) {
    const GstStructure *other = gst_caps_get_structure(theirs, i);
    for (gint f = 0; !text && f < gst_structure_n_fields(mine); f++) {
      const gchar *name = gst_structure_nth_field_name(mine, f);
      const GValue *a = gst_structure_get_value(mine, name);
      const GValue *b = gst_structure_get_value(other, name);
      if (b && !gst_value_can_intersect(a, b)) {
        gchar *want = gst_value_serialize(b), *have = gst_value_serialize(a);
        text = g_strdup_printf("downstream accepts %s=%s, but %s produces %s=%s (set the "
                               "properties to match)",
                               name, want, element, name, have);
        g_free(want);
        g_free(have);
      }
    }
  }
  gst_caps_unref(theirs);
  return text ? text : g_strdup_printf("downstream does not accept %s", media);
}
