"""Text in, text out through a CTranslate2 translator, as rpt-translate does it, for an rpt model
directory: its SentencePiece models and the tokenize + translate_batch + detokenize round.

Imports no torch (ctranslate2's model specs, which tools/rpt_to_ctranslate2.py needs, import it
when present, and that inflates a benchmark worker's memory from ~30 to ~380 MiB): the CTranslate2
side of bench/compare_ctranslate2.py imports only this, ctranslate2 and sentencepiece.
"""

import json
import os


def tokenizers(model_dir):
    """(source, target) SentencePiece processors of an rpt model directory (needs sentencepiece)."""
    import sentencepiece

    with open(os.path.join(model_dir, "config.json"), encoding="utf-8") as f:
        config = json.load(f)
    return tuple(sentencepiece.SentencePieceProcessor(
        model_file=os.path.join(model_dir, config[key]))
        for key in ("source_tokenizer", "target_tokenizer"))


def translate(translator, spms, lines, **options):
    """Text in, text out, as rpt-translate: tokenize, translate_batch(**options), detokenize."""
    return translate_counted(translator, spms, lines, **options)[0]


def translate_counted(translator, spms, lines, **options):
    """translate()'s texts and the number of target pieces generated (the best hypotheses')."""
    source, target = spms
    results = translator.translate_batch([source.encode(line, out_type=str) for line in lines],
                                         **options)
    best = [result.hypotheses[0] for result in results]
    return [target.decode(tokens) for tokens in best], sum(len(tokens) for tokens in best)
