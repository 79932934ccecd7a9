#!/usr/bin/env bash
# The main job: installs the dependencies, builds everything in build (scripts/build.sh: the
# build that scripts/run-tests.sh uses too; GPU code for this machine's GPU, or every architecture
# without one), runs audio through the elements in real pipelines (cudafft ! cudaifft,
# cudaspectrum, cudaconvolve, cudamatrixconvolve, cudaspectrumscope and cudamelspectrogram; on the
# GPU when one is usable, else on the CPU), checks what they wrote (each audio file's length, peak
# and RMS, the video's frames, the feature tensors' sizes and values), runs the engine demo, and
# benchmarks the elements (both backends; the GPU half where a CUDA device is present) and, with a
# GPU, the kernels against cuFFT.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
bash scripts/install-deps.sh
BUILDDIR=build bash scripts/build.sh
# What the pipelines write, gone first: a pipeline that does not start leaves no old file behind
rm -f build/roundtrip.wav build/ir.wav build/reverb.wav build/ir-4ch.wav build/true-stereo.wav \
  build/binaural.wav build/sweep.wav build/scope.webm build/scope.png build/scope-*.png \
  build/whisper.f32 build/fbank.f32

# The elements from this build, with a registry of their own.
export GST_PLUGIN_PATH=$PWD/build/plugin GST_REGISTRY_1_0=$PWD/build/gst-registry.bin
gst-inspect-1.0 cudafft > /dev/null
echo "== cudafft ! cudaifft: 10 s of stereo 48 kHz through frames and back, to build/roundtrip.wav"
gst-launch-1.0 -m audiotestsrc num-buffers=469 wave=sine freq=440 \
  ! audio/x-raw,format=S16LE,rate=48000,channels=2 \
  ! cudafft fft-size=4096 window=hann ! cudaifft \
  ! audioconvert ! wavenc ! filesink location=build/roundtrip.wav 2>&1 \
  | grep -E "^Got message .*(error|warning|eos)" || true

echo "== cudaspectrum: 2049-band spectra of 2 s of stereo noise, every 10 ms, per channel"
gst-launch-1.0 -m audiotestsrc num-buffers=94 wave=white-noise \
  ! audio/x-raw,format=F32LE,rate=48000,channels=2 \
  ! cudaspectrum bands=2049 interval=10000000 multi-channel=true ! fakesink 2>&1 \
  | grep -c "\"cudaspectrum0\" (element): spectrum," | sed "s/$/ spectrum messages/"

echo "== cudaconvolve: 10 s of stereo through a 0.5 s impulse response file, to build/reverb.wav"
# The responses: decaying noise of unit energy (a broadband signal leaves as loud as it came in)
python3 scripts/make-response.py build/ir.wav 1 0.5
gst-launch-1.0 -m audiotestsrc num-buffers=469 wave=sine freq=440 \
  ! audio/x-raw,format=F32LE,rate=48000,channels=2 \
  ! cudaconvolve ir-location=build/ir.wav mix=0.5 ! audioconvert ! wavenc \
  ! filesink location=build/reverb.wav 2>&1 \
  | grep -E "^Got message .*(error|warning|eos)" || true

echo "== cudamatrixconvolve: 10 s of stereo noise through a true-stereo reverb (a 4-channel response: L->L, L->R, R->L, R->R), to build/true-stereo.wav"
# Each output's two responses of energy 1/2, so noise leaves as loud as it came in (a tone leaves
# at the responses' gain at its one frequency: 440 Hz through these, -21 dB left and +3 dB right)
python3 scripts/make-response.py build/ir-4ch.wav 4 1 2
gst-launch-1.0 -m audiotestsrc num-buffers=469 wave=pink-noise volume=0.5 \
  ! audio/x-raw,format=F32LE,rate=48000,channels=2 \
  ! cudamatrixconvolve ir-location=build/ir-4ch.wav ! audioconvert ! wavenc \
  ! filesink location=build/true-stereo.wav 2>&1 \
  | grep -E "^Got message .*(error|warning|eos)" || true
# 7.1 to headphones with Debian's KEMAR HRTF set (libmysofa1's), each channel at its position's
# loudspeaker direction; where the build has the SOFA reader (built with libmysofa)
sofa=/usr/share/libmysofa/default.sofa
binaural=0
if [ -f $sofa ] && [ -x build/plugin/gst-cudafft-sofa-reader ]; then
  binaural=1
  echo "== cudamatrixconvolve: 10 s of 7.1 to binaural stereo through $sofa, to build/binaural.wav"
  gst-launch-1.0 -m audiotestsrc num-buffers=469 wave=pink-noise volume=0.2 \
    ! audio/x-raw,format=F32LE,rate=48000,channels=8 \
    ! cudamatrixconvolve sofa-location=$sofa ! audioconvert ! wavenc \
    ! filesink location=build/binaural.wav 2>&1 \
    | grep -E "^Got message .*(error|warning|eos)" || true
fi

echo "== cudaspectrumscope: 12 s of a sweep and tones drawn as video, to build/scope.webm and build/scope.png"
python3 scripts/make-sweep.py build/sweep.wav 12
# The spectrogram (left: log frequency, both channels in lanes, magma) and A-weighted sixth-octave
# bars with peak markers (right), 60 frames a second (the compositor's caps say so: without the
# rate there, the PNG branch's 1/1 would set the whole video's); the PNG is the frame at 11 s.
gst-launch-1.0 -m filesrc location=build/sweep.wav ! wavparse ! audioconvert ! tee name=t \
  compositor name=mix sink_1::xpos=640 ! video/x-raw,width=1280,height=720,framerate=60/1 \
  ! tee name=v \
  v. ! queue ! videoconvert ! vp8enc deadline=1 ! webmmux ! filesink location=build/scope.webm \
  v. ! queue ! videorate drop-only=true ! video/x-raw,framerate=1/1 ! videoconvert ! pngenc \
  ! multifilesink max-files=1 location=build/scope-%02d.png \
  t. ! queue ! cudaspectrumscope colormap=magma \
  ! video/x-raw,width=640,height=720,framerate=60/1 ! mix. \
  t. ! queue ! cudaspectrumscope style=bars frequency-scale=octave bands-per-octave=6 weighting=a \
  smoothing=125 ! video/x-raw,width=640,height=720,framerate=60/1 ! mix. 2>&1 \
  | grep -E "^Got message .*(error|warning|eos)" || true
mv build/scope-11.png build/scope.png 2> /dev/null || true

echo "== what the pipelines wrote: each audio file's length, peak and RMS (dBFS); the video's frames"
failed=0
check_audio() { python3 scripts/check-audio.py "$@" || failed=1; }
# 469 buffers of 1024 frames in; the convolutions add their responses' tails (length - 1 frames)
check_audio build/roundtrip.wav 480256 2
check_audio build/ir.wav 24000 1
check_audio build/reverb.wav $((480256 + 24000 - 1)) 2
check_audio build/ir-4ch.wav 48000 4
check_audio build/true-stereo.wav $((480256 + 48000 - 1)) 2
# Debian's KEMAR set: 512 taps at 44.1 kHz, 558 at 48 kHz
[ "$binaural" = 0 ] || check_audio build/binaural.wav $((480256 + 558 - 1)) 2
check_audio build/sweep.wav 576000 2
# The video and the picture decoded: "<frames> <width>x<height> <frame rate>" (frames counted at
# the sink, size and rate from its caps)
decode() {
  local out caps
  out=$(gst-launch-1.0 -v filesrc location="$1" ! $2 ! fakesink silent=false 2>&1 || true)
  caps=$(grep -o -m1 "fakesink0.GstPad:sink: caps = .*" <<< "$out" || true)
  echo "$(grep -c "fakesink0: last-message = chain" <<< "$out" || true)" \
    "$(grep -o "width=(int)[0-9]*, height=(int)[0-9]*" <<< "$caps" | tr -dc '0-9,' | tr , x)" \
    "$(grep -o "framerate=(fraction)[0-9/]*" <<< "$caps" | cut -d')' -f2)"
}
check_picture() { # FILE DECODER EXPECTED WHAT
  local got
  got=$(decode "$1" "$2")
  echo "$1: $got (frames, size, rate)"
  [ "$got" = "$3" ] || { echo "$1: expected $3: $4"; failed=1; }
}
check_picture build/scope.webm "matroskademux ! vp8dec" "720 1280x720 60/1" "12 s at 60 frames a second"
check_picture build/scope.png pngdec "1 1280x720 0/1" "one frame, the one at 11 s"
[ "$failed" = 0 ] || { echo "!! an output above is not what the pipeline should have written"; exit 1; }

echo "== cudamelspectrogram: Whisper's input features, checked against openai-whisper's own (examples/whisper_features.py)"
# the python3 with gi and numpy (python3-gi, python3-gst-1.0, python3-numpy: install-deps.sh)
py=python3
$py -c "import gi, numpy" 2> /dev/null || py=/usr/bin/python3
$py examples/whisper_features.py
echo "== cudamelspectrogram: 45 s of 48 kHz stereo resampled to 16 kHz, Whisper's 80 x 3000 log-mel of each 30 s (the last padded as Whisper pads), to build/whisper.f32"
gst-launch-1.0 -m audiotestsrc num-buffers=450 samplesperbuffer=4800 wave=pink-noise volume=0.3 \
  ! audio/x-raw,rate=48000,channels=2 ! audioconvert ! audioresample \
  ! audio/x-raw,format=F32LE,rate=16000,channels=1 ! cudamelspectrogram preset=whisper \
  ! filesink location=build/whisper.f32 2>&1 | grep -E "^Got message .*(error|warning|eos)" || true
echo "== cudamelspectrogram: Kaldi's fbank of 10 s at 16 kHz, a tensor per 10 ms frame as streaming recognition takes them, to build/fbank.f32"
gst-launch-1.0 -m audiotestsrc num-buffers=1000 samplesperbuffer=160 wave=pink-noise volume=0.3 \
  ! audio/x-raw,format=S16LE,rate=16000,channels=1 ! cudamelspectrogram preset=kaldi-fbank \
  ! filesink location=build/fbank.f32 2>&1 | grep -E "^Got message .*(error|warning|eos)" || true
check_features() { python3 scripts/check-features.py "$@" || failed=1; }
# two 30 s windows of 80 x 3000, each within Whisper's normalised span of 2.0; Kaldi's snip-edges:
# 1 + (160000 - 400) / 160 = 998 frames of 23 bands
check_features build/whisper.f32 2 240000 2.0
check_features build/fbank.f32 998 23
[ "$failed" = 0 ] || { echo "!! a tensor file above is not what the pipeline should have written"; exit 1; }

echo "== the FFT engine demo"
./build/examples/fft-demo

if [ -x build/examples/cuda-memory-app ]; then
  echo "== an application reading cudaspectrumscope's CUDA-memory frames on the device"
  status=0
  ./build/examples/cuda-memory-app || status=$?
  [ "$status" = 0 ] || [ "$status" = 77 ] || exit "$status"
fi
if [ -x build/examples/whisper-features-cuda ]; then
  echo "== an application reading cudamelspectrogram's Whisper features in CUDA memory on the device"
  status=0
  ./build/examples/whisper-features-cuda || status=$?
  [ "$status" = 0 ] || [ "$status" = 77 ] || exit "$status"
fi

if [ -x build/bench/element-bench ]; then
  echo "== element benchmark"
  ./build/bench/element-bench --runs 3
fi
if [ -x build/bench/spectrum-bench ]; then
  echo "== cudaspectrum against spectrum"
  ./build/bench/spectrum-bench --runs 3
fi
if [ -x build/bench/convolve-bench ]; then
  echo "== cudaconvolve against audiofirfilter"
  ./build/bench/convolve-bench --runs 3
fi
if [ -x build/bench/matrix-bench ]; then
  echo "== cudamatrixconvolve's engine: an 8 x 2 matrix of 1 s responses, GPU and CPU"
  ./build/bench/matrix-bench --inputs 8 --outputs 2 --seconds 3 --max-wall 3
fi
if [ -x build/bench/streams-bench ]; then
  echo "== cudamelspectrogram in one pipeline of 64 16 kHz streams in 10 ms buffers: Whisper's features a frame at a time against identity, GPU and CPU"
  ./build/bench/streams-bench --one-pipeline --streams 64 --buffers 1000 --limit 60 \
    --elements whisper-frames,identity-16k
fi
if [ -x build/bench/scope-bench ]; then
  echo "== cudaspectrumscope against spectrascope"
  ./build/bench/scope-bench --runs 3
fi
for bench in fft-bench spectrum-kernel-bench convolve-kernel-bench features-kernel-bench; do
  if [ -x "build/bench/$bench" ]; then
    status=0
    "./build/bench/$bench" || status=$?
    if [ "$status" = 77 ]; then
      echo "$bench: skipped, no CUDA device on this machine"
    elif [ "$status" != 0 ]; then
      exit "$status"
    fi
  else
    echo "$bench: not built (no CUDA toolkit found)"
  fi
done
