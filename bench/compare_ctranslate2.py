#!/usr/bin/env python3
"""rpt vs CTranslate2 on the same OpenNMT-py checkpoint, in the same run, on this machine.

Converts CHECKPOINT for both engines (tools/convert_onmt.py and CTranslate2's
ct2-opennmt-py-converter), translates the same SentencePiece-tokenized input with the same
beam size, batch size, length penalty and thread count, and prints a table: wall time,
sentences/s, target tokens/s, BLEU against the reference (when given), and how many
translations are token-identical between the two. Run it with a Python that has ctranslate2,
sentencepiece and sacrebleu (PyPI).

    python3 bench/compare_ctranslate2.py --checkpoint ckpt.pt --spm spm.model \\
        --source test.en --reference test.de --rpt-translate build/tools/rpt-translate \\
        --device cpu --threads 2 --beam-size 4 --batch-size 32

On a GPU (--device cuda) both engines compute in --compute-type (float32, float16, bfloat16)
and the table adds each engine's peak device memory, sampled with nvidia-smi for the process
(CUDA context included, the same way for both). --long-input N replaces the source by sentences
of N tokens (test sentences concatenated) to compare memory on long inputs.
"""

import argparse
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import ctranslate2
import sentencepiece

REPO = Path(__file__).resolve().parent.parent


def convert(args, work):
    rpt_dir, ct2_dir = work / "rpt", work / "ct2"
    subprocess.run([sys.executable, str(REPO / "tools" / "convert_onmt.py"), args.checkpoint,
                    str(rpt_dir), "--dtype", "float32", "--src-spm", args.spm,
                    "--tgt-spm", args.tgt_spm or args.spm], check=True, stdout=subprocess.DEVNULL)
    convert_for_ctranslate2(args.checkpoint, ct2_dir)
    return rpt_dir, ct2_dir


def convert_for_ctranslate2(checkpoint, out_dir):
    """CTranslate2's OpenNMT-py converter; OpenNMT-py checkpoints pickle their options, which a
    weights-only load refuses, so the (trusted) checkpoint is unpickled in full."""
    import torch
    from ctranslate2.converters import OpenNMTPyConverter

    # OpenNMT-py 3.5 names its default attention "scaled-dot-flash"; the arithmetic is plain
    # scaled dot-product attention, which is the name CTranslate2's converter accepts.
    loaded = torch.load(checkpoint, map_location="cpu", weights_only=False)
    if getattr(loaded["opt"], "self_attn_type", "scaled-dot") == "scaled-dot-flash":
        loaded["opt"].self_attn_type = "scaled-dot"
        checkpoint = str(Path(out_dir).parent / "for_ctranslate2.pt")
        torch.save(loaded, checkpoint)
    OpenNMTPyConverter(checkpoint, unsafe_deserialization=True).convert(str(out_dir), force=True)


class GpuMemorySampler:
    """Peak GPU memory of one process, sampled with nvidia-smi every 20 ms (None off the GPU)."""

    def __init__(self, pid, enabled):
        self.pid, self.enabled, self.peak_mib = str(pid), enabled, None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while not self._stop.is_set():
            try:
                out = subprocess.run(["nvidia-smi", "--query-compute-apps=pid,used_memory",
                                      "--format=csv,noheader,nounits"], capture_output=True,
                                     text=True, timeout=5).stdout
            except (OSError, subprocess.TimeoutExpired):
                return
            for line in out.splitlines():
                pid, _, used = line.partition(",")
                if pid.strip() == self.pid and used.strip().isdigit():
                    self.peak_mib = max(self.peak_mib or 0, int(used))
            self._stop.wait(0.02)

    def __enter__(self):
        if self.enabled:
            self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        if self.enabled:
            self._thread.join()


def run_rpt(args, model_dir, lines):
    command = [args.rpt_translate, "--model", str(model_dir), "--beam-size", str(args.beam_size),
               "--batch-size", str(args.batch_size), "--threads", str(args.threads),
               "--max-length", str(args.max_length), "--device", args.device,
               "--compute-type", args.compute_type, "--max-input-length", "2048", "--verbose"]
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    with GpuMemorySampler(process.pid, args.device == "cuda") as memory:
        stdout, stderr = process.communicate("\n".join(lines) + "\n")
    if process.returncode != 0:
        sys.exit(f"rpt-translate failed ({process.returncode}): {stderr}")
    # Translation time as rpt-translate reports it (model loading excluded, as for CTranslate2).
    seconds = float(re.search(r"tokens in ([0-9.]+) s", stderr).group(1))
    return stdout.splitlines(), seconds, memory.peak_mib


def run_ctranslate2(args, model_dir, pieces):
    translator = ctranslate2.Translator(str(model_dir), device=args.device,
                                        compute_type=args.compute_type, inter_threads=1,
                                        intra_threads=args.threads)
    with GpuMemorySampler(os.getpid(), args.device == "cuda") as memory:
        start = time.perf_counter()
        results = translator.translate_batch(
            pieces, beam_size=args.beam_size, max_batch_size=args.batch_size,
            max_decoding_length=args.max_length, length_penalty=1.0, max_input_length=0)
        seconds = time.perf_counter() - start
    return [r.hypotheses[0] for r in results], seconds, memory.peak_mib


def long_inputs(lines, spm, tokens):
    """Sentences of exactly `tokens` pieces, made by concatenating consecutive source lines."""
    pieces = [p for line in lines for p in spm.encode(line, out_type=str)]
    out = []
    for start in range(0, len(pieces) - tokens + 1, tokens):
        out.append(spm.decode(pieces[start:start + tokens]))
        if len(out) == 8:
            break
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--checkpoint", required=True)
    parser.add_argument("--spm", required=True, help="source SentencePiece model")
    parser.add_argument("--tgt-spm", help="target SentencePiece model (default: --spm)")
    parser.add_argument("--source", required=True, help="raw source sentences, one a line")
    parser.add_argument("--reference", help="raw reference translations for BLEU")
    parser.add_argument("--rpt-translate", default=str(REPO / "build" / "tools" / "rpt-translate"))
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    parser.add_argument("--compute-type", default="float32",
                        choices=["float32", "float16", "bfloat16"])
    parser.add_argument("--long-input", type=int, default=0,
                        help="translate up to 8 sentences of this many source tokens instead")
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--beam-size", type=int, default=4)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--max-length", type=int, default=250)
    parser.add_argument("--limit", type=int, default=0, help="first N sentences only")
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args()

    lines = Path(args.source).read_text(encoding="utf-8").splitlines()
    references = Path(args.reference).read_text(encoding="utf-8").splitlines() if args.reference else None
    if args.limit:
        lines, references = lines[:args.limit], references[:args.limit] if references else None
    source_spm = sentencepiece.SentencePieceProcessor(model_file=args.spm)
    target_spm = sentencepiece.SentencePieceProcessor(model_file=args.tgt_spm or args.spm)
    if args.long_input:
        lines, references = long_inputs(lines, source_spm, args.long_input), None
    pieces = [source_spm.encode(line, out_type=str) for line in lines]

    with tempfile.TemporaryDirectory() as temp:
        rpt_dir, ct2_dir = convert(args, Path(temp))
        rpt_text, rpt_seconds, rpt_memory = run_rpt(args, rpt_dir, lines)
        ct2_pieces, ct2_seconds, ct2_memory = run_ctranslate2(args, ct2_dir, pieces)
    ct2_text = [target_spm.decode(p) for p in ct2_pieces]
    rpt_tokens = sum(len(target_spm.encode(t, out_type=str)) for t in rpt_text)
    ct2_tokens = sum(len(p) for p in ct2_pieces)
    identical = sum(a == b for a, b in zip(rpt_text, ct2_text))

    rows = {"rpt": (rpt_text, rpt_seconds, rpt_tokens, rpt_memory),
            "ctranslate2": (ct2_text, ct2_seconds, ct2_tokens, ct2_memory)}
    report = {"machine": platform.processor() or platform.machine(), "cpus": os.cpu_count(),
              "settings": {k: getattr(args, k) for k in ("device", "compute_type", "threads",
                                                        "beam_size", "batch_size", "max_length",
                                                        "long_input")},
              "sentences": len(lines), "identical_translations": identical, "engines": {}}
    if references is not None:
        import sacrebleu
    print(f"{len(lines)} sentences, beam {args.beam_size}, batch {args.batch_size}, "
          f"{args.threads} threads, device {args.device} {args.compute_type}")
    print(f"{'engine':<12} {'seconds':>8} {'sent/s':>8} {'tok/s':>8} {'ms/sent':>8} {'BLEU':>6} "
          f"{'peak MiB':>9}")
    for name, (text, seconds, tokens, memory) in rows.items():
        bleu = sacrebleu.corpus_bleu(text, [references]).score if references is not None else None
        report["engines"][name] = {"seconds": seconds, "sentences_per_second": len(lines) / seconds,
                                   "target_tokens_per_second": tokens / seconds,
                                   "ms_per_sentence": 1000 * seconds / len(lines), "bleu": bleu,
                                   "peak_device_memory_mib": memory}
        bleu_text = f"{bleu:6.2f}" if bleu is not None else "     -"
        memory_text = f"{memory:9d}" if memory is not None else "        -"
        print(f"{name:<12} {seconds:8.2f} {len(lines) / seconds:8.1f} {tokens / seconds:8.1f} "
              f"{1000 * seconds / len(lines):8.2f} {bleu_text} {memory_text}")
    speedup = report["engines"]["ctranslate2"]["seconds"] / report["engines"]["rpt"]["seconds"]
    print(f"rpt / CTranslate2 speed: {speedup:.2f}x; identical translations: "
          f"{identical}/{len(lines)}")
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
