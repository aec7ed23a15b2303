#!/usr/bin/env python3
"""Detokenize SentencePiece pieces (one sentence a line, pieces separated by spaces).

    spm_decode.py MODEL < pieces.txt > text.txt
"""
import sys

import sentencepiece as spm

sp = spm.SentencePieceProcessor(model_file=sys.argv[1])
for line in sys.stdin:
    sys.stdout.write(sp.decode_pieces(line.split()) + "\n")
