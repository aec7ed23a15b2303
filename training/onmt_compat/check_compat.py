#!/usr/bin/env python3
"""Self-check of rpt_onmt_compat (no GPU needed):

    PYTHONPATH=training/onmt_compat[:site] python training/onmt_compat/check_compat.py \
        [--vocab RUNS/data/en-de/vocab.txt] [--checkpoint COPY_OF_A_CHECKPOINT.pt]

1. pyonmttok_lite against the real pyonmttok, when that is installed: random token streams with
   and without special tokens, maximum_size, minimum_frequency, default_id, lookups, and
   (--vocab) OpenNMT-py's own build_vocab/dict_to_vocabs on the recipe's vocabulary.
2. `import onmt` with the stand-ins forced in (RPT_ONMT_COMPAT_FORCE semantics).
3. (--checkpoint) torch.load of an OpenNMT-py checkpoint: whether plain torch.load fails on this
   torch (weights_only default), and that it loads once install() ran.
4. The GPU-only attention branch (scaled_dot_product_attention, taken for max_relative_positions
   0 off the CPU), forced onto the CPU, with the compat patch, gives the decoder self-attention
   and encoder attention of the plain matmul branch that the CPU uses.
Exit status 0 when everything that could be checked passed.
"""
import argparse
import os
import random
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import pyonmttok_lite  # noqa: E402


def compare_vocabs(real, lite, tokens, label):
    assert real.ids_to_tokens == lite.ids_to_tokens, f"{label}: ids_to_tokens differ"
    assert real.tokens_to_ids == lite.tokens_to_ids, f"{label}: tokens_to_ids differ"
    assert len(real) == len(lite), f"{label}: len differs"
    assert real.default_id == lite.default_id, f"{label}: default_id {real.default_id} != {lite.default_id}"
    probe = tokens[:20] + ["<never-seen>", "<unk>"]
    assert real(probe) == lite(probe), f"{label}: __call__ differs"
    for t in probe:
        assert real[t] == lite[t] and real.lookup_token(t) == lite.lookup_token(t), f"{label}: {t}"
    for i in (0, 1, len(real) - 1, len(real), len(real) + 5):
        if i >= 0:
            assert real.lookup_index(i) == lite.lookup_index(i), f"{label}: lookup_index({i})"


def check_against_real():
    try:
        import pyonmttok
    except ImportError:
        print("1. real pyonmttok not installed: comparison skipped")
        return 0
    rng = random.Random(1234)
    cases = 0
    for _ in range(300):
        alphabet = [f"t{i}" for i in range(rng.randint(1, 40))] + ["<unk>", "<s>"]
        tokens = [rng.choice(alphabet) for _ in range(rng.randint(0, 200))]
        specials = rng.choice([None, [], ["<unk>", "<blank>", "<s>", "</s>"], ["<s>"], ["t1", "x"]])
        kwargs = {}
        if rng.random() < 0.5:
            kwargs["maximum_size"] = rng.randint(0, 30)
        if rng.random() < 0.5:
            kwargs["minimum_frequency"] = rng.randint(0, 4)
        real = pyonmttok.build_vocab_from_tokens(tokens, special_tokens=specials, **kwargs)
        lite = pyonmttok_lite.build_vocab_from_tokens(tokens, special_tokens=specials, **kwargs)
        label = f"case tokens={len(tokens)} specials={specials} {kwargs}"
        compare_vocabs(real, lite, tokens, label)
        if rng.random() < 0.5:
            real.default_id = lite.default_id = rng.randint(0, 5)
            compare_vocabs(real, lite, tokens, label + " default_id set")
        for extra in ("<pad0>", "t1", "<pad1>"):
            real.add_token(extra)
            lite.add_token(extra)
        compare_vocabs(real, lite, tokens, label + " add_token")
        cases += 1
    print(f"1. pyonmttok_lite == pyonmttok {pyonmttok.__version__ if hasattr(pyonmttok, '__version__') else ''} on {cases} random cases: ok")
    return 0


def check_onmt_vocab(vocab_path):
    """OpenNMT-py's build_vocab + vocabs_to_dict + dict_to_vocabs with real vs lite."""
    code = r"""
import sys, json, argparse
import rpt_onmt_compat
rpt_onmt_compat.install()
from onmt.inputters.inputter import build_vocab, vocabs_to_dict, dict_to_vocabs
from onmt.constants import DefaultTokens
import pyonmttok
opt = argparse.Namespace(default_specials=[DefaultTokens.UNK, DefaultTokens.PAD, DefaultTokens.BOS, DefaultTokens.EOS],
    src_vocab=sys.argv[1], tgt_vocab=sys.argv[1], src_words_min_frequency=0, tgt_words_min_frequency=0,
    src_vocab_size=8000, tgt_vocab_size=8000, vocab_size_multiple=8, share_vocab=True, n_src_feats=0,
    data_task="seq2seq", decoder_start_token=DefaultTokens.BOS)
v = build_vocab(opt, {"src": [], "tgt": []})
d = vocabs_to_dict(v)
v2 = dict_to_vocabs(d)
out = {"module": pyonmttok.__name__ + " " + getattr(pyonmttok, "__version__", "?"),
       "dict": d, "len": len(v2["tgt"]), "default": v2["tgt"].default_id,
       "eos": v2["tgt"].lookup_token(DefaultTokens.EOS), "pad": v2["src"][DefaultTokens.PAD],
       "call": v2["src"](["▁the", "<never>", "</s>"])}
print(json.dumps(out))
"""
    env = dict(os.environ)
    env["PYTHONPATH"] = HERE + os.pathsep + env.get("PYTHONPATH", "")
    results = {}
    for force in ("0", "1"):
        env["RPT_ONMT_COMPAT_FORCE"] = force
        p = subprocess.run([sys.executable, "-c", code, vocab_path], env=env,
                           capture_output=True, text=True)
        if p.returncode != 0:
            print(p.stderr[-3000:])
            raise SystemExit(f"onmt vocabulary check failed (force={force})")
        import json
        results[force] = json.loads(p.stdout.strip().splitlines()[-1])
    a, b = results["0"], results["1"]
    same = all(a[k] == b[k] for k in ("dict", "len", "default", "eos", "pad", "call"))
    print(f"1b. onmt build_vocab/dict_to_vocabs on {vocab_path}: {a['module']} vs {b['module']}: "
          f"{'identical' if same else 'DIFFERENT'} (size {a['len']}, unk {a['default']}, "
          f"eos {a['eos']}, pad {a['pad']})")
    return 0 if same else 1


def check_import_onmt():
    env = dict(os.environ, RPT_ONMT_COMPAT_FORCE="1")
    env["PYTHONPATH"] = HERE + os.pathsep + env.get("PYTHONPATH", "")
    p = subprocess.run([sys.executable, "-m", "rpt_onmt_compat", "report"], env=env,
                       capture_output=True, text=True)
    if p.returncode != 0:
        print(p.stderr[-3000:])
        print("2. import onmt with forced stand-ins: FAILED")
        return 1
    print("2. import onmt with forced stand-ins: ok:", p.stdout.strip())
    return 0


def check_checkpoint(path):
    code = r"""
import sys, os
use = sys.argv[2] == "1"
if use:
    import rpt_onmt_compat; rpt_onmt_compat.install()
import torch
try:
    ck = torch.load(sys.argv[1], map_location="cpu")
    print("loaded", type(ck["opt"]).__name__, sorted(ck)[:6], "torch", torch.__version__)
except Exception as e:
    print("FAILED", type(e).__name__, str(e).splitlines()[0][:200], "torch", torch.__version__)
"""
    env = dict(os.environ)
    env.pop("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", None)
    env["PYTHONPATH"] = HERE + os.pathsep + env.get("PYTHONPATH", "")
    out = {}
    for use in ("0", "1"):
        p = subprocess.run([sys.executable, "-c", code, path, use], env=env,
                           capture_output=True, text=True)
        out[use] = (p.stdout.strip().splitlines() or ["(no output) " + p.stderr[-500:]])[-1]
    print(f"3. plain torch.load: {out['0']}")
    print(f"3. after install():  {out['1']}")
    return 0 if out["1"].startswith("loaded") else 1


SDPA_CODE = r"""
import torch, types
import rpt_onmt_compat
rpt_onmt_compat.install()
import onmt.modules.multi_headed_attn as mha
rpt_onmt_compat._patch_sdpa()
torch.manual_seed(0)
B, T, D, H = 3, 7, 256, 4
worst = 0.0
for is_decoder, attn_type in ((True, "self"), (False, "self"), (True, "context")):
    m = mha.MultiHeadedAttention(H, D, dropout=0.0, is_decoder=is_decoder,
                                 max_relative_positions=0, attn_type=attn_type,
                                 self_attn_type="scaled-dot-flash")
    for p in m.parameters():
        torch.nn.init.normal_(p, std=0.05)
    m.eval()
    x = torch.randn(B, T, D)
    pad = torch.zeros(B, 1, T, dtype=torch.bool)
    pad[0, 0, 5:] = True  # padded keys
    if is_decoder and attn_type == "self":
        future = ~torch.ones(T, T, dtype=torch.bool).tril().view(1, T, T)
        mask = torch.gt(pad + future, 0).unsqueeze(1)  # (B, 1, T, T), True = masked
    else:
        mask = pad.unsqueeze(1).expand(-1, -1, T, -1)
    with torch.no_grad():
        plain, _ = m(x, x, x, mask=mask)  # CPU: the matmul branch
        real_torch = mha.torch
        class Proxy:
            def __getattr__(self, n):
                return getattr(real_torch, n)
            @staticmethod
            def device(*a, **k):  # makes `query.device != torch.device("cpu")` true
                return real_torch.device("meta") if a == ("cpu",) else real_torch.device(*a, **k)
        mha.torch = Proxy()
        try:
            fused, attn = m(x, x, x, mask=mask)  # the SDPA branch, through the patch
        finally:
            mha.torch = real_torch
    assert attn is None, "the SDPA branch was not taken"
    worst = max(worst, (plain - fused).abs().max().item())
print(f"max abs difference {worst:.2e}")
assert worst < 1e-4, worst
"""


def check_sdpa():
    env = dict(os.environ)
    env["PYTHONPATH"] = HERE + os.pathsep + env.get("PYTHONPATH", "")
    p = subprocess.run([sys.executable, "-c", SDPA_CODE], env=env, capture_output=True, text=True)
    if p.returncode != 0:
        print(p.stderr[-2000:])
        print("4. SDPA branch (patched) vs matmul branch: FAILED")
        return 1
    print("4. SDPA branch (patched) vs matmul branch, decoder self / encoder self / context "
          "attention:", p.stdout.strip().splitlines()[-1])
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vocab")
    ap.add_argument("--checkpoint")
    args = ap.parse_args()
    rc = check_against_real()
    if args.vocab:
        rc |= check_onmt_vocab(args.vocab)
    rc |= check_import_onmt()
    if args.checkpoint:
        rc |= check_checkpoint(args.checkpoint)
    rc |= check_sdpa()
    print("all checks passed" if rc == 0 else "SOME CHECKS FAILED")
    return rc


if __name__ == "__main__":
    sys.exit(main())
