"""The exact translation cache of rpt-server (--cache-size) against the real binary on loopback,
with both bundled models (en-de float32, en-fr int8) on sentences of their test splits: a cached
answer equals a fresh decode bit for bit (texts, scores, tokens) across decoding options; calls
with some texts cached keep their order; TranslateStream and the JSON API are answered from it;
use_cache false and `Cache-Control: no-cache` bypass it; its size bound holds under a stream of
unique sentences (the heap behind it: translation_cache_unit_test.cc); hits, misses, evictions,
bytes and entries are on /metrics.

    RPT_SERVER_BINARY=build/server/rpt-server python3 tests/server/translation_cache_test.py
"""
import csv
import os
import unittest

from rpt_server import REPO, GrpcTranslator, ServerProcess

DATA = os.path.join(REPO, "..", "shared", "data")
MODELS = {"en-de": "float32", "en-fr": "int8"}
OPTIONS = [
    {"beam_size": 4, "n_best": 2, "return_scores": True, "return_tokens": True},
    {"beam_size": 1, "return_scores": True},
    {"beam_size": 4, "length_penalty": 0.6, "max_length": 12, "return_scores": True},
    {"beam_size": 2, "protect_spans": False, "return_tokens": True},
]


def test_sentences(pair, count):
    with open(os.path.join(DATA, f"ui.{pair}.test.tsv"), newline="") as f:
        rows = csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE)
        return [row[0] for _, row in zip(range(count), rows)]


@unittest.skipUnless(os.path.isdir(DATA), "no ../shared/data")
class TranslationCacheTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        arguments = []
        for model, compute_type in MODELS.items():
            arguments += ["--model", f"{model}={os.path.join(REPO, 'models', model)}",
                          "--model-compute-type", f"{model}={compute_type}"]
        cls.server = ServerProcess(arguments)
        cls.grpc = GrpcTranslator(cls.server.grpc_port)
        cls.texts = {model: test_sentences(model, 60) for model in MODELS}

    @classmethod
    def tearDownClass(cls):
        cls.grpc.close()
        cls.server.close()

    def metric(self, name, model):
        return self.server.metric(f'{name}{{model="{model}"}}') or 0.0

    def fresh(self, model, texts, **options):
        return self.grpc.translate(model, texts, use_cache=False, **options)

    def test_cached_answers_equal_fresh_decodes(self):
        for model in MODELS:
            texts = self.texts[model][:24]
            for options in OPTIONS:
                with self.subTest(model=model, options=options):
                    hits = self.metric("rpt_cache_hits_total", model)
                    fresh = self.fresh(model, texts, **options)
                    filled = self.grpc.translate(model, texts, **options)
                    cached = self.grpc.translate(model, texts, **options)
                    self.assertEqual(filled, fresh)
                    self.assertEqual(cached, fresh)
                    self.assertGreaterEqual(self.metric("rpt_cache_hits_total", model) - hits,
                                            len(texts))

    def test_partly_cached_calls_keep_their_order(self):
        model = "en-de"
        seen, unseen = self.texts[model][30:40], self.texts[model][40:50]
        self.grpc.translate(model, seen)
        mixed = [t for pair in zip(seen, unseen) for t in pair]
        hits = self.metric("rpt_cache_hits_total", model)
        self.assertEqual(self.grpc.translate(model, mixed), self.fresh(model, mixed))
        self.assertEqual(self.metric("rpt_cache_hits_total", model) - hits, len(seen))

    def test_streams_and_json_are_answered_from_the_cache(self):
        model = "en-fr"
        texts = self.texts[model][50:56]
        expected = self.grpc.translate(model, texts, beam_size=2)
        stream = self.grpc.channel.unary_stream(
            "/rpt.v1.Translator/TranslateStream",
            request_serializer=self.grpc.pb.TranslateRequest.SerializeToString,
            response_deserializer=self.grpc.pb.TranslateStreamResponse.FromString)
        request = self.grpc.pb.TranslateRequest(
            model=self.grpc.pb.ModelSelector(model=model), texts=[t.encode() for t in texts],
            options=self.grpc.pb.DecodingOptions(beam_size=2))
        hits = self.metric("rpt_cache_hits_total", model)
        parts = {part.index: part.translation for part in stream(request, timeout=60)}
        self.assertEqual([parts[i] for i in range(len(texts))], list(expected.translations))
        segments = sum(t.segments for t in expected.translations)  # a hit each
        self.assertEqual(self.metric("rpt_cache_hits_total", model) - hits, segments)
        status, _, body = self.server.translate(
            {"model": model, "texts": texts, "options": {"beam_size": 2}})
        self.assertEqual(status, 200, body)
        self.assertEqual([t["hypotheses"][0]["text"] for t in body["translations"]],
                         [t.hypotheses[0].text for t in expected.translations])
        self.assertEqual(self.metric("rpt_cache_hits_total", model) - hits, 2 * segments)

    def test_the_bypass_neither_reads_nor_counts(self):
        model = "en-de"
        texts = self.texts[model][56:60]
        self.grpc.translate(model, texts)
        before = (self.metric("rpt_cache_hits_total", model),
                  self.metric("rpt_cache_misses_total", model))
        self.fresh(model, texts)
        status, _, body = self.server.translate({"model": model, "texts": texts},
                                                headers={"Cache-Control": "no-cache"})
        self.assertEqual(status, 200, body)
        status, _, body = self.server.translate(
            {"model": model, "texts": texts, "options": {"use_cache": False}})
        self.assertEqual(status, 200, body)
        after = (self.metric("rpt_cache_hits_total", model),
                 self.metric("rpt_cache_misses_total", model))
        self.assertEqual(after, before)


class CacheBoundTest(unittest.TestCase):
    def test_the_size_bound_holds_under_unique_sentences(self):
        bound_mib = 0.05
        model = os.path.join(REPO, "models", "en-de")
        server = ServerProcess(["--model", f"en-de={model}", "--cache-size", str(bound_mib)])
        grpc = GrpcTranslator(server.grpc_port)
        try:
            sent = 0
            for batch in range(6):
                texts = [f"Item {batch * 50 + i} was saved." for i in range(50)]
                grpc.translate("en-de", texts, beam_size=1, max_length=12)
                sent += len(texts)
                cached = server.metric('rpt_cache_bytes{model="en-de"}')
                self.assertLessEqual(cached, bound_mib * (1 << 20))
            entries = server.metric('rpt_cache_entries{model="en-de"}')
            evictions = server.metric('rpt_cache_evictions_total{model="en-de"}')
            self.assertGreater(evictions, 0)
            self.assertEqual(entries + evictions, sent)
            self.assertEqual(server.metric('rpt_cache_misses_total{model="en-de"}'), sent)
        finally:
            grpc.close()
            server.close()

    def test_cache_size_zero_turns_it_off(self):
        model = os.path.join(REPO, "models", "en-de")
        server = ServerProcess(["--model", f"en-de={model}", "--cache-size", "0"])
        grpc = GrpcTranslator(server.grpc_port)
        try:
            grpc.translate("en-de", ["Save the file."])
            grpc.translate("en-de", ["Save the file."])
            self.assertIsNone(server.metric('rpt_cache_hits_total{model="en-de"}'))
        finally:
            grpc.close()
            server.close()


if __name__ == "__main__":
    unittest.main(verbosity=2)
