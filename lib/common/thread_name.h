/* thread_name.h: naming the library's own threads. Internal to the library. */
#ifndef CUDAFFT_THREAD_NAME_H
#define CUDAFFT_THREAD_NAME_H

/* Names the calling thread (Linux: the first 15 characters; elsewhere nothing), so that top, perf
 * and gdb tell the library's threads from the streaming threads that made them (whose names they
 * would inherit). */
void cudafft_name_this_thread(const char *name);

#endif /* CUDAFFT_THREAD_NAME_H */
