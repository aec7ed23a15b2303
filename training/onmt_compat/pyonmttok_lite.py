"""A pure-Python stand-in for the part of pyonmttok (1.37/1.38) that OpenNMT-py 3.5.1 uses when
it trains and translates with pre-tokenized text: ``build_vocab_from_tokens`` and ``Vocab``.

Why: the real pyonmttok wheel for CPython 3.12 is 17.7 MB (it bundles ICU), a third of what a
device call may carry, and OpenNMT-py only needs it for its vocabulary objects
(onmt/inputters/inputter.py, text_utils.py, translate/translator.py). The tokenizers,
learners and ``add_from_*`` are not provided: the OpenNMT-py transforms that need them
(onmt_tokenize, bpe learning) raise NotImplementedError here. rpt_onmt_compat installs this
module as ``pyonmttok`` only when the real one is not installed.

Behaviour copied from pyonmttok 1.38.1 (checked by training/onmt_compat/check_compat.py against
the real module):
- tokens keep insertion order, special tokens first (their counter is 2**64 - 1);
- resize(maximum_size, minimum_frequency) is a no-op for (0, 1), otherwise a stable sort by
  decreasing count, then tokens below minimum_frequency are dropped, then the list is cut to
  maximum_size (0: no limit); special tokens always sort first and are never dropped;
- default_id is the id of "<unk>" when present, else the vocabulary size, until assigned;
- lookup_token/__getitem__/__call__ map unknown tokens to default_id; lookup_index of an id out
  of range gives "<unk>".
"""

__version__ = "1.38.1+rpt-lite"

_SPECIAL_COUNT = 2**64 - 1
UNK = "<unk>"


class Vocab:
    def __init__(self, special_tokens=None):
        self._ids_to_tokens = []
        self._tokens_to_ids = {}
        self._counters = []
        self._default_id = None
        for token in special_tokens or ():
            self._add(token, _SPECIAL_COUNT)

    def _add(self, token, count):
        idx = self._tokens_to_ids.get(token)
        if idx is None:
            self._tokens_to_ids[token] = len(self._ids_to_tokens)
            self._ids_to_tokens.append(token)
            self._counters.append(count)
        elif self._counters[idx] != _SPECIAL_COUNT:
            self._counters[idx] += count

    # -- building ------------------------------------------------------------------------------
    def add_token(self, token, count=1):
        self._add(token, count)

    def add_from_text(self, *args, **kwargs):
        raise NotImplementedError("pyonmttok_lite: add_from_text needs the real pyonmttok")

    def add_from_file(self, *args, **kwargs):
        raise NotImplementedError("pyonmttok_lite: add_from_file needs the real pyonmttok")

    def resize(self, maximum_size=0, minimum_frequency=1):
        if maximum_size == 0 and minimum_frequency == 1:
            return
        order = sorted(range(len(self._ids_to_tokens)), key=lambda i: -self._counters[i])
        specials = [i for i in order if self._counters[i] == _SPECIAL_COUNT]
        others = [i for i in order
                  if self._counters[i] != _SPECIAL_COUNT and self._counters[i] >= minimum_frequency]
        if maximum_size > 0:
            others = others[:max(0, maximum_size - len(specials))]
        order = specials + others
        tokens = [self._ids_to_tokens[i] for i in order]
        counters = [self._counters[i] for i in order]
        self._ids_to_tokens = tokens
        self._counters = counters
        self._tokens_to_ids = {t: i for i, t in enumerate(tokens)}

    # -- lookups -------------------------------------------------------------------------------
    @property
    def default_id(self):
        if self._default_id is not None:
            return self._default_id
        return self._tokens_to_ids.get(UNK, len(self._ids_to_tokens))

    @default_id.setter
    def default_id(self, value):
        self._default_id = int(value)

    @property
    def ids_to_tokens(self):
        return list(self._ids_to_tokens)

    @property
    def tokens_to_ids(self):
        return dict(self._tokens_to_ids)

    @property
    def counters(self):
        return list(self._counters)

    def lookup_token(self, token):
        return self._tokens_to_ids.get(token, self.default_id)

    def lookup_index(self, index):
        if 0 <= index < len(self._ids_to_tokens):
            return self._ids_to_tokens[index]
        return UNK

    def __getitem__(self, token):
        return self.lookup_token(token)

    def __call__(self, tokens):
        get, default = self._tokens_to_ids.get, self.default_id
        return [get(t, default) for t in tokens]

    def __contains__(self, token):
        return token in self._tokens_to_ids

    def __len__(self):
        return len(self._ids_to_tokens)

    def __repr__(self):
        return f"<pyonmttok_lite.Vocab size={len(self)} default_id={self.default_id}>"


def build_vocab_from_tokens(tokens, maximum_size=0, minimum_frequency=1, special_tokens=None):
    vocab = Vocab(special_tokens)
    for token in tokens:
        vocab.add_token(token)
    vocab.resize(maximum_size=maximum_size, minimum_frequency=minimum_frequency)
    return vocab


def _missing(name):
    def fail(*args, **kwargs):
        raise NotImplementedError(
            f"pyonmttok_lite: pyonmttok.{name} needs the real pyonmttok (pip install pyonmttok)")
    return fail


Tokenizer = _missing("Tokenizer")
BPELearner = _missing("BPELearner")
SentencePieceLearner = _missing("SentencePieceLearner")
SentencePieceTokenizer = _missing("SentencePieceTokenizer")


def set_random_seed(seed):
    pass
