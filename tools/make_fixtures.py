#!/usr/bin/env python3
"""Rebuild the golden parity fixtures in tests/fixtures/ from real OpenNMT-py trainings.

    /work/venv/bin/python tools/make_fixtures.py [--only NAME ...] [--golden-only]
                                 [--work-dir DIR] [--data-dir DIR] [--out-dir DIR]

Run it with a Python that has OpenNMT-py 3.5 (onmt_build_vocab and onmt_train next to it),
torch and sentencepiece. Everything runs on the CPU with one thread; each training takes a
few minutes. For every fixture in FIXTURES it:

 1. takes the first 20,000 pairs of ui.en-de.train.tsv and trains unigram SentencePiece
    models of 1,000 pieces (English, German, and a joint one for shared vocabularies);
 2. writes the pieces, builds the OpenNMT-py vocabularies with onmt_build_vocab;
 3. trains the model with onmt_train (options below, fixed seed);
 4. drops the optimizer state from the last checkpoint -> <name>/checkpoint.pt;
 5. converts it with tools/convert_onmt.py (float32, SentencePiece models) -> <name>/model/;
 6. records golden.json with OpenNMT-py's own code (tools/fixture_golden.py) on the cases
    chosen from ui.en-de.test.tsv by select_cases(), and checks the beam outputs against the
    onmt_translate command line run on the stripped checkpoint.

--golden-only skips steps 3 to 5 and records golden.json again from the committed checkpoint.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import time

import sentencepiece
import torch
import yaml

import convert_onmt
import fixture_golden

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TRAIN_PAIRS = 20000
SPM_PIECES = 1000

SMALL = {"enc_layers": 2, "dec_layers": 2, "hidden_size": 64, "word_vec_size": 64, "heads": 4,
         "transformer_ff": 128}
FIXTURES = {
    "shaw_k4": {
        "vocabulary": "separate", "train_steps": 1500,
        "model": {**SMALL, "max_relative_positions": 4},
    },
    "shaw_mixed": {
        "vocabulary": "separate", "train_steps": 1200,
        "model": {"enc_layers": 3, "dec_layers": 2, "hidden_size": 72, "word_vec_size": 72,
                  "heads": 3, "transformer_ff": 160, "max_relative_positions": 6,
                  "add_qkvbias": True, "add_ffnbias": True, "pos_ffn_activation_fn": "gelu",
                  "share_decoder_embeddings": True},
    },
    "t5_bucket": {
        "vocabulary": "separate", "train_steps": 1500,
        "model": {**SMALL, "relative_positions_buckets": 32, "max_relative_positions": 20,
                  "add_ffnbias": True},
    },
    "sinusoidal": {
        "vocabulary": "joint", "train_steps": 1500,
        "model": {**SMALL, "position_encoding": True, "share_vocab": True,
                  "share_embeddings": True},
    },
}
TRAINING = {
    "seed": 1234, "world_size": 1, "gpu_ranks": [], "num_workers": 0, "model_dtype": "fp32",
    "batch_type": "tokens", "batch_size": 2048, "optim": "adam", "adam_beta2": 0.998,
    "learning_rate": 2.0, "decay_method": "noam", "warmup_steps": 400,
    "dropout": [0.1], "attention_dropout": [0.1], "label_smoothing": 0.1,
    "param_init": 0.0, "param_init_glorot": True, "encoder_type": "transformer",
    "decoder_type": "transformer", "self_attn_type": "scaled-dot", "report_every": 100,
    "keep_checkpoint": 1,
}
# Which cases golden.json holds: (what, how many), filled in test-file order. The first
# fixture_golden.DETAILED_CASES of the final order also get encoder states and step log-probs.
CASE_GROUPS = [
    ("placeholder_s", 2), ("short", 3), ("medium", 7), ("long", 7), ("longer", 4),
    ("placeholder_other", 2), ("markup", 1), ("longest", 3),
]
DETAILED_ORDER = ["placeholder_s", "short", "medium", "long", "longest", "placeholder_other"]


def log(message):
    print(f"[make_fixtures] {message}", flush=True)


def run(command, **kwargs):
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    subprocess.run(command, check=True, env=env, **kwargs)


def onmt_command(name):
    """An OpenNMT-py entry point installed next to this Python."""
    path = os.path.join(os.path.dirname(sys.executable), name)
    return path if os.path.exists(path) else name


# ---------------------------------------------------------------------------------------------
# Data


def prepare_data(data_dir, work):
    """Subset, SentencePiece models and piece files; returns {vocabulary kind: paths}."""
    src_text, tgt_text = os.path.join(work, "train.en"), os.path.join(work, "train.de")
    with open(os.path.join(data_dir, "ui.en-de.train.tsv"), encoding="utf-8") as f, \
            open(src_text, "w", encoding="utf-8") as src, \
            open(tgt_text, "w", encoding="utf-8") as tgt:
        for _, line in zip(range(TRAIN_PAIRS), f):
            source, target = line.rstrip("\n").split("\t")
            src.write(source + "\n")
            tgt.write(target + "\n")
    joint_text = os.path.join(work, "train.joint")
    with open(joint_text, "w", encoding="utf-8") as out:
        for path in (src_text, tgt_text):
            with open(path, encoding="utf-8") as f:
                out.write(f.read())
    models = {lang: train_spm(text, os.path.join(work, f"spm_{lang}"))
              for lang, text in (("en", src_text), ("de", tgt_text), ("joint", joint_text))}
    return {
        "separate": make_vocabulary(work, "separate", models["en"], models["de"],
                                    src_text, tgt_text),
        "joint": make_vocabulary(work, "joint", models["joint"], models["joint"],
                                 src_text, tgt_text),
    }


def train_spm(text, prefix):
    sentencepiece.SentencePieceTrainer.train(
        input=text, model_prefix=prefix, vocab_size=SPM_PIECES, model_type="unigram",
        character_coverage=0.9995, num_threads=1, minloglevel=2)
    return prefix + ".model"


def write_pieces(spm_model, text, out):
    tokenizer = sentencepiece.SentencePieceProcessor(model_file=spm_model)
    with open(text, encoding="utf-8") as f, open(out, "w", encoding="utf-8") as g:
        for line in f:
            g.write(" ".join(tokenizer.encode(line.rstrip("\n"), out_type=str)) + "\n")


def make_vocabulary(work, kind, src_spm, tgt_spm, src_text, tgt_text):
    folder = os.path.join(work, kind)
    os.makedirs(folder, exist_ok=True)
    paths = {"src_spm": src_spm, "tgt_spm": tgt_spm,
             "src_pieces": os.path.join(folder, "train.en.sp"),
             "tgt_pieces": os.path.join(folder, "train.de.sp"),
             "src_vocab": os.path.join(folder, "src.vocab"),
             "tgt_vocab": os.path.join(folder, "tgt.vocab" if kind == "separate" else "src.vocab")}
    write_pieces(src_spm, src_text, paths["src_pieces"])
    write_pieces(tgt_spm, tgt_text, paths["tgt_pieces"])
    config = {"data": corpus(paths), "src_vocab": paths["src_vocab"], "overwrite": True,
              "share_vocab": kind == "joint", "save_data": folder}
    if kind == "separate":
        config["tgt_vocab"] = paths["tgt_vocab"]
    config_path = os.path.join(folder, "build_vocab.yaml")
    with open(config_path, "w", encoding="utf-8") as f:
        yaml.safe_dump(config, f)
    run([onmt_command("onmt_build_vocab"), "-config", config_path, "-n_sample", "-1"],
        stdout=subprocess.DEVNULL)
    return paths


def corpus(paths):
    return {"corpus_1": {"path_src": paths["src_pieces"], "path_tgt": paths["tgt_pieces"]}}


def select_cases(test_tsv, spm_model):
    """About 30 English test sentences of varied lengths, placeholders and markup included."""
    tokenizer = sentencepiece.SentencePieceProcessor(model_file=spm_model)
    wanted = dict(CASE_GROUPS)
    chosen = {group: [] for group in wanted}
    with open(test_tsv, encoding="utf-8") as f:
        for line in f:
            text = line.split("\t")[0]
            group = case_group(text, len(tokenizer.encode(text)))
            if group and len(chosen[group]) < wanted[group]:
                chosen[group].append(text)
    detailed = [chosen[group].pop(0) for group in DETAILED_ORDER]
    return detailed + [text for group, _ in CASE_GROUPS for text in chosen[group]]


def case_group(text, pieces):
    if "%s" in text and 4 <= pieces <= 15:
        return "placeholder_s"
    if ("%d" in text or "%1" in text or "$(" in text) and 4 <= pieces <= 25:
        return "placeholder_other"
    if "<b>" in text and pieces <= 30:
        return "markup"
    for group, low, high in (("short", 1, 3), ("medium", 4, 10), ("long", 11, 20),
                             ("longer", 21, 39), ("longest", 40, 60)):
        if low <= pieces <= high:
            return group
    return None


# ---------------------------------------------------------------------------------------------
# Training, conversion, golden outputs


def train(name, spec, paths, work):
    folder = os.path.join(work, name)
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    steps = spec["train_steps"]
    config = {**TRAINING, **spec["model"], "data": corpus(paths),
              "src_vocab": paths["src_vocab"], "tgt_vocab": paths["tgt_vocab"],
              "save_model": os.path.join(folder, "model"), "train_steps": steps,
              "save_checkpoint_steps": steps}
    config_path = os.path.join(folder, "train.yaml")
    with open(config_path, "w", encoding="utf-8") as f:
        yaml.safe_dump(config, f)
    started = time.time()
    with open(os.path.join(folder, "train.log"), "w") as logfile:
        run([onmt_command("onmt_train"), "-config", config_path], stdout=logfile,
            stderr=subprocess.STDOUT)
    log(f"{name}: trained {steps} steps in {time.time() - started:.0f} s")
    return os.path.join(folder, f"model_step_{steps}.pt")


def strip_optimizer(trained, out):
    checkpoint = torch.load(trained, map_location="cpu")
    checkpoint.pop("optim", None)
    torch.save(checkpoint, out)
    log(f"{out}: {os.path.getsize(out) / 1e6:.2f} MB without the optimizer state")


def convert(checkpoint, model_dir, paths):
    shutil.rmtree(model_dir, ignore_errors=True)
    status = convert_onmt.main([checkpoint, model_dir, "--dtype", "float32",
                                "--src-spm", paths["src_spm"], "--tgt-spm", paths["tgt_spm"],
                                "--source-language", "en", "--target-language", "de"])
    if status != 0:
        raise SystemExit(f"conversion of {checkpoint} failed")


def check_with_cli(checkpoint, golden, work, name):
    """onmt_translate on the stripped checkpoint must give golden.json's beam4 n-best lists."""
    folder = os.path.join(work, name)
    src, out = os.path.join(folder, "cases.sp"), os.path.join(folder, "cases.beam4.txt")
    with open(src, "w", encoding="utf-8") as f:
        f.writelines(" ".join(case["source_pieces"]) + "\n" for case in golden["cases"])
    settings = golden["settings"]
    run([onmt_command("onmt_translate"), "-model", checkpoint, "-src", src, "-output", out,
         "-beam_size", "4", "-n_best", "4", "-batch_size", "1",
         "-max_length", str(settings["max_length"]),
         "-max_length_ratio", str(settings["max_length_ratio"]),
         "-length_penalty", settings["length_penalty"], "-alpha", str(settings["alpha"])],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    with open(out, encoding="utf-8") as f:
        lines = f.read().split("\n")
    expected = [" ".join(h["pieces"]) for case in golden["cases"] for h in case["beam4"]]
    if lines[:len(expected)] != expected:
        raise SystemExit(f"{name}: onmt_translate disagrees with golden.json")


def write_golden(path, golden):
    """One JSON document; each case on a line of its own."""
    cases = golden.pop("cases")
    with open(path, "w", encoding="utf-8") as f:
        f.write("{\n")
        for key, value in golden.items():
            f.write(f"{json.dumps(key)}: {json.dumps(value, ensure_ascii=False)},\n")
        f.write('"cases": [\n')
        f.write(",\n".join(json.dumps(case, ensure_ascii=False, separators=(",", ":"))
                           for case in cases))
        f.write("\n]\n}\n")
    golden["cases"] = cases


def build_fixture(name, spec, vocabularies, texts, args):
    paths = vocabularies[spec["vocabulary"]]
    out = os.path.join(args.out_dir, name)
    os.makedirs(out, exist_ok=True)
    checkpoint = os.path.join(out, "checkpoint.pt")
    if not args.golden_only:
        strip_optimizer(train(name, spec, paths, args.work_dir), checkpoint)
        convert(checkpoint, os.path.join(out, "model"), paths)
    golden = fixture_golden.record(checkpoint, paths["src_spm"], texts)
    golden = {"fixture": name, "checkpoint": "checkpoint.pt", "model_dir": "model",
              "training": {"train_pairs": TRAIN_PAIRS, "spm_pieces": SPM_PIECES,
                           "vocabulary": spec["vocabulary"], "train_steps": spec["train_steps"],
                           "model_options": spec["model"]},
              **golden}
    check_with_cli(checkpoint, golden, args.work_dir, name)
    write_golden(os.path.join(out, "golden.json"), golden)
    log(f"{name}: golden.json {os.path.getsize(os.path.join(out, 'golden.json')) / 1e6:.2f} MB")


def default_data_dir():
    for candidate in (os.path.join(REPO, "shared", "data"),
                      os.path.join(os.path.dirname(REPO), "shared", "data")):
        if os.path.isdir(candidate):
            return candidate
    return os.path.join(REPO, "shared", "data")


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="+", choices=sorted(FIXTURES), help="fixtures to rebuild")
    parser.add_argument("--data-dir", default=default_data_dir(),
                        help="folder with ui.en-de.{train,test}.tsv")
    parser.add_argument("--work-dir", default="/tmp/rpt-fixtures",
                        help="scratch folder for data, vocabularies and trainings")
    parser.add_argument("--out-dir", default=os.path.join(REPO, "tests", "fixtures"))
    parser.add_argument("--golden-only", action="store_true",
                        help="keep the committed checkpoints and models, record golden.json again")
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    torch.set_num_threads(1)
    os.makedirs(args.work_dir, exist_ok=True)
    log(f"data from {args.data_dir}, scratch in {args.work_dir}")
    vocabularies = prepare_data(args.data_dir, args.work_dir)
    texts = select_cases(os.path.join(args.data_dir, "ui.en-de.test.tsv"),
                         vocabularies["separate"]["src_spm"])
    for name in args.only or FIXTURES:
        build_fixture(name, FIXTURES[name], vocabularies, texts, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
