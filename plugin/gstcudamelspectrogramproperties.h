/* gstcudamelspectrogramproperties.h: cudamelspectrogram's properties: preset= and one property
 * per field of the features engine's configuration (cudafft/features.h; the engine takes the
 * rate, channels and sample format from the caps and the precision from the tensor caps), the
 * enumerations they take, and the settings they hold.
 *
 * A preset fills every field; the properties the user sets win, whatever the order in which they
 * and preset= were set: the settings keep each value set and a mask of the properties set, and
 * the configuration is made as the preset's (or the engine's defaults) with the set ones applied
 * over it (gst_cuda_mel_spectrogram_settings_config). Reading a property back gives the value in
 * effect: the one set, else the preset's at the stream's rate. A new property starts here. */
#ifndef GST_CUDA_MEL_SPECTROGRAM_PROPERTIES_H
#define GST_CUDA_MEL_SPECTROGRAM_PROPERTIES_H

#include <cudafft/features.h>
#include <gst/gst.h>

G_BEGIN_DECLS

/* preset=: none, then the library's presets in its order (cudafft_features_preset_name(value -
 * 1)), each named by the library's name. */
typedef enum {
  GST_CUDA_MEL_SPECTROGRAM_PRESET_NONE = 0,
  GST_CUDA_MEL_SPECTROGRAM_PRESET_WHISPER,
  GST_CUDA_MEL_SPECTROGRAM_PRESET_KALDI_FBANK,
  GST_CUDA_MEL_SPECTROGRAM_PRESET_KALDI_MFCC,
  GST_CUDA_MEL_SPECTROGRAM_PRESET_LIBROSA,
  GST_CUDA_MEL_SPECTROGRAM_PRESET_LIBROSA_MFCC,
  GST_CUDA_MEL_SPECTROGRAM_PRESET_TORCHAUDIO,
  GST_CUDA_MEL_SPECTROGRAM_PRESET_TORCHAUDIO_MFCC,
  GST_CUDA_MEL_SPECTROGRAM_PRESET_NEMO,
  GST_CUDA_MEL_SPECTROGRAM_PRESET_COUNT_
} GstCudaMelSpectrogramPreset;

#define GST_TYPE_CUDA_MEL_SPECTROGRAM_PRESET (gst_cuda_mel_spectrogram_preset_get_type())
GType gst_cuda_mel_spectrogram_preset_get_type(void);

/* The rate a preset takes only (Whisper's 16000 Hz), or 0 where it takes any. */
gint gst_cuda_mel_spectrogram_preset_rate(GstCudaMelSpectrogramPreset preset);

/* The rate the properties are read back at before the stream has one. */
#define GST_CUDA_MEL_SPECTROGRAM_DEFAULT_RATE 16000

typedef struct {
  GstCudaMelSpectrogramPreset preset;
  CudafftFeaturesConfig values; /* each property's value as set; only those in `set` count */
  guint64 set;                  /* bit p: property p was set */
  guint generation;             /* changed by every set */
} GstCudaMelSpectrogramSettings;

/* Installs the properties on cudamelspectrogram's class (whose set_property and get_property call
 * the two functions below). */
void gst_cuda_mel_spectrogram_properties_install(GObjectClass *gobject_class);

void gst_cuda_mel_spectrogram_settings_init(GstCudaMelSpectrogramSettings *settings);

/* The configuration in effect for `settings` at `rate` Hz (channels 1, F32 samples and output,
 * for the caller to change): the preset's at that rate (n-mels passed to it where set), or the
 * engine's defaults, then every property set applied over it. FALSE where the preset refuses the
 * rate or n-mels, with *status and *why (g_free) saying why; *config then holds the engine's
 * defaults with the properties set applied, for reading back. Validation of the whole is the
 * engine's (cudafft_features_shape). */
gboolean gst_cuda_mel_spectrogram_settings_config(const GstCudaMelSpectrogramSettings *settings,
                                                  gint rate, CudafftFeaturesConfig *config,
                                                  CudafftStatus *status, gchar **why);

/* set_property for `object` (takes the object lock): records the value and marks the property
 * set. hop-length 0 and an fft-size the engine does not take (gst_cudafft_fft_size_check, as every
 * element's fft-size) are refused (gst_cudafft_refuse_value) and change nothing. */
void gst_cuda_mel_spectrogram_properties_set(GObject *object,
                                             GstCudaMelSpectrogramSettings *settings, guint prop_id,
                                             const GValue *value, GParamSpec *pspec);

/* get_property from `settings` (a copy taken under the object lock) and `effective`, the
 * configuration in effect (gst_cuda_mel_spectrogram_settings_config's). */
void gst_cuda_mel_spectrogram_properties_get(GObject *object,
                                             const GstCudaMelSpectrogramSettings *settings,
                                             const CudafftFeaturesConfig *effective, guint prop_id,
                                             GValue *value, GParamSpec *pspec);

/* Whether two configurations are the same in every field the properties set (and rate,
 * channels, format and precision). */
gboolean gst_cuda_mel_spectrogram_config_equal(const CudafftFeaturesConfig *a,
                                               const CudafftFeaturesConfig *b);

/* The nick of a value of one of the properties' enumerations, for messages and caps. */
const gchar *gst_cuda_mel_spectrogram_kind_nick(CudafftFeaturesKind kind);

G_END_DECLS

#endif
