#!/usr/bin/env python3
"""Reference features for tests/test_features.c, made by the libraries themselves.

Writes the input signals and each library's own output for them to tests/features_data/ (the
C test reads both; CI needs none of these libraries). Rerun it to remake them:

    python3 -m venv /tmp/refs && . /tmp/refs/bin/activate
    pip install numpy scipy librosa kaldi-native-fbank python_speech_features torch torchaudio \
        openai-whisper transformers
    python3 tests/make_feature_refs.py

It installs nothing itself. The versions it ran with go to tests/features_data/versions.txt; the
test's tolerances were measured with those. Signals are drawn from a fixed seed (a rerun writes the
same inputs, so the references change only where a library's output does).

File format (.cfr, little-endian): "CFFR", u32 version 1, u32 type (0 float32, 1 int16), u32 ndim,
u32 dims[4] (unused ones 0), u32 full (the last dimension's full length: columns dims[-1] ..
full - 1 all hold `tail`, stored once), f32 tail, then the values in C order.

Each case names the signal it reads and the library call that made it; tests/test_features.c has
the same case names with the engine's configuration for each (the presets where one exists).
NeMo is not installed here (nemo_toolkit pulls half of PyPI): its FilterbankFeatures.forward
(NeMo 2.6, nemo/collections/asr/parts/preprocessing/features.py) is restated in torch below, line
for line, with the library calls it makes (torch.stft, librosa.filters.mel).
"""

import argparse
import os
import struct
import sys

import numpy as np

FORMAT_F32, FORMAT_I16 = 0, 1


def write_cfr(path, array, tail_compress=False):
    """Writes array; with tail_compress (2-D), the trailing columns that all equal the last
    column's common value are stored once."""
    array = np.ascontiguousarray(array)
    kind = FORMAT_I16 if array.dtype == np.int16 else FORMAT_F32
    if kind == FORMAT_F32:
        array = array.astype(np.float32)
    full = array.shape[-1]
    tail = 0.0
    if tail_compress:
        tail = float(array[0, -1])
        keep = full
        while keep > 1 and np.all(array[:, keep - 1] == tail):
            keep -= 1
        array = np.ascontiguousarray(array[:, :keep])
    dims = list(array.shape) + [0] * (4 - array.ndim)
    with open(path, "wb") as f:
        f.write(b"CFFR")
        f.write(struct.pack("<6I", 1, kind, array.ndim, *dims[:3]))
        f.write(struct.pack("<I", dims[3]))
        f.write(struct.pack("<If", full, tail))
        f.write(array.astype("<i2" if kind == FORMAT_I16 else "<f4").tobytes())


# Signals ----------------------------------------------------------------------------------------


def speech_like(rng, rate, seconds):
    """Voiced syllables (a gliding pitch through three formants), fricative bursts and silence
    stretches (exact zeros and a faint hiss), peak 0.5."""
    n = int(rate * seconds)
    t = np.arange(n) / rate
    x = np.zeros(n)
    at = 0.05
    while at < seconds - 0.1:
        length = rng.uniform(0.12, 0.3)
        i0, i1 = int(at * rate), min(n, int((at + length) * rate))
        tt = t[i0:i1] - at
        f0 = rng.uniform(90, 220) * (1 + 0.3 * tt / length)
        phase = 2 * np.pi * np.cumsum(f0) / rate
        formants = rng.uniform([300, 900, 2200], [900, 2200, 3500])
        voiced = np.zeros(i1 - i0)
        for h in range(1, 40):
            fh = h * f0
            gain = sum(1.0 / (1 + ((fh - f) / 120.0) ** 2) for f in formants) / h ** 0.5
            gain = np.where(fh < rate / 2 - 200, gain, 0.0)
            voiced += gain * np.sin(h * phase)
        envelope = np.sin(np.pi * tt / length) ** 2
        x[i0:i1] += envelope * voiced
        if rng.uniform() < 0.5:  # a fricative after it
            f_len = int(rng.uniform(0.04, 0.1) * rate)
            j0 = min(n, i1)
            j1 = min(n, j0 + f_len)
            noise = np.diff(rng.standard_normal(j1 - j0 + 1))  # tilted up
            x[j0:j1] += 0.3 * noise * np.hanning(j1 - j0)
        at += length + rng.uniform(0.05, 0.25)
    x *= 0.5 / np.max(np.abs(x))
    # a silence stretch of exact zeros, and one of faint hiss
    z0 = int(0.3 * seconds * rate)
    x[z0 : z0 + int(0.08 * rate)] = 0.0
    h0 = int(0.7 * seconds * rate)
    x[h0 : h0 + int(0.08 * rate)] = 1e-5 * rng.standard_normal(int(0.08 * rate))
    return x.astype(np.float32)


def tones_and_chirp(rng, rate, seconds):
    n = int(rate * seconds)
    t = np.arange(n) / rate
    x = 0.2 * np.sin(2 * np.pi * 440 * t) + 0.1 * np.sin(2 * np.pi * 1000 * t + 0.3)
    x += 0.05 * np.sin(2 * np.pi * 3500 * t)
    f1 = min(9000.0, 0.45 * rate)
    x += 0.2 * np.sin(2 * np.pi * (100 * t + (f1 - 100) * t * t / (2 * seconds)))
    x += 0.01 * rng.standard_normal(n)
    x[int(0.6 * n) : int(0.7 * n)] = 0.0
    return x.astype(np.float32)


def log_chirp(rng, rate, seconds):
    n = int(rate * seconds)
    t = np.arange(n) / rate
    f0, f1 = 50.0, 0.45 * rate
    k = np.log(f1 / f0) / seconds
    x = 0.3 * np.sin(2 * np.pi * f0 * (np.exp(k * t) - 1) / k)
    x += 0.02 * rng.standard_normal(n)
    return x.astype(np.float32)


def noise_and_tone(rng, rate, seconds):
    n = int(rate * seconds)
    t = np.arange(n) / rate
    x = 0.1 * rng.standard_normal(n) + 0.2 * np.sin(2 * np.pi * 1234.5 * t)
    x[int(0.4 * n) : int(0.5 * n)] *= 0.001
    return x.astype(np.float32)


def make_signals(rng):
    s = {}
    s["speech16k"] = (16000, speech_like(rng, 16000, 2.5))
    s["noise16k"] = (16000, noise_and_tone(rng, 16000, 1.5))
    s["music22k"] = (22050, tones_and_chirp(rng, 22050, 1.5))
    s["chirp44k"] = (44100, log_chirp(rng, 44100, 1.0))
    s["noise8k"] = (8000, noise_and_tone(rng, 8000, 1.0))
    s["speech48k"] = (48000, speech_like(rng, 48000, 1.0))
    speech = speech_like(rng, 16000, 1.0)
    s["speech16k_s16"] = (16000, np.round(speech * 32767).astype(np.int16))
    return s


def as_float(signal):
    if signal.dtype == np.int16:
        return (signal.astype(np.float32) / 32768.0).astype(np.float32)
    return signal


# The libraries ----------------------------------------------------------------------------------


def whisper_refs(signals, out):
    import torch
    import whisper
    from transformers import WhisperFeatureExtractor

    torch.set_num_threads(1)
    rate, x = signals["speech16k"]
    mel = whisper.log_mel_spectrogram(whisper.pad_or_trim(torch.from_numpy(x))).numpy()
    out("whisper80_speech", mel, tail_compress=True)
    rate, x = signals["noise16k"]
    mel = whisper.log_mel_spectrogram(whisper.pad_or_trim(torch.from_numpy(x))).numpy()
    out("whisper80_noise", mel, tail_compress=True)
    mel = whisper.log_mel_spectrogram(whisper.pad_or_trim(torch.from_numpy(x)), n_mels=128)
    out("whisper128_noise", mel.numpy(), tail_compress=True)
    # transformers' extractor with 2 s items: the stream cut into chunks, each padded and
    # normalised on its own
    rate, x = signals["speech16k"]
    fe = WhisperFeatureExtractor(chunk_length=2)
    items = [x[i : i + fe.n_samples] for i in range(0, len(x), fe.n_samples)]
    feats = fe(items, sampling_rate=16000, return_tensors="np", padding="max_length")
    out("whisper_hf_chunks2s", feats.input_features.astype(np.float32))


def kaldi_refs(signals, out):
    import kaldi_native_fbank as knf

    def run(kind, rate, x, **kw):
        opts = knf.MfccOptions() if kind == "mfcc" else knf.FbankOptions()
        opts.frame_opts.dither = 0.0
        opts.frame_opts.samp_freq = rate
        for key, value in kw.items():
            target = opts.frame_opts if hasattr(opts.frame_opts, key) else opts
            if hasattr(opts.mel_opts, key) and not hasattr(target, key):
                target = opts.mel_opts
            setattr(target, key, value)
        computer = knf.OnlineMfcc(opts) if kind == "mfcc" else knf.OnlineFbank(opts)
        computer.accept_waveform(rate, x.tolist())
        computer.input_finished()
        return np.array([computer.get_frame(i) for i in range(computer.num_frames_ready)],
                        dtype=np.float32)

    rate, x = signals["speech16k"]
    out("kaldi_fbank_speech", run("fbank", rate, x))
    out("kaldi_mfcc_speech", run("mfcc", rate, x))
    rate, x = signals["noise8k"]
    out("kaldi_fbank_8k_nosnip_energy",
        run("fbank", rate, x, snip_edges=False, use_energy=True, num_bins=15))
    rate, x = signals["chirp44k"]
    out("kaldi_fbank_44k_hamming_windowed_energy",
        run("fbank", rate, x, window_type="hamming", use_energy=True, raw_energy=False,
            energy_floor=1.0, num_bins=40, low_freq=60.0, high_freq=-400.0))
    rate, s16 = signals["speech16k_s16"]
    # Kaldi's recipes feed 16-bit samples as integers: the engine's sample_scale 32768
    out("kaldi_mfcc_s16", run("mfcc", rate, s16.astype(np.float32), cepstral_lifter=0.0,
                              use_energy=False))


def librosa_refs(signals, out):
    import librosa

    rate, x = signals["music22k"]
    mel = librosa.feature.melspectrogram(y=x, sr=rate)
    out("librosa_mel_music", mel.T)
    out("librosa_db_music", librosa.power_to_db(mel, ref=1.0, amin=1e-10, top_db=80.0).T)
    mfcc = librosa.feature.mfcc(y=x, sr=rate)
    out("librosa_mfcc_music", mfcc.T)
    out("librosa_mfcc_delta_music", np.concatenate(
        [mfcc, librosa.feature.delta(mfcc), librosa.feature.delta(mfcc, order=2)]).T)
    rate, x = signals["chirp44k"]
    lifted = librosa.feature.mfcc(y=x, sr=rate, n_mfcc=13, lifter=22, n_fft=1024, hop_length=441,
                                  htk=True, fmin=30.0, fmax=16000.0, n_mels=64)
    out("librosa_mfcc_lifter_44k", lifted.T)
    # deltas over the stream: mfcc without top_db (the engine's frames output has no clip max)
    rate, x = signals["speech16k"]
    mel = librosa.feature.melspectrogram(y=x, sr=rate, n_fft=512, hop_length=160, n_mels=40)
    mfcc = librosa.feature.mfcc(S=librosa.power_to_db(mel, top_db=None), n_mfcc=13)
    out("librosa_stream_deltas_speech", np.concatenate(
        [mfcc, librosa.feature.delta(mfcc, width=5), librosa.feature.delta(mfcc, width=5,
                                                                           order=2)]).T)


def torchaudio_refs(signals, out, empty):
    import torch
    import torchaudio
    import torchaudio.transforms as T
    import torchaudio.functional as F

    torch.set_num_threads(1)
    rate, x = signals["speech16k"]
    wave = torch.from_numpy(x)
    transform = T.MelSpectrogram(sample_rate=rate)
    out("torchaudio_mel_speech", transform(wave).numpy().T)
    fb = transform.mel_scale.fb.numpy()  # [bins][mels]
    empty("torchaudio_mel_speech", np.nonzero(np.all(fb == 0, axis=0))[0])
    mfcc = T.MFCC(sample_rate=rate)(wave)
    out("torchaudio_mfcc_speech", mfcc.numpy().T)
    # deltas over the stream (compute_deltas, and applied twice) on log-mel features
    logmel = torch.log(T.MelSpectrogram(sample_rate=rate, n_fft=512, win_length=400,
                                        hop_length=160, n_mels=40)(wave) + 1e-6)
    d1 = F.compute_deltas(logmel, win_length=5)
    d2 = F.compute_deltas(d1, win_length=5)
    out("torchaudio_logmel_deltas_speech", torch.cat([logmel, d1, d2]).numpy().T)
    # a window shorter than the transform, magnitude, normalized, Hamming, at 48 kHz with n = 480
    rate, x = signals["speech48k"]
    transform = T.MelSpectrogram(sample_rate=rate, n_fft=480, win_length=400, hop_length=240,
                                 n_mels=40, power=1.0, normalized=True,
                                 window_fn=torch.hamming_window)
    out("torchaudio_mag_48k_n480", transform(torch.from_numpy(x)).numpy().T)


def nemo_refs(signals, out):
    """FilterbankFeatures.forward of NeMo 2.6 with AudioToMelSpectrogramPreprocessor's defaults,
    in eval mode (no dither), without its normalize and pad_to (left to the application)."""
    import librosa
    import torch

    torch.set_num_threads(1)
    rate, x = signals["speech16k"]
    win_length, hop = int(0.02 * rate), int(0.01 * rate)
    n_fft = 2 ** int(np.ceil(np.log2(win_length)))
    window = torch.hann_window(win_length, periodic=False)
    fb = torch.tensor(librosa.filters.mel(sr=rate, n_fft=n_fft, n_mels=64, fmin=0,
                                          fmax=rate / 2, norm="slaney"), dtype=torch.float)
    wave = torch.from_numpy(x).unsqueeze(0)
    seq_len = torch.floor_divide(torch.tensor([wave.shape[1]]) + n_fft // 2 * 2 - n_fft, hop)
    wave = torch.cat((wave[:, 0].unsqueeze(1), wave[:, 1:] - 0.97 * wave[:, :-1]), dim=1)
    spec = torch.stft(wave, n_fft=n_fft, hop_length=hop, win_length=win_length, center=True,
                      window=window, return_complex=True, pad_mode="constant")
    spec = torch.view_as_real(spec)
    spec = torch.sqrt(spec.pow(2).sum(-1))
    spec = spec.pow(2.0)
    mel = torch.matmul(fb, spec)
    logmel = torch.log(mel + 2 ** -24)
    out("nemo_speech", logmel[0, :, : int(seq_len[0])].numpy().T)


def psf_refs(signals, out):
    import python_speech_features as psf

    rate, x = signals["speech16k"]
    x64 = x.astype(np.float64)
    mfcc = psf.mfcc(x64, samplerate=rate)
    out("psf_mfcc_speech", mfcc)
    out("psf_logfbank_speech", psf.logfbank(x64, samplerate=rate))
    out("psf_mfcc_delta_speech", np.concatenate([mfcc, psf.delta(mfcc, 2)], axis=1))


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=os.path.join(here, "features_data"))
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    rng = np.random.default_rng(20250)
    signals = make_signals(rng)
    written = []

    def out(name, array, tail_compress=False):
        write_cfr(os.path.join(args.out, name + ".cfr"), np.asarray(array), tail_compress)
        written.append(name)
        print(f"{name}: {np.asarray(array).shape}")

    empties = []

    def empty(name, indices):
        empties.append(f"{name} {' '.join(str(int(i)) for i in indices)}")

    for name, (rate, x) in signals.items():
        out("signal_" + name, x)
    whisper_refs(signals, out)
    kaldi_refs(signals, out)
    librosa_refs(signals, out)
    torchaudio_refs(signals, out, empty)
    nemo_refs(signals, out)
    psf_refs(signals, out)
    with open(os.path.join(args.out, "empty_filters.txt"), "w") as f:
        f.write("\n".join(empties) + "\n")
    versions = []
    for module in ["numpy", "scipy", "librosa", "torch", "torchaudio", "whisper", "transformers",
                   "kaldi_native_fbank"]:
        try:
            m = __import__(module)
            versions.append(f"{module} {getattr(m, '__version__', '?')}")
        except ImportError:
            versions.append(f"{module} (missing)")
    from importlib.metadata import version
    versions.append(f"python_speech_features {version('python_speech_features')}")
    with open(os.path.join(args.out, "versions.txt"), "w") as f:
        f.write("\n".join(versions) + "\n")
    print(f"{len(written)} files in {args.out}")


if __name__ == "__main__":
    sys.exit(main())
