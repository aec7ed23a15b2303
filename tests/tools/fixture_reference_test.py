"""A NumPy reference of the model-format semantics, checked against the golden fixtures.

    python3 -m unittest discover -s tests/tools -p 'fixture_reference_test.py' -v

Reads each committed tests/fixtures/<name>/model/ (config.json + model.bin, nothing else) and
recomputes, in float32 NumPy, what OpenNMT-py recorded in golden.json: the encoder output and
the greedy path's step log-probabilities of the detailed cases, and the greedy translation and
its score of every case. It shows that the converted directory plus docs/model-format.md are
enough to reproduce OpenNMT-py, and it is a readable reference for the engine. Needs NumPy only.
"""

import glob
import json
import math
import os
import sys
import unittest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(REPO, "tools"))

try:
    import numpy as np
    from rpt_model import read_model_bin
    MISSING = None
except ImportError as e:  # pragma: no cover - depends on the machine
    MISSING = f"numpy is needed for the reference model ({e})"
    print(f"fixture_reference_test: SKIPPED: {MISSING}", file=sys.stderr)

FIXTURES = os.path.join(REPO, "tests", "fixtures")
TOLERANCE = 2e-5  # observed differences to OpenNMT-py: below 6e-6
MAX_OFFSET = 512  # longest key - query distance the reference handles


def read_weights(path):
    tensors = read_model_bin(path)
    for name, tensor in tensors.items():
        assert tensor.dtype == np.float32, (name, tensor.dtype)
    return tensors


def t5_bucket(offset, bidirectional, buckets, max_distance):
    """T5's bucket of a key - query offset, in float32 like OpenNMT-py."""
    bucket = 0
    if bidirectional:
        buckets //= 2
        bucket = buckets if offset > 0 else 0
        distance = abs(offset)
    else:
        distance = max(-offset, 0)
    exact = buckets // 2
    if distance < exact:
        return bucket + distance
    f32 = np.float32
    scaled = (np.log(f32(distance) / f32(exact)) / f32(math.log(max_distance / exact))
              * f32(buckets - exact))
    return bucket + min(exact + int(scaled), buckets - 1)


class Reference:
    """Encoder and decoder of an rpt model directory, whole sequences at a time."""

    def __init__(self, model_dir):
        with open(os.path.join(model_dir, "config.json")) as f:
            self.config = json.load(f)
        self.w = read_weights(os.path.join(model_dir, self.config["weights"]))
        self.arch, self.position = self.config["architecture"], self.config["position"]
        self.heads = self.arch["heads"]
        if self.position["type"] == "t5_bucket":  # bucket of offset o at [o + MAX_OFFSET]
            self.buckets = {stack: np.array([t5_bucket(o, stack == "encoder",
                                                       self.position["buckets"],
                                                       self.position["max_distance"])
                                             for o in range(-MAX_OFFSET, MAX_OFFSET + 1)])
                            for stack in ("encoder", "decoder")}

    # -- building blocks --------------------------------------------------------------------

    def linear(self, x, name):
        y = x @ self.w[name + ".weight"].T
        bias = self.w.get(name + ".bias")
        return y if bias is None else y + bias

    def norm(self, x, name):
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        normed = (x - mean) / np.sqrt(var + np.float32(self.arch["norm_eps"]))
        return normed * self.w[name + ".gamma"] + self.w[name + ".beta"]

    def activation(self, x):
        if self.arch["activation"] == "relu":
            return np.maximum(x, 0)
        erf = np.vectorize(math.erf, otypes=[np.float32])
        return (0.5 * x * (1 + erf(x / np.float32(math.sqrt(2))))).astype(np.float32)

    def relative_index(self, lq, lk, stack):
        """[lq, lk] index of clip(j - i, -k, k) + k (queries are the last lq positions)."""
        k = self.position[f"{stack}_max_relative_position"]
        i = np.arange(lk - lq, lk)[:, None]
        j = np.arange(lk)[None, :]
        return np.clip(j - i, -k, k) + k

    def attention(self, query_in, memory, name, stack, causal):
        """Multi-head attention; `stack` is None for cross-attention (no position term)."""
        lq, lk, d = query_in.shape[0], memory.shape[0], self.arch["d_model"]
        head_dim = d // self.heads

        def split(x):  # [len, d] -> [heads, len, head_dim]
            return x.reshape(x.shape[0], self.heads, head_dim).transpose(1, 0, 2)

        q = split(self.linear(query_in, name + ".query")) / np.float32(math.sqrt(head_dim))
        k = split(self.linear(memory, name + ".key"))
        v = split(self.linear(memory, name + ".value"))
        scores = q @ k.transpose(0, 2, 1)  # [heads, lq, lk]
        kind = self.position["type"] if stack else "none"
        if kind == "relative":
            table = self.w[name + ".relative_keys"][self.relative_index(lq, lk, stack)]
            scores = scores + np.einsum("hqd,qkd->hqk", q, table)
        if kind == "t5_bucket":
            offsets = np.arange(lk)[None, :] - np.arange(lk - lq, lk)[:, None]
            index = self.buckets[stack][offsets + MAX_OFFSET]  # [lq, lk]
            scores = scores + self.w[name + ".relative_bias"][index].transpose(2, 0, 1)
        if causal:
            future = np.arange(lk)[None, :] > np.arange(lk - lq, lk)[:, None]
            scores = np.where(future, np.float32(-1e18), scores)
        probs = np.exp(scores - scores.max(-1, keepdims=True))
        probs /= probs.sum(-1, keepdims=True)
        context = probs @ v
        if kind == "relative":
            context = context + np.einsum("hqk,qkd->hqd", probs, table)
        return self.linear(context.transpose(1, 0, 2).reshape(lq, d), name + ".output")

    def ffn(self, x, name):
        inner = self.activation(self.linear(self.norm(x, name + ".norm"), name + ".inner"))
        return x + self.linear(inner, name + ".outer")

    def embed(self, ids, table):
        x = self.w[table][ids]
        if self.arch["embedding_scale"]:
            x = x * np.float32(math.sqrt(self.arch["d_model"]))
        if self.position["sinusoidal"]:
            x = x + sinusoids(len(ids), self.arch["d_model"])
        return x

    # -- model ------------------------------------------------------------------------------

    def encode(self, ids):
        table = "decoder.embeddings" if self.arch["shared_embeddings"] else "encoder.embeddings"
        x = self.embed(ids, table)
        for i in range(self.arch["encoder_layers"]):
            name = f"encoder.layer_{i}"
            h = self.norm(x, name + ".self_attention.norm")
            x = x + self.attention(h, h, name + ".self_attention", "encoder", causal=False)
            x = self.ffn(x, name + ".ffn")
        return self.norm(x, "encoder.norm")

    def decode(self, ids, memory):
        """Log-probabilities [len(ids), target_vocab] after each decoder input."""
        x = self.embed(ids, "decoder.embeddings")
        for i in range(self.arch["decoder_layers"]):
            name = f"decoder.layer_{i}"
            h = self.norm(x, name + ".self_attention.norm")
            x = x + self.attention(h, h, name + ".self_attention", "decoder", causal=True)
            h = self.norm(x, name + ".cross_attention.norm")
            x = x + self.attention(h, memory, name + ".cross_attention", None, causal=False)
            x = self.ffn(x, name + ".ffn")
        x = self.norm(x, "decoder.norm")
        weight = self.w["decoder.embeddings" if self.arch["tied_generator"]
                        else "generator.weight"]
        logits = x @ weight.T + self.w.get("generator.bias", np.float32(0))
        logits = logits - logits.max(-1, keepdims=True)
        return logits - np.log(np.exp(logits).sum(-1, keepdims=True))


def sinusoids(length, dim):
    """OpenNMT-py's SinusoidalInterleaved table: sin on even, cos on odd dimensions."""
    position = np.arange(length, dtype=np.float32)[:, None]
    rate = np.exp(np.arange(0, dim, 2, dtype=np.float32) * np.float32(-math.log(10000.0) / dim))
    table = np.zeros((length, dim), np.float32)
    table[:, 0::2] = np.sin(position * rate)
    table[:, 1::2] = np.cos(position * rate)
    return table


def fixtures():
    goldens = glob.glob(os.path.join(FIXTURES, "*", "golden.json"))
    return sorted(os.path.dirname(path) for path in goldens)


@unittest.skipIf(MISSING, MISSING)
class ReferenceTest(unittest.TestCase):
    def setUp(self):
        self.dirs = fixtures()
        if not self.dirs:
            self.skipTest("no fixtures under tests/fixtures (run tools/make_fixtures.py)")

    def each(self):
        for folder in self.dirs:
            with open(os.path.join(folder, "golden.json")) as f:
                golden = json.load(f)
            with self.subTest(fixture=golden["fixture"]):
                yield Reference(os.path.join(folder, golden["model_dir"])), golden

    def test_encoder_output_and_step_log_probs(self):
        for model, golden in self.each():
            for case in golden["cases"]:
                if "encoder_output" not in case:
                    continue
                memory = model.encode(case["source_ids"])
                expected = np.array(case["encoder_output"], np.float32)
                np.testing.assert_allclose(memory.reshape(-1), expected, atol=TOLERANCE,
                                           rtol=TOLERANCE, err_msg=case["text"])
                log_probs = model.decode(case["decoder_input_ids"], memory)
                expected = np.array(case["decoder_log_probs"], np.float32)
                np.testing.assert_allclose(log_probs.reshape(-1), expected, atol=TOLERANCE,
                                           rtol=TOLERANCE, err_msg=case["text"])

    def test_greedy_translations(self):
        for model, golden in self.each():
            vocab, settings = golden["vocab"], golden["settings"]
            for case in golden["cases"]:
                memory = model.encode(case["source_ids"])
                ids, total = [vocab["decoder_start_id"]], 0.0
                while len(ids) <= settings["max_length"]:
                    step = model.decode(ids, memory)[-1]
                    token = int(step.argmax())
                    total += float(step[token])
                    ids.append(token)
                    if token == vocab["eos_id"]:
                        break
                generated = len(ids) - 1
                ended = ids[-1] == vocab["eos_id"]
                self.assertEqual(ids[1:-1] if ended else ids[1:], case["greedy"]["ids"],
                                 case["text"])
                self.assertEqual(ended, case["greedy"]["eos"], case["text"])
                score = total / (generated + 1) ** settings["alpha"]
                self.assertAlmostEqual(score, case["greedy"]["score"], delta=TOLERANCE)

    def test_t5_buckets(self):
        for model, golden in self.each():
            table = golden.get("t5_relative_buckets")
            if table is None:
                continue
            for stack, bidirectional in (("encoder", True), ("decoder", False)):
                ours = [t5_bucket(table["first_offset"] + i, bidirectional,
                                  model.position["buckets"], model.position["max_distance"])
                        for i in range(len(table[stack]))]
                self.assertEqual(ours, table[stack], stack)


if __name__ == "__main__":
    unittest.main()
