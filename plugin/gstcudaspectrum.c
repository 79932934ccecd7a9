/* gstcudaspectrum.c: placeholder until the element lands. */
