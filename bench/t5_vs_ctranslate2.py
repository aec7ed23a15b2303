#!/usr/bin/env python3
"""rpt vs CTranslate2 on one Hugging Face T5 checkpoint, each converted by its own converter.

    /usr/bin/python3 bench/t5_vs_ctranslate2.py [--hf-dir DIR | --shape t5-small|flan-t5-small]
        [--sentences 200] [--batch-size 32] [--beam-size 4] [--length 24] [--threads 2]
        [--compute-types float32,int8] [--repeat 3] [--json OUT]

--hf-dir: a checkpoint directory as save_pretrained writes it (config.json, weights, spiece.model;
a downloaded t5-small, flan-t5-small, mT5 or MADLAD-400 snapshot). Without it, a model of the named
shape is built here with random weights (T5Config + save_pretrained, nothing downloaded) and a
SentencePiece model of 8,000 pieces trained on ../shared/data: t5-small (v1.0: 6 + 6 layers,
d_model 512, 8 heads of 64, ReLU, tied head) or flan-t5-small (v1.1: 8 + 8 layers, 6 heads of 64
in d_model 512, gated GELU, untied head).

rpt converts it with tools/convert_hf_t5.py, CTranslate2 with its TransformersConverter (int8:
`quantization="int8"`, computed int8_float32). Both translate the same --sentences lines of the
ui.en-de test split, prefixed as T5 reads English-to-German ("translate English to German: "),
one sentence per line, with the same search: --beam-size, length penalty 0, and every output
exactly --length tokens long (rpt --min-length = --max-length, CTranslate2 min_decoding_length =
max_decoding_length), so both do the same work whatever a random model would emit. Layouts: rpt
with --threads N and with N decoders of one thread; CTranslate2 with intra_threads N and with
inter_threads N; each engine's fastest is its figure. Runs alternate, --repeat times; medians.
Timed: text in, text out, model loading excluded (rpt-translate's own clock; CTranslate2's
tokenize + translate_batch + detokenize). Reported: tokens/s (sentences x length), rpt /
CTranslate2, the share of identical outputs, peak RSS, the CPU (lscpu model and vector flags) and
both engines' kernels.
"""

import argparse
import json
import os
import random
import re
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DATA = REPO.parent / "shared" / "data"
sys.path.insert(0, str(REPO / "tools"))
sys.path.insert(0, str(REPO / "bench"))

PREFIX = "translate English to German: "
SHAPES = {
    "t5-small": dict(d_model=512, d_kv=64, num_heads=8, d_ff=2048, num_layers=6,
                     num_decoder_layers=6, feed_forward_proj="relu", tie_word_embeddings=True),
    "flan-t5-small": dict(d_model=512, d_kv=64, num_heads=6, d_ff=1024, num_layers=8,
                          num_decoder_layers=8, feed_forward_proj="gated-gelu",
                          tie_word_embeddings=False),
}
PIECES, EXTRA_IDS = 8000, 100
PAD, EOS, UNK = 0, 1, 2


# -- the CTranslate2 worker (its own process, so its RSS is its own) ---------------------------

def ct2_worker(request_path):
    import ctranslate2
    import sentencepiece

    request = json.loads(Path(request_path).read_text())
    translator = ctranslate2.Translator(request["ct2_dir"], device="cpu",
                                        compute_type=request["compute_type"],
                                        inter_threads=request["inter"],
                                        intra_threads=request["intra"])
    spm = sentencepiece.SentencePieceProcessor(model_file=request["spm"])
    lines = Path(request["input"]).read_text(encoding="utf-8").splitlines()
    start = time.perf_counter()
    tokens = [spm.encode(line, out_type=str) + ["</s>"] for line in lines]
    results = translator.translate_batch(
        tokens, beam_size=request["beam_size"], max_batch_size=request["batch_size"],
        length_penalty=0.0, min_decoding_length=request["length"],
        max_decoding_length=request["length"])
    texts = [spm.decode(result.hypotheses[0]) for result in results]
    seconds = time.perf_counter() - start
    lengths = [len(result.hypotheses[0]) for result in results]
    Path(request["output"]).write_text(json.dumps(
        {"texts": texts, "seconds": seconds, "lengths": lengths}))


# -- building a checkpoint ---------------------------------------------------------------------

def data_lines(name, column):
    path = DATA / name
    rows = [line.rstrip("\n").split("\t") for line in path.read_text(encoding="utf-8").splitlines()]
    return [row[column] for row in rows if len(row) >= 2]


def build_checkpoint(shape, directory):
    import io

    import sentencepiece
    import torch
    from transformers import T5Config, T5ForConditionalGeneration

    train = data_lines("ui.en-de.train.tsv", 0)[::4] + data_lines("ui.en-de.train.tsv", 1)[::4]
    model = io.BytesIO()
    sentencepiece.SentencePieceTrainer.train(
        sentence_iterator=iter(train), model_writer=model, vocab_size=PIECES,
        model_type="unigram", pad_id=PAD, eos_id=EOS, unk_id=UNK, bos_id=-1, minloglevel=2,
        num_threads=2)
    config = T5Config(vocab_size=PIECES + EXTRA_IDS + 28, dropout_rate=0.0,
                      decoder_start_token_id=PAD, pad_token_id=PAD, eos_token_id=EOS,
                      **SHAPES[shape])
    torch.manual_seed(0)
    t5 = T5ForConditionalGeneration(config).eval()
    with torch.no_grad():  # norms around 1, a bias that matters: activations of a trained scale
        for name, parameter in t5.named_parameters():
            if "layer_norm" in name:
                parameter.uniform_(0.5, 1.5)
            elif "relative_attention_bias" in name:
                parameter.normal_(0.0, 1.0)
    t5.save_pretrained(directory, safe_serialization=True)
    (Path(directory) / "spiece.model").write_bytes(model.getvalue())


# -- running ---------------------------------------------------------------------------------------

def run_rpt(args, model_dir, compute_type, layout, input_path):
    from compare_ctranslate2 import RunFailed, run_measured

    command = [args.rpt_translate, "--model", str(model_dir), "--split-sentences", "none",
               "--no-protect-spans", "--beam-size", str(args.beam_size),
               "--batch-size", str(args.batch_size), "--length-penalty", "0",
               "--min-length", str(args.length), "--max-length", str(args.length),
               "--threads", str(layout["threads"]), "--inter-threads", str(layout["inter"]),
               "--compute-type", compute_type, "--verbose"]
    code, out, err, rss, _ = run_measured(command, input_path)
    if code != 0:
        raise RunFailed(f"rpt-translate failed ({code}): {err.strip()[-2000:]}")
    kernels = re.search(r"CPU kernels: (.*)", err)
    return {"texts": out.splitlines(), "rss_mib": rss,
            "seconds": float(re.search(r"tokens in ([0-9.]+) s", err).group(1)),
            "kernels": kernels.group(1) if kernels else None}


def run_ct2(args, ct2_dir, spm, compute_type, layout, input_path, work):
    from compare_ctranslate2 import RunFailed, run_measured

    request = {"ct2_dir": str(ct2_dir), "spm": str(spm), "input": str(input_path),
               "compute_type": "int8_float32" if compute_type == "int8" else "float32",
               "intra": layout["intra"], "inter": layout["inter"], "beam_size": args.beam_size,
               "batch_size": args.batch_size, "length": args.length,
               "output": str(work / "ct2_out.json")}
    request_path = work / "ct2_request.json"
    request_path.write_text(json.dumps(request))
    env = dict(os.environ, CT2_VERBOSE="1")
    code, _, err, rss, _ = run_measured([sys.executable, __file__, "--ct2-worker",
                                         str(request_path)], os.devnull, env=env)
    if code != 0:
        raise RunFailed(f"CTranslate2 worker failed ({code}): {err.strip()[-2000:]}")
    isa = re.search(r"Selected ISA: (\S+)", err)
    return {**json.loads(Path(request["output"]).read_text()), "rss_mib": rss,
            "kernels": isa.group(1) if isa else None}


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if "--ct2-worker" in argv:
        return ct2_worker(argv[argv.index("--ct2-worker") + 1])
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--hf-dir")
    parser.add_argument("--shape", default="t5-small", choices=sorted(SHAPES))
    parser.add_argument("--sentences", type=int, default=200)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--beam-size", type=int, default=4)
    parser.add_argument("--length", type=int, default=24)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--compute-types", default="float32,int8")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--rpt-translate", default=str(REPO / "build" / "cli" / "rpt-translate"))
    parser.add_argument("--json")
    args = parser.parse_args(argv)

    import ctranslate2
    from compare_ctranslate2 import cpu_description
    from ctranslate2.converters import TransformersConverter

    lines = [PREFIX + line for line in data_lines("ui.en-de.test.tsv", 0)[:args.sentences]]
    with tempfile.TemporaryDirectory() as temp:
        work = Path(temp)
        hf_dir = Path(args.hf_dir) if args.hf_dir else work / "hf"
        if not args.hf_dir:
            build_checkpoint(args.shape, hf_dir)
        rpt_dir = work / "rpt"
        import convert_hf_t5
        status = convert_hf_t5.main(["--model-dir", str(hf_dir), "--output", str(rpt_dir),
                                     "--quiet"])
        if status != 0:
            sys.exit(f"convert_hf_t5.py refused {hf_dir}")
        types = args.compute_types.split(",")
        ct2_dirs = {}
        class Converter(TransformersConverter):
            # CTranslate2 4.8.5 passes `dtype=`, which the pinned transformers (4.46) still
            # calls `torch_dtype`.
            def load_model(self, model_class, model_name_or_path, **kwargs):
                if "dtype" in kwargs:
                    kwargs["torch_dtype"] = kwargs.pop("dtype")
                return model_class.from_pretrained(model_name_or_path, **kwargs)

        for compute_type in types:
            ct2_dirs[compute_type] = work / f"ct2_{compute_type}"
            Converter(str(hf_dir)).convert(
                str(ct2_dirs[compute_type]), quantization="int8" if compute_type == "int8" else None)
        input_path = work / "input.txt"
        input_path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        cpu = cpu_description()
        n = args.threads
        rpt_layouts = [{"threads": n, "inter": 1}] + ([{"threads": 1, "inter": n}] if n > 1 else [])
        ct2_layouts = [{"intra": n, "inter": 1}] + ([{"intra": 1, "inter": n}] if n > 1 else [])
        print(f"CPU: {cpu['model']} ({cpu['cpus']} CPUs; {' '.join(cpu['flags'])}); ctranslate2 "
              f"{ctranslate2.__version__}; model {args.hf_dir or args.shape}; {len(lines)} "
              f"sentences, batch {args.batch_size}, beam {args.beam_size}, every output "
              f"{args.length} tokens, {n} threads, medians of {args.repeat}")
        results = []
        for compute_type in types:
            times = {}
            outputs = {}
            for round_ in range(args.repeat):
                runs = [("rpt", layout) for layout in rpt_layouts] + \
                       [("ctranslate2", layout) for layout in ct2_layouts]
                for engine, layout in (runs if round_ % 2 == 0 else runs[::-1]):
                    key = (engine, json.dumps(layout))
                    result = (run_rpt(args, rpt_dir, compute_type, layout, input_path)
                              if engine == "rpt" else
                              run_ct2(args, ct2_dirs[compute_type], rpt_dir / "source.spm.model",
                                      compute_type, layout, input_path, work))
                    times.setdefault(key, []).append(result["seconds"])
                    outputs[key] = result
            best = {}
            for engine in ("rpt", "ctranslate2"):
                medians = {key: statistics.median(t) for key, t in times.items()
                           if key[0] == engine}
                key = min(medians, key=medians.get)
                best[engine] = {"layout": json.loads(key[1]), "seconds": medians[key],
                                "tokens_per_s": len(lines) * args.length / medians[key],
                                "rss_mib": outputs[key]["rss_mib"],
                                "kernels": outputs[key]["kernels"],
                                "texts": outputs[key]["texts"]}
            identical = sum(a == b for a, b in zip(best["rpt"]["texts"],
                                                   best["ctranslate2"]["texts"]))
            ratio = best["rpt"]["tokens_per_s"] / best["ctranslate2"]["tokens_per_s"]
            print(f"{compute_type}: rpt {best['rpt']['tokens_per_s']:.0f} tok/s "
                  f"({best['rpt']['layout']}, {best['rpt']['rss_mib']:.0f} MiB; "
                  f"{best['rpt']['kernels']}) | CTranslate2 "
                  f"{best['ctranslate2']['tokens_per_s']:.0f} tok/s "
                  f"({best['ctranslate2']['layout']}, {best['ctranslate2']['rss_mib']:.0f} MiB; "
                  f"{best['ctranslate2']['kernels']}) | rpt / CTranslate2 {ratio:.2f}x | "
                  f"identical outputs {identical}/{len(lines)}", flush=True)
            results.append({"compute_type": compute_type, "ratio": ratio, "identical": identical,
                            **{e: {k: v for k, v in best[e].items() if k != "texts"}
                               for e in best}})
    if args.json:
        Path(args.json).write_text(json.dumps({"cpu": cpu, "args": vars(args),
                                               "results": results}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
