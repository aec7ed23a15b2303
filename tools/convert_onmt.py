#!/usr/bin/env python3
"""Convert an OpenNMT-py checkpoint into an rpt model directory.

    python3 tools/convert_onmt.py CHECKPOINT.pt OUT_DIR [--dtype float32|float16|bfloat16]
        [--src-spm F] [--tgt-spm F] [--name N] [--source-language L] [--target-language L]

writes OUT_DIR/config.json, model.bin, source_vocab.txt, target_vocab.txt and, when given,
source.spm.model / target.spm.model, exactly as docs/model-format.md specifies.

Only torch is needed: OpenNMT-py itself is never imported. The checkpoint is unpickled with
an Unpickler that lets torch, the standard library containers and argparse through and turns
every other class it names (OpenNMT-py's, torchtext's) into an inert stub, so v2 checkpoints,
whose vocabularies are pickled torchtext fields, load too. Unpickling can still run code:
convert only checkpoints you trust.

Supported: OpenNMT-py v3 (and v2) text-to-text Transformers: pre-norm LayerNorm layers,
relu or gelu feed-forward, with or without attention / FFN biases, shared source/target
embeddings, a tied generator, and these position schemes:

    max_relative_positions k > 0, relative_positions_buckets 0   -> "relative" (Shaw et al.;
        one table per self-attention layer, used for keys and values: relative_tables "shared")
    relative_positions_buckets b > 0 (max_relative_positions = T5 max_distance) -> "t5_bucket"
    position_encoding (SinusoidalInterleaved)                     -> sinusoidal, scaled embeddings
    none of them                                                  -> "none"

Everything else is refused with a message that names the option (rotary, ALiBi, source
features, multi-query attention, gated FFNs, RMSNorm, parallel residuals, average attention,
copy attention, MoE, sliding windows, LoRA, quantized or safetensors weights, ...). Weights the
mapping does not consume are refused too, so an unknown feature cannot be dropped silently.
"""

import argparse
import contextlib
import ctypes
import json
import math
import os
import pickle
import shutil
import sys
import time
import zlib

import torch

FORMAT_VERSION = 1
ALIGNMENT = 64
SPECIAL_TOKENS = {"pad": "<blank>", "unk": "<unk>", "bos": "<s>", "eos": "</s>"}
DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16,
          "int8": torch.int8}
# With --dtype int8 the linear layers' weights are stored in int8 with per-row scales, the rest
# (embeddings, norms, biases, relative tables) in this dtype.
INT8_COMPANION_DTYPE = "float16"
INT8_LEVELS = 127  # kernels/int8_gemm.h: kWeightLevels
FLOAT16_MAX = 65504.0
ENCODER, DECODER = "encoder.transformer", "decoder.transformer_layers"  # OpenNMT-py layer lists
ENCODER_EMBEDDINGS = "encoder.embeddings.make_embedding.emb_luts.0.weight"
DECODER_EMBEDDINGS = "decoder.embeddings.make_embedding.emb_luts.0.weight"


class ConversionError(Exception):
    """The checkpoint cannot be converted; the message says why."""


# ---------------------------------------------------------------------------------------------
# Loading without OpenNMT-py


class _Stub:
    """Stands in for any class the checkpoint names outside torch and the standard library."""

    def __new__(cls, *args, **kwargs):
        return object.__new__(cls)

    def __init__(self, *args, **kwargs):
        self.stub_args = args

    def __setstate__(self, state):
        if isinstance(state, tuple) and len(state) == 2:  # (dict state, slot state)
            state = {**(state[0] or {}), **(state[1] or {})}
        if isinstance(state, dict):
            self.__dict__.update(state)
        else:
            self.stub_state = state


# Modules whose classes are unpickled for real; __builtin__ and copy_reg are the Python 2
# names that pickle protocol 2 files use for builtins and copyreg.
_PASSTHROUGH_MODULES = {"torch", "collections", "argparse", "builtins", "copyreg", "_codecs",
                        "numpy", "pathlib", "__builtin__", "copy_reg"}


class _StubUnpickler(pickle.Unpickler):
    def find_class(self, module, name):
        if module.split(".")[0] in _PASSTHROUGH_MODULES:
            return super().find_class(module, name)
        return type(name, (_Stub,), {"__module__": module})


@contextlib.contextmanager
def _stubbed_unpickling():
    """torch.load builds its unpickler on pickle.Unpickler (torch 1.13 even ignores its
    pickle_module argument), so the stubbing Unpickler is swapped in while it runs."""
    original = pickle.Unpickler
    pickle.Unpickler = _StubUnpickler
    try:
        yield
    finally:
        pickle.Unpickler = original


def load_checkpoint(path):
    """The checkpoint dict, tensors on the CPU, foreign classes stubbed."""
    try:
        with _stubbed_unpickling():
            checkpoint = torch.load(path, map_location="cpu", weights_only=False)
    except (OSError, RuntimeError, pickle.UnpicklingError, EOFError) as e:
        raise ConversionError(f"not a readable PyTorch checkpoint ({e})") from e
    if not isinstance(checkpoint, dict) or "opt" not in checkpoint or "vocab" not in checkpoint:
        raise ConversionError("not an OpenNMT-py checkpoint (no 'opt' and 'vocab')")
    if "model" not in checkpoint:
        raise ConversionError("the weights are in a separate safetensors file "
                              "(save_format safetensors); convert a 'pytorch' checkpoint")
    return checkpoint


# ---------------------------------------------------------------------------------------------
# Options


def read_options(checkpoint):
    """The training options as a dict, v2 names mapped to v3 ones, v3 overrides applied."""
    opt = dict(vars(checkpoint["opt"]))
    for v2_name, v3_name in (("rnn_size", "hidden_size"), ("enc_rnn_size", "enc_hid_size"),
                             ("dec_rnn_size", "dec_hid_size")):
        if v2_name in opt and v3_name not in opt:
            opt[v3_name] = opt[v2_name]
    if opt.get("layers", -1) > 0:
        opt["enc_layers"] = opt["dec_layers"] = opt["layers"]
    if opt.get("hidden_size", -1) > 0:
        opt["enc_hid_size"] = opt["dec_hid_size"] = opt["hidden_size"]
    return opt


def _refusals(opt):
    """(option, value, reason) for every option this converter does not support."""
    def get(name, default=None):
        return opt.get(name, default)

    checks = [
        ("model_task", get("model_task", "seq2seq") != "seq2seq", "only seq2seq models"),
        ("model_type", get("model_type", "text") != "text", "only text models"),
        ("encoder_type", get("encoder_type") != "transformer", "only the transformer encoder"),
        ("decoder_type", get("decoder_type") != "transformer", "only the transformer decoder"),
        ("max_relative_positions", get("max_relative_positions", 0) == -1,
         "rotary embeddings are not supported"),
        ("max_relative_positions", get("max_relative_positions", 0) == -2,
         "ALiBi is not supported"),
        ("max_relative_positions", get("max_relative_positions", 0) < -2, "unknown value"),
        ("relative_positions_buckets",
         get("relative_positions_buckets", 0) > 0 and get("max_relative_positions", 0) <= 0,
         "T5 buckets need max_relative_positions > 0 (their max_distance)"),
        ("relative_positions_buckets", 0 < get("relative_positions_buckets", 0) < 4,
         "T5 buckets need at least 4 (the encoder splits them by direction, then exact/log)"),
        ("max_relative_positions",
         get("relative_positions_buckets", 0) > 0
         and 0 < get("max_relative_positions", 0) <= get("relative_positions_buckets", 0) // 2,
         "T5 buckets need max_distance (max_relative_positions) above buckets / 2, where the "
         "decoder's exact buckets end; OpenNMT-py itself fails on longer inputs"),
        ("parallel_mode",
         get("parallel_mode", "data_parallel") == "tensor_parallel" and get("world_size", 1) > 1,
         "tensor-parallel checkpoints hold one rank's shard only"),
        ("position_encoding_type",
         get("position_encoding", False)
         and get("position_encoding_type", "SinusoidalInterleaved") != "SinusoidalInterleaved",
         "only SinusoidalInterleaved encodings are supported"),
        ("n_src_feats", get("n_src_feats", 0) > 0, "source features are not supported"),
        ("num_kv", get("num_kv", 0) > 0, "multi-query / grouped-query attention is not supported"),
        ("multiquery", get("multiquery", False), "multi-query attention is not supported"),
        ("pos_ffn_activation_fn", get("pos_ffn_activation_fn", "relu") not in ("relu", "gelu"),
         "only relu and gelu; silu and gated-gelu are gated FFNs (w_3)"),
        ("layer_norm", get("layer_norm", "standard") != "standard", "only standard LayerNorm"),
        ("parallel_residual", get("parallel_residual", False),
         "parallel residual blocks are not supported"),
        ("self_attn_type",
         get("self_attn_type", "scaled-dot") not in ("scaled-dot", "scaled-dot-flash"),
         "only scaled dot-product self-attention (not average attention)"),
        ("copy_attn", get("copy_attn", False), "copy attention is not supported"),
        ("num_experts", get("num_experts", 0) > 0, "mixture of experts is not supported"),
        ("sliding_window", get("sliding_window", 0) > 0,
         "sliding-window attention is not supported"),
        ("lora_layers", bool(get("lora_layers", [])), "merge the LoRA weights first"),
        ("lora_embedding", get("lora_embedding", False), "merge the LoRA weights first"),
        ("quant_layers", bool(get("quant_layers", [])) and bool(get("quant_type", "")),
         "quantized weights are not supported"),
        ("generator_function", get("generator_function", "softmax") != "softmax",
         "only a softmax generator"),
        ("enc_hid_size", get("enc_hid_size") != get("dec_hid_size"),
         "encoder and decoder sizes differ"),
    ]
    return [(name, get(name), reason) for name, refused, reason in checks if refused]


def raise_refusals(problems, what):
    """ConversionError listing every (name, value, reason) refused, if any."""
    if problems:
        lines = [f"  {name} = {value!r}: {reason}" for name, value, reason in problems]
        raise ConversionError(f"unsupported {what}:\n" + "\n".join(lines))


def check_supported(opt):
    raise_refusals(_refusals(opt), "model options")


# ---------------------------------------------------------------------------------------------
# Vocabularies


def _v2_itos(field):
    """The token list of a v2 (torchtext) field, through stubbed TextMultiField / Field."""
    if hasattr(field, "fields"):  # TextMultiField: [(name, Field), ...], words first
        if len(field.fields) > 1:
            raise ConversionError("source features (v2 src_feats) are not supported")
        field = field.fields[0][1]
    itos = getattr(getattr(field, "vocab", None), "itos", None)
    if not isinstance(itos, list):
        raise ConversionError("cannot find the vocabulary (field.vocab.itos) in this v2 checkpoint")
    return itos


def read_vocabularies(checkpoint):
    """(source tokens, target tokens, decoder start token)."""
    vocab = checkpoint["vocab"]
    if not isinstance(vocab, dict) or "src" not in vocab or "tgt" not in vocab:
        raise ConversionError("the checkpoint's 'vocab' has no 'src' and 'tgt' entries")
    if vocab.get("src_feats"):
        raise ConversionError("unsupported model options:\n  src_feats: source features")
    if isinstance(vocab["src"], list):  # v3: plain token lists
        return list(vocab["src"]), list(vocab["tgt"]), vocab.get("decoder_start_token", "<s>")
    return _v2_itos(vocab["src"]), _v2_itos(vocab["tgt"]), "<s>"


def check_vocabularies(src_vocab, tgt_vocab, start_token):
    for side, tokens in (("source", src_vocab), ("target", tgt_vocab)):
        bad = [t for t in tokens if not isinstance(t, str) or t == "" or "\n" in t or "\r" in t]
        if bad:
            raise ConversionError(f"{side} vocabulary has tokens that cannot be written one per "
                                  f"line: {bad[:5]!r}")
        if len(set(tokens)) != len(tokens):
            raise ConversionError(f"{side} vocabulary has duplicate tokens")
    needed = {"source": (src_vocab, [SPECIAL_TOKENS["pad"], SPECIAL_TOKENS["unk"]]),
              "target": (tgt_vocab, [*SPECIAL_TOKENS.values(), start_token])}
    for side, (tokens, specials) in needed.items():
        missing = [token for token in specials if token not in tokens]
        if missing:
            raise ConversionError(f"{side} vocabulary lacks the special tokens {missing!r}")


# ---------------------------------------------------------------------------------------------
# Weights


class StateDict:
    """Checkpoint tensors by OpenNMT-py name; remembers which ones were used."""

    def __init__(self, checkpoint):
        self.tensors = dict(checkpoint["model"])
        for name, tensor in (checkpoint.get("generator") or {}).items():
            name = {"0.weight": "weight", "0.bias": "bias"}.get(name, name)  # v2 names
            self.tensors["generator." + name] = tensor
        if any(name.endswith(("layer_norm.a_2", "layer_norm.b_2")) for name in self.tensors):
            raise ConversionError(
                "a checkpoint of OpenNMT-py before 1.0 (layer_norm.a_2 / b_2): its LayerNorm "
                "divides by std + eps, which rpt does not compute; retrain or fine-tune with "
                "OpenNMT-py 2 or 3")
        self.used = set()

    def has(self, name):
        return name in self.tensors

    def take(self, name):
        if name not in self.tensors:
            raise ConversionError(f"the checkpoint lacks the tensor {name}")
        tensor = self.tensors[name]
        if not torch.is_tensor(tensor) or not tensor.is_floating_point():
            raise ConversionError(f"{name} is not a floating-point tensor "
                                  "(quantized checkpoints are not supported)")
        self.used.add(name)
        return tensor

    def sinusoid_tables(self):
        """Names of the stored sinusoid buffers: checked, not converted (the engine computes
        the table)."""
        return sorted(n for n in self.tensors if n.endswith("make_embedding.pe.pe"))

    def unused(self):
        return sorted(set(self.tensors) - self.used - set(self.sinusoid_tables()))


def _all_or_none(state, names, what):
    present = [state.has(n) for n in names]
    if any(present) and not all(present):
        raise ConversionError(f"{what} biases are present in some layers only")
    return all(present)


def _layer_count(state, prefix):
    count = 0
    while state.has(f"{prefix}.{count}.feed_forward.w_1.weight"):
        count += 1
    return count


def _linear(state, out, src, bias):
    pairs = [(out + ".weight", state.take(src + ".weight"))]
    if bias:
        pairs.append((out + ".bias", state.take(src + ".bias")))
    return pairs


def _layer_norm(state, out, src):
    return [(out + ".gamma", state.take(src + ".weight")),
            (out + ".beta", state.take(src + ".bias"))]


def _attention(state, out, src, norm_src, arch, position, self_attention):
    tensors = _layer_norm(state, out + ".norm", norm_src)
    for ours, theirs in (("query", "linear_query"), ("key", "linear_keys"),
                         ("value", "linear_values"), ("output", "final_linear")):
        tensors += _linear(state, f"{out}.{ours}", f"{src}.{theirs}", arch["qkv_bias"])
    if self_attention and position["type"] == "relative":
        tensors.append((out + ".relative_keys",
                        state.take(src + ".relative_positions_embeddings.weight")))
    if self_attention and position["type"] == "t5_bucket":
        tensors.append((out + ".relative_bias",
                        state.take(src + ".relative_attention_bias.weight")))
    return tensors


def _ffn(state, out, src, arch):
    return (_layer_norm(state, out + ".norm", src + ".layer_norm")
            + _linear(state, out + ".inner", src + ".w_1", arch["ffn_bias"])
            + _linear(state, out + ".outer", src + ".w_2", arch["ffn_bias"]))


def _encoder(state, arch, position):
    tensors = []
    if not arch["shared_embeddings"]:
        tensors.append(("encoder.embeddings", state.take(ENCODER_EMBEDDINGS)))
    for i in range(arch["encoder_layers"]):
        out, src = f"encoder.layer_{i}", f"{ENCODER}.{i}"
        tensors += _attention(state, out + ".self_attention", src + ".self_attn",
                              src + ".layer_norm", arch, position, True)
        tensors += _ffn(state, out + ".ffn", src + ".feed_forward", arch)
    return tensors + _layer_norm(state, "encoder.norm", "encoder.layer_norm")


def _decoder(state, arch, position):
    tensors = [("decoder.embeddings", state.take(DECODER_EMBEDDINGS))]
    for i in range(arch["decoder_layers"]):
        out, src = f"decoder.layer_{i}", f"{DECODER}.{i}"
        tensors += _attention(state, out + ".self_attention", src + ".self_attn",
                              src + ".layer_norm_1", arch, position, True)
        tensors += _attention(state, out + ".cross_attention", src + ".context_attn",
                              src + ".layer_norm_2", arch, position, False)
        tensors += _ffn(state, out + ".ffn", src + ".feed_forward", arch)
    return tensors + _layer_norm(state, "decoder.norm", "decoder.layer_norm")


def _generator(state, arch):
    tensors = []
    weight = state.take("generator.weight")
    if arch["tied_generator"]:
        if not torch.equal(weight, state.take(DECODER_EMBEDDINGS)):
            raise ConversionError("share_decoder_embeddings is set but generator.weight differs "
                                  "from the decoder embeddings")
    else:
        tensors.append(("generator.weight", weight))
    if state.has("generator.bias"):
        tensors.append(("generator.bias", state.take("generator.bias")))
    return tensors


def collect_tensors(state, arch, position):
    """[(rpt name, tensor)] in file order; refuses checkpoints with weights left over."""
    if arch["shared_embeddings"]:
        encoder = state.take(ENCODER_EMBEDDINGS)
        decoder = state.take(DECODER_EMBEDDINGS)
        if not torch.equal(encoder, decoder):
            raise ConversionError("share_embeddings is set but the encoder and decoder "
                                  "embeddings differ")
    tensors = _encoder(state, arch, position) + _decoder(state, arch, position)
    tensors += _generator(state, arch)
    leftover = state.unused()
    if leftover:
        raise ConversionError("the checkpoint has weights this converter does not understand "
                              f"(an unsupported feature?): {leftover[:8]}")
    return tensors


def _interleaved_sinusoids(length, dim):
    """OpenNMT-py's SinusoidalInterleaved table [length, dim]: sin on even, cos on odd dims."""
    position = torch.arange(length, dtype=torch.float32).unsqueeze(1)
    rate = torch.exp(torch.arange(0, dim, 2, dtype=torch.float32) * -(math.log(10000.0) / dim))
    table = torch.zeros(length, dim)
    table[:, 0::2] = torch.sin(position * rate)
    table[:, 1::2] = torch.cos(position * rate)
    return table


def check_sinusoids(state, position):
    """Stored sinusoid tables must be the interleaved ones the engine will compute."""
    for name in state.sinusoid_tables():
        if not position["sinusoidal"]:
            raise ConversionError(f"{name} is stored but position_encoding is off")
        stored = state.tensors[name].float()
        stored = stored.reshape(stored.shape[0], -1)  # [max_len, 1, dim] -> [max_len, dim]
        # float32 rounding of position * rate differs between torch builds by up to ~3e-4 at
        # position 5000; another layout (SinusoidalConcat) differs by O(1).
        if not torch.allclose(stored, _interleaved_sinusoids(*stored.shape), atol=1e-3):
            raise ConversionError(f"{name} is not OpenNMT-py's SinusoidalInterleaved table")


# ---------------------------------------------------------------------------------------------
# Architecture and position description


def describe_position(opt):
    k = opt.get("max_relative_positions", 0)
    buckets = opt.get("relative_positions_buckets", 0)
    sinusoidal = bool(opt.get("position_encoding", False))
    if buckets > 0:
        kind = "t5_bucket"
    elif k > 0:
        kind = "relative"
    else:
        kind = "sinusoidal" if sinusoidal else "none"
    relative_k = k if kind == "relative" else 0
    return {
        "type": kind,
        "encoder_max_relative_position": relative_k,
        "decoder_max_relative_position": relative_k,
        "relative_tables": "shared",
        "buckets": buckets if kind == "t5_bucket" else 0,
        "max_distance": k if kind == "t5_bucket" else 0,
        "sinusoidal": sinusoidal,
    }


def _bias_names(encoder_layers, decoder_layers):
    """OpenNMT-py names of all attention biases and of all feed-forward biases."""
    layers = ([f"{ENCODER}.{i}" for i in range(encoder_layers)]
              + [f"{DECODER}.{i}" for i in range(decoder_layers)])
    attentions = ([f"{layer}.self_attn" for layer in layers]
                  + [f"{DECODER}.{i}.context_attn" for i in range(decoder_layers)])
    attention = [f"{a}.{linear}.bias" for a in attentions
                 for linear in ("linear_query", "linear_keys", "linear_values", "final_linear")]
    ffn = [f"{layer}.feed_forward.{w}.bias" for layer in layers for w in ("w_1", "w_2")]
    return attention, ffn


def describe_architecture(opt, state):
    encoder_layers = _layer_count(state, ENCODER)
    decoder_layers = _layer_count(state, DECODER)
    if encoder_layers == 0 or decoder_layers == 0:
        raise ConversionError("no transformer encoder and decoder layers in the checkpoint")
    if not opt.get("heads"):
        raise ConversionError("the checkpoint's options do not give the number of heads")
    attention_biases, ffn_biases = _bias_names(encoder_layers, decoder_layers)
    return {
        "encoder_layers": encoder_layers,
        "decoder_layers": decoder_layers,
        "d_model": int(state.tensors[DECODER_EMBEDDINGS].shape[1]),
        "heads": int(opt["heads"]),
        "d_ff": int(state.tensors[f"{DECODER}.0.feed_forward.w_1.weight"].shape[0]),
        "activation": opt.get("pos_ffn_activation_fn", "relu"),
        "norm_placement": "pre",
        "norm_eps": float(opt.get("norm_eps", 1e-6)),
        "embedding_scale": bool(opt.get("position_encoding", False)),
        "qkv_bias": _all_or_none(state, attention_biases, "attention"),
        "ffn_bias": _all_or_none(state, ffn_biases, "feed-forward"),
        "tied_generator": bool(opt.get("share_decoder_embeddings", False)),
        "shared_embeddings": bool(opt.get("share_embeddings", False)),
    }


def _expected_shape(name, arch, position, vocab_sizes):
    d, d_ff, heads = arch["d_model"], arch["d_ff"], arch["heads"]
    k = position["encoder_max_relative_position"]
    whole = {"encoder.embeddings": [vocab_sizes[0], d], "decoder.embeddings": [vocab_sizes[1], d],
             "generator.weight": [vocab_sizes[1], d], "generator.bias": [vocab_sizes[1]]}
    by_suffix = {"relative_keys": [2 * k + 1, d // heads],
                 "relative_bias": [position["buckets"], heads],
                 "inner.weight": [d_ff, d], "inner.bias": [d_ff],
                 "outer.weight": [d, d_ff], "gamma": [d], "beta": [d], "bias": [d],
                 "weight": [d, d]}
    if name in whole:
        return whole[name]
    for suffix, shape in by_suffix.items():  # most specific suffixes first
        if name.endswith(suffix):
            return shape
    raise AssertionError(name)


def check_shapes(arch, position, tensors, vocab_sizes):
    """Refuses checkpoints whose tensors disagree with the options or the vocabularies."""
    if arch["d_model"] % arch["heads"]:
        raise ConversionError(f"d_model {arch['d_model']} is not divisible by heads "
                              f"{arch['heads']}")
    for name, tensor in tensors:
        expected = _expected_shape(name, arch, position, vocab_sizes)
        if list(tensor.shape) != expected:
            raise ConversionError(f"{name} has shape {list(tensor.shape)}, expected {expected}")


# ---------------------------------------------------------------------------------------------
# Writing


def _tensor_bytes(tensor):
    """The tensor's raw little-endian bytes (no NumPy: it may not match the installed torch)."""
    tensor = tensor.contiguous()
    return ctypes.string_at(tensor.data_ptr(), tensor.numel() * tensor.element_size())


def _align(offset):
    return (offset + ALIGNMENT - 1) // ALIGNMENT * ALIGNMENT


def _layout(blobs, data_start):
    entries, offset = [], data_start
    for name, dtype, shape, data in blobs:
        offset = _align(offset)
        entries.append({"name": name, "dtype": dtype, "shape": shape, "offset": offset,
                        "nbytes": len(data), "crc32": zlib.crc32(data) & 0xFFFFFFFF})
        offset += len(data)
    return entries


def quantize_rows(name, weight):
    """int8 values and float32 scales, one per row: the engine's own quantizer (an all-zero row
    gets scale 0), so quantizing the dequantized weights again at load gives the same values."""
    if not torch.isfinite(weight).all():
        raise ConversionError(f"{name} holds non-finite values, which int8 cannot represent")
    largest = weight.abs().amax(dim=1)
    scales = largest / INT8_LEVELS
    inverse = torch.where(largest > 0, INT8_LEVELS / largest, torch.zeros_like(largest))
    values = torch.round(weight * inverse.unsqueeze(1)).to(torch.int8)
    return values, scales.to(torch.float32)


class Progress:
    """Stage lines on stderr ("reading checkpoint ... 2.1 s"), and a tensor counter rewritten in
    place when stderr is a terminal: large checkpoints take a while to read and convert."""

    def __init__(self, enabled):
        self.enabled = enabled
        self.live = enabled and sys.stderr.isatty()
        self.start = time.monotonic()

    def stage(self, text):
        if self.enabled:
            print(f"convert_onmt: {text} ({time.monotonic() - self.start:.1f} s)",
                  file=sys.stderr, flush=True)

    def count(self, done, total):
        if self.live:
            end = "\n" if done == total else ""
            print(f"\rconvert_onmt: tensors {done}/{total}", end=end, file=sys.stderr, flush=True)


def write_weights(path, tensors, dtype_name, progress=None):
    """model.bin: RPTW header, JSON tensor table, 64-byte aligned tensor data."""
    progress = progress or Progress(False)
    if sys.byteorder != "little":
        raise ConversionError("the converter writes little-endian data and must run on a "
                              "little-endian machine")
    blobs = []
    for done, (name, tensor) in enumerate(tensors, 1):
        progress.count(done, len(tensors))
        tensor = tensor.detach().to("cpu", torch.float32)
        if dtype_name == "int8" and name.endswith(".weight"):
            values, scales = quantize_rows(name, tensor)
            blobs.append((name, "int8", list(values.shape), _tensor_bytes(values)))
            blobs.append((name + "_scale", "float32", list(scales.shape), _tensor_bytes(scales)))
            continue
        stored = INT8_COMPANION_DTYPE if dtype_name == "int8" else dtype_name
        if stored == "float16" and tensor.abs().max().item() > FLOAT16_MAX:
            raise ConversionError(f"{name} has values beyond the float16 range; use float32")
        blobs.append((name, stored, list(tensor.shape), _tensor_bytes(tensor.to(DTYPES[stored]))))
    data_start = 0
    while True:  # offsets are absolute, so the header length and the offsets depend on each other
        header = json.dumps({"tensors": _layout(blobs, data_start)}, separators=(",", ":"))
        header = header.encode("utf-8")
        needed = _align(24 + len(header))
        if needed <= data_start:
            break
        data_start = needed
    temp = path + ".tmp"
    with open(temp, "wb") as f:
        f.write(b"RPTW")
        f.write(FORMAT_VERSION.to_bytes(4, "little"))
        f.write(len(header).to_bytes(8, "little"))
        f.write((zlib.crc32(header) & 0xFFFFFFFF).to_bytes(4, "little"))
        f.write(bytes(4))
        f.write(header)
        for entry, (_, _, _, data) in zip(json.loads(header)["tensors"], blobs):
            f.write(bytes(entry["offset"] - f.tell()))
            f.write(data)
    os.replace(temp, path)


def write_config(directory, config):
    """directory/config.json, as every converter writes it."""
    with open(os.path.join(directory, "config.json"), "w", encoding="utf-8") as f:
        json.dump(config, f, indent=2, ensure_ascii=False)
        f.write("\n")


def write_vocabulary(path, tokens):
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write("".join(token + "\n" for token in tokens))


def build_config(args, opt, arch, position, start_token, checkpoint_version):
    name = args.name or os.path.basename(os.path.normpath(args.out_dir))
    config = {
        "format": "rpt-model",
        "format_version": FORMAT_VERSION,
        "name": name,
        "source_language": args.source_language or opt.get("src_lang") or "und",
        "target_language": args.target_language or opt.get("tgt_lang") or "und",
        "weights": "model.bin",
        "source_vocabulary": "source_vocab.txt",
        "target_vocabulary": "target_vocab.txt",
    }
    if args.src_spm:
        config["source_tokenizer"] = "source.spm.model"
    if args.tgt_spm:
        config["target_tokenizer"] = "target.spm.model"
    config.update({
        "special_tokens": dict(SPECIAL_TOKENS),
        "decoder_start_token": start_token,
        "architecture": arch,
        "position": position,
        "converted_from": {"tool": "convert_onmt.py",
                           "checkpoint": os.path.basename(args.checkpoint),
                           "onmt_version": checkpoint_version,
                           "dtype": args.dtype},
    })
    return config


def convert(args):
    progress = Progress(not args.quiet)
    progress.stage(f"reading {args.checkpoint}")
    checkpoint = load_checkpoint(args.checkpoint)
    progress.stage("checkpoint read")
    opt = read_options(checkpoint)
    check_supported(opt)
    src_vocab, tgt_vocab, start_token = read_vocabularies(checkpoint)
    check_vocabularies(src_vocab, tgt_vocab, start_token)
    version = "3.x" if isinstance(checkpoint["vocab"]["src"], list) else "2.x"

    state = StateDict(checkpoint)
    position = describe_position(opt)
    arch = describe_architecture(opt, state)
    tensors = collect_tensors(state, arch, position)
    check_sinusoids(state, position)
    check_shapes(arch, position, tensors, (len(src_vocab), len(tgt_vocab)))

    os.makedirs(args.out_dir, exist_ok=True)
    progress.stage(f"writing {len(tensors)} tensors as {args.dtype}")
    write_weights(os.path.join(args.out_dir, "model.bin"), tensors, args.dtype, progress)
    write_vocabulary(os.path.join(args.out_dir, "source_vocab.txt"), src_vocab)
    write_vocabulary(os.path.join(args.out_dir, "target_vocab.txt"), tgt_vocab)
    for given, target in ((args.src_spm, "source.spm.model"), (args.tgt_spm, "target.spm.model")):
        if given:
            shutil.copyfile(given, os.path.join(args.out_dir, target))
    config = build_config(args, opt, arch, position, start_token, version)
    write_config(args.out_dir, config)
    return config


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkpoint", help="OpenNMT-py checkpoint (.pt)")
    parser.add_argument("out_dir", help="model directory to write (created if missing)")
    parser.add_argument("--dtype", choices=sorted(DTYPES), default="float32",
                        help="weight type in model.bin (default float32; int8: linear layers in "
                        "int8 with per-row scales, the rest float16)")
    parser.add_argument("--src-spm", help="source SentencePiece model to copy")
    parser.add_argument("--tgt-spm", help="target SentencePiece model to copy")
    parser.add_argument("--name", help="model name (default: the directory name)")
    parser.add_argument("--source-language", help="e.g. en (default: the checkpoint's src_lang, "
                        "else 'und')")
    parser.add_argument("--target-language", help="e.g. de (default: the checkpoint's tgt_lang, "
                        "else 'und')")
    parser.add_argument("--quiet", action="store_true",
                        help="no progress on stderr (stages, and a tensor count on a terminal)")
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    for path in (args.src_spm, args.tgt_spm):
        if path and not os.path.isfile(path):
            print(f"convert_onmt: error: {path}: no such file", file=sys.stderr)
            return 2
    try:
        config = convert(args)
    except ConversionError as e:
        print(f"convert_onmt: error: {args.checkpoint}: {e}", file=sys.stderr)
        return 2
    arch, position = config["architecture"], config["position"]
    print(f"wrote {args.out_dir}: {arch['encoder_layers']}+{arch['decoder_layers']} layers, "
          f"d_model {arch['d_model']}, heads {arch['heads']}, position {position['type']}, "
          f"{args.dtype}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
