"""What the quality evaluations in bench/ share: running a line tool over sentences, corpus
scores, and the command line of an evaluation that writes JSON or plots JSON files."""
import argparse
import subprocess
import sys
import time


def run_lines(cmd, lines):
    """`cmd` over `lines` (one per input line): its output lines, stderr and wall seconds."""
    start = time.perf_counter()
    out = subprocess.run(cmd, input="\n".join(lines) + "\n", capture_output=True, text=True,
                         check=True)
    return out.stdout.splitlines(), out.stderr, time.perf_counter() - start


def corpus_scores(hyp, ref):
    """BLEU and chrF (sacrebleu), rounded to 2 places; None for no sentences."""
    if not hyp:
        return {"bleu": None, "chrf": None}
    import sacrebleu
    return {"bleu": round(sacrebleu.corpus_bleu(hyp, [ref]).score, 2),
            "chrf": round(sacrebleu.corpus_chrf(hyp, [ref]).score, 2)}


def evaluation_arguments(description, threads, show):
    """The options every evaluation takes: the model and its test split, rpt-translate and its
    threads, how many failures the JSON keeps, --json, and --plot over JSON inputs."""
    ap = argparse.ArgumentParser(description=description,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model")
    ap.add_argument("--tsv")
    ap.add_argument("--threads", type=int, default=threads)
    ap.add_argument("--rpt-translate", default="build/cli/rpt-translate")
    ap.add_argument("--show", type=int, default=show, help="failures kept in the JSON")
    ap.add_argument("--json")
    ap.add_argument("--plot", help="write a PNG from the JSON files given as inputs")
    ap.add_argument("inputs", nargs="*")
    return ap


def evaluate_or_plot(ap, evaluate, plot, required=("model", "tsv")):
    """Parses the command line; plots when --plot is given, else evaluates (the `required`
    options present)."""
    args = ap.parse_args()
    if args.plot:
        plot(args)
    elif all(getattr(args, name) for name in required):
        evaluate(args)
    else:
        sys.exit("give " + ", ".join("--" + name for name in required) +
                 ", or --plot with JSON inputs")
