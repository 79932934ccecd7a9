/* convolve_cuda_direct.cu: the CUDA backend's direct path: the taps in the format's type and a
 * ring of the last taps - 1 input frames; one kind, direct (the tiled direct kernel, then the
 * append to the history ring), batched over every direct object's jobs. */
#include "convolve_cuda_state.cuh"

namespace convolve_cuda {

static size_t
direct_units(const ConvolveJob *j)
{
  const unsigned channels = j->f->channels;
  return units_of(channels, CUDAFFT_CONVOLVE_DIRECT_TILE_CHANNELS(channels)) *
         units_of(j->count, CUDAFFT_CONVOLVE_DIRECT_TILE_FRAMES(channels));
}

static size_t
history_units(const ConvolveJob *j)
{
  const size_t ring = j->f->taps - 1, kept = j->count < ring ? j->count : ring;
  return units_of(kept * j->f->channels, CUDAFFT_CONVOLVE_DIRECT_UNIT);
}

static size_t
direct_and_history_units(const ConvolveJob *j)
{
  return direct_units(j) + history_units(j);
}

static size_t
direct_aux_bytes(CudafftJob *const *jobs, size_t count)
{
  return aux_bytes_for(count, sizeof(CudafftConvolveDirectJob),
                       sum_over(jobs, count, direct_and_history_units));
}

static CudafftConvolveDirectJob
describe_direct(const ConvolveJob *j)
{
  const CudaConvolve *f = j->f;
  CudafftConvolveDirectJob d = {};
  d.in = j->job.device_in;
  d.out = j->job.device_out;
  d.history = f->history;
  d.taps = f->direct_taps;
  d.frames = j->count;
  /* F32: the float gains of the single-precision path, exactly */
  const bool f64 = f->format == CUDAFFT_SAMPLE_F64;
  d.wet_gain = f64 ? j->mix : (double)(float)j->mix;
  d.dry_gain = f64 ? 1.0 - j->mix : (double)(float)(1.0 - j->mix);
  d.format = f->format;
  d.channels = (int)f->channels;
  d.taps_count = (int)f->taps;
  d.kernel_rows = (int)f->rows;
  d.history_head = (int)j->head;
  return d;
}

/* Every job's output units, then every job's history units. */
static void
direct_prepare(CudafftJob *const *jobs, size_t count, void *host_aux, void *)
{
  CudafftConvolveDirectJob *descs = aux_descs<CudafftConvolveDirectJob>(host_aux);
  CudafftConvolveUnit *at = aux_units<CudafftConvolveDirectJob>(host_aux, count);
  for (size_t i = 0; i < count; ++i) {
    descs[i] = describe_direct(as_job(jobs[i]));
    at = map_units(at, i, direct_units(as_job(jobs[i])));
  }
  for (size_t i = 0; i < count; ++i)
    at = map_units(at, i, history_units(as_job(jobs[i])));
}

static CudafftStatus
direct_launch(CudafftJob *const *jobs, size_t count, void *device_aux, void *stream)
{
  const size_t outputs = sum_over(jobs, count, direct_units);
  const size_t histories = sum_over(jobs, count, history_units);
  const CudafftConvolveUnit *units = aux_units<CudafftConvolveDirectJob>(device_aux, count);
  CUDAFFT_CHECK(cudafft_convolve_direct_launch(aux_descs<CudafftConvolveDirectJob>(device_aux),
                                               units, outputs, units + outputs, histories,
                                               static_cast<cudaStream_t>(stream)));
  return CUDAFFT_STATUS_OK;
}

const CudafftWorkKind direct_kind = {"convolution direct", direct_aux_bytes, direct_prepare,
                                     direct_launch, nullptr};

/* Direct setup: the taps in the format's type (F32: rounded to float on the device; F64: copied
 * as they are), in jobs of at most a job's bytes, and the history cleared. */
CudafftStatus
load_direct(CudaConvolve *f, const CudafftConvolveKernel &kernel)
{
  Window w(f);
  const size_t count = f->taps * f->rows;
  const size_t room =
      cudafft_executor_max_job_bytes(f->ex) - aux_bytes_for(1, sizeof(CudafftConvolveFillJob), 0);
  const size_t per_job = room / sizeof(double) / 64 * 64;
  const size_t sample = cudafft_sample_size(f->format);
  for (size_t at = 0; at < count; at += per_job) {
    ConvolveJob *job = w.next();
    if (!job)
      break;
    const size_t part = min_size(per_job, count - at);
    FillStep &step = job->steps[0];
    step.op =
        f->format == CUDAFFT_SAMPLE_F64 ? CUDAFFT_CONVOLVE_FILL_COPY : CUDAFFT_CONVOLVE_FILL_NARROW;
    step.dst = static_cast<char *>(f->direct_taps) + at * sample;
    step.count = f->format == CUDAFFT_SAMPLE_F64 ? part * sizeof(double) / 4 : part;
    step.from_input = true;
    job->job.in_bytes = part * sizeof(double);
    w.submit(job, kernel.taps_data + at, nullptr);
  }
  submit_clear(&w, f);
  return w.finish();
}

/* One direct job of `frames` frames. */
void
submit_direct(Window *w, CudaConvolve *f, const char *in, char *out, size_t frames, double mix)
{
  ConvolveJob *job = w->next();
  if (!job)
    return;
  job->work = Work::Direct;
  job->count = frames;
  job->head = f->head;
  job->mix = mix;
  job->job.in_bytes = job->job.out_bytes = frames * f->frame_bytes;
  w->submit(job, in, out);
  if (f->taps > 1)
    f->head = (f->head + frames) % (f->taps - 1);
}

} // namespace convolve_cuda
