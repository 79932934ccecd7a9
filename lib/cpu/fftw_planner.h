/* fftw_planner.h: what every CPU backend shares: FFTW's planner behind one process-wide lock.
 * Internal to the library.
 *
 * FFTW's planner (every fftwf_plan_* and fftwf_destroy_plan call, and their fftw_ twins in double
 * precision) is not thread-safe, while the API lets engine objects be created and destroyed from
 * different threads: every CPU backend plans through this lock, in either precision (one lock
 * for both keeps the rule simple; planning is rare). Executing a plan needs no lock. The first
 * lock also makes FFTW's planner thread-safe for the whole process (fftw_make_planner_thread_safe
 * and its single-precision twin), so that planning elsewhere in the process (an application's
 * own FFTW, the tests' double-precision references) cannot race with ours. */
#ifndef CUDAFFT_FFTW_PLANNER_H
#define CUDAFFT_FFTW_PLANNER_H

#include <fftw3.h>

void cudafft_fftw_planner_lock(void);
void cudafft_fftw_planner_unlock(void);

/* fftwf_destroy_plan under the lock; NULL allowed. */
void cudafft_fftw_destroy(fftwf_plan plan);

/* fftw_destroy_plan (FFTW double) under the lock; NULL allowed. */
void cudafft_fftw_destroy_double(fftw_plan plan);

#endif
