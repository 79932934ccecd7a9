/* streams_util.h: what the library's streams tests (test_stft_streams, test_spectrum_streams)
 * share: the threads that stream beside each other, the create/destroy cycles beside them, and on
 * the CUDA backend the object whose state cannot fit the device's memory while they stream. */
#ifndef CUDAFFT_STREAMS_UTIL_H
#define CUDAFFT_STREAMS_UTIL_H

#include <cudafft/common.h>

#include <pthread.h>
#include <stddef.h>

/* Creations take it shared; the device-memory check takes it alone, so that no object is being
 * made while the device is full (the streaming objects, made before, go on). */
extern pthread_rwlock_t streams_create_lock;

/* Counts a finished session (of any thread). */
void streams_session_done(void);

/* The object made with the device's memory taken (device 0's: `create` must pin it there, since
 * with -1 a host with two GPUs takes it on the other): `create` makes it (*object set on success),
 * `destroy` releases it; its failure must name `word` and the sizes ("MB"). */
typedef struct {
  const char *what;
  CudafftStatus (*create)(void **object);
  void (*destroy)(void *object);
  const char *word;
} StreamsTooLarge;

/* An engine's objects and sessions, as the streams run them (object and session are the test's own
 * structs of object_size and session_size bytes). */
typedef struct {
  size_t object_size, session_size;
  /* Makes object i of streaming thread t from a random configuration of its own; returns how many
   * sessions it streams (0: it could not be made, a failure the test has noted). */
  unsigned (*make)(void *object, unsigned t, unsigned i);
  /* Makes the small object of create/destroy cycle `cycle`; returns whether it was made. */
  int (*make_small)(void *object, unsigned cycle);
  const char *(*label)(const void *object);
  /* Starts a session of the object (brief: a short one, for the cycles), after a reset. */
  void (*start)(void *session, void *object, const char *label, int brief);
  /* One push (or the end of the session); returns whether the session has ended (checked and
   * cleared). */
  int (*step)(void *session);
  void (*destroy)(void *object);
} StreamsEngine;

/* Streams `threads` threads of `objects` objects each, every thread stepping through its objects'
 * sessions in turn (one push of each, round and round); beside them one thread of `cycles`
 * create / brief session / destroy cycles. On the CUDA backend (CUDA builds), once threads x
 * objects sessions have finished (the streams are under way), it takes the device's memory through
 * the executor's pool until 64 to 128 MB are left, checks that too_large's object fails with
 * DEVICE_OUT_OF_MEMORY naming the sizes, gives the memory back and checks that the object is made
 * then (reported checks). Reports how many objects were made and cycles completed (checks).
 * Meanwhile no streaming object may need device memory: the tests launch every kernel of theirs
 * once beforehand (local memory) and run with CUDA_MODULE_LOADING=EAGER (meson sets it), so that
 * no kernel's code is loaded at a first launch while the memory is taken. */
void streams_run(CudafftBackend backend, const StreamsEngine *engine, unsigned threads,
                 unsigned objects, unsigned cycles, const StreamsTooLarge *too_large);

#endif
