"""Tests of tools/convert_onmt.py against the committed fixtures (tests/fixtures/*/).

    python3 -m unittest discover -s tests/tools -p 'convert_onmt_test.py' -v

Needs torch and numpy; without torch every test is skipped, with the reason printed. For each
fixture, the committed checkpoint.pt is converted into a temporary directory; model.bin is read
back by the small reader below (independent of the converter) and compared tensor by tensor
with the committed model/ and with the checkpoint itself. Checkpoints with unsupported options
or damaged weights must be refused with a message that names the problem.
"""

import argparse
import contextlib
import glob
import io
import json
import os
import sys
import tempfile
import types
import unittest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
FIXTURES = os.path.join(REPO, "tests", "fixtures")
sys.path.insert(0, os.path.join(REPO, "tools"))

try:
    import numpy as np
    import torch
    from rpt_model import read_model_bin
    MISSING = None
except ImportError as e:  # pragma: no cover - depends on the machine
    MISSING = f"torch and numpy are needed to test the converter ({e})"
    print(f"convert_onmt_test: SKIPPED: {MISSING}", file=sys.stderr)


def to_numpy(tensor):
    # through a list: the torch <-> numpy bridge is broken when numpy 2 meets an older torch
    return np.array(tensor.float().tolist(), dtype=np.float32).reshape(tuple(tensor.shape))


def load_torch(path):
    return torch.load(path, map_location="cpu", weights_only=False)


def fixture_dirs():
    checkpoints = glob.glob(os.path.join(FIXTURES, "*", "checkpoint.pt"))
    return sorted(os.path.dirname(path) for path in checkpoints)


def model_config(fixture):
    with open(os.path.join(fixture, "model", "config.json")) as f:
        return json.load(f)


def convert(checkpoint, out_dir, *extra):
    """(exit status, stderr) of the converter run in this process."""
    import convert_onmt
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        status = convert_onmt.main([checkpoint, out_dir, *extra])
    return status, err.getvalue()


@unittest.skipIf(MISSING, MISSING)
class ConvertFixturesTest(unittest.TestCase):
    def setUp(self):
        self.fixtures = fixture_dirs()
        if not self.fixtures:
            self.skipTest("no fixtures under tests/fixtures (run tools/make_fixtures.py)")
        self.temp = tempfile.TemporaryDirectory()
        self.addCleanup(self.temp.cleanup)

    def converted(self, fixture, *extra):
        out = os.path.join(self.temp.name, os.path.basename(fixture) + "-".join(extra))
        status, err = convert(os.path.join(fixture, "checkpoint.pt"), out, *extra)
        self.assertEqual(status, 0, err)
        return out

    def test_progress_on_stderr_unless_quiet(self):
        checkpoint = os.path.join(self.fixtures[0], "checkpoint.pt")
        status, err = convert(checkpoint, os.path.join(self.temp.name, "loud"))
        self.assertEqual(status, 0, err)
        self.assertIn("convert_onmt: reading ", err)
        self.assertRegex(err, r"convert_onmt: writing [0-9]+ tensors as float32 \([0-9.]+ s\)")
        status, err = convert(checkpoint, os.path.join(self.temp.name, "quiet"), "--quiet")
        self.assertEqual((status, err), (0, ""))

    def test_weights_match_committed_model(self):
        for fixture in self.fixtures:
            with self.subTest(fixture=os.path.basename(fixture)):
                out = self.converted(fixture)
                ours = read_model_bin(os.path.join(out, "model.bin"))
                committed = read_model_bin(os.path.join(fixture, "model", "model.bin"))
                self.assertEqual(list(ours), list(committed))
                for name, array in committed.items():
                    np.testing.assert_array_equal(ours[name], array, err_msg=name)

    def test_config_and_vocabularies_match_committed_model(self):
        for fixture in self.fixtures:
            with self.subTest(fixture=os.path.basename(fixture)):
                out = self.converted(fixture)
                with open(os.path.join(out, "config.json")) as f:
                    ours = json.load(f)
                committed = model_config(fixture)
                for key in ("architecture", "position", "special_tokens", "decoder_start_token",
                            "format", "format_version"):
                    self.assertEqual(ours[key], committed[key], key)
                for vocab in ("source_vocab.txt", "target_vocab.txt"):
                    with open(os.path.join(out, vocab), "rb") as a, \
                            open(os.path.join(fixture, "model", vocab), "rb") as b:
                        self.assertEqual(a.read(), b.read(), vocab)

    def test_weights_match_checkpoint(self):
        for fixture in self.fixtures:
            with self.subTest(fixture=os.path.basename(fixture)):
                checkpoint = load_torch(os.path.join(fixture, "checkpoint.pt"))
                config = model_config(fixture)
                weights = read_model_bin(os.path.join(fixture, "model", "model.bin"))
                for ours, theirs in expected_pairs(config, checkpoint):
                    np.testing.assert_array_equal(weights[ours], to_numpy(theirs), err_msg=ours)
                self.assertEqual(config["architecture"]["encoder_layers"],
                                 checkpoint["opt"].enc_layers)

    def test_float16(self):
        fixture = self.fixtures[0]
        out = self.converted(fixture, "--dtype", "float16")
        half = read_model_bin(os.path.join(out, "model.bin"))
        full = read_model_bin(os.path.join(fixture, "model", "model.bin"))
        for name, array in full.items():
            self.assertEqual(half[name].dtype, np.float16)
            np.testing.assert_allclose(half[name].astype(np.float32), array, rtol=1e-3,
                                       atol=1e-4, err_msg=name)

    def test_int8(self):
        """Linear weights in int8 with per-row scales, within half a step of float32 (the
        largest of each row exactly 127 steps); everything else float16; a file smaller than float16 would be."""
        fixture = self.fixtures[0]
        out = self.converted(fixture, "--dtype", "int8")
        quantized = read_model_bin(os.path.join(out, "model.bin"))
        full = read_model_bin(os.path.join(fixture, "model", "model.bin"))
        linear = [name for name in full if name.endswith(".weight")]
        self.assertTrue(any(".ffn.inner." in name for name in linear))
        for name in linear:
            values, scales = quantized[name], quantized[name + "_scale"]
            self.assertEqual(values.dtype, np.int8, name)
            self.assertEqual(scales.shape, (values.shape[0],), name)
            self.assertLessEqual(int(np.abs(values.astype(np.int32)).max()), 127, name)
            np.testing.assert_array_equal(np.abs(values.astype(np.int32)).max(axis=1)[scales > 0],
                                          127, err_msg=name)
            restored = values.astype(np.float32) * scales[:, None]
            step = np.maximum(scales[:, None], 1e-30)
            self.assertLessEqual(float((np.abs(restored - full[name]) / step).max()), 0.5 + 1e-3,
                                 name)
        for name in set(full) - set(linear):
            self.assertEqual(quantized[name].dtype, np.float16, name)
        self.assertLess(os.path.getsize(os.path.join(out, "model.bin")),
                        os.path.getsize(os.path.join(fixture, "model", "model.bin")) / 2)


def expected_pairs(config, checkpoint):
    """(rpt name, checkpoint tensor) for a sample of tensors, mapped by hand."""
    arch, kind = config["architecture"], config["position"]["type"]
    last = arch["decoder_layers"] - 1
    enc, dec = "encoder.transformer.0", f"decoder.transformer_layers.{last}"
    names = [
        ("decoder.embeddings", "decoder.embeddings.make_embedding.emb_luts.0.weight"),
        ("encoder.layer_0.self_attention.query.weight", f"{enc}.self_attn.linear_query.weight"),
        ("encoder.layer_0.self_attention.norm.gamma", f"{enc}.layer_norm.weight"),
        ("encoder.layer_0.ffn.inner.weight", f"{enc}.feed_forward.w_1.weight"),
        (f"decoder.layer_{last}.cross_attention.key.weight",
         f"{dec}.context_attn.linear_keys.weight"),
        (f"decoder.layer_{last}.cross_attention.norm.beta", f"{dec}.layer_norm_2.bias"),
        (f"decoder.layer_{last}.self_attention.norm.gamma", f"{dec}.layer_norm_1.weight"),
        (f"decoder.layer_{last}.ffn.norm.gamma", f"{dec}.feed_forward.layer_norm.weight"),
        ("decoder.norm.gamma", "decoder.layer_norm.weight"),
        ("encoder.norm.beta", "encoder.layer_norm.bias"),
    ]
    if not arch["shared_embeddings"]:
        names.append(("encoder.embeddings", "encoder.embeddings.make_embedding.emb_luts.0.weight"))
    if arch["qkv_bias"]:
        names.append((f"decoder.layer_{last}.self_attention.output.bias",
                      f"{dec}.self_attn.final_linear.bias"))
    if arch["ffn_bias"]:
        names.append(("encoder.layer_0.ffn.outer.bias", f"{enc}.feed_forward.w_2.bias"))
    for stack, layer in (("encoder.layer_0", enc), (f"decoder.layer_{last}", dec)):
        if kind == "relative":
            names.append((f"{stack}.self_attention.relative_keys",
                          f"{layer}.self_attn.relative_positions_embeddings.weight"))
        if kind == "t5_bucket":
            names.append((f"{stack}.self_attention.relative_bias",
                          f"{layer}.self_attn.relative_attention_bias.weight"))
    generator = checkpoint["generator"]
    pairs = [(ours, checkpoint["model"][theirs]) for ours, theirs in names]
    pairs.append(("generator.bias", generator["bias"]))
    pairs.append(("decoder.embeddings" if arch["tied_generator"] else "generator.weight",
                  generator["weight"]))
    return pairs


REFUSED_OPTIONS = [  # (options changed, text the refusal must contain)
    ({"max_relative_positions": -1}, "rotary"),
    ({"max_relative_positions": -2}, "ALiBi"),
    ({"relative_positions_buckets": 32, "max_relative_positions": 0}, "max_distance"),
    ({"relative_positions_buckets": 32, "max_relative_positions": 16}, "buckets / 2"),
    ({"relative_positions_buckets": 3, "max_relative_positions": 16}, "at least 4"),
    ({"parallel_mode": "tensor_parallel", "world_size": 2}, "parallel_mode"),
    ({"position_encoding": True, "max_relative_positions": 0,
      "position_encoding_type": "SinusoidalConcat"}, "position_encoding_type"),
    ({"num_kv": 2}, "num_kv"),
    ({"multiquery": True}, "multiquery"),
    ({"pos_ffn_activation_fn": "gated-gelu"}, "pos_ffn_activation_fn"),
    ({"pos_ffn_activation_fn": "silu"}, "pos_ffn_activation_fn"),
    ({"layer_norm": "rms"}, "layer_norm"),
    ({"parallel_residual": True}, "parallel_residual"),
    ({"self_attn_type": "average"}, "self_attn_type"),
    ({"copy_attn": True}, "copy_attn"),
    ({"n_src_feats": 1}, "source features"),
    ({"encoder_type": "rnn"}, "encoder_type"),
    ({"decoder_type": "cnn"}, "decoder_type"),
    ({"model_task": "lm"}, "model_task"),
    ({"num_experts": 4}, "num_experts"),
    ({"sliding_window": 128}, "sliding_window"),
    ({"lora_layers": ["linear_values"]}, "lora_layers"),
]


@unittest.skipIf(MISSING, MISSING)
class RefusalTest(unittest.TestCase):
    def setUp(self):
        fixtures = fixture_dirs()
        if not fixtures:
            self.skipTest("no fixtures under tests/fixtures (run tools/make_fixtures.py)")
        self.checkpoint = load_torch(os.path.join(fixtures[0], "checkpoint.pt"))
        self.temp = tempfile.TemporaryDirectory()
        self.addCleanup(self.temp.cleanup)

    def refusal(self, checkpoint):
        path = os.path.join(self.temp.name, "damaged.pt")
        torch.save(checkpoint, path)
        status, err = convert(path, os.path.join(self.temp.name, "out"))
        self.assertEqual(status, 2, "the converter accepted a checkpoint it must refuse")
        return err

    def with_options(self, changes):
        checkpoint = dict(self.checkpoint)
        checkpoint["opt"] = argparse.Namespace(**{**vars(self.checkpoint["opt"]), **changes})
        return checkpoint

    def with_model(self, change):
        checkpoint = dict(self.checkpoint)
        checkpoint["model"] = dict(self.checkpoint["model"])
        change(checkpoint["model"])
        return checkpoint

    def test_unsupported_options_are_named(self):
        for changes, message in REFUSED_OPTIONS:
            with self.subTest(options=changes):
                self.assertIn(message, self.refusal(self.with_options(changes)))

    def test_missing_tensor(self):
        name = "decoder.transformer_layers.0.context_attn.linear_query.weight"
        err = self.refusal(self.with_model(lambda model: model.pop(name)))
        self.assertIn(name, err)

    def test_unknown_tensor(self):
        name = "encoder.transformer.0.feed_forward.w_3.weight"
        weight = self.checkpoint["model"]["encoder.transformer.0.feed_forward.w_1.weight"]
        err = self.refusal(self.with_model(lambda model: model.update({name: weight})))
        self.assertIn(name, err)

    def test_biases_in_some_layers_only(self):
        name = "encoder.transformer.0.self_attn.linear_query.bias"
        bias = torch.zeros(self.checkpoint["model"]["encoder.layer_norm.weight"].shape)
        err = self.refusal(self.with_model(lambda model: model.update({name: bias})))
        self.assertIn("biases are present in some layers only", err)

    def test_wrong_shape(self):
        name = "encoder.transformer.0.feed_forward.w_2.weight"
        err = self.refusal(self.with_model(
            lambda model: model.update({name: model[name][:, :-1]})))
        self.assertIn("encoder.layer_0.ffn.outer.weight", err)

    def test_sinusoid_table_of_another_layout(self):
        sinusoidal = [f for f in fixture_dirs() if model_config(f)["position"]["sinusoidal"]]
        if not sinusoidal:
            self.skipTest("no fixture with sinusoidal position encodings")
        checkpoint = load_torch(os.path.join(sinusoidal[0], "checkpoint.pt"))
        name = "encoder.embeddings.make_embedding.pe.pe"
        table = checkpoint["model"][name]  # [max_len, 1, dim], sin and cos interleaved
        checkpoint["model"][name] = torch.cat([table[..., 0::2], table[..., 1::2]], dim=-1)
        self.assertIn("SinusoidalInterleaved", self.refusal(checkpoint))

    def test_safetensors_checkpoint(self):
        checkpoint = dict(self.checkpoint)
        checkpoint.pop("model")
        self.assertIn("safetensors", self.refusal(checkpoint))

    def test_not_a_checkpoint(self):
        path = os.path.join(self.temp.name, "junk.pt")
        with open(path, "wb") as f:
            f.write(b"not a checkpoint")
        status, err = convert(path, os.path.join(self.temp.name, "out"))
        self.assertEqual(status, 2)
        self.assertIn("not a readable PyTorch checkpoint", err)


@unittest.skipIf(MISSING, MISSING)
class V2CheckpointTest(unittest.TestCase):
    """A v2-style checkpoint: torchtext fields as vocabularies, v2 option and generator names."""

    def test_v2_layout_converts_to_the_same_weights(self):
        fixtures = fixture_dirs()
        if not fixtures:
            self.skipTest("no fixtures under tests/fixtures (run tools/make_fixtures.py)")
        fixture = fixtures[0]
        with tempfile.TemporaryDirectory() as temp:
            path = os.path.join(temp, "v2.pt")
            save_as_v2(load_torch(os.path.join(fixture, "checkpoint.pt")), path)
            status, err = convert(path, os.path.join(temp, "out"))
            self.assertEqual(status, 0, err)
            ours = read_model_bin(os.path.join(temp, "out", "model.bin"))
            with open(os.path.join(temp, "out", "source_vocab.txt"), "rb") as a, \
                    open(os.path.join(fixture, "model", "source_vocab.txt"), "rb") as b:
                self.assertEqual(a.read(), b.read())
        committed = read_model_bin(os.path.join(fixture, "model", "model.bin"))
        self.assertEqual(list(ours), list(committed))
        for name, array in committed.items():
            np.testing.assert_array_equal(ours[name], array, err_msg=name)


def save_as_v2(checkpoint, path):
    """Saves `checkpoint` the way OpenNMT-py 2.x did, with classes from modules that will not
    exist when the file is read back (as torchtext's and onmt's fields don't for the converter)."""
    fake = types.ModuleType("torchtext.data.field")

    class Field:
        pass

    class TextMultiField:
        pass

    class Vocab:
        pass

    for cls in (Field, TextMultiField, Vocab):
        cls.__module__, cls.__qualname__ = fake.__name__, cls.__name__
        setattr(fake, cls.__name__, cls)

    def multifield(tokens):
        vocab, field, multi = Vocab(), Field(), TextMultiField()
        vocab.itos, field.vocab, multi.fields = list(tokens), vocab, [("words", field)]
        return multi

    opt = dict(vars(checkpoint["opt"]))
    for v3_name, v2_name in (("hidden_size", "rnn_size"), ("enc_hid_size", "enc_rnn_size"),
                             ("dec_hid_size", "dec_rnn_size")):
        opt[v2_name] = opt.pop(v3_name)
    for name in ("add_qkvbias", "add_ffnbias", "relative_positions_buckets", "num_kv"):
        opt.pop(name, None)
    v2 = {"model": checkpoint["model"], "opt": argparse.Namespace(**opt),
          "generator": {"0." + k: v for k, v in checkpoint["generator"].items()},
          "vocab": {"src": multifield(checkpoint["vocab"]["src"]),
                    "tgt": multifield(checkpoint["vocab"]["tgt"])}}
    packages = {"torchtext": types.ModuleType("torchtext"),
                "torchtext.data": types.ModuleType("torchtext.data"), fake.__name__: fake}
    saved = {name: sys.modules.get(name) for name in packages}
    sys.modules.update(packages)
    try:
        torch.save(v2, path)
    finally:
        for name, module in saved.items():
            if module is None:
                del sys.modules[name]
            else:
                sys.modules[name] = module


if __name__ == "__main__":
    unittest.main()
