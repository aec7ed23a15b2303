"""A served model under other declared languages, for the tests of language detection: the repo
has models from English only (en-de, en-fr), and choosing among several sources into one target
needs two models into it. A temporary directory links to a real model's files and declares other
languages in its config.json; what it translates is irrelevant there, where it is routed is tested.
"""
import json
import os
import shutil
import tempfile


class RelabelledModel:
    """`model_dir` declared as `source` -> `target` (rpt-server has no flag for it); removed on
    close()."""

    def __init__(self, model_dir, source, target):
        self.directory = tempfile.mkdtemp(prefix=f"rpt_{source}-{target}_")
        for name in os.listdir(model_dir):
            if name != "config.json":
                os.symlink(os.path.abspath(os.path.join(model_dir, name)),
                           os.path.join(self.directory, name))
        with open(os.path.join(model_dir, "config.json")) as f:
            config = json.load(f)
        config.update(name=f"{source}-{target}", source_language=source, target_language=target)
        with open(os.path.join(self.directory, "config.json"), "w") as f:
            json.dump(config, f, indent=2)

    def close(self):
        shutil.rmtree(self.directory, ignore_errors=True)
