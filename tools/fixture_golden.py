"""Golden outputs of an OpenNMT-py checkpoint, computed by OpenNMT-py's own code.

Helper of tools/make_fixtures.py (run it with the Python that has OpenNMT-py 3.5 and
sentencepiece). The model is loaded with onmt.model_builder.load_test_model through
onmt.translate.translator.build_translator; greedy and beam outputs come from
Translator.translate_batch, encoder states and step log-probabilities from the translator's
own _run_encoder / _decode_and_generate (stepwise decoding with the KV cache, step=i), exactly
as Translator._translate_batch_with_strategy calls them. Each sentence is its own batch.

Floats are written as repr(float(x)) of the float32 value: exact, and read back bit for bit.
"""

import io

import sentencepiece
import torch

import onmt
from onmt.constants import DefaultTokens
from onmt.modules.multi_headed_attn import _relative_position_bucket
from onmt.opts import translate_opts
from onmt.translate.translator import build_translator
from onmt.utils.parse import ArgumentParser

DETAILED_CASES = 6  # cases that also get encoder_output and decoder_log_probs
LOG_PROB_STEPS = 8
MAX_LENGTH = 100
SEED = 1234
T5_OFFSETS = 200  # t5_relative_buckets covers key - query offsets -200..200

COMMON_SETTINGS = {
    "batch_size": 1,
    "max_length": MAX_LENGTH,
    "max_length_ratio": 0.0,  # 0 disables OpenNMT-py's src_len * ratio + 5 cap (default 1.25)
    "min_length": 0,
    "length_penalty": "avg",
    "alpha": 1.0,
    "coverage_penalty": "none",
    "beta": 0.0,
    "ratio": 0.0,
    "block_ngram_repeat": 0,
    "ban_unk_token": False,
    "random_sampling_temp": 1.0,
    "precision": "fp32",
}
GREEDY = {"beam_size": 1, "n_best": 1, "random_sampling_topk": 1}
BEAM4 = {"beam_size": 4, "n_best": 4, "random_sampling_topk": 0}


def _translator(checkpoint, search):
    settings = {**COMMON_SETTINGS, **search}
    args = ["-model", checkpoint, "-src", "unused", "-gpu", "-1", "-seed", str(SEED)]
    for key in ("batch_size", "max_length", "max_length_ratio", "min_length", "length_penalty",
                "alpha", "coverage_penalty", "beta", "ratio", "block_ngram_repeat",
                "random_sampling_temp", "precision", "beam_size", "n_best",
                "random_sampling_topk"):
        args += [f"-{key}", str(settings[key])]
    parser = ArgumentParser()
    translate_opts(parser)
    opt = parser.parse_args(args)
    ArgumentParser.validate_translate_opts(opt)
    return build_translator(opt, report_score=False, out_file=io.StringIO())


def _floats(tensor):
    return [float(x) for x in tensor.float().reshape(-1).tolist()]


def _batch(source_ids):
    src = torch.tensor(source_ids, dtype=torch.long).view(1, -1, 1)  # [batch, src_len, feats]
    return {"src": src, "srclen": torch.tensor([len(source_ids)])}


def _hypothesis(ids, score, vocab, eos):
    ids = [int(i) for i in ids]
    ended = bool(ids) and ids[-1] == eos
    ids = ids[:-1] if ended else ids
    return {"ids": ids, "pieces": [vocab.ids_to_tokens[i] for i in ids],
            "score": float(score), "eos": ended}


def _search(translator, source_ids):
    result = translator.translate_batch(_batch(source_ids), attn_debug=False)
    eos = translator._tgt_eos_idx
    return [_hypothesis(ids, score, translator._tgt_vocab, eos)
            for ids, score in zip(result["predictions"][0], result["scores"][0])]


def _encoder_and_step_log_probs(translator, source_ids, steps):
    """Final encoder output and the greedy path's per-step log-probabilities."""
    batch = _batch(source_ids)
    with torch.no_grad():
        src, enc_final_hs, enc_out, src_len = translator._run_encoder(batch)
        translator.model.decoder.init_state(src, enc_out, enc_final_hs)
        token, inputs, log_probs = translator._tgt_start_with, [], []
        for step in range(steps):
            inputs.append(token)
            decoder_in = torch.tensor([[[token]]], dtype=torch.long)  # [batch, 1, feats]
            step_log_probs, _ = translator._decode_and_generate(
                decoder_in, enc_out, batch, src_len=src_len, step=step)
            log_probs.append(step_log_probs[0])
            token = int(step_log_probs[0].argmax())
            if token == translator._tgt_eos_idx:
                break
    log_probs = torch.stack(log_probs)
    return {
        "encoder_output_shape": list(enc_out[0].shape),
        "encoder_output": _floats(enc_out[0]),
        "decoder_input_ids": inputs,
        "decoder_log_probs_shape": list(log_probs.shape),
        "decoder_log_probs": _floats(log_probs),
    }


def _check_consistent(case, eos):
    """The stepwise argmax path must be the start of the greedy translation."""
    steps, vocab = case["decoder_log_probs_shape"]
    values = case["decoder_log_probs"]
    argmax = [max(range(vocab), key=lambda j: values[i * vocab + j]) for i in range(steps)]
    greedy = case["greedy"]["ids"] + ([eos] if case["greedy"]["eos"] else [])
    if greedy[:steps] != argmax:
        raise RuntimeError(f"stepwise argmax path disagrees with greedy search: {case['text']!r}")


def record(checkpoint, src_spm, texts):
    """The golden dict for `texts` (see tests/fixtures/README.md for the schema)."""
    torch.set_num_threads(1)
    greedy = _translator(checkpoint, GREEDY)
    beam = _translator(checkpoint, BEAM4)
    vocabs = greedy.vocabs
    tokenizer = sentencepiece.SentencePieceProcessor(model_file=src_spm)
    cases = []
    for index, text in enumerate(texts):
        pieces = tokenizer.encode(text, out_type=str)
        ids = vocabs["src"](pieces)
        case = {"text": text, "source_pieces": pieces, "source_ids": [int(i) for i in ids]}
        if index < DETAILED_CASES:
            case.update(_encoder_and_step_log_probs(greedy, case["source_ids"], LOG_PROB_STEPS))
        case["greedy"] = _search(greedy, case["source_ids"])[0]
        case["beam4"] = _search(beam, case["source_ids"])
        if index < DETAILED_CASES:
            _check_consistent(case, greedy._tgt_eos_idx)
        cases.append(case)
    golden = {
        "onmt_version": onmt.__version__,
        "torch_version": torch.__version__.split("+")[0],
        "settings": {**COMMON_SETTINGS, "greedy": GREEDY, "beam4": BEAM4,
                     "seed": SEED, "decoder_log_probs_max_steps": LOG_PROB_STEPS,
                     "detailed_cases": DETAILED_CASES},
        "vocab": _vocab_facts(vocabs),
    }
    buckets = _t5_buckets(greedy.model)
    if buckets:
        golden["t5_relative_buckets"] = buckets
    golden["cases"] = cases
    return golden


def _t5_buckets(model):
    """Bucket of each offset j - i, from OpenNMT-py's own bucketing function."""
    attention = model.encoder.transformer[0].self_attn
    if attention.relative_positions_buckets <= 0:
        return None
    offsets = torch.arange(-T5_OFFSETS, T5_OFFSETS + 1)
    tables = {stack: _relative_position_bucket(
                  offsets, bidirectional=bidirectional,
                  num_buckets=attention.relative_positions_buckets,
                  max_distance=attention.max_relative_positions).tolist()
              for stack, bidirectional in (("encoder", True), ("decoder", False))}
    return {"first_offset": -T5_OFFSETS, **tables}


def _vocab_facts(vocabs):
    tgt = vocabs["tgt"]
    return {
        "source_size": len(vocabs["src"]),
        "target_size": len(tgt),
        "pad_id": tgt.lookup_token(DefaultTokens.PAD),
        "unk_id": tgt.lookup_token(DefaultTokens.UNK),
        "bos_id": tgt.lookup_token(DefaultTokens.BOS),
        "eos_id": tgt.lookup_token(DefaultTokens.EOS),
        "decoder_start_id": tgt.lookup_token(vocabs["decoder_start_token"]),
        "source_pad_id": vocabs["src"].lookup_token(DefaultTokens.PAD),
        "source_unk_id": vocabs["src"].lookup_token(DefaultTokens.UNK),
    }
