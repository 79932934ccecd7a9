/* spectrum_launch.cu: placeholder until the spectrum kernels land. */
