#!/usr/bin/env python
"""Cost of relative position representations in full TRAINING steps.

Shaw et al. (2018) report relative positions made training steps about 7%
slower than sinusoidal ones; this script checks our own claim (< 3%).

What it measures: for each OpenNMT-py (3.5.1) checkpoint given with
--model NAME=PATH, the model is rebuilt with OpenNMT-py's own builder from
the checkpoint's opt and vocab (as the translator does: ckpt_model_opts,
update/validate_model_opts, dict_to_vocabs, build_base_model, load_state_dict),
kept with its loaded weights, and put in train mode (dropout on). Then the
wall time of complete training steps is measured on ONE fixed batch shared by
all models:
    zero_grad -> forward(src, tgt, src_len) -> generator -> label-smoothed
    cross-entropy (sum / target tokens) -> backward -> Adam step.
The batch is real data: the first --sentences lines of the SentencePiece
training files, mapped to ids with the checkpoint vocab, sorted by length and
packed into ~--batch-tokens tokens (n_sents * max(src, tgt) len) the way
OpenNMT-py's token batching does; the batch holding the --length-quantile
example is used. Models are interleaved (A B C A B C ...) over --repeats
rounds of --steps timed steps, so machine noise hits all of them alike.
Prints a Markdown table (median and min ms/step, median ratio to --baseline).

Run (CPU, ideally on an otherwise idle machine):
  /work/venv/bin/python bench/train_step_cost.py \
    --model relative=../train_runs/en-fr-relative/ckpt/model_step_2000.pt \
    --model sinusoidal=../train_runs/en-fr-sinusoidal/ckpt/model_step_500.pt \
    --model k0=../train_runs/en-fr-k0/ckpt/model_step_500.pt \
    --threads 1 --steps 10 --repeats 5
CPU only, on purpose: on CPU OpenNMT-py 3.5.1 runs all position types through
the same explicit attention code; on GPU non-relative models would take SDPA.
"""
import argparse
import os
import platform
import statistics
import time

import torch
import torch.nn.functional as F

from onmt.constants import DefaultTokens
from onmt.inputters.inputter import dict_to_vocabs
from onmt.model_builder import build_base_model
from onmt.models.model_saver import load_checkpoint
from onmt.utils.parse import ArgumentParser

# training/train.sh's prepared data ($RUNS, by default ../train_runs from the repository root).
DATA = os.path.join(os.environ.get("RUNS", "../train_runs"), "data/en-fr/train.sp")


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--model", action="append", required=True, metavar="NAME=PATH")
    p.add_argument("--baseline", default="sinusoidal")
    p.add_argument("--src", default=DATA + ".src")
    p.add_argument("--tgt", default=DATA + ".tgt")
    p.add_argument("--sentences", type=int, default=2000, help="lines read")
    p.add_argument("--batch-tokens", type=int, default=4096)
    p.add_argument("--max-len", type=int, default=256, help="filtertoolong limit")
    p.add_argument("--length-quantile", type=float, default=0.5,
                   help="use the batch holding this length quantile (0..1)")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--warmup-steps", type=int, default=2)
    p.add_argument("--steps", type=int, default=10, help="timed steps per round")
    p.add_argument("--repeats", type=int, default=5, help="interleaved rounds")
    p.add_argument("--label-smoothing", type=float, default=0.1)
    p.add_argument("--lr", type=float, default=1e-4)
    p.add_argument("--seed", type=int, default=1234)
    return p.parse_args()


def load_model(path):
    """Rebuild an NMTModel from a checkpoint with OpenNMT-py's own builder."""
    ckpt = load_checkpoint(path)
    opt = ArgumentParser.ckpt_model_opts(ckpt["opt"])
    ArgumentParser.update_model_opts(opt)
    ArgumentParser.validate_model_opts(opt)
    vocabs = dict_to_vocabs(ckpt["vocab"])
    model = build_base_model(opt, vocabs)
    model.load_state_dict(ckpt, device=torch.device("cpu"), strict=True)
    return model, opt, vocabs


def make_batch(args, vocabs):
    """Fixed batch, OpenNMT-py 3.5.1 layout: src/tgt (batch, len, 1), src_len (batch,)."""
    bos, eos = vocabs["decoder_start_token"], DefaultTokens.EOS
    with open(args.src, encoding="utf-8") as fs, open(args.tgt, encoding="utf-8") as ft:
        pairs = []
        for _, s, t in zip(range(args.sentences), fs, ft):
            s, t = s.split(), t.split()
            if 0 < len(s) <= args.max_len and 0 < len(t) <= args.max_len:
                pairs.append((vocabs["src"](s), vocabs["tgt"]([bos] + t + [eos])))
    pairs.sort(key=lambda st: (len(st[0]), len(st[1])))  # like text_sort_key
    # greedy token packing: n_sents * max(src, tgt) length <= batch_tokens
    batches, cur, maxlen = [], [], 0
    for st in pairs:
        m = max(maxlen, len(st[0]), len(st[1]))
        if cur and (len(cur) + 1) * m > args.batch_tokens:
            batches.append(cur)
            cur, m = [], max(len(st[0]), len(st[1]))
        cur.append(st)
        maxlen = m
    batches.append(cur)
    target = pairs[min(len(pairs) - 1, int(args.length_quantile * len(pairs)))]
    chosen = next(b for b in batches if any(st is target for st in b))

    def pad(seqs, pad_id):
        out = torch.full((len(seqs), max(map(len, seqs))), pad_id, dtype=torch.long)
        for i, seq in enumerate(seqs):
            out[i, : len(seq)] = torch.tensor(seq)
        return out.unsqueeze(-1)

    src = pad([s for s, _ in chosen], vocabs["src"][DefaultTokens.PAD])
    tgt = pad([t for _, t in chosen], vocabs["tgt"][DefaultTokens.PAD])
    src_len = torch.tensor([len(s) for s, _ in chosen])
    return src, tgt, src_len


def train_step(model, optim, batch, pad_id, smoothing):
    src, tgt, src_len = batch
    optim.zero_grad(set_to_none=True)
    dec_out, _ = model(src, tgt, src_len, bptt=False, with_align=False)
    logits = model.generator(dec_out.reshape(-1, dec_out.size(-1)))
    gold = tgt[:, 1:, 0].reshape(-1)
    loss = F.cross_entropy(logits.float(), gold, ignore_index=pad_id,
                           reduction="sum", label_smoothing=smoothing)
    loss = loss / gold.ne(pad_id).sum()
    loss.backward()
    optim.step()
    return loss.item()


def main():
    args = parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    specs = [m.split("=", 1) for m in args.model]
    names = [n for n, _ in specs]
    if args.baseline not in names:
        raise SystemExit(f"--baseline {args.baseline!r} is not one of {names}")

    runs, batch, first_vocab = {}, None, None
    print("## Models\n")
    for name, path in specs:
        model, opt, vocabs = load_model(path)
        if batch is None:
            first_vocab, batch = vocabs["src"].ids_to_tokens, make_batch(args, vocabs)
        elif vocabs["src"].ids_to_tokens != first_vocab:
            raise SystemExit(f"{name}: vocab differs from the first model's")
        model.train()
        optim = torch.optim.Adam(model.parameters(), lr=args.lr,
                                 betas=(opt.adam_beta1, opt.adam_beta2))
        pad_id = vocabs["tgt"][DefaultTokens.PAD]
        runs[name] = (model, optim, pad_id, [])
        n_params = sum(p.numel() for p in model.parameters())
        print(f"- {name}: max_relative_positions={opt.max_relative_positions} "
              f"position_encoding={opt.position_encoding} "
              f"enc/dec layers={opt.enc_layers}/{opt.dec_layers} "
              f"hidden={opt.hidden_size} heads={opt.heads} params={n_params:,} "
              f"self_attn_type={opt.self_attn_type} ({path})")

    src, tgt, src_len = batch
    print("\n## Settings\n")
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo")
                if line.startswith("model name")), platform.processor())
    print(f"- torch {torch.__version__}, threads {torch.get_num_threads()}, "
          f"CPU {cpu} ({os.cpu_count()} logical), load avg at start "
          f"{os.getloadavg()[0]:.2f}")
    print(f"- batch: {src.size(0)} sentences, src {tuple(src.shape)}, "
          f"tgt {tuple(tgt.shape)}, {int(src_len.sum())} src / "
          f"{int(tgt[:, 1:, 0].ne(runs[names[0]][2]).sum())} tgt tokens "
          f"(from the first {args.sentences} lines, quantile {args.length_quantile})")
    print(f"- warmup {args.warmup_steps} steps/model, {args.repeats} interleaved "
          f"rounds x {args.steps} timed steps, label smoothing "
          f"{args.label_smoothing}, Adam lr {args.lr}\n")

    for name in names:  # warmup (allocator, Adam state), also a sanity check
        model, optim, pad_id, _ = runs[name]
        losses = [train_step(model, optim, batch, pad_id, args.label_smoothing)
                  for _ in range(args.warmup_steps)]
        print(f"- warmup loss {name}: " + ", ".join(f"{x:.3f}" for x in losses))
    for _ in range(args.repeats):
        for name in names:
            model, optim, pad_id, times = runs[name]
            for _ in range(args.steps):
                t0 = time.perf_counter()
                train_step(model, optim, batch, pad_id, args.label_smoothing)
                times.append((time.perf_counter() - t0) * 1e3)
    print(f"- load avg at end {os.getloadavg()[0]:.2f}")

    base = statistics.median(runs[args.baseline][3])
    print(f"\n## Results\n\n| model | median ms/step | min ms/step | "
          f"ratio to {args.baseline} |\n|---|---:|---:|---:|")
    for name in names:
        times = runs[name][3]
        med = statistics.median(times)
        print(f"| {name} | {med:.1f} | {min(times):.1f} | {med / base:.3f} |")


if __name__ == "__main__":
    main()
