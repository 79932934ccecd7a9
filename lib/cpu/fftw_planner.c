/* fftw_planner.c: see the header. */
#include "fftw_planner.h"

#include <pthread.h>

static pthread_mutex_t planner_lock = PTHREAD_MUTEX_INITIALIZER;

void
cudafft_fftw_planner_lock(void)
{
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
