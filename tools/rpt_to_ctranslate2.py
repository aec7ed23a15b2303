#!/usr/bin/env python3
"""Builds a CTranslate2 model from an rpt model directory, with ctranslate2's model specs.

    python3 tools/rpt_to_ctranslate2.py models/en-fr /tmp/en-fr-ct2 --quantization int8

No checkpoint needed: the weights, vocabularies and special tokens all come from the directory
(docs/model-format.md). Supported: what CTranslate2's Transformer can run exactly, i.e. Shaw
relative positions (one table per layer, OpenNMT-py's shared keys/values or separate ones) or
sinusoidal encodings, pre- or post-norm, ReLU/GELU/SiLU. Anything else is refused by name.
Needs NumPy and ctranslate2 (PyPI).

Layouts: rpt keeps query, key and value as separate [d, d] matrices; CTranslate2 fuses them
into one projection per attention (self-attention: linear[0] = [Q; K; V] stacked along the
output rows; cross-attention: linear[0] = Q on the decoder state, linear[1] = [K; V] on the
encoder memory), the output projection is the last linear. rpt's relative_keys [2k+1, head_dim]
is indexed by clip(j - i, -k, k) + k, as CTranslate2's relative_position_keys.
"""

import argparse
import os
import sys

import numpy as np
from ctranslate2.specs import common_spec, transformer_spec

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rpt_model  # noqa: E402  (sits beside this file)
from ct2_text import tokenizers, translate  # noqa: E402,F401  (re-exported for the tests)

ACTIVATIONS = {"relu": common_spec.Activation.RELU, "gelu": common_spec.Activation.GELU,
               "silu": common_spec.Activation.SWISH}


class UnsupportedModel(Exception):
    pass


def check_supported(config):
    arch, position = config["architecture"], config["position"]
    problems = []
    if position["type"] == "t5_bucket" or (position["type"] == "relative" and position["sinusoidal"]):
        problems.append(f"position {position['type']} (sinusoidal: {position['sinusoidal']})")
    if position["type"] == "relative" and (position["encoder_max_relative_position"]
                                           != position["decoder_max_relative_position"]
                                           or not position["encoder_max_relative_position"]):
        problems.append("relative positions with k = 0 or different k in encoder and decoder")
    if position["type"] == "none":
        problems.append("position type none")
    if arch["embedding_scale"] != (position["type"] == "sinusoidal"):
        # CTranslate2 ties sqrt(d_model) scaling to sinusoidal encodings, as OpenNMT-py does.
        problems.append("embedding_scale without sinusoidal encodings (or the reverse)")
    if arch["activation"] not in ACTIVATIONS:
        problems.append(f"activation {arch['activation']}")
    if arch.get("norm", "layer_norm") != "layer_norm" or arch.get("feed_forward", "dense") != "dense":
        problems.append("RMS norm or gated feed-forward (convert the Hugging Face checkpoint with "
                        "CTranslate2's own converter)")
    if "head_dim" in arch or not arch.get("scale_attention", True):
        problems.append("head_dim or unscaled attention")
    if problems:
        raise UnsupportedModel("CTranslate2 cannot run this model exactly: " + "; ".join(problems))


class _Weights:
    """rpt tensors as float32, looked up by rpt name (None when the config says absent)."""

    def __init__(self, tensors):
        self.tensors = tensors

    def __call__(self, name):
        tensor = self.tensors.get(name)
        return None if tensor is None else np.ascontiguousarray(tensor, dtype=np.float32)


def _set_linear(spec, weights, names):
    """One CTranslate2 linear from one or more rpt linears stacked along the output rows."""
    spec.weight = np.concatenate([weights(n + ".weight") for n in names])
    biases = [weights(n + ".bias") for n in names]
    if any(b is not None for b in biases):
        spec.bias = np.concatenate([b if b is not None else np.zeros(weights(n + ".weight").shape[0],
                                                                     np.float32)
                                    for b, n in zip(biases, names)])


def _set_norm(spec, weights, name):
    spec.gamma, spec.beta = weights(name + ".gamma"), weights(name + ".beta")


def _set_attention(spec, weights, name, self_attention):
    _set_norm(spec.layer_norm, weights, name + ".norm")
    qkv = [name + ".query", name + ".key", name + ".value"]
    if self_attention:
        _set_linear(spec.linear[0], weights, qkv)
    else:
        _set_linear(spec.linear[0], weights, qkv[:1])
        _set_linear(spec.linear[1], weights, qkv[1:])
    _set_linear(spec.linear[-1], weights, [name + ".output"])
    if hasattr(spec, "relative_position_keys"):
        keys = weights(name + ".relative_keys")
        values = weights(name + ".relative_values")
        spec.relative_position_keys = keys
        spec.relative_position_values = keys if values is None else values  # "shared" tables


def _set_ffn(spec, weights, name):
    _set_norm(spec.layer_norm, weights, name + ".norm")
    _set_linear(spec.linear_0, weights, [name + ".inner"])
    _set_linear(spec.linear_1, weights, [name + ".outer"])


def _sinusoids(length, dim):
    """OpenNMT-py's interleaved table (docs/model-format.md): sin at even, cos at odd columns."""
    positions = np.arange(length, dtype=np.float32)[:, None]
    rates = np.exp(np.arange(0, dim, 2, dtype=np.float32) * -(np.log(10000.0) / dim))
    table = np.zeros((length, dim), np.float32)
    table[:, 0::2], table[:, 1::2] = np.sin(positions * rates), np.cos(positions * rates)
    return table


def build_spec(model_dir):
    """A validated-ready TransformerSpec with every variable set from `model_dir`."""
    config = rpt_model.read_config(model_dir)
    check_supported(config)
    arch, position = config["architecture"], config["position"]
    weights = _Weights(rpt_model.read_model_bin(os.path.join(model_dir, config["weights"])))
    relative = position["type"] == "relative"
    options = dict(pre_norm=arch["norm_placement"] == "pre", relative_position=relative,
                   activation=ACTIVATIONS[arch["activation"]])
    encoder = transformer_spec.TransformerEncoderSpec(arch["encoder_layers"], arch["heads"],
                                                      **options)
    decoder = transformer_spec.TransformerDecoderSpec(arch["decoder_layers"], arch["heads"],
                                                      **options)
    spec = transformer_spec.TransformerSpec(encoder, decoder)

    target_embeddings = weights("decoder.embeddings")
    encoder.embeddings[0].weight = (target_embeddings if arch["shared_embeddings"]
                                    else weights("encoder.embeddings"))
    decoder.embeddings.weight = target_embeddings
    for stack in (encoder, decoder):
        stack.scale_embeddings = arch["embedding_scale"]
        if not relative:
            stack.position_encodings.encodings = _sinusoids(1024, arch["d_model"])
    if arch["norm_placement"] == "pre":
        _set_norm(encoder.layer_norm, weights, "encoder.norm")
        _set_norm(decoder.layer_norm, weights, "decoder.norm")
    for i, layer in enumerate(encoder.layer):
        _set_attention(layer.self_attention, weights, f"encoder.layer_{i}.self_attention", True)
        _set_ffn(layer.ffn, weights, f"encoder.layer_{i}.ffn")
    for i, layer in enumerate(decoder.layer):
        _set_attention(layer.self_attention, weights, f"decoder.layer_{i}.self_attention", True)
        _set_attention(layer.attention, weights, f"decoder.layer_{i}.cross_attention", False)
        _set_ffn(layer.ffn, weights, f"decoder.layer_{i}.ffn")
    decoder.projection.weight = (target_embeddings if arch["tied_generator"]
                                 else weights("generator.weight"))
    if weights("generator.bias") is not None:
        decoder.projection.bias = weights("generator.bias")

    _set_vocabularies(spec, model_dir, config)
    return spec


def _set_vocabularies(spec, model_dir, config):
    special = config["special_tokens"]
    spec.register_source_vocabulary(
        rpt_model.read_vocabulary(os.path.join(model_dir, config["source_vocabulary"])))
    spec.register_target_vocabulary(
        rpt_model.read_vocabulary(os.path.join(model_dir, config["target_vocabulary"])))
    spec.config.unk_token, spec.config.bos_token = special["unk"], special["bos"]
    spec.config.eos_token = special["eos"]
    spec.config.decoder_start_token = config["decoder_start_token"]
    spec.config.layer_norm_epsilon = config["architecture"]["norm_eps"]


def convert(model_dir, out_dir, quantization=None):
    """Writes the CTranslate2 model of `model_dir` to `out_dir`; weights stored in
    `quantization` (None: float32, as read; int8: per-row scales, CTranslate2's own scheme)."""
    spec = build_spec(model_dir)
    spec.validate()
    spec.optimize(quantization=quantization)
    os.makedirs(out_dir, exist_ok=True)
    spec.save(out_dir)
    return out_dir


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("model_dir", help="rpt model directory")
    parser.add_argument("out_dir", help="CTranslate2 model directory to write")
    parser.add_argument("--quantization", choices=["float32", "float16", "int8", "int8_float32"],
                        help="weight type on disk (default: float32)")
    args = parser.parse_args(argv)
    try:
        convert(args.model_dir, args.out_dir, args.quantization)
    except UnsupportedModel as e:
        sys.exit(f"rpt_to_ctranslate2: {e}")


if __name__ == "__main__":
    main()
