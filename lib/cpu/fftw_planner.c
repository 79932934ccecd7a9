/* fftw_planner.c: see the header. */
#include "fftw_planner.h"

#include <pthread.h>

static pthread_mutex_t planner_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t hooks_once = PTHREAD_ONCE_INIT;

/* FFTW's planner state is the process's, not ours: an application, or a test's double-precision
 * reference, may plan on another thread while a filter is made. FFTW's own hooks put its lock
 * around every planner call in the process, theirs and ours alike. */
static void
install_fftw_hooks(void)
{
  fftwf_make_planner_thread_safe();
  fftw_make_planner_thread_safe();
}

void
cudafft_fftw_planner_lock(void)
{
  pthread_once(&hooks_once, install_fftw_hooks);
  pthread_mutex_lock(&planner_lock);
}

void
cudafft_fftw_planner_unlock(void)
{
  pthread_mutex_unlock(&planner_lock);
}

void
cudafft_fftw_destroy(fftwf_plan plan)
{
  if (!plan)
    return;
  cudafft_fftw_planner_lock();
  fftwf_destroy_plan(plan);
  cudafft_fftw_planner_unlock();
}

void
cudafft_fftw_destroy_double(fftw_plan plan)
{
  if (!plan)
    return;
  cudafft_fftw_planner_lock();
  fftw_destroy_plan(plan);
  cudafft_fftw_planner_unlock();
}
