#!/usr/bin/env python3
"""Convert a local Hugging Face T5 checkpoint into an rpt model directory.

    python3 tools/convert_hf_t5.py --model-dir HF_DIR --output OUT_DIR
        [--dtype float32|float16|bfloat16|int8] [--source-language en --target-language de]
        [--prefix "translate English to German: "] [--name N] [--spm F] [--quiet]
        [--pair en:de:"translate English to German: " --pair en:fr:"translate English to French: "]
        [--target-token-pairs]

HF_DIR is a directory as `save_pretrained` writes it (or a downloaded hub snapshot): config.json;
the weights as model.safetensors, as sharded model-0000x-of-0000y.safetensors with
model.safetensors.index.json, or as pytorch_model.bin (sharded with pytorch_model.bin.index.json
too); and the SentencePiece model spiece.model (or --spm). Nothing is downloaded and neither
transformers nor tokenizers is imported: torch, sentencepiece and, for safetensors weights,
safetensors are enough. pytorch_model.bin is read with torch.load(weights_only=True).

OUT_DIR gets config.json, model.bin, source_vocab.txt = target_vocab.txt and source.spm.model =
target.spm.model (the one spiece.model), in docs/model-format.md's format with the T5 additions
(docs/MODELS.md, "Hugging Face T5 models"): `architecture.norm` "rms_norm" (T5LayerNorm: no mean,
no beta; only `.gamma` tensors), `architecture.feed_forward` "dense" or "gated" (gated:
act(gate x) * (inner x), `ffn.gate.weight` = wi_0, `ffn.inner.weight` = wi_1), activation
"relu" (feed_forward_proj relu, gated-relu) or "gelu_tanh" (gated-gelu: T5 v1.1 / Flan-T5's
gelu_new, the tanh approximation), `position.type` "t5_bucket", and top-level
`append_source_eos: true` (T5's tokenizer appends </s> to every source). Special tokens: pad
<pad>, eos </s>, unk <unk>; the decoder starts from <pad> (decoder_start_token_id 0), which is
also written as bos. --prefix is recorded as `source_prefix` (e.g. "translate English to German: "
for the original T5 checkpoints).

A multilingual model gets `language_pairs` (docs/model-format.md) instead: --pair
SOURCE:TARGET:PREFIX once per direction (the original T5's en:de, en:fr and en:ro with their
"translate English to ...: " prefixes), or --target-token-pairs (alias --madlad) for a model that
picks its target by a token before the source: one pair per `<2xx>` token of the vocabulary,
source "*" (any) and prefix "<2xx> " (MADLAD-400). The first pair is the model's default
direction (source_language, target_language); --source-language, --target-language and --prefix
do not go with them.

Mapping (HF name -> rpt name; {s} is encoder or decoder, i a block, F the block's last layer:
1 in the encoder, 2 in the decoder):

    shared.weight                              decoder.embeddings (shared_embeddings;
                                               {s}.embed_tokens, where stored, must equal it)
    {s}.block.i.layer.0.layer_norm             {s}.layer_i.self_attention.norm.gamma
    {s}.block.i.layer.0.SelfAttention.q/k/v/o  {s}.layer_i.self_attention.query/key/value/output
    {s}.block.0.layer.0.SelfAttention.relative_attention_bias
                                               {s}.layer_i.self_attention.relative_bias of EVERY
                                               layer i (HF keeps the table in block 0 only);
                                               umT5: block i's own table, layer i's
    decoder.block.i.layer.1.layer_norm         decoder.layer_i.cross_attention.norm.gamma
    decoder.block.i.layer.1.EncDecAttention.*  decoder.layer_i.cross_attention.*
    {s}.block.i.layer.F.layer_norm             {s}.layer_i.ffn.norm.gamma
    {s}.block.i.layer.F.DenseReluDense.wi      {s}.layer_i.ffn.inner (dense)
    {s}.block.i.layer.F.DenseReluDense.wi_0    {s}.layer_i.ffn.gate (gated: the activated one)
    {s}.block.i.layer.F.DenseReluDense.wi_1    {s}.layer_i.ffn.inner (gated)
    {s}.block.i.layer.F.DenseReluDense.wo      {s}.layer_i.ffn.outer
    {s}.final_layer_norm                       {s}.norm.gamma
    lm_head (or shared, below)                 generator.weight

(".weight" left out on both sides.) Weights are copied as they are, with one rewrite; the
config says the rest:

  * T5 does not scale attention scores by 1/sqrt(d_kv) (Mesh TensorFlow folded it into the
    initialisation): `architecture.scale_attention` false. d_kv is written as
    `architecture.head_dim`, so attention is num_heads * d_kv wide whatever d_model is (Flan-T5-
    small and mT5-small: 6 heads of 64 in 512; MADLAD-400 3B: 16 of 128 in 1024).
  * With tie_word_embeddings (T5 v1.0) T5ForConditionalGeneration multiplies the decoder output
    by d_model**-0.5 before the tied LM head; the converter writes generator.weight = shared *
    d_model**-0.5 (exact when d_model is a power of 4, else within one float32 rounding per
    weight). Untied (T5 v1.1, Flan-T5): generator.weight = lm_head.weight unchanged.

Vocabulary (line = id, both sides): the SentencePiece pieces 0 .. n-1, then the tokens
transformers' tokenizer adds: from tokenizer.json's added_tokens, else tokenizer_config.json's
added_tokens_decoder, else T5Tokenizer's rule (extra_ids, default 100: <extra_id_N> at id
n + extra_ids - 1 - N). The embedding usually has more rows than the tokenizer knows (32128
against 32100): the rest get unique placeholders <rpt_unused_ID>, so that the file has exactly
one line per embedding row.

Refused, each with a message naming the value: model_type other than t5, mt5 and umt5,
is_encoder_decoder false, feed_forward_proj other than relu,
gated-relu and gated-gelu, bucket settings
the engine cannot run, an lm_head or encoder.embed_tokens that differ from what the config says
they are tied to, missing tensors, tensors of the wrong shape, and any tensor the mapping does
not use (except decoder.block.0.layer.1.EncDecAttention.relative_attention_bias.weight, which
the original T5 checkpoints carry and transformers itself ignores).
"""

import argparse
import json
import os
import re
import shutil
import sys
import time

import torch

import convert_onmt
from convert_onmt import DTYPES, FORMAT_VERSION, ConversionError, StateDict, raise_refusals

TOOL = "convert_hf_t5.py"
SUPPORTED_MODEL_TYPES = ("t5", "mt5", "umt5")
# feed_forward_proj -> (architecture.feed_forward, architecture.activation)
FEED_FORWARD = {"relu": ("dense", "relu"), "gated-relu": ("gated", "relu"),
                "gated-gelu": ("gated", "gelu_tanh")}
# Tensors transformers itself drops on load (T5ForConditionalGeneration's
# _keys_to_ignore_on_load_unexpected): the original 2019 checkpoints carry a cross-attention bias
# that T5 never uses.
IGNORED = ("decoder.block.0.layer.1.EncDecAttention.relative_attention_bias.weight",)
PLACEHOLDER = "<rpt_unused_{}>"


# ---------------------------------------------------------------------------------------------
# config.json


def read_json(path, what):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except OSError as e:
        raise ConversionError(f"cannot read {what} ({e})") from e
    except ValueError as e:
        raise ConversionError(f"{what} is not valid JSON ({e})") from e


def hf_settings(hf):
    """The T5Config values the conversion needs, with T5Config's defaults for absent keys."""
    num_layers = hf.get("num_layers", 6)
    return {
        "model_type": hf.get("model_type"),
        "is_encoder_decoder": hf.get("is_encoder_decoder", True),
        "d_model": hf.get("d_model", 512),
        "d_kv": hf.get("d_kv", 64),
        "d_ff": hf.get("d_ff", 2048),
        "num_heads": hf.get("num_heads", 8),
        "num_layers": num_layers,
        "num_decoder_layers": hf.get("num_decoder_layers") or num_layers,
        "buckets": hf.get("relative_attention_num_buckets", 32),
        "max_distance": hf.get("relative_attention_max_distance", 128),
        "layer_norm_epsilon": hf.get("layer_norm_epsilon", 1e-6),
        "feed_forward_proj": hf.get("feed_forward_proj", "relu"),
        "tie_word_embeddings": hf.get("tie_word_embeddings", True),
        "vocab_size": hf.get("vocab_size"),
        "pad_token_id": hf.get("pad_token_id", 0),
        "eos_token_id": hf.get("eos_token_id", 1),
        "decoder_start_token_id": hf.get("decoder_start_token_id", hf.get("pad_token_id", 0)),
    }


def _refusals(s):
    """(key, value, reason) for everything in the config the engine cannot run."""
    model_type = s["model_type"]
    checks = [
        ("model_type", model_type not in SUPPORTED_MODEL_TYPES,
         "not a T5 model (t5, mt5 or umt5)"),
        ("is_encoder_decoder", not s["is_encoder_decoder"], "only encoder-decoder models"),
        ("feed_forward_proj", s["feed_forward_proj"] not in FEED_FORWARD,
         "only relu, gated-relu and gated-gelu"),
        ("d_kv", s["d_kv"] <= 0, "must be positive"),
        ("relative_attention_num_buckets", s["buckets"] < 4,
         "T5 buckets need at least 4 (split by direction, then exact / logarithmic)"),
        ("relative_attention_max_distance", s["max_distance"] <= s["buckets"] // 2,
         "must exceed num_buckets / 2, where the decoder's exact buckets end"),
        ("num_layers", s["num_layers"] <= 0 or s["num_decoder_layers"] <= 0,
         "needs encoder and decoder layers"),
    ]
    return [(key, s[{"relative_attention_num_buckets": "buckets",
                     "relative_attention_max_distance": "max_distance"}.get(key, key)], reason)
            for key, refused, reason in checks if refused]


def check_supported(settings):
    raise_refusals(_refusals(settings), "model configuration")


# ---------------------------------------------------------------------------------------------
# Weights


def _load_safetensors(path):
    try:
        from safetensors.torch import load_file
    except ImportError as e:
        raise ConversionError(f"reading {os.path.basename(path)} needs the safetensors package "
                              f"({e})") from e
    try:
        return load_file(path, device="cpu")
    except Exception as e:  # safetensors raises its own SafetensorError
        raise ConversionError(f"{os.path.basename(path)} is not a readable safetensors file "
                              f"({e})") from e


def _load_torch(path):
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:  # unpickling errors of every kind
        raise ConversionError(f"{os.path.basename(path)} is not a readable PyTorch state dict "
                              f"({e})") from e
    if not isinstance(state, dict):
        raise ConversionError(f"{os.path.basename(path)} holds no state dict")
    return state


def _sharded(model_dir, index_name, loader):
    index = read_json(os.path.join(model_dir, index_name), index_name)
    weight_map = index.get("weight_map")
    if not isinstance(weight_map, dict) or not weight_map:
        raise ConversionError(f"{index_name} has no weight_map")
    tensors = {}
    for shard in sorted(set(weight_map.values())):
        path = os.path.join(model_dir, shard)
        if not os.path.isfile(path):
            raise ConversionError(f"{index_name} names {shard}, which is missing")
        tensors.update(loader(path))
    missing = sorted(set(weight_map) - set(tensors))
    if missing:
        raise ConversionError(f"{index_name} lists tensors no shard holds: {missing[:8]}")
    return tensors


def load_weights(model_dir):
    """({HF name: tensor}, what was read)."""
    def exists(name):
        return os.path.isfile(os.path.join(model_dir, name))

    if exists("model.safetensors.index.json"):
        return (_sharded(model_dir, "model.safetensors.index.json", _load_safetensors),
                "sharded safetensors")
    if exists("model.safetensors"):
        return _load_safetensors(os.path.join(model_dir, "model.safetensors")), "safetensors"
    if exists("pytorch_model.bin.index.json"):
        return (_sharded(model_dir, "pytorch_model.bin.index.json", _load_torch),
                "sharded pytorch_model.bin")
    if exists("pytorch_model.bin"):
        return _load_torch(os.path.join(model_dir, "pytorch_model.bin")), "pytorch_model.bin"
    others = [n for n in ("tf_model.h5", "flax_model.msgpack") if exists(n)]
    hint = (f" (only {', '.join(others)}: TensorFlow and Flax weights are not read)"
            if others else "")
    raise ConversionError("no model.safetensors, sharded model-*.safetensors with "
                          f"model.safetensors.index.json, or pytorch_model.bin{hint}")


def _same(a, b):
    return a.shape == b.shape and torch.equal(a.float(), b.float())


def _attention(state, out, src, relative_bias=None):
    tensors = []
    for ours, theirs in (("query", "q"), ("key", "k"), ("value", "v"), ("output", "o")):
        tensors.append((f"{out}.{ours}.weight", state.take(f"{src}.{theirs}.weight")))
    if relative_bias is not None:
        tensors.append((out + ".relative_bias", relative_bias))
    return tensors


def _ffn(state, out, src, norm_src, gated):
    tensors = [(out + ".norm.gamma", state.take(norm_src))]
    if gated:
        tensors += [(out + ".gate.weight", state.take(src + ".wi_0.weight")),
                    (out + ".inner.weight", state.take(src + ".wi_1.weight"))]
    else:
        tensors.append((out + ".inner.weight", state.take(src + ".wi.weight")))
    return tensors + [(out + ".outer.weight", state.take(src + ".wo.weight"))]


def _stack(state, stack, layers, gated, bias_per_layer):
    """One stack's layers and final norm; the relative bias of block 0 goes to every layer, or
    (umT5) each block's own to its layer."""
    def bias_of(block):
        return state.take(f"{stack}.block.{block}.layer.0.SelfAttention."
                          "relative_attention_bias.weight")

    shared_bias = None if bias_per_layer else bias_of(0)
    tensors = []
    for i in range(layers):
        out, src = f"{stack}.layer_{i}", f"{stack}.block.{i}.layer"
        tensors.append((out + ".self_attention.norm.gamma",
                        state.take(f"{src}.0.layer_norm.weight")))
        bias = bias_of(i) if bias_per_layer else shared_bias
        tensors += _attention(state, out + ".self_attention", f"{src}.0.SelfAttention", bias)
        ffn = 1
        if stack == "decoder":
            tensors.append((out + ".cross_attention.norm.gamma",
                            state.take(f"{src}.1.layer_norm.weight")))
            tensors += _attention(state, out + ".cross_attention", f"{src}.1.EncDecAttention")
            ffn = 2
        tensors += _ffn(state, out + ".ffn", f"{src}.{ffn}.DenseReluDense",
                        f"{src}.{ffn}.layer_norm.weight", gated)
    tensors.append((f"{stack}.norm.gamma", state.take(f"{stack}.final_layer_norm.weight")))
    return tensors


def collect_tensors(weights, settings):
    """[(rpt name, tensor)] in file order; refuses checkpoints with tensors left over."""
    state = StateDict({"model": weights})
    for name in IGNORED:
        if state.has(name):
            state.take(name)
    shared = state.take("shared.weight")
    for name in ("encoder.embed_tokens.weight", "decoder.embed_tokens.weight"):
        if state.has(name) and not _same(state.take(name), shared):
            raise ConversionError(f"{name} differs from shared.weight: T5's stacks share one "
                                  "embedding, and rpt's shared_embeddings needs them equal")
    gated = FEED_FORWARD[settings["feed_forward_proj"]][0] == "gated"
    per_layer = settings["model_type"] == "umt5"  # a relative bias table in every block
    tensors = _stack(state, "encoder", settings["num_layers"], gated, per_layer)
    tensors.append(("decoder.embeddings", shared))
    tensors += _stack(state, "decoder", settings["num_decoder_layers"], gated, per_layer)
    if settings["tie_word_embeddings"]:
        if state.has("lm_head.weight") and not _same(state.take("lm_head.weight"), shared):
            raise ConversionError("tie_word_embeddings is true but lm_head.weight differs from "
                                  "shared.weight")
        # T5ForConditionalGeneration scales the decoder output before the tied head.
        tensors.append(("generator.weight", shared.float() * (settings["d_model"] ** -0.5)))
    else:
        tensors.append(("generator.weight", state.take("lm_head.weight")))
    leftover = state.unused()
    if leftover:
        raise ConversionError("the checkpoint has weights this converter does not understand "
                              f"(an unsupported feature?): {leftover[:8]}")
    return tensors


def _expected_shape(name, s, rows):
    d, d_ff, inner = s["d_model"], s["d_ff"], s["num_heads"] * s["d_kv"]
    if name in ("decoder.embeddings", "generator.weight"):
        return [rows, d]
    for suffix, shape in ((".relative_bias", [s["buckets"], s["num_heads"]]),
                          (".gamma", [d]), ("ffn.gate.weight", [d_ff, d]),
                          ("ffn.inner.weight", [d_ff, d]), ("ffn.outer.weight", [d, d_ff]),
                          ("output.weight", [d, inner]), (".weight", [inner, d])):
        if name.endswith(suffix):
            return shape
    raise AssertionError(name)


def check_shapes(tensors, settings):
    rows = int(dict(tensors)["decoder.embeddings"].shape[0])
    if settings["vocab_size"] is not None and settings["vocab_size"] != rows:
        raise ConversionError(f"shared.weight has {rows} rows but config.json's vocab_size is "
                              f"{settings['vocab_size']}")
    for name, tensor in tensors:
        expected = _expected_shape(name, settings, rows)
        if list(tensor.shape) != expected:
            raise ConversionError(f"{name} has shape {list(tensor.shape)}, expected {expected} "
                                  "from config.json")
    return rows


# ---------------------------------------------------------------------------------------------
# Vocabulary


def load_sentencepiece(path):
    try:
        import sentencepiece
    except ImportError as e:
        raise ConversionError("reading the vocabulary needs the sentencepiece package "
                              f"({e})") from e
    processor = sentencepiece.SentencePieceProcessor()
    try:
        processor.Load(path)
    except (OSError, RuntimeError) as e:
        raise ConversionError(f"{path} is not a SentencePiece model ({e})") from e
    return processor


def added_tokens(model_dir, piece_count):
    """{id: token} that transformers' tokenizer adds to the SentencePiece pieces."""
    tokenizer_json = os.path.join(model_dir, "tokenizer.json")
    if os.path.isfile(tokenizer_json):
        entries = read_json(tokenizer_json, "tokenizer.json").get("added_tokens") or []
        return {int(e["id"]): e["content"] for e in entries}
    config_path = os.path.join(model_dir, "tokenizer_config.json")
    config = read_json(config_path, "tokenizer_config.json") if os.path.isfile(config_path) else {}
    if config.get("added_tokens_decoder"):
        return {int(i): e["content"] for i, e in config["added_tokens_decoder"].items()}
    extra_ids = int(config.get("extra_ids", 100))  # T5Tokenizer's default
    return {piece_count + extra_ids - 1 - n: f"<extra_id_{n}>" for n in range(extra_ids)}


def build_vocabulary(processor, added, rows):
    """One token per embedding row: pieces, added tokens, then placeholders."""
    pieces = [processor.IdToPiece(i) for i in range(processor.GetPieceSize())]
    if len(pieces) > rows:
        raise ConversionError(f"spiece.model has {len(pieces)} pieces but the embedding only "
                              f"{rows} rows")
    tokens = pieces + [None] * (rows - len(pieces))
    for token_id, token in sorted(added.items()):
        if token_id >= rows:
            raise ConversionError(f"the tokenizer's {token!r} has id {token_id}, beyond the "
                                  f"embedding's {rows} rows")
        if token_id < len(pieces):
            if pieces[token_id] != token:
                raise ConversionError(f"the tokenizer's {token!r} has id {token_id}, which is the "
                                      f"SentencePiece piece {pieces[token_id]!r}")
            continue
        tokens[token_id] = token
    tokens = [PLACEHOLDER.format(i) if t is None else t for i, t in enumerate(tokens)]
    bad = [t for t in tokens if not t or "\n" in t or "\r" in t]
    if bad:
        raise ConversionError(f"vocabulary tokens that cannot be written one per line: {bad[:5]!r}")
    seen = set()
    duplicates = [t for t in tokens if t in seen or seen.add(t)]
    if duplicates:
        raise ConversionError(f"the vocabulary has duplicate tokens: {duplicates[:5]!r}")
    return tokens


def special_tokens(settings, tokens, processor):
    def token(key):
        token_id = settings[key]
        if not isinstance(token_id, int) or not 0 <= token_id < len(tokens):
            raise ConversionError(f"config.json's {key} {token_id!r} is not a vocabulary id")
        return tokens[token_id]

    if processor.unk_id() < 0:
        raise ConversionError("spiece.model has no unknown piece")
    start = token("decoder_start_token_id")
    specials = {"pad": token("pad_token_id"), "unk": tokens[processor.unk_id()],
                "bos": start, "eos": token("eos_token_id")}
    return specials, start


# ---------------------------------------------------------------------------------------------
# Output


TARGET_TOKEN = re.compile(r"<2([A-Za-z][A-Za-z0-9_-]*)>")


def language_pairs(args, tokens, processor):
    """The language_pairs --pair or --target-token-pairs ask for, else None."""
    if args.pair:
        pairs = []
        for given in args.pair:
            source, _, rest = given.partition(":")
            target, _, prefix = rest.partition(":")
            if not source or not target:
                raise ConversionError(f"--pair {given!r} is not SOURCE:TARGET[:PREFIX]")
            pairs.append({"source": source, "target": target, "prefix": prefix})
        return pairs
    if not args.target_token_pairs:
        return None
    pairs = []
    for token in tokens:
        match = TARGET_TOKEN.fullmatch(token)
        if not match:
            continue
        # The engine tokenizes the prefix with the SentencePiece model alone: it must read the
        # token as one piece (a user-defined symbol), as transformers' tokenizer does.
        if token not in processor.EncodeAsPieces(token + " x"):
            raise ConversionError(f"the SentencePiece model does not read {token} as one piece")
        pairs.append({"source": "*", "target": match.group(1), "prefix": token + " "})
    if not pairs:
        raise ConversionError("--target-token-pairs: the vocabulary has no <2xx> target tokens")
    return pairs


def check_language_options(args):
    if args.pair and args.target_token_pairs:
        raise ConversionError("--pair and --target-token-pairs exclude each other")
    if (args.pair or args.target_token_pairs) and (
            args.prefix is not None or args.source_language or args.target_language):
        raise ConversionError("--source-language, --target-language and --prefix go without "
                              "--pair and --target-token-pairs (each pair names its own)")


def build_config(args, settings, specials, start, pairs=None):
    feed_forward, activation = FEED_FORWARD[settings["feed_forward_proj"]]
    default = pairs[0] if pairs else {"source": args.source_language or "und",
                                      "target": args.target_language or "und"}
    config = {
        "format": "rpt-model",
        "format_version": FORMAT_VERSION,
        "name": args.name or os.path.basename(os.path.normpath(args.output)),
        "source_language": default["source"],
        "target_language": default["target"],
        "weights": "model.bin",
        "source_vocabulary": "source_vocab.txt",
        "target_vocabulary": "target_vocab.txt",
        "source_tokenizer": "source.spm.model",
        "target_tokenizer": "target.spm.model",
        "special_tokens": specials,
        "decoder_start_token": start,
        "append_source_eos": True,
    }
    if args.prefix is not None:
        config["source_prefix"] = args.prefix
    if pairs:
        config["language_pairs"] = pairs
    config["architecture"] = {
        "encoder_layers": settings["num_layers"],
        "decoder_layers": settings["num_decoder_layers"],
        "d_model": settings["d_model"],
        "heads": settings["num_heads"],
        "head_dim": settings["d_kv"],
        "scale_attention": False,
        "d_ff": settings["d_ff"],
        "activation": activation,
        "norm": "rms_norm",
        "feed_forward": feed_forward,
        "norm_placement": "pre",
        "norm_eps": float(settings["layer_norm_epsilon"]),
        "embedding_scale": False,
        "qkv_bias": False,
        "ffn_bias": False,
        "tied_generator": False,
        "shared_embeddings": True,
    }
    config["position"] = {
        "type": "t5_bucket",
        "encoder_max_relative_position": 0,
        "decoder_max_relative_position": 0,
        "relative_tables": "shared",
        "buckets": settings["buckets"],
        "max_distance": settings["max_distance"],
        "sinusoidal": False,
    }
    config["converted_from"] = {"tool": TOOL, "model_type": settings["model_type"],
                                "feed_forward_proj": settings["feed_forward_proj"],
                                "dtype": args.dtype}
    return config


class Stages:
    def __init__(self, enabled):
        self.enabled = enabled
        self.start = time.monotonic()

    def __call__(self, text):
        if self.enabled:
            print(f"convert_hf_t5: {text} ({time.monotonic() - self.start:.1f} s)",
                  file=sys.stderr, flush=True)


def convert(args):
    stage = Stages(not args.quiet)
    check_language_options(args)
    settings = hf_settings(read_json(os.path.join(args.model_dir, "config.json"), "config.json"))
    check_supported(settings)
    spm = args.spm or os.path.join(args.model_dir, "spiece.model")
    if not os.path.isfile(spm):
        raise ConversionError(f"no SentencePiece model {spm} (T5's spiece.model; give --spm)")
    processor = load_sentencepiece(spm)

    stage(f"reading {args.model_dir}")
    weights, source = load_weights(args.model_dir)
    stage(f"{len(weights)} tensors read ({source})")
    tensors = collect_tensors(weights, settings)
    rows = check_shapes(tensors, settings)
    tokens = build_vocabulary(processor, added_tokens(args.model_dir, processor.GetPieceSize()),
                              rows)
    specials, start = special_tokens(settings, tokens, processor)
    pairs = language_pairs(args, tokens, processor)

    os.makedirs(args.output, exist_ok=True)
    stage(f"writing {len(tensors)} tensors as {args.dtype}")
    convert_onmt.write_weights(os.path.join(args.output, "model.bin"), tensors, args.dtype)
    for side in ("source", "target"):
        convert_onmt.write_vocabulary(os.path.join(args.output, f"{side}_vocab.txt"), tokens)
        shutil.copyfile(spm, os.path.join(args.output, f"{side}.spm.model"))
    config = build_config(args, settings, specials, start, pairs)
    convert_onmt.write_config(args.output, config)
    return config


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model-dir", required=True,
                        help="local Hugging Face T5 directory (config.json, weights, spiece.model)")
    parser.add_argument("--output", required=True,
                        help="rpt model directory to write (created if missing)")
    parser.add_argument("--dtype", choices=sorted(DTYPES), default="float32",
                        help="weight type in model.bin (default float32; int8: linear layers in "
                        "int8 with per-row scales, the rest float16)")
    parser.add_argument("--source-language", help="e.g. en (default und)")
    parser.add_argument("--target-language", help="e.g. de (default und)")
    parser.add_argument("--prefix", help="task prefix the source needs, recorded as "
                        "source_prefix (e.g. 'translate English to German: ')")
    parser.add_argument("--pair", action="append", metavar="SOURCE:TARGET[:PREFIX]",
                        help="a direction of a multilingual model and the prefix that selects "
                        "it, e.g. 'en:fr:translate English to French: ' (repeat it; the first is "
                        "the default); written as language_pairs")
    parser.add_argument("--target-token-pairs", "--madlad", action="store_true",
                        help="one language pair per <2xx> token of the vocabulary: any source, "
                        "target xx, prefix '<2xx> ' (MADLAD-400)")
    parser.add_argument("--name", help="model name (default: the output directory's name)")
    parser.add_argument("--spm", help="SentencePiece model (default: MODEL_DIR/spiece.model)")
    parser.add_argument("--quiet", action="store_true", help="no progress on stderr")
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    try:
        config = convert(args)
    except ConversionError as e:
        print(f"convert_hf_t5: error: {args.model_dir}: {e}", file=sys.stderr)
        return 2
    arch, position = config["architecture"], config["position"]
    print(f"wrote {args.output}: {arch['encoder_layers']}+{arch['decoder_layers']} layers, "
          f"d_model {arch['d_model']}, heads {arch['heads']}, {arch['feed_forward']} "
          f"{arch['activation']} FFN, t5_bucket {position['buckets']}/{position['max_distance']}, "
          f"{args.dtype}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
