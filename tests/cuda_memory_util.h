/* cuda_memory_util.h: what the CUDA-memory element tests share (test_cuda_memory.c: the scope's
 * frames and the shared context; test_cuda_memory_audio.c: audio and frames between our elements):
 * random audio, pipelines fed from an appsrc and drained from an appsink, and the comparisons of
 * their buffers. */
#ifndef CUDAFFT_CUDA_MEMORY_UTIL_H
#define CUDAFFT_CUDA_MEMORY_UTIL_H

#include "element_util.h"

#define CM_RATE 48000
#define CM_CHANNELS 2
#define CM_FRAMES (CM_RATE / 2) /* half a second of audio: 15 frames at 30 fps */

/* Half a second of random F32 stereo audio at 48 kHz, from the random stream named `label`. */
void random_signal(TestSignal *s, const char *label);

/* gst_parse_launch of the printf-style description; fails the test where it cannot be made. */
GstElement *launch(const char *format, ...) G_GNUC_PRINTF(1, 2);

/* Pushes the whole signal into the appsrc named "src" in 480-frame buffers, and EOS. */
void push_signal(GstElement *pipeline, const TestSignal *s);

/* Every sample up to EOS from the appsink named "sink", into out (GstSample). */
void pull_all(GstElement *pipeline, GPtrArray *out);

/* The first ERROR of the pipeline's bus, if any (*text: message | debug). Pops (and so discards)
 * every message before it. */
gboolean pipeline_error(GstElement *pipeline, gchar **text);

/* An empty list of GstSamples. */
GPtrArray *frame_list(void);

/* Plays pipeline over s to EOS, its samples into out; no ERROR may come. It stays PLAYING. */
void play_to_eos(GstElement *pipeline, const TestSignal *s, GPtrArray *out);

/* Cycle `cycle` (0, 1, ...) of a pipeline's state cycles: to PLAYING, with a flush before any data
 * from the second on (the runs start afresh; appsink keeps its EOS through READY, and the flush
 * clears it), s through to EOS into out (no ERROR may come), then back to READY (even cycles) or
 * NULL (odd ones). The samples outlive the state change. */
void play_cycle(GstElement *pipeline, const TestSignal *s, guint cycle, GPtrArray *out);

gboolean is_cuda_memory(GstBuffer *buffer);
gboolean caps_have_cuda_memory(GstCaps *caps);

/* How many of the samples' buffers are CUDA memory. */
guint count_cuda_memory(GPtrArray *samples);

/* appsrc ! MIDDLE ! appsink for s (the audio caps on appsrc, named "src" and "sink"). */
GstElement *audio_pipeline(const TestSignal *s, const char *middle);

/* audio_pipeline() over s to EOS; the buffers into out. */
void run_audio(const TestSignal *s, const char *middle, GPtrArray *out);

/* Every buffer of got byte for byte, with its timestamps, the one of want at the same place. */
void check_same_buffers(GPtrArray *got, GPtrArray *want, const char *what);

/* Pad probe: keeps the caps of the CAPS events passing in *(GstCaps **)data. */
GstPadProbeReturn keep_caps(GstPad *pad, GstPadProbeInfo *info, gpointer data);

/* Counts into *fenced the buffers element `name` of pipeline pushes before their device work is
 * done (they carry the plugin's fence meta, looked up by its name). */
void watch_fences(GstElement *pipeline, const char *name, gint *fenced);

/* Fails the test where GStreamer has no element `name` (nvcodec's cudaupload, cudadownload). */
void require_element(const char *name);

#endif
