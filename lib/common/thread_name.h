/* thread_name.h: the library's own threads: their names, and knowing one. Internal to the
 * library. */
#ifndef CUDAFFT_THREAD_NAME_H
#define CUDAFFT_THREAD_NAME_H

#ifdef __cplusplus
extern "C" {
#endif

/* Names the calling thread (Linux: the first 15 characters; elsewhere nothing), so that top, perf
 * and gdb tell the library's threads from the streaming threads that made them (whose names they
 * would inherit), and marks it as the library's own: no caller's context is kept on it
 * (caller_context.cuh), since nobody but the library runs there and switching back after every
 * call would cost its hot loops for nothing. Every thread the library starts calls it first. */
void cudafft_name_this_thread(const char *name);

/* Whether the calling thread is one of the library's own (named above). */
int cudafft_on_own_thread(void);

#ifdef __cplusplus
}
#endif

#endif /* CUDAFFT_THREAD_NAME_H */
