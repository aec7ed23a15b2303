"""Tests of tools/convert_hf_t5.py on tiny Hugging Face T5 models built here (nothing downloaded).

    python3 -m unittest discover -s tests/tools -p 'convert_hf_t5_test.py' -v

Needs torch, numpy, sentencepiece, transformers and safetensors (tools/setup.sh); without them
every test is skipped, with the reason printed. A SentencePiece model is trained on a few
thousand lines of ../shared/data/ui.en-de.train.tsv (generated text when the data is absent),
with T5's special ids (pad 0, eos 1, unk 2, no bos). Three random T5 models are saved with
save_pretrained: v1.0-like (relu, tied LM head, 4 heads of 16 in d_model 64), Flan-T5 / mT5-like
v1.1 (gated-gelu, untied, 3 heads of 24: attention wider than the model, d_kv not a power of 4)
and a sharded gated-relu one (6 heads of 8: narrower), plus, once, pytorch_model.bin; each
converted with the tool. Then:

  1. the converted directory's structure: config keys, tensor names and shapes, the one rewrite
     (the tied head * d_model**-0.5), the vocabulary; refusals;
  2. a NumPy forward pass written here from the converted files alone, with rpt's conventions
     (RMS norm, t5 bucket bias, unscaled scores q k^T + bias, heads * head_dim attention columns,
     EOS appended to the source),
     matches transformers' logits within 1e-4;
  3. rpt-translate (RPT_TRANSLATE, else build/cli/rpt-translate) on 20 sentences: greedy equals
     transformers' generate(num_beams=1) text for text and score for score; beam 4 equals a
     replica of rpt's (OpenNMT-py's) beam search run on transformers' model, and is compared with
     transformers' own beam search, which differs by construction (printed, not asserted).
     Skipped, with the engine's message, while rpt-translate cannot run these models yet.
"""

import contextlib
import io
import json
import math
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DATA = os.path.join(os.path.dirname(REPO), "shared", "data")
sys.path.insert(0, os.path.join(REPO, "tools"))

try:
    import numpy as np
    import sentencepiece
    import torch
    import transformers
    from transformers import (T5Config, T5ForConditionalGeneration, UMT5Config,
                              UMT5ForConditionalGeneration)
    from transformers.models.t5.modeling_t5 import T5Attention
    import safetensors.torch  # noqa: F401  (save_pretrained's default format)
    import convert_hf_t5
    from rpt_model import read_config, read_model_bin, read_vocabulary
    MISSING = None
    transformers.logging.set_verbosity_error()  # deprecation notes of generate()
except ImportError as e:  # pragma: no cover - depends on the machine
    MISSING = f"torch, numpy, sentencepiece, transformers and safetensors are needed ({e})"
    print(f"convert_hf_t5_test: SKIPPED: {MISSING}", file=sys.stderr)

D_MODEL, D_KV, HEADS, D_FF, LAYERS = 64, 16, 4, 128, 2
PIECES, EXTRA_IDS, ROWS = 400, 100, 512  # like t5's 32000 + 100 extra ids in 32128 rows
# name: (T5Config arguments, save_pretrained arguments, (EOS row scale, sublayer output scale)).
# The last two shape the random models into translating-like behaviour, to exercise the search:
# a larger EOS row in the LM head ends hypotheses at varied lengths, and larger attention and FFN
# outputs keep the tied model from repeating one token.
MODELS = {
    "t5_v1_0": (dict(feed_forward_proj="relu", tie_word_embeddings=True,
                     relative_attention_num_buckets=8, relative_attention_max_distance=20), {},
                (3.0, 4.0)),
    "flan_v1_1": (dict(feed_forward_proj="gated-gelu", tie_word_embeddings=False,
                       relative_attention_num_buckets=32, relative_attention_max_distance=128,
                       num_heads=3, d_kv=24), {},
                  (2.5, 1.0)),
    "sharded": (dict(feed_forward_proj="gated-relu", tie_word_embeddings=False,
                     relative_attention_num_buckets=8, relative_attention_max_distance=20,
                     num_heads=6, d_kv=8),
                {"max_shard_size": "100KB"}, (1.6, 1.0)),
    # umT5: a relative bias table in every block, each its own.
    "umt5": (dict(model_type="umt5", feed_forward_proj="gated-gelu", tie_word_embeddings=False,
                  relative_attention_num_buckets=8, relative_attention_max_distance=20), {},
             (2.5, 1.0)),
}
PAD, EOS, UNK = 0, 1, 2


def heads_of(config_args):
    return config_args.get("num_heads", HEADS)


def d_kv_of(config_args):
    return config_args.get("d_kv", D_KV)
MAX_LENGTH = 20
ENGINE_LACKS_T5 = re.compile(r"unknown|unsupported|not supported|rms_norm|gelu_tanh|feed_forward"
                             r"|append_source_eos|has no tensor '[^']*\.(beta|bias)'")


def to_numpy(tensor):
    # through a list: the torch <-> numpy bridge is broken when numpy 2 meets an older torch
    return np.array(tensor.float().tolist(), dtype=np.float32).reshape(tuple(tensor.shape))


def run_converter(*argv):
    """(exit status, stderr) of the converter run in this process."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        status = convert_hf_t5.main(list(argv))
    return status, err.getvalue()


# ---------------------------------------------------------------------------------------------
# Fixtures, built once per run


def _data_lines(name, column, step):
    path = os.path.join(DATA, name)
    if not os.path.isfile(path):
        return None
    with open(path, encoding="utf-8") as f:
        rows = [line.rstrip("\n").split("\t") for line in f]
    return [row[column] for row in rows[::step] if len(row) >= 2]


def _generated_lines(count, seed):
    """UI-like lines for a checkout without ../shared/data: the words below, made-up ones of two
    or three syllables (the words alone give 184 pieces, fewer than PIECES) and T5's prefixes."""
    words = ("open save file the a of to print preview folder window cannot be found settings "
             "network connection was lost delete all selected items are you sure quit without "
             "changes directory name new copy paste undo redo help about version update").split()
    rng = random.Random(seed)
    syllables = [c + v for c in "bcdfghklmnprstvwz" for v in "aeiou"]
    words += ["".join(rng.choice(syllables) for _ in range(rng.randint(2, 3))) for _ in range(600)]
    # The task prefixes the tests read: their characters must be pieces.
    words += ["translate English to German:", "translate English to French:"] * 20
    lines = [" ".join(rng.choice(words) for _ in range(rng.randint(2, 9))) for _ in range(count)]
    return [line[0].upper() + line[1:] for line in lines]  # str.capitalize lowers the rest


def training_text():
    lines = _data_lines("ui.en-de.train.tsv", 0, 40)
    if lines is None:
        return _generated_lines(4000, 1)
    return lines + _data_lines("ui.en-de.train.tsv", 1, 40)


def source_sentences():
    """20 plain source lines (no placeholders or markup: span protection is not under test)."""
    lines = _data_lines("ui.en-de.test.tsv", 0, 1) or _generated_lines(200, 2)
    plain = [line for line in lines if re.fullmatch(r"[A-Za-z][A-Za-z ,.'?!-]*", line)
             and 3 <= len(line.split()) <= 12 and line == line.strip()]
    return plain[:20]


def train_sentencepiece(path, **options):
    """A SentencePiece model of PIECES pieces with T5's special ids at `path`, loaded."""
    model = io.BytesIO()
    sentencepiece.SentencePieceTrainer.train(
        sentence_iterator=iter(training_text()), model_writer=model, vocab_size=PIECES,
        model_type="unigram", pad_id=PAD, eos_id=EOS, unk_id=UNK, bos_id=-1,
        hard_vocab_limit=True, minloglevel=2, num_threads=1, **options)
    with open(path, "wb") as f:
        f.write(model.getvalue())
    processor = sentencepiece.SentencePieceProcessor()
    processor.Load(path)
    return processor


class Fixtures:
    """The SentencePiece model, the HF models and their conversions in one temporary tree."""

    def __init__(self):
        self.temp = tempfile.TemporaryDirectory(prefix="rpt-hf-t5-")
        self.root = self.temp.name
        self.spm = os.path.join(self.root, "spiece.model")
        self.sp = train_sentencepiece(self.spm)
        self.hf, self.hf_dirs, self.converted = {}, {}, {}
        for seed, (name, (config, save, scales)) in enumerate(MODELS.items()):
            self.hf[name] = self.make_model(config, seed, *scales)
            self.hf_dirs[name] = self.save(self.hf[name], name, **save)
            self.converted[name] = self.convert(name)

    def make_model(self, config_args, seed, eos_scale=1.0, output_scale=1.0):
        config_args = dict(config_args)
        umt5 = config_args.pop("model_type", "t5") == "umt5"
        config = (UMT5Config if umt5 else T5Config)(
            vocab_size=ROWS, d_model=D_MODEL, d_ff=D_FF, num_layers=LAYERS,
            num_decoder_layers=LAYERS, dropout_rate=0.0, decoder_start_token_id=PAD,
            pad_token_id=PAD, eos_token_id=EOS, **(dict(d_kv=D_KV, num_heads=HEADS) | config_args))
        torch.manual_seed(seed)
        model = (UMT5ForConditionalGeneration if umt5 else T5ForConditionalGeneration)(config).eval()
        with torch.no_grad():  # T5 initialises norms to 1 and small biases: make both matter
            for name, parameter in model.named_parameters():
                if "layer_norm" in name:
                    parameter.uniform_(0.5, 1.5)
                elif "relative_attention_bias" in name:
                    parameter.normal_(0.0, 1.0)
                elif name.endswith((".o.weight", ".wo.weight")):
                    parameter.mul_(output_scale)
            model.get_output_embeddings().weight[EOS] *= eos_scale
        return model

    def save(self, model, name, **save_args):
        directory = os.path.join(self.root, "hf", name)
        model.save_pretrained(directory, **save_args)
        shutil.copyfile(self.spm, os.path.join(directory, "spiece.model"))
        return directory

    def convert(self, name, *extra, model_dir=None):
        """Converts hf/NAME (or MODEL_DIR, a variant of it): the first time into rpt/NAME, then
        into new directories rpt/NAME-1, -2, ..."""
        out = os.path.join(self.root, "rpt", name)
        count = 0
        while os.path.exists(out):
            count += 1
            out = os.path.join(self.root, "rpt", f"{name}-{count}")
        status, err = run_converter("--model-dir", model_dir or self.hf_dirs[name],
                                    "--output", out, "--quiet", *extra)
        if status != 0:
            raise AssertionError(err)
        return out


_FIXTURES = None


def fixtures():
    global _FIXTURES
    if _FIXTURES is None:
        _FIXTURES = Fixtures()
    return _FIXTURES


def tearDownModule():
    if _FIXTURES is not None:
        _FIXTURES.temp.cleanup()


# ---------------------------------------------------------------------------------------------
# A NumPy reference of rpt's computation, from the converted files only


def t5_bucket(relative_position, bidirectional, buckets, max_distance):
    """T5's bucket of key position - query position (the T5 paper; transformers'
    T5Attention._relative_position_bucket), the logarithm in float32 as both compute it."""
    n = np.asarray(relative_position, dtype=np.int64)
    bucket = np.zeros_like(n)
    if bidirectional:
        buckets //= 2
        bucket += (n > 0) * buckets
        n = np.abs(n)
    else:
        n = -np.minimum(n, 0)
    max_exact = buckets // 2
    ratio = np.maximum(n, max_exact).astype(np.float32) / np.float32(max_exact)
    large = max_exact + (np.log(ratio) / np.float32(math.log(max_distance / max_exact))
                         * np.float32(buckets - max_exact)).astype(np.int64)
    large = np.minimum(large, buckets - 1)
    return bucket + np.where(n < max_exact, n, large)


class Reference:
    """rpt's forward pass in float64 NumPy from an rpt model directory."""

    def __init__(self, model_dir):
        self.config = read_config(model_dir)
        self.arch, self.position = self.config["architecture"], self.config["position"]
        self.w = {name: array.astype(np.float64)
                  for name, array in read_model_bin(os.path.join(model_dir, "model.bin")).items()}
        self.vocab = read_vocabulary(os.path.join(model_dir, "source_vocab.txt"))
        self.ids = {token: i for i, token in enumerate(self.vocab)}
        self.sp = sentencepiece.SentencePieceProcessor()
        self.sp.Load(os.path.join(model_dir, "source.spm.model"))

    def source_ids(self, text):
        """As the engine reads a source: pieces, looked up in the vocabulary, then EOS."""
        unk = self.ids[self.config["special_tokens"]["unk"]]
        ids = [self.ids.get(piece, unk) for piece in self.sp.EncodeAsPieces(text)]
        if self.config.get("append_source_eos"):
            ids.append(self.ids[self.config["special_tokens"]["eos"]])
        return ids

    def start_id(self):
        return self.ids[self.config["decoder_start_token"]]

    def norm(self, x, name):
        assert self.arch["norm"] == "rms_norm"
        assert name + ".beta" not in self.w
        scale = 1.0 / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + self.arch["norm_eps"])
        return x * scale * self.w[name + ".gamma"]

    def activation(self, x):
        if self.arch["activation"] == "relu":
            return np.maximum(x, 0.0)
        assert self.arch["activation"] == "gelu_tanh", self.arch["activation"]
        return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))

    def position_bias(self, name, queries, keys, bidirectional):
        table = self.w[name + ".relative_bias"]  # [buckets, heads]
        offsets = np.arange(keys)[None, :] - np.arange(queries)[:, None]
        buckets = t5_bucket(offsets, bidirectional, self.position["buckets"],
                            self.position["max_distance"])
        return np.transpose(table[buckets], (2, 0, 1))  # [heads, queries, keys]

    def attention(self, x, memory, name, bias):
        heads = self.arch["heads"]
        head_dim = self.arch.get("head_dim", self.arch["d_model"] // heads)

        def project(inputs, part):
            out = inputs @ self.w[f"{name}.{part}.weight"].T
            return out.reshape(len(inputs), heads, head_dim).transpose(1, 0, 2)

        q, k, v = project(x, "query"), project(memory, "key"), project(memory, "value")
        scores = (q / math.sqrt(head_dim) if self.arch.get("scale_attention", True) else q) \
            @ k.transpose(0, 2, 1)
        if bias is not None:
            scores = scores + bias
        scores = scores - scores.max(axis=-1, keepdims=True)
        probs = np.exp(scores)
        probs /= probs.sum(axis=-1, keepdims=True)
        context = (probs @ v).transpose(1, 0, 2).reshape(len(x), -1)
        return context @ self.w[f"{name}.output.weight"].T

    def ffn(self, x, name):
        if self.arch["feed_forward"] == "gated":
            hidden = (self.activation(x @ self.w[name + ".gate.weight"].T)
                      * (x @ self.w[name + ".inner.weight"].T))
        else:
            hidden = self.activation(x @ self.w[name + ".inner.weight"].T)
        return hidden @ self.w[name + ".outer.weight"].T

    def logits(self, source_ids, decoder_ids):
        assert self.arch["shared_embeddings"] and not self.arch["embedding_scale"]
        embeddings = self.w["decoder.embeddings"]
        h = embeddings[source_ids]
        for i in range(self.arch["encoder_layers"]):
            name = f"encoder.layer_{i}"
            bias = self.position_bias(name + ".self_attention", len(h), len(h), True)
            x = self.norm(h, name + ".self_attention.norm")
            h = h + self.attention(x, x, name + ".self_attention", bias)
            h = h + self.ffn(self.norm(h, name + ".ffn.norm"), name + ".ffn")
        memory = self.norm(h, "encoder.norm")

        h = embeddings[decoder_ids]
        causal = np.triu(np.full((len(h), len(h)), -np.inf), 1)
        for i in range(self.arch["decoder_layers"]):
            name = f"decoder.layer_{i}"
            bias = self.position_bias(name + ".self_attention", len(h), len(h), False) + causal
            x = self.norm(h, name + ".self_attention.norm")
            h = h + self.attention(x, x, name + ".self_attention", bias)
            x = self.norm(h, name + ".cross_attention.norm")
            h = h + self.attention(x, memory, name + ".cross_attention", None)
            h = h + self.ffn(self.norm(h, name + ".ffn.norm"), name + ".ffn")
        generator = (embeddings if self.arch["tied_generator"] else self.w["generator.weight"])
        return self.norm(h, "decoder.norm") @ generator.T


# ---------------------------------------------------------------------------------------------
# 1. Structure


@unittest.skipIf(MISSING, MISSING)
class ConversionTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.fx = fixtures()

    def hf_state(self, name):
        return {key: to_numpy(value) for key, value in self.fx.hf[name].state_dict().items()}

    def test_config(self):
        for name, (config_args, _, _) in MODELS.items():
            with self.subTest(model=name):
                config = read_config(self.fx.converted[name])
                gated = config_args["feed_forward_proj"] != "relu"
                self.assertEqual(config["format"], "rpt-model")
                self.assertEqual(config["format_version"], 1)
                self.assertEqual(config["name"], name)
                self.assertEqual(config["special_tokens"],
                                 {"pad": "<pad>", "unk": "<unk>", "bos": "<pad>", "eos": "</s>"})
                self.assertEqual(config["decoder_start_token"], "<pad>")
                self.assertIs(config["append_source_eos"], True)
                self.assertNotIn("source_prefix", config)
                for key, value in (("weights", "model.bin"),
                                   ("source_vocabulary", "source_vocab.txt"),
                                   ("target_vocabulary", "target_vocab.txt"),
                                   ("source_tokenizer", "source.spm.model"),
                                   ("target_tokenizer", "target.spm.model")):
                    self.assertEqual(config[key], value)
                self.assertEqual(config["architecture"], {
                    "encoder_layers": LAYERS, "decoder_layers": LAYERS, "d_model": D_MODEL,
                    "heads": heads_of(config_args), "head_dim": d_kv_of(config_args),
                    "scale_attention": False, "d_ff": D_FF,
                    "activation": "gelu_tanh" if "gelu" in config_args["feed_forward_proj"]
                    else "relu",
                    "norm": "rms_norm", "feed_forward": "gated" if gated else "dense",
                    "norm_placement": "pre", "norm_eps": 1e-6, "embedding_scale": False,
                    "qkv_bias": False, "ffn_bias": False, "tied_generator": False,
                    "shared_embeddings": True})
                self.assertEqual(config["position"], {
                    "type": "t5_bucket", "encoder_max_relative_position": 0,
                    "decoder_max_relative_position": 0, "relative_tables": "shared",
                    "buckets": config_args["relative_attention_num_buckets"],
                    "max_distance": config_args["relative_attention_max_distance"],
                    "sinusoidal": False})
                self.assertEqual(config["converted_from"], {
                    "tool": "convert_hf_t5.py", "model_type": config_args.get("model_type", "t5"),
                    "feed_forward_proj": config_args["feed_forward_proj"], "dtype": "float32"})

    def test_prefix_and_languages(self):
        out = self.fx.convert("t5_v1_0", "--prefix", "translate English to German: ",
                              "--source-language", "en", "--target-language", "de")
        config = read_config(out)
        self.assertEqual(config["source_prefix"], "translate English to German: ")
        self.assertEqual((config["source_language"], config["target_language"]), ("en", "de"))

    def test_language_pairs(self):
        out = self.fx.convert("t5_v1_0", "--pair", "en:de:translate English to German: ",
                              "--pair", "en:fr:translate English to French: ", "--pair", "de:en")
        config = read_config(out)
        self.assertEqual(config["language_pairs"], [
            {"source": "en", "target": "de", "prefix": "translate English to German: "},
            {"source": "en", "target": "fr", "prefix": "translate English to French: "},
            {"source": "de", "target": "en", "prefix": ""}])
        self.assertEqual((config["source_language"], config["target_language"]), ("en", "de"))
        self.assertNotIn("source_prefix", config)
        self.assertNotIn("language_pairs", read_config(self.fx.converted["t5_v1_0"]))

    def test_refuses_conflicting_language_options(self):
        directory = self.fx.hf_dirs["t5_v1_0"]
        for label, options, message in (
                ("bad_pair", ["--pair", "en"], "is not SOURCE:TARGET[:PREFIX]"),
                ("pair_prefix", ["--pair", "en:de", "--prefix", "x: "], "go without --pair"),
                ("pair_language", ["--pair", "en:de", "--target-language", "de"],
                 "go without --pair"),
                ("both", ["--pair", "en:de", "--target-token-pairs"], "exclude each other"),
                ("no_tokens", ["--madlad"], "the vocabulary has no <2xx> target tokens")):
            with self.subTest(label=label):
                out = os.path.join(self.fx.root, "refused-out", label)
                status, err = run_converter("--model-dir", directory, "--output", out, "--quiet",
                                            *options)
                self.assertEqual(status, 2, err)
                self.assertIn(message, err)
                self.assertFalse(os.path.exists(os.path.join(out, "config.json")))

    def test_tensor_names_and_shapes(self):
        for name, (config_args, _, _) in MODELS.items():
            with self.subTest(model=name):
                weights = read_model_bin(os.path.join(self.fx.converted[name], "model.bin"))
                gated = config_args["feed_forward_proj"] != "relu"
                buckets = config_args["relative_attention_num_buckets"]
                expected = {"decoder.embeddings": [ROWS, D_MODEL],
                            "generator.weight": [ROWS, D_MODEL],
                            "encoder.norm.gamma": [D_MODEL], "decoder.norm.gamma": [D_MODEL]}
                for stack in ("encoder", "decoder"):
                    for i in range(LAYERS):
                        layer = f"{stack}.layer_{i}"
                        attentions = ["self_attention"]
                        if stack == "decoder":
                            attentions.append("cross_attention")
                        for attention in attentions:
                            expected[f"{layer}.{attention}.norm.gamma"] = [D_MODEL]
                            inner = heads_of(config_args) * d_kv_of(config_args)
                            for part in ("query", "key", "value"):
                                expected[f"{layer}.{attention}.{part}.weight"] = [inner, D_MODEL]
                            expected[f"{layer}.{attention}.output.weight"] = [D_MODEL, inner]
                        expected[f"{layer}.self_attention.relative_bias"] = [
                            buckets, heads_of(config_args)]
                        expected[f"{layer}.ffn.norm.gamma"] = [D_MODEL]
                        expected[f"{layer}.ffn.inner.weight"] = [D_FF, D_MODEL]
                        expected[f"{layer}.ffn.outer.weight"] = [D_MODEL, D_FF]
                        if gated:
                            expected[f"{layer}.ffn.gate.weight"] = [D_FF, D_MODEL]
                self.assertEqual({n: list(a.shape) for n, a in weights.items()}, expected)
                self.assertTrue(all(a.dtype == np.float32 for a in weights.values()))

    def test_weights_and_rewrites(self):
        for name, (config_args, _, _) in MODELS.items():
            with self.subTest(model=name):
                ours = read_model_bin(os.path.join(self.fx.converted[name], "model.bin"))
                hf = self.hf_state(name)
                gated = config_args["feed_forward_proj"] != "relu"
                same = np.testing.assert_array_equal
                same(ours["decoder.embeddings"], hf["shared.weight"])
                per_layer = config_args.get("model_type") == "umt5"
                for stack in ("encoder", "decoder"):
                    same(ours[f"{stack}.norm.gamma"], hf[f"{stack}.final_layer_norm.weight"])
                    for i in range(LAYERS):
                        layer, block = f"{stack}.layer_{i}", f"{stack}.block.{i}.layer"
                        # T5 keeps the table in block 0 only; umT5 one in every block
                        table = hf[f"{stack}.block.{i if per_layer else 0}.layer.0."
                                   "SelfAttention.relative_attention_bias.weight"]
                        same(ours[f"{layer}.self_attention.relative_bias"], table)
                        attentions = [("self_attention", "0.SelfAttention", "0")]
                        if stack == "decoder":
                            attentions.append(("cross_attention", "1.EncDecAttention", "1"))
                        for attention, theirs, norm in attentions:
                            same(ours[f"{layer}.{attention}.norm.gamma"],
                                 hf[f"{block}.{norm}.layer_norm.weight"])
                            # unscaled scores: the config says so, the weights stay T5's
                            for part, hf_part in (("query", "q"), ("key", "k"), ("value", "v"),
                                                  ("output", "o")):
                                same(ours[f"{layer}.{attention}.{part}.weight"],
                                     hf[f"{block}.{theirs}.{hf_part}.weight"])
                        ffn = "2" if stack == "decoder" else "1"
                        dense = f"{block}.{ffn}.DenseReluDense"
                        same(ours[f"{layer}.ffn.norm.gamma"],
                             hf[f"{block}.{ffn}.layer_norm.weight"])
                        same(ours[f"{layer}.ffn.outer.weight"], hf[dense + ".wo.weight"])
                        if gated:
                            same(ours[f"{layer}.ffn.gate.weight"], hf[dense + ".wi_0.weight"])
                            same(ours[f"{layer}.ffn.inner.weight"], hf[dense + ".wi_1.weight"])
                        else:
                            same(ours[f"{layer}.ffn.inner.weight"], hf[dense + ".wi.weight"])
                if config_args["tie_word_embeddings"]:
                    # T5 v1.0 scales the decoder output by d_model**-0.5 before the tied head
                    same(ours["generator.weight"],
                         hf["shared.weight"] * np.float32(D_MODEL ** -0.5))
                else:
                    same(ours["generator.weight"], hf["lm_head.weight"])

    def test_vocabulary(self):
        sp = self.fx.sp
        for name in MODELS:
            with self.subTest(model=name):
                out = self.fx.converted[name]
                tokens = read_vocabulary(os.path.join(out, "target_vocab.txt"))
                self.assertEqual(len(tokens), ROWS)  # one line per embedding row
                self.assertEqual(len(set(tokens)), ROWS)
                self.assertEqual(tokens[:PIECES], [sp.IdToPiece(i) for i in range(PIECES)])
                self.assertEqual(tokens[:3], ["<pad>", "</s>", "<unk>"])
                for n in (0, 1, EXTRA_IDS - 1):  # T5Tokenizer: <extra_id_N> at 100 + 400 - 1 - N
                    self.assertEqual(tokens[PIECES + EXTRA_IDS - 1 - n], f"<extra_id_{n}>")
                self.assertEqual(tokens[PIECES + EXTRA_IDS:],
                                 [f"<rpt_unused_{i}>" for i in range(PIECES + EXTRA_IDS, ROWS)])
                for left, right in (("source_vocab.txt", "target_vocab.txt"),
                                    ("source.spm.model", "target.spm.model")):
                    with open(os.path.join(out, left), "rb") as a, \
                            open(os.path.join(out, right), "rb") as b:
                        self.assertEqual(a.read(), b.read(), left)
                with open(os.path.join(out, "source.spm.model"), "rb") as a, \
                        open(self.fx.spm, "rb") as b:
                    self.assertEqual(a.read(), b.read())

    def test_added_tokens_from_tokenizer_files(self):
        """tokenizer.json's added tokens (what a hub snapshot has) decide the extra ids."""
        directory = self.copy("t5_v1_0", "with_tokenizer_json")
        added = [{"id": 0, "content": "<pad>"}, {"id": 1, "content": "</s>"},
                 {"id": 2, "content": "<unk>"}, {"id": PIECES, "content": "<extra_id_7>"},
                 {"id": PIECES + 3, "content": "<sep>"}]
        with open(os.path.join(directory, "tokenizer.json"), "w") as f:
            json.dump({"added_tokens": added}, f)
        out = self.fx.convert("t5_v1_0", model_dir=directory)
        tokens = read_vocabulary(os.path.join(out, "target_vocab.txt"))
        self.assertEqual(len(tokens), ROWS)
        self.assertEqual(tokens[PIECES:PIECES + 5], ["<extra_id_7>", f"<rpt_unused_{PIECES + 1}>",
                                                     f"<rpt_unused_{PIECES + 2}>", "<sep>",
                                                     f"<rpt_unused_{PIECES + 4}>"])
        added[0]["content"] = "<s>"
        with open(os.path.join(directory, "tokenizer.json"), "w") as f:
            json.dump({"added_tokens": added}, f)
        self.assertRefused(directory, "'<s>' has id 0")

    def test_pytorch_model_bin(self):
        directory = os.path.join(self.fx.root, "hf", "bin")
        self.fx.hf["flan_v1_1"].save_pretrained(directory, safe_serialization=False)
        shutil.copyfile(self.fx.spm, os.path.join(directory, "spiece.model"))
        self.assertTrue(os.path.isfile(os.path.join(directory, "pytorch_model.bin")))
        out = self.fx.convert("flan_v1_1", model_dir=directory)
        ours = read_model_bin(os.path.join(out, "model.bin"))
        reference = read_model_bin(os.path.join(self.fx.converted["flan_v1_1"], "model.bin"))
        self.assertEqual(list(ours), list(reference))
        for name, array in reference.items():
            np.testing.assert_array_equal(ours[name], array, err_msg=name)

    def test_sharded_input_is_sharded(self):
        directory = self.fx.hf_dirs["sharded"]
        self.assertTrue(os.path.isfile(os.path.join(directory, "model.safetensors.index.json")))
        self.assertFalse(os.path.isfile(os.path.join(directory, "model.safetensors")))

    def test_dtypes(self):
        full = read_model_bin(os.path.join(self.fx.converted["flan_v1_1"], "model.bin"))
        for dtype, numpy_type in (("float16", np.float16), ("bfloat16", np.float32)):
            with self.subTest(dtype=dtype):
                out = self.fx.convert("flan_v1_1", "--dtype", dtype)
                converted = read_model_bin(os.path.join(out, "model.bin"))
                self.assertEqual(read_config(out)["converted_from"]["dtype"], dtype)
                for name, array in full.items():
                    self.assertEqual(converted[name].dtype, numpy_type, name)
                    np.testing.assert_allclose(converted[name].astype(np.float32), array,
                                               rtol=1e-2, atol=1e-3, err_msg=name)
        out = self.fx.convert("flan_v1_1", "--dtype", "int8")
        quantized = read_model_bin(os.path.join(out, "model.bin"))
        for name, array in full.items():
            if name.endswith(".weight"):
                self.assertEqual(quantized[name].dtype, np.int8, name)
                restored = quantized[name].astype(np.float32) * quantized[name + "_scale"][:, None]
                step = np.maximum(quantized[name + "_scale"][:, None], 1e-30)
                self.assertLessEqual(float((np.abs(restored - array) / step).max()), 0.5 + 1e-3)
            else:  # norms, relative biases, embeddings
                self.assertEqual(quantized[name].dtype, np.float16, name)

    # Refusals ------------------------------------------------------------------------------

    def copy(self, name, label, **config_changes):
        directory = os.path.join(self.fx.root, "refused", label)
        shutil.copytree(self.fx.hf_dirs[name], directory)
        if config_changes:
            path = os.path.join(directory, "config.json")
            with open(path) as f:
                config = json.load(f)
            config.update(config_changes)
            with open(path, "w") as f:
                json.dump(config, f)
        return directory

    def assertRefused(self, directory, *messages):
        out = os.path.join(self.fx.root, "refused-out", os.path.basename(directory))
        status, err = run_converter("--model-dir", directory, "--output", out, "--quiet")
        self.assertEqual(status, 2, err)
        self.assertTrue(err.startswith("convert_hf_t5: error: "), err)
        for message in messages:
            self.assertIn(message, err)
        self.assertFalse(os.path.exists(os.path.join(out, "config.json")))

    def test_refuses_nonpositive_d_kv(self):
        self.assertRefused(self.copy("t5_v1_0", "d_kv_0", d_kv=0), "d_kv = 0", "positive")

    def test_refuses_other_models(self):
        self.assertRefused(self.copy("t5_v1_0", "bart", model_type="bart"),
                           "model_type = 'bart'", "not a T5 model (t5, mt5 or umt5)")
        self.assertRefused(self.copy("t5_v1_0", "encoder_only", is_encoder_decoder=False),
                           "is_encoder_decoder = False")

    def test_refuses_feed_forward_proj(self):
        for proj in ("gated-silu", "gelu"):
            with self.subTest(feed_forward_proj=proj):
                self.assertRefused(self.copy("flan_v1_1", "ffn_" + proj, feed_forward_proj=proj),
                                   f"feed_forward_proj = '{proj}'",
                                   "only relu, gated-relu and gated-gelu")

    def _rewrite_weights(self, directory, change):
        path = os.path.join(directory, "model.safetensors")
        tensors = safetensors.torch.load_file(path)
        change(tensors)
        safetensors.torch.save_file(tensors, path, metadata={"format": "pt"})

    def test_refuses_leftover_weights(self):
        directory = self.copy("t5_v1_0", "per_layer_bias")
        name = "encoder.block.1.layer.0.SelfAttention.relative_attention_bias.weight"
        self._rewrite_weights(directory, lambda t: t.update({name: torch.zeros(8, HEADS)}))
        self.assertRefused(directory, "does not understand", name)

    def test_ignores_the_unused_cross_attention_bias_of_old_checkpoints(self):
        directory = self.copy("t5_v1_0", "old_t5_bias")
        name = "decoder.block.0.layer.1.EncDecAttention.relative_attention_bias.weight"
        self._rewrite_weights(directory, lambda t: t.update({name: torch.ones(8, HEADS)}))
        out = self.fx.convert("t5_v1_0", model_dir=directory)
        self.assertEqual(read_model_bin(os.path.join(out, "model.bin")).keys(),
                         read_model_bin(os.path.join(self.fx.converted["t5_v1_0"],
                                                     "model.bin")).keys())

    def test_refuses_untied_encoder_embeddings(self):
        directory = self.copy("t5_v1_0", "untied_encoder")
        self._rewrite_weights(directory, lambda t: t.update(
            {"encoder.embed_tokens.weight": t["shared.weight"] + 1.0}))
        self.assertRefused(directory, "encoder.embed_tokens.weight differs from shared.weight")

    def test_refuses_missing_tensor_and_bad_shape(self):
        directory = self.copy("t5_v1_0", "missing")
        name = "decoder.block.1.layer.1.EncDecAttention.k.weight"
        self._rewrite_weights(directory, lambda t: t.pop(name))
        self.assertRefused(directory, f"lacks the tensor {name}")
        directory = self.copy("t5_v1_0", "more_buckets", relative_attention_num_buckets=16)
        self.assertRefused(directory, "relative_bias has shape [8, 4], expected [16, 4]")

    def test_refuses_missing_spiece(self):
        directory = self.copy("t5_v1_0", "no_spiece")
        os.remove(os.path.join(directory, "spiece.model"))
        self.assertRefused(directory, "spiece.model")


# ---------------------------------------------------------------------------------------------
# 2. The converted files reproduce transformers' forward pass


@unittest.skipIf(MISSING, MISSING)
class ReferenceForwardTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.fx = fixtures()

    def test_bucket_function_matches_transformers(self):
        offsets = torch.arange(-300, 301)
        for buckets, max_distance in ((8, 20), (32, 128)):
            for bidirectional in (True, False):
                expected = T5Attention._relative_position_bucket(
                    offsets, bidirectional=bidirectional, num_buckets=buckets,
                    max_distance=max_distance).tolist()
                self.assertEqual(t5_bucket(offsets.tolist(), bidirectional, buckets,
                                           max_distance).tolist(), expected)

    def test_logits_match_transformers(self):
        sentences = source_sentences()[:4]
        targets = ["Datei öffnen", "Die Verbindung zum Server wurde unterbrochen.",
                   "Alle ausgewählten Elemente löschen?",
                   "Speichern Sie die Änderungen, bevor Sie das Programm beenden, oder verwerfen "
                   "Sie sie"]
        for name in MODELS:
            reference = Reference(self.fx.converted[name])
            model = self.fx.hf[name]
            for source, target in zip(sentences, targets):
                with self.subTest(model=name, source=source):
                    source_ids = reference.source_ids(source)
                    # the engine's lookup of pieces gives T5's ids (the tokenizer appends </s>)
                    self.assertEqual(source_ids, self.fx.sp.EncodeAsIds(source) + [EOS])
                    decoder_ids = [reference.start_id()] + self.fx.sp.EncodeAsIds(target)
                    with torch.no_grad():
                        theirs = model(input_ids=torch.tensor([source_ids]),
                                       decoder_input_ids=torch.tensor([decoder_ids]),
                                       use_cache=False).logits[0]
                    ours = reference.logits(source_ids, decoder_ids)
                    np.testing.assert_allclose(ours, to_numpy(theirs), rtol=0, atol=1e-4)


# ---------------------------------------------------------------------------------------------
# 3. rpt-translate end to end


# generate(synced_gpus=False) throughout: left None, transformers 4.46 imports
# torch.distributed.fsdp to decide it, which fails with Debian's torch 1.13 under Python 3.11.


def rpt_translate_binary():
    return os.environ.get("RPT_TRANSLATE") or os.path.join(REPO, "build", "cli", "rpt-translate")


def run_rpt_translate(model_dir, lines, *options):
    command = [rpt_translate_binary(), "--model", model_dir, "--max-length", str(MAX_LENGTH),
               "--with-scores", "--no-protect-spans", "--no-accelerators",
               "--split-sentences", "none", "--threads", "1", "--quiet", *options]
    return subprocess.run(command, input="".join(line + "\n" for line in lines),
                          capture_output=True, text=True, timeout=120)


def parse_scored(stdout):
    """[(score, text)] from --with-scores lines."""
    pairs = []
    for line in stdout.split("\n")[:-1]:
        score, _, text = line.partition("\t")
        pairs.append((float(score), text))
    return pairs


def detokenize(tokens, ids, sp):
    """Text as the engine writes it: ids -> vocabulary tokens -> SentencePiece decoding."""
    return sp.DecodePieces([tokens[i] for i in ids])


def rpt_beam_search(model, source_ids, beam_size, alpha, max_length):
    """rpt's beam search (engine/beam_search.cc, OpenNMT-py's semantics) on transformers'
    model: candidates ranked by cumulative log-prob / (generated + 1)^alpha, counting the start
    token; EOS (or max_length) finishes a candidate, and the beam shrinks by it; done when the
    step's best candidate is finished. (ids without EOS, normalised score)."""
    with torch.no_grad():
        memory = model.get_encoder()(input_ids=torch.tensor([source_ids])).last_hidden_state
        beams, finished, generated = [([], 0.0)], [], 0
        while True:
            decoder_ids = torch.tensor([[PAD] + ids for ids, _ in beams])
            logits = model(encoder_outputs=(memory.expand(len(beams), -1, -1),),
                           decoder_input_ids=decoder_ids, use_cache=False).logits[:, -1]
            log_probs = torch.log_softmax(logits.float(), dim=-1)
            penalty = float(generated + 2) ** alpha
            candidates = []
            for b, (_, cumulative) in enumerate(beams):
                values, tokens = log_probs[b].topk(beam_size)
                for value, token in zip(values.tolist(), tokens.tolist()):
                    candidates.append(((value + cumulative) / penalty, b, token))
            candidates.sort(key=lambda c: -c[0])
            candidates = candidates[:beam_size]
            generated += 1
            at_max_length = generated >= max_length
            alive = []
            for score, b, token in candidates:
                ids = beams[b][0]
                if token == EOS or at_max_length:
                    finished.append((ids + ([] if token == EOS else [token]), score))
                else:
                    alive.append((ids + [token], score * penalty))
            if candidates[0][2] == EOS or at_max_length or not alive:
                return max(finished, key=lambda f: f[1])  # the first of equal scores
            beams = alive


@unittest.skipIf(MISSING, MISSING)
class RptTranslateTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.fx = fixtures()
        cls.sentences = source_sentences()

    def setUp(self):
        binary = rpt_translate_binary()
        if not os.access(binary, os.X_OK):
            reason = f"no rpt-translate at {binary} (build it, or set RPT_TRANSLATE)"
            print(f"convert_hf_t5_test: SKIPPED: {reason}", file=sys.stderr)
            self.skipTest(reason)
        probe = run_rpt_translate(self.fx.converted["flan_v1_1"], ["Open the file"],
                                  "--beam-size", "1")
        if probe.returncode != 0:
            message = probe.stderr.strip().splitlines()[-1] if probe.stderr.strip() else ""
            if ENGINE_LACKS_T5.search(probe.stderr):
                reason = f"rpt-translate cannot run converted T5 models yet: {message}"
                print(f"convert_hf_t5_test: SKIPPED: {reason}", file=sys.stderr)
                self.skipTest(reason)
            self.fail(f"rpt-translate failed on the converted model: {probe.stderr}")

    def test_greedy_matches_transformers(self):
        self.assertEqual(len(self.sentences), 20)
        for name in MODELS:
            out = self.fx.converted[name]
            tokens = read_vocabulary(os.path.join(out, "target_vocab.txt"))
            result = run_rpt_translate(out, self.sentences, "--beam-size", "1",
                                       "--length-penalty-type", "none")
            self.assertEqual(result.returncode, 0, result.stderr)
            ours = parse_scored(result.stdout)
            self.assertEqual(len(ours), len(self.sentences))
            model = self.fx.hf[name]
            for source, (score, text) in zip(self.sentences, ours):
                with self.subTest(model=name, source=source):
                    source_ids = self.fx.sp.EncodeAsIds(source) + [EOS]
                    with torch.no_grad():
                        generated = model.generate(
                            torch.tensor([source_ids]), num_beams=1, do_sample=False,
                            max_new_tokens=MAX_LENGTH, output_scores=True,
                            return_dict_in_generate=True, synced_gpus=False)
                    ids = generated.sequences[0].tolist()[1:]  # after the start token
                    log_prob = sum(torch.log_softmax(step[0].float(), -1)[token].item()
                                   for step, token in zip(generated.scores, ids))
                    if EOS in ids:
                        ids = ids[:ids.index(EOS)]
                    self.assertEqual(text, detokenize(tokens, ids, self.fx.sp))
                    self.assertAlmostEqual(score, log_prob, delta=1e-3)

    def test_task_prefix_is_read_first(self):
        """A model converted with --prefix reads it before every source, as transformers' T5
        reads "translate English to German: " + text; the output never shows it."""
        prefix = "translate English to German: "
        out = self.fx.convert("flan_v1_1", "--prefix", prefix)
        tokens = read_vocabulary(os.path.join(out, "target_vocab.txt"))
        sentences = self.sentences[:5]
        result = run_rpt_translate(out, sentences, "--beam-size", "1",
                                   "--length-penalty-type", "none")
        self.assertEqual(result.returncode, 0, result.stderr)
        model = self.fx.hf["flan_v1_1"]
        for source, (_, text) in zip(sentences, parse_scored(result.stdout)):
            with self.subTest(source=source):
                source_ids = self.fx.sp.EncodeAsIds(prefix + source) + [EOS]
                with torch.no_grad():
                    ids = model.generate(torch.tensor([source_ids]), num_beams=1,
                                         do_sample=False, max_new_tokens=MAX_LENGTH,
                                         synced_gpus=False)[0].tolist()[1:]
                if EOS in ids:
                    ids = ids[:ids.index(EOS)]
                self.assertEqual(text, detokenize(tokens, ids, self.fx.sp))

    def assert_greedy_matches(self, out, sp, prefix, options):
        """rpt-translate with `options` on `out` gives transformers' greedy output for
        `prefix` + each sentence (flan_v1_1's weights), text for text."""
        tokens = read_vocabulary(os.path.join(out, "target_vocab.txt"))
        sentences = self.sentences[:5]
        result = run_rpt_translate(out, sentences, "--beam-size", "1",
                                   "--length-penalty-type", "none", *options)
        self.assertEqual(result.returncode, 0, result.stderr)
        texts = [text for _, text in parse_scored(result.stdout)]
        for source, text in zip(sentences, texts):
            with self.subTest(prefix=prefix, source=source):
                source_ids = sp.EncodeAsIds(prefix + source) + [EOS]
                with torch.no_grad():
                    ids = self.fx.hf["flan_v1_1"].generate(
                        torch.tensor([source_ids]), num_beams=1, do_sample=False,
                        max_new_tokens=MAX_LENGTH, synced_gpus=False)[0].tolist()[1:]
                if EOS in ids:
                    ids = ids[:ids.index(EOS)]
                self.assertEqual(text, detokenize(tokens, ids, sp))
        return texts

    def test_language_pairs_pick_the_prefix(self):
        """T5's directions by prefix: --target-language picks the pair whose prefix is read."""
        prefixes = {"de": "translate English to German: ", "fr": "translate English to French: "}
        out = self.fx.convert("flan_v1_1", *[f"--pair=en:{target}:{prefix}"
                                             for target, prefix in prefixes.items()])
        outputs = {target: self.assert_greedy_matches(out, self.fx.sp, prefix,
                                                      ["--target-language", target])
                   for target, prefix in prefixes.items()}
        self.assertNotEqual(outputs["de"], outputs["fr"])
        # Without languages: the first pair, the model's default.
        self.assert_greedy_matches(out, self.fx.sp, prefixes["de"], [])
        refused = run_rpt_translate(out, ["Open"], "--target-language", "ro")
        self.assertEqual(refused.returncode, 1)
        self.assertIn("does not translate *->ro", refused.stderr)

    def test_target_token_pairs_pick_the_target(self):
        """MADLAD-400's way: a <2xx> token before any source picks the target. A SentencePiece
        model with the tokens as user-defined symbols (as one piece each) and flan_v1_1's
        weights, converted with --madlad."""
        directory = os.path.join(self.fx.root, "hf", "target_tokens")
        shutil.copytree(self.fx.hf_dirs["flan_v1_1"], directory)
        sp = train_sentencepiece(os.path.join(directory, "spiece.model"),
                                 user_defined_symbols=["<2de>", "<2fr>", "<2pt_BR>"])
        out = self.fx.convert("flan_v1_1", "--madlad", model_dir=directory)
        config = read_config(out)
        self.assertEqual(config["language_pairs"], [
            {"source": "*", "target": target, "prefix": f"<2{target}> "}
            for target in ("de", "fr", "pt_BR")])
        self.assertEqual((config["source_language"], config["target_language"]), ("*", "de"))
        outputs = {target: self.assert_greedy_matches(out, sp, f"<2{target}> ",
                                                      ["--target-language", target,
                                                       "--language", "en"])
                   for target in ("fr", "pt_BR")}
        self.assertNotEqual(outputs["fr"], outputs["pt_BR"])

    def test_every_stored_dtype_loads(self):
        """float16, bfloat16 and int8 files load and translate (their outputs differ a little
        from float32's: not compared)."""
        for dtype in ("float16", "bfloat16", "int8"):
            with self.subTest(dtype=dtype):
                out = self.fx.convert("flan_v1_1", "--dtype", dtype)
                result = run_rpt_translate(out, self.sentences, "--beam-size", "2")
                self.assertEqual(result.returncode, 0, result.stderr)
                self.assertEqual(len(parse_scored(result.stdout)), len(self.sentences))

    def test_beam_search(self):
        """Beam 4, length penalty 1.0: rpt's `--length-penalty-type average` divides the sum of
        log-probs (EOS included) by (generated tokens + 1)^alpha, EOS counted: OpenNMT-py's
        length, which counts the start token; transformers' length_penalty divides by the
        generated tokens (EOS included) alone, keeps num_beams hypotheses alive (an EOS pick does
        not shrink the beam), and stops by another rule. So rpt is compared exactly with a
        replica of its own search run on transformers' model, and with transformers' beam search
        only for information."""
        agreement = []
        for name in MODELS:
            out = self.fx.converted[name]
            tokens = read_vocabulary(os.path.join(out, "target_vocab.txt"))
            result = run_rpt_translate(out, self.sentences, "--beam-size", "4",
                                       "--length-penalty-type", "average",
                                       "--length-penalty", "1.0")
            self.assertEqual(result.returncode, 0, result.stderr)
            ours = parse_scored(result.stdout)
            self.assertEqual(len(ours), len(self.sentences))
            model = self.fx.hf[name]
            same_as_transformers = 0
            for source, (score, text) in zip(self.sentences, ours):
                source_ids = self.fx.sp.EncodeAsIds(source) + [EOS]
                with self.subTest(model=name, source=source):
                    ids, replica_score = rpt_beam_search(model, source_ids, 4, 1.0, MAX_LENGTH)
                    self.assertEqual(text, detokenize(tokens, ids, self.fx.sp))
                    self.assertAlmostEqual(score, replica_score, delta=1e-4)
                with torch.no_grad():
                    theirs = model.generate(torch.tensor([source_ids]), num_beams=4,
                                            do_sample=False, length_penalty=1.0,
                                            max_new_tokens=MAX_LENGTH,
                                            synced_gpus=False)[0].tolist()
                theirs = theirs[1:theirs.index(EOS)] if EOS in theirs else theirs[1:]
                same_as_transformers += text == detokenize(tokens, theirs, self.fx.sp)
            agreement.append(f"{name} {same_as_transformers}/{len(self.sentences)}")
        print("\nconvert_hf_t5_test: beam 4, rpt's search equals its replica on every line; rpt "
              "and transformers' own beam search (another length normalisation and stopping "
              f"rule) agree on {', '.join(agreement)}", file=sys.stderr)


if __name__ == "__main__":
    unittest.main()
