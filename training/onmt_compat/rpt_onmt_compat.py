"""Run OpenNMT-py 3.5.1 under a newer PyTorch (2.6 ... 2.11) and without its heavy optional
dependencies, without editing site-packages.

    python -m rpt_onmt_compat train|translate|average_models [onmt arguments ...]

(with this folder and an OpenNMT-py install on PYTHONPATH) installs the fixes below, then runs
onmt.bin.<name>.main() exactly as the onmt_train / onmt_translate / onmt_average_models
console scripts do. training/gpu_session.sh makes wrapper scripts of that name, so train.sh,
evaluate.sh and average.sh run unchanged (VENV=<the wrapper folder>).

What it fixes, and why (OpenNMT-py 3.5.1 declares torch>=2.1,<2.3):

1. torch.load's weights_only default became True in torch 2.6. OpenNMT-py's checkpoints pickle
   an argparse.Namespace (opt) and optimizer state, and its loaders (model_saver.load_checkpoint
   for train_from and onmt_translate, average_models) call torch.load without weights_only, so
   they fail with "Weights only load failed ... argparse.Namespace". PyTorch's own switch
   TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD=1 makes every torch.load that does not pass weights_only
   use weights_only=False again (torch/serialization.py reads it at each call). It is set here
   (unless already set) before torch is imported. Safe only because the checkpoints are our own.

2. Missing packages. onmt/transforms/__init__.py imports every transform module at import time,
   so `import onmt` needs spacy and ahocorasick (terminology, inlinetags), fasttext (clean) and
   rapidfuzz (fuzzymatch) although our recipe uses only filtertoolong; onmt/inputters needs
   pyonmttok for its Vocab objects. A finder appended to the END of sys.meta_path supplies,
   only for those names and only when the real package is not installed:
     pyonmttok -> pyonmttok_lite (pure-Python Vocab/build_vocab_from_tokens, this folder);
     spacy, ahocorasick, fasttext, rapidfuzz -> inert modules whose attributes raise
     NotImplementedError when used (so a config that really uses those transforms fails
     loudly instead of silently).
   RPT_ONMT_COMPAT_FORCE=1 puts the finder FIRST instead, to test the stand-ins in an
   environment that has the real packages (check_compat.py does that).

3. scaled_dot_product_attention with both attn_mask and is_causal=True. For the sinusoidal and
   k0 variants on a GPU (max_relative_positions 0, self_attn_type scaled-dot-flash), the decoder
   self-attention calls SDPA, inside torch.backends.cuda.sdp_kernel(enable_flash=False), with
   its pad+future mask AND is_causal=True. The math backend refuses that in torch 2.2 and 2.11
   alike ("Explicit attn_mask should not be set when is_causal=True"; seen here with that onmt
   branch forced onto the CPU, check_compat.py check 4 with RPT_ONMT_COMPAT_SDPA=0), so on a
   GPU it works only while the memory-efficient or cuDNN kernel takes the call, which we cannot
   see from here. onmt's mask already contains the future mask, so the patch folds the causal
   triangle into the mask (mask & tril, exact) and drops is_causal: the same attention on every
   backend. Disable with RPT_ONMT_COMPAT_SDPA=0.

Deprecated APIs that still work in torch 2.11 and are left alone (FutureWarnings silenced):
torch.cuda.amp.autocast / GradScaler / custom_fwd / custom_bwd, torch.backends.cuda.sdp_kernel.
"""
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
import types
import warnings

STUBBED = ("spacy", "ahocorasick", "fasttext", "rapidfuzz")
REPLACED = {"pyonmttok": "pyonmttok_lite"}
ENTRY_POINTS = {
    "train": "onmt.bin.train",
    "translate": "onmt.bin.translate",
    "average_models": "onmt.bin.average_models",
    "build_vocab": "onmt.bin.build_vocab",
}


class _Unavailable:
    """Stands for any attribute of a stubbed package; fails when actually used."""

    def __init__(self, name):
        self._name = name

    def _fail(self, *args, **kwargs):
        raise NotImplementedError(
            f"{self._name} is not installed (rpt_onmt_compat stub): the OpenNMT-py transform "
            f"that needs it is not usable in this environment")

    __call__ = _fail

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        return _Unavailable(f"{self._name}.{attr}")


class _StubModule(types.ModuleType):
    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        return _Unavailable(f"{self.__name__}.{attr}")


class _StubLoader(importlib.abc.Loader):
    def create_module(self, spec):
        module = _StubModule(spec.name)
        module.__path__ = []  # a package, so `from rapidfuzz import fuzz` and submodules work
        module.__rpt_stub__ = True
        return module

    def exec_module(self, module):
        pass


class _AliasLoader(importlib.abc.Loader):
    def __init__(self, target):
        self._target = target

    def create_module(self, spec):
        return importlib.import_module(self._target)

    def exec_module(self, module):
        pass


class FallbackFinder(importlib.abc.MetaPathFinder):
    """Serves REPLACED and STUBBED names; where it sits in sys.meta_path decides whether real
    packages win (appended: normal use) or the stand-ins do (inserted first: tests)."""

    def find_spec(self, fullname, path=None, target=None):
        top = fullname.split(".")[0]
        if fullname in REPLACED:
            return importlib.machinery.ModuleSpec(fullname, _AliasLoader(REPLACED[fullname]))
        if top in STUBBED:
            # A submodule is stubbed only under a stubbed package: a real package's missing
            # optional submodule must still raise ImportError.
            if fullname == top or getattr(sys.modules.get(top), "__rpt_stub__", False):
                return importlib.machinery.ModuleSpec(fullname, _StubLoader(), is_package=True)
        return None


def _patch_sdpa():
    if os.environ.get("RPT_ONMT_COMPAT_SDPA", "1") == "0":
        return
    import torch
    import onmt.modules.multi_headed_attn as mha

    original = mha.scaled_dot_product_attention

    def sdpa(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, *args, **kw):
        if is_causal and attn_mask is not None:
            # attn_mask is a keep-mask (True = attend); torch's is_causal is the top-left
            # lower triangle over (L, S).
            ql, kl = query.size(-2), key.size(-2)
            causal = torch.ones(ql, kl, dtype=torch.bool, device=query.device).tril()
            if attn_mask.dtype == torch.bool:
                attn_mask = attn_mask & causal
            else:
                attn_mask = attn_mask.masked_fill(~causal, float("-inf"))
            is_causal = False
        return original(query, key, value, attn_mask, dropout_p, is_causal, *args, **kw)

    sdpa.__wrapped__ = original
    mha.scaled_dot_product_attention = sdpa


def install():
    """Idempotent. Must run before torch is imported for the weights_only default to apply to
    every loader (torch reads the variable at each torch.load call, so later also works)."""
    if getattr(install, "done", False):
        return
    install.done = True
    if os.environ.get("TORCH_FORCE_WEIGHTS_ONLY_LOAD", "0") not in ("1", "y", "yes", "true"):
        os.environ.setdefault("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1")
    here = os.path.dirname(os.path.abspath(__file__))
    if here not in sys.path:
        sys.path.append(here)
    force = os.environ.get("RPT_ONMT_COMPAT_FORCE", "0") == "1"
    finder = FallbackFinder()
    if force:
        for name in list(sys.modules):
            if name.split(".")[0] in STUBBED or name in REPLACED:
                del sys.modules[name]
        sys.meta_path.insert(0, finder)
    else:
        sys.meta_path.append(finder)
    for pattern in (r".*torch\.cuda\.amp\.", r".*torch\.backends\.cuda\.sdp_kernel",
                    r".*TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD"):
        warnings.filterwarnings("ignore", message=pattern)


def report():
    """One line: what the process runs with (printed by gpu_session.sh's preflight)."""
    import torch
    import onmt  # noqa: F401  (imports every transform: proves the stubs work)
    import pyonmttok
    parts = [f"python {sys.version.split()[0]}", f"torch {torch.__version__}",
             f"cuda {torch.cuda.is_available()}"]
    if torch.cuda.is_available():
        parts.append(torch.cuda.get_device_name(0))
    try:
        from importlib.metadata import version
        parts.append(f"OpenNMT-py {version('OpenNMT-py')}")
    except Exception:  # noqa: BLE001
        pass
    parts.append(f"pyonmttok {getattr(pyonmttok, '__version__', '?')}")
    stubs = [n for n in STUBBED if getattr(importlib.import_module(n), "__rpt_stub__", False)]
    parts.append("stubbed: " + (", ".join(stubs) or "none"))
    parts.append("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD=" +
                 os.environ.get("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", ""))
    return "; ".join(parts)


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] not in ENTRY_POINTS and argv[0] != "report":
        sys.exit(f"usage: python -m rpt_onmt_compat {{{'|'.join(ENTRY_POINTS)}|report}} [args]")
    install()
    name = argv.pop(0)
    if name == "report":
        print(report())
        return 0
    module = importlib.import_module(ENTRY_POINTS[name])
    if name in ("train", "translate"):  # the others build no attention layers
        _patch_sdpa()
    sys.argv = [f"onmt_{name}"] + argv
    return module.main()


if __name__ == "__main__":
    sys.exit(main())
