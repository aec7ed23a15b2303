#!/usr/bin/env python3
"""deploy/kubernetes/rpt-tenants.yaml and patches/tenants.yaml as Kubernetes would apply them:
the JSON patch applied to rpt.yaml's Deployment (python3-jsonpatch, the RFC 6902 library), the
Secret's and ConfigMap's files laid out as the kubelet mounts them (a timestamped folder behind
the `..data` symlink, each file a symlink through it), and rpt-server started with the patched
container's args, the mount paths pointed at those folders. Then: a call without a key is 401,
a tenant key from the Secret translates, its model limit holds, the admin key from the Secret
opens the admin API, the ConfigMap's glossary is served; the Secret and ConfigMap are updated the
kubelet's way (a new folder, `..data` swapped) and, with no signal, the revoked key is refused,
the new one admitted, the new admin key accepted and the glossary's new entry used.

    tenants_patch_test.py --binary RPT_SERVER_BINARY
"""
import argparse
import copy
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

import jsonpatch
import yaml

from deploy_run_test import REPO, environment, expand

sys.path.insert(0, os.path.join(REPO, "tests", "server"))
from rpt_server import ServerProcess, http_call  # noqa: E402

KUBE = os.path.join(REPO, "deploy", "kubernetes")
SERVER_BINARY = None


def documents(name):
    with open(os.path.join(KUBE, name)) as f:
        return [d for d in yaml.safe_load_all(f) if d]


def mount(folder, files, generation):
    """`files` ({name: text}) under `folder` as the kubelet writes a volume: ..<generation>/NAME,
    ..data -> ..<generation> (swapped by a rename), NAME -> ..data/NAME."""
    os.makedirs(folder, exist_ok=True)
    timestamped = os.path.join(folder, f"..{generation}")
    os.makedirs(timestamped)
    for name, text in files.items():
        with open(os.path.join(timestamped, name), "w") as f:
            f.write(text)
    link = os.path.join(folder, "..data_tmp")
    os.symlink(os.path.basename(timestamped), link)
    os.replace(link, os.path.join(folder, "..data"))
    for name in files:
        path = os.path.join(folder, name)
        if not os.path.islink(path):
            os.symlink(os.path.join("..data", name), path)


def translate(server, key, model="en-de", glossary=None):
    body = {"texts": ["Save the file."], "model": model}
    if glossary:
        body["glossary_name"] = glossary
    headers = {"Content-Type": "application/json"}
    if key:
        headers["Authorization"] = f"Bearer {key}"
    status, _, raw = http_call(server.http_port, "POST", "/v1/translate", json.dumps(body), headers)
    answer = json.loads(raw)
    return status, (answer["translations"][0]["hypotheses"][0]["text"] if status == 200 else answer)


def admin_status(server, key):
    return http_call(server.http_port, "GET", "/admin/models", None,
                     {"Authorization": f"Bearer {key}"})[0]


class TenantsPatchTest(unittest.TestCase):
    def test_the_patched_deployment_serves_the_secret_and_rereads_it(self):
        deployment = next(d for d in documents("rpt.yaml") if d["kind"] == "Deployment")
        patch = jsonpatch.JsonPatch(documents("patches/tenants.yaml")[0])
        patched = patch.apply(copy.deepcopy(deployment))
        validator = os.path.join(REPO, ".venv", "bin", "kubernetes-validate")
        if os.path.exists(validator):  # tools/setup.sh installs it (as deploy_test.sh uses it)
            with tempfile.NamedTemporaryFile("w", suffix=".yaml") as written:
                yaml.safe_dump(patched, written)
                written.flush()
                subprocess.run([validator, "--strict", "--kubernetes-version", "1.37.0",
                                written.name], check=True, capture_output=True)
        else:
            print("kubernetes-validate not installed: the patched Deployment is not validated")
        pod = patched["spec"]["template"]["spec"]
        container = pod["containers"][0]
        self.assertEqual(pod["securityContext"]["fsGroup"], pod["securityContext"]["runAsUser"])
        resources = {d["kind"]: d for d in documents("rpt-tenants.yaml")}
        secret, config_map = resources["Secret"], resources["ConfigMap"]
        volumes = {v["name"]: v for v in pod["volumes"]}
        self.assertEqual(volumes["keys"]["secret"]["secretName"], secret["metadata"]["name"])
        self.assertEqual(volumes["glossaries"]["configMap"]["name"],
                         config_map["metadata"]["name"])

        directory = tempfile.mkdtemp(prefix="rpt_tenants_test_")
        try:
            mounts = {m["mountPath"]: os.path.join(directory, m["name"])
                      for m in container["volumeMounts"]}
            keys_folder = mounts["/etc/rpt/keys"]
            glossary_folder = mounts["/etc/rpt/glossaries"]
            mount(keys_folder, secret["stringData"], 1)
            mount(glossary_folder, config_map["data"], 1)
            env = environment(container)
            args = []
            for argument in container["args"]:
                argument = expand(argument, env).replace("/opt/rpt/models",
                                                         os.path.join(REPO, "models"))
                for mount_path, folder in mounts.items():
                    argument = argument.replace(mount_path, folder)
                args.append(argument)
            tenants = yaml.safe_load(secret["stringData"]["api-keys.yaml"])["tenants"]
            shop = next(t for t in tenants if t["name"] == "shop")
            shop_key = shop["keys"][0]
            admin_key = secret["stringData"]["admin.key"].strip()
            server = ServerProcess(args)
            try:
                self.assertEqual(translate(server, None)[0], 401)
                status, text = translate(server, shop_key)
                self.assertEqual(status, 200, text)
                if "en-fr" not in shop.get("models", ["en-fr"]):
                    self.assertEqual(translate(server, shop_key, "en-fr")[0], 403)
                self.assertEqual(admin_status(server, admin_key), 200)
                self.assertIn("Akte", translate(server, shop_key, glossary="legal")[1])

                # The kubelet's update: new keys, a new glossary entry; no signal.
                rotated = dict(secret["stringData"])
                new_key, new_admin = "rotated-shop-key-0002", "rotated-admin-key-00002"
                rotated["api-keys.yaml"] = rotated["api-keys.yaml"].replace(shop_key, new_key)
                rotated["admin.key"] = new_admin + "\n"
                mount(keys_folder, rotated, 2)
                mount(glossary_folder, {"legal.tsv": "file\tUrkunde\n"}, 2)
                deadline = time.monotonic() + 30
                while translate(server, shop_key)[0] != 401:
                    self.assertLess(time.monotonic(), deadline, server.log())
                    time.sleep(0.2)
                self.assertEqual(translate(server, new_key)[0], 200)
                while admin_status(server, new_admin) != 200:
                    self.assertLess(time.monotonic(), deadline, server.log())
                    time.sleep(0.2)
                self.assertEqual(admin_status(server, admin_key), 403)
                self.assertIn("Urkunde", translate(server, new_key, glossary="legal")[1])
                log = server.log()
                for key in (shop_key, new_key, admin_key, new_admin):
                    self.assertNotIn(key, log)
            finally:
                server.close()
        finally:
            shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", required=True)
    known, rest = parser.parse_known_args()
    os.environ["RPT_SERVER_BINARY"] = known.binary
    unittest.main(argv=[sys.argv[0]] + rest)
