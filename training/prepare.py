#!/usr/bin/env python3
"""Prepare one language pair for training: split the TSV corpus, train a joint SentencePiece
model, encode every split, write the OpenNMT-py vocabulary.

    prepare.py --pair en-de [--data ../shared/data] [--out ../train_runs/data/en-de]

Reads DATA/ui.PAIR.{train,dev,test}.tsv (source<TAB>target) and writes to OUT:

    {train,dev,test}.{src,tgt}      raw text, one sentence a line (src = en, tgt = de/fr)
    {train,dev,test}.sp.{src,tgt}   SentencePiece pieces separated by spaces (what onmt reads)
    spm.model, spm.vocab            the joint SentencePiece model (source and target)
    vocab.txt                       OpenNMT-py vocabulary: the SentencePiece pieces in id order
    prepare.json                    what was done, with counts

Decisions (see README.md):
- One joint unigram vocabulary of 8,000 pieces for both languages, so the model can share
  encoder, decoder and generator embeddings (3 x 2M parameters -> 2M) and copy identifiers,
  numbers and placeholders by identity.
- Special ids agree with OpenNMT-py's default_specials order: <unk>=0, <blank>=1, <s>=2,
  </s>=3, so the onmt vocabulary id of every piece equals its SentencePiece id.
- Placeholders (%s, %1$s, $(ARG1), {0}, <b> ...) are user_defined_symbols: always one piece.
- byte_fallback: characters outside the 99.99% coverage set become byte pieces (<0xE4>), never
  <unk>, so any input round-trips.
- normalization "identity": the output keeps the typography of the data (… „“ « »), which NFKC
  would rewrite; digits are split so numbers are copied digit by digit.
- Training and dev text lose control and format characters (U+0000-001F except tab, U+00AD,
  U+200B, U+FEFF ...: a few dozen lines). Test text is left exactly as given.
"""
import argparse
import json
import os
import sys
import time
import unicodedata

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from placeholders import USER_SYMBOLS  # noqa: E402

VOCAB_SIZE = 8000
SPECIALS = ["<unk>", "<blank>", "<s>", "</s>"]  # OpenNMT-py default_specials order


def clean(text):
    """Drop control (Cc) and format (Cf) characters; fold the white space this leaves."""
    if all(unicodedata.category(c) not in ("Cc", "Cf") for c in text):
        return text
    text = "".join(c for c in text if unicodedata.category(c) not in ("Cc", "Cf"))
    return " ".join(text.split())


def read_tsv(path, do_clean):
    src, tgt = [], []
    changed = 0
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            parts = line.split("\t")
            if len(parts) != 2:
                sys.exit(f"{path}:{n}: expected source<TAB>target, got {len(parts)} fields")
            s, t = parts
            if do_clean:
                cs, ct = clean(s), clean(t)
                changed += (cs != s) or (ct != t)
                s, t = cs, ct
                if not s or not t:
                    continue
            src.append(s)
            tgt.append(t)
    return src, tgt, changed


def write_lines(path, lines):
    with open(path, "w", encoding="utf-8") as f:
        for line in lines:
            f.write(line + "\n")


def main():
    repo = os.path.dirname(HERE)
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pair", required=True, help="en-de or en-fr")
    ap.add_argument("--data", default=os.path.join(repo, "..", "shared", "data"),
                    help="folder with ui.PAIR.{train,dev,test}.tsv (default ../shared/data)")
    ap.add_argument("--out", help="output folder (default ../train_runs/data/PAIR)")
    ap.add_argument("--vocab-size", type=int, default=VOCAB_SIZE)
    ap.add_argument("--threads", type=int, default=1, help="SentencePiece trainer threads")
    args = ap.parse_args()
    out = args.out or os.path.join(repo, "..", "train_runs", "data", args.pair)
    os.makedirs(out, exist_ok=True)

    import sentencepiece as spm

    t0 = time.time()
    info = {"pair": args.pair, "data": os.path.abspath(args.data), "splits": {}}
    for split in ("train", "dev", "test"):
        path = os.path.join(args.data, f"ui.{args.pair}.{split}.tsv")
        src, tgt, changed = read_tsv(path, do_clean=(split != "test"))
        write_lines(os.path.join(out, f"{split}.src"), src)
        write_lines(os.path.join(out, f"{split}.tgt"), tgt)
        info["splits"][split] = {"pairs": len(src), "cleaned_pairs": changed}
        print(f"{split}: {len(src)} pairs ({changed} cleaned)", flush=True)

    # Joint SentencePiece model on both sides of train.
    prefix = os.path.join(out, "spm")
    print(f"training SentencePiece ({args.vocab_size} pieces) on "
          f"{2 * info['splits']['train']['pairs']} lines ({time.time() - t0:.0f} s so far)",
          flush=True)
    spm.SentencePieceTrainer.train(
        input=[os.path.join(out, "train.src"), os.path.join(out, "train.tgt")],
        model_prefix=prefix,
        model_type="unigram",
        vocab_size=args.vocab_size,
        character_coverage=0.9999,
        byte_fallback=True,
        split_digits=True,
        normalization_rule_name="identity",
        user_defined_symbols=USER_SYMBOLS,
        unk_id=0, pad_id=1, bos_id=2, eos_id=3,
        unk_piece=SPECIALS[0], pad_piece=SPECIALS[1], bos_piece=SPECIALS[2], eos_piece=SPECIALS[3],
        input_sentence_size=2_000_000,
        shuffle_input_sentence=True,
        num_threads=args.threads,
        minloglevel=1,
    )
    sp = spm.SentencePieceProcessor(model_file=prefix + ".model")
    pieces = [sp.id_to_piece(i) for i in range(sp.get_piece_size())]
    assert pieces[:4] == SPECIALS, pieces[:4]
    for p in pieces:
        if p != p.strip() or " " in p or "\n" in p or not p:
            sys.exit(f"piece {p!r} contains white space: OpenNMT-py could not read it")
    write_lines(os.path.join(out, "vocab.txt"), pieces)

    # Encode every split (raw test stays available for scoring).
    lengths = {}
    unk = 0
    for split in ("train", "dev", "test"):
        for side in ("src", "tgt"):
            with open(os.path.join(out, f"{split}.{side}"), encoding="utf-8") as f:
                lines = [l.rstrip("\n") for l in f]
            print(f"encoding {split}.{side} ({time.time() - t0:.0f} s so far)", flush=True)
            enc = sp.encode(lines, out_type=str)
            unk += sum(p == "<unk>" for e in enc for p in e)
            write_lines(os.path.join(out, f"{split}.sp.{side}"), (" ".join(e) for e in enc))
            n = sum(len(e) for e in enc)
            lengths[f"{split}.{side}"] = {"pieces": n, "mean": round(n / max(1, len(enc)), 2),
                                          "max": max((len(e) for e in enc), default=0)}
    info.update({"vocab_size": len(pieces), "user_defined_symbols": len(USER_SYMBOLS),
                 "pieces": lengths, "unk_pieces": unk, "seconds": round(time.time() - t0, 1)})
    with open(os.path.join(out, "prepare.json"), "w") as f:
        json.dump(info, f, indent=2)
    print(json.dumps(info, indent=2))


if __name__ == "__main__":
    main()
