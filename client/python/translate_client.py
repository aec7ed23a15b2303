#!/usr/bin/env python3
"""Example Python client for rpt-server (proto/translate.proto), using Debian's python3-grpcio.

    python3 client/python/translate_client.py --server localhost:50051 --model en-de \
        "Hello world." "Save the file."
    python3 client/python/translate_client.py --lb round_robin \
        --server dns:///rpt-pods.default.svc.cluster.local:50051 --model en-de "Save the file."

--lb round_robin spreads calls over every address the target resolves to (each replica behind a
headless Kubernetes Service, docs/kubernetes.md); gRPC's default, pick_first, uses one.

The message classes are generated at start-up into a temporary directory, with grpc_tools when
it is installed (pip install grpcio-tools) or else with the protoc compiler (Debian
protobuf-compiler). Only message classes are needed: the RPCs are called by their method paths,
so no grpc_python_plugin is required. To generate them once by hand instead:

    protoc -I . --python_out=OUT proto/translate.proto     # run in the repository root
    PYTHONPATH=OUT python3 -c "from proto import translate_pb2"
"""
import argparse
import importlib
import json
import os
import shutil
import subprocess
import sys
import tempfile

import grpc

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def load_messages():
    """Returns the translate_pb2 module, generated from proto/translate.proto."""
    out = tempfile.mkdtemp(prefix="rpt_proto_")
    args = ["-I", REPO, f"--python_out={out}", os.path.join(REPO, "proto", "translate.proto")]
    try:
        from grpc_tools import protoc  # type: ignore

        if protoc.main(["protoc"] + args) != 0:
            raise RuntimeError("grpc_tools.protoc failed")
    except ImportError:
        if shutil.which("protoc") is None:
            sys.exit("need grpc_tools (pip install grpcio-tools) or protoc (apt install "
                     "protobuf-compiler) to generate the message classes")
        subprocess.run(["protoc"] + args, check=True)
    sys.path.insert(0, out)
    return importlib.import_module("proto.translate_pb2")


# Code points the server counts as blank (common/text_hygiene.h, the definition rpt-client
# shares): the server returns a text made only of them unchanged, with nothing to translate, so
# it is not sent and prints as a blank line.
BLANK = ({chr(c) for c in range(0x21)} | {chr(c) for c in range(0x7F, 0xA1)}
         | {chr(c) for c in range(0x2000, 0x200E)}
         | set("\u1680\u180e\u2028\u2029\u202f\u205f\u2060\u3000\ufeff"))


def is_blank(text):
    return all(ch in BLANK for ch in text)


def read_glossary(path):
    """(source, target) pairs of a glossary TSV, the format rpt-server reads (docs/glossaries.md);
    exits naming the line of a malformed one."""
    entries = []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            line = line.rstrip("\r\n")
            if not line or line.startswith("#") or is_blank(line):
                continue
            fields = line.split("\t")
            if len(fields) != 2:
                sys.exit(f"rpt: {path}:{number}: expected \"source<TAB>target\"")
            entries.append((fields[0], fields[1]))
    return entries


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("texts", nargs="*", help="texts to translate (default: stdin lines)")
    parser.add_argument("--server", default="localhost:50051",
                        help="gRPC target: HOST:PORT, dns:///NAME:PORT, ...")
    parser.add_argument("--lb", choices=["pick_first", "round_robin"], default="pick_first",
                        help="load balancing over the target's addresses")
    parser.add_argument("--model", default="")
    parser.add_argument("--source", default="", help="source language, when not naming a model")
    parser.add_argument("--target", default="", help="target language, when not naming a model")
    parser.add_argument("--beam-size", type=int, default=0, help="0: the server's default")
    parser.add_argument("--n-best", type=int, default=0)
    parser.add_argument("--timeout", type=float, default=30.0, help="deadline in seconds")
    parser.add_argument("--stream", action="store_true", help="use TranslateStream")
    parser.add_argument("--list-models", action="store_true")
    parser.add_argument("--glossary", help="glossary TSV (source<TAB>target a line, # comments) "
                        "sent with the call")
    parser.add_argument("--glossary-name", default="",
                        help="a glossary the server loaded (rpt-server --glossary NAME=FILE)")
    args = parser.parse_args()

    pb = load_messages()
    service_config = {"loadBalancingConfig": [{args.lb: {}}]}
    channel = grpc.insecure_channel(
        args.server, options=[("grpc.service_config", json.dumps(service_config))])

    def method(name, response_type, streaming=False):
        make = channel.unary_stream if streaming else channel.unary_unary
        return make(f"/rpt.v1.Translator/{name}",
                    request_serializer=lambda message: message.SerializeToString(),
                    response_deserializer=response_type.FromString)

    try:
        if args.list_models:
            reply = method("ListModels", pb.ListModelsResponse)(pb.ListModelsRequest(),
                                                                timeout=args.timeout)
            for m in reply.models:
                # Every language pair; an older server names the one pair only.
                pairs = ",".join(f"{p.source_language}->{p.target_language}"
                                 for p in m.language_pairs)
                pairs = pairs or f"{m.source_language}->{m.target_language}"
                print(f"{m.name}\t{pairs}\t{m.device}\t{m.dtype}\t{m.position_type}")
            return 0
        glossary = read_glossary(args.glossary) if args.glossary else []
        texts = args.texts or [line.rstrip("\n") for line in sys.stdin]
        sent = [t for t in texts if not is_blank(t)]
        if not sent:  # nothing to translate: one blank line per input
            print("\n" * (len(texts) - 1))
            return 0
        request = pb.TranslateRequest(
            model=pb.ModelSelector(model=args.model, source_language=args.source,
                                   target_language=args.target),
            texts=[t.encode("utf-8") for t in sent],
            options=pb.DecodingOptions(beam_size=args.beam_size, n_best=args.n_best,
                                       return_scores=True),
            glossary=[pb.GlossaryEntry(source=s, target=t) for s, t in glossary],
            glossary_name=args.glossary_name)
        if args.stream:
            # `index` counts the texts sent; blank ones were not.
            for message in method("TranslateStream", pb.TranslateStreamResponse, True)(
                    request, timeout=args.timeout):
                best = message.translation.hypotheses[0]
                print(f"{message.index}\t{best.score:.4f}\t{best.text}")
        else:
            reply = method("Translate", pb.TranslateResponse)(request, timeout=args.timeout)
            translations = iter(reply.translations)
            lines_per_text = len(reply.translations[0].hypotheses)
            for text in texts:  # blank inputs keep their place, as blank lines
                if is_blank(text):
                    print("\n" * (lines_per_text - 1))
                    continue
                for hypothesis in next(translations).hypotheses:
                    print(f"{hypothesis.score:.4f}\t{hypothesis.text}")
    except grpc.RpcError as error:
        print(f"rpt: {error.code().name}: {error.details()}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
