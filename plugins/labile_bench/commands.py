"""The bundle's command-line commands: ``labile demo`` and ``labile bench …``.

Each command is a pair: ``<name>_options(parser)`` adds its arguments and
``run_<name>_command(args)`` runs it, importing the runner it needs only
then, so that starting the command line stays cheap.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from labile import LabileError
from labile.plugin import echo


def write_summary(summary: dict[str, Any], json_out: str | None) -> None:
    """Print ``summary`` as JSON, and write it to ``json_out`` too when given."""
    text = json.dumps(summary, indent=2, default=str)
    echo(text)
    if json_out:
        Path(json_out).write_text(text + "\n", encoding="utf-8")


def read_question_log(path: Path) -> list[dict[str, Any]]:
    """The rows of a per-question log, or a `LabileError` saying what is wrong."""
    try:
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
                if line.strip()]
    except (OSError, json.JSONDecodeError) as exc:
        raise LabileError(f"cannot read the per-question log {path}: {exc}") from None
    if not rows or any(not isinstance(r, dict) or "question" not in r for r in rows):
        raise LabileError(f"{path} is not a per-question log of 'labile bench locomo --log-dir' "
                          "(every line needs question, sample_id, gold, retrieved_turns)")
    return rows


# -- labile demo ------------------------------------------------------------------


def demo_options(p: argparse.ArgumentParser) -> None:
    """``--preset``."""
    p.add_argument("--preset", help="preset (default: the best installed)")


def run_demo_command(args: argparse.Namespace) -> int:
    """Run `labile_bench.demo.run_demo`."""
    from labile_bench.demo import run_demo

    run_demo(preset=args.preset, write=echo)
    return 0


# -- labile bench locomo ------------------------------------------------------------


def locomo_options(p: argparse.ArgumentParser) -> None:
    """The dataset path, presets, cut-offs, logs and the optional QA models."""
    p.add_argument("path")
    p.add_argument("--preset", nargs="+", default=["bm25", "hybrid"])
    p.add_argument("--k", nargs="+", type=int, default=[5, 10])
    p.add_argument("--limit-conversations", type=int)
    p.add_argument("--json", dest="json_out", help="write the summary here")
    p.add_argument("--log-dir", help="write per-question JSONL logs here")
    p.add_argument("--store-dir", help="keep the stores here (default: a temp dir)")
    p.add_argument("--reuse-stores", action="store_true",
                   help="with --store-dir: ingest each distinct construction once, keep a "
                        "snapshot, and start later runs from a copy of it")
    p.add_argument("--answer-model", help="litellm model that answers (enables QA metrics)")
    p.add_argument("--judge-model", help="litellm model that judges answers")
    p.add_argument("--no-progress", action="store_true")
    real = p.add_argument_group(
        "real-model runs", "with --llm, every preset runs with that model on a subset, "
        "and the report counts its calls, tokens, reply outcomes and decisions")
    real.add_argument("--llm", metavar="TYPE[:key=value,...]",
                      help="the llm of every preset, e.g. 'llamacpp:n_threads=1' or "
                           "'litellm:model=openai/NAME,api_base=http://127.0.0.1:8080/v1'")
    real.add_argument("--limit-sessions", type=int, help="first N sessions of each conversation")
    real.add_argument("--limit-turns", type=int, help="first N turns of each kept session")
    real.add_argument("--limit-questions", type=int, help="at most N questions per conversation")
    real.add_argument("--no-qa", action="store_true",
                      help="retrieval only: no answering and judging by the model")
    real.add_argument("--add-per", choices=("turn", "session"), default="turn",
                      help="one Memory.add per turn (each turn's cost is its own; the "
                           "default) or per session (REALM's LLM extractor then asks "
                           "several turns in one call); figures stay per turn")


def run_locomo_command(args: argparse.Namespace) -> int:
    """Run the presets over LoCoMo and print the metric table (and QA figures)."""
    if args.llm:
        return run_llm_locomo_command(args)
    if args.limit_sessions or args.limit_turns or args.limit_questions \
            or args.add_per != "turn":
        raise LabileError("--limit-sessions, --limit-turns, --limit-questions and --add-per go "
                          "with --llm (a real-model run); the offline run takes "
                          "--limit-conversations")
    from labile_bench.locomo_run import format_table, run_locomo

    qa_factory = None
    if args.answer_model:
        from labile_bench.qa import make_qa_hook

        qa_factory = make_qa_hook(answer_model=args.answer_model,
                                  judge_model=args.judge_model or args.answer_model)
    summary, cleaning = run_locomo(
        args.path, args.preset, ks=args.k, limit=args.limit_conversations,
        store_dir=args.store_dir, log_dir=args.log_dir, qa_hook_factory=qa_factory,
        show_progress=False if args.no_progress else None, reuse_stores=args.reuse_stores,
    )
    counts = ", ".join(f"{k} {v}" for k, v in cleaning.counts().items())
    echo(f"LoCoMo {args.path}: {summary['conversations']} conversations; evidence: {counts}")
    echo(format_table(summary, args.k))
    for name, preset in summary["presets"].items():
        if "qa" in preset:
            echo(f"\nQA ({name}): " + json.dumps(preset["qa"], default=str))
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(summary, indent=2, default=str) + "\n",
                                       encoding="utf-8")
    return 0


def run_llm_locomo_command(args: argparse.Namespace) -> int:
    """``bench locomo --llm …``: presets with a real model on a subset (`labile_bench.llm_run`)."""
    from labile_bench.llm_report import format_llm_table
    from labile_bench.llm_run import run_llm_locomo, subset
    from labile_bench.llm_spec import parse_llm_spec
    from labile_bench.locomo import load_locomo

    llm = parse_llm_spec(args.llm)
    conversations, _ = load_locomo(args.path, limit=args.limit_conversations)
    cut = subset(conversations, sessions=args.limit_sessions, turns=args.limit_turns,
                 questions=args.limit_questions)

    def save(summary: dict[str, Any]) -> None:  # after every preset: a stopped run keeps them
        if args.json_out:
            Path(args.json_out).write_text(json.dumps(summary, indent=2, default=str) + "\n",
                                           encoding="utf-8")

    summary = run_llm_locomo(
        cut, args.preset, llm, dataset=str(args.path), ks=args.k, qa=not args.no_qa,
        store_dir=Path(args.store_dir) if args.store_dir else None,
        log_dir=Path(args.log_dir) if args.log_dir else None, add_per=args.add_per,
        show_progress=False if args.no_progress else None, on_preset_done=save)
    echo(f"LoCoMo {args.path}: {', '.join(summary['conversations'])}; "
         f"{summary['sessions']} sessions, {summary['questions']} questions; llm {args.llm}")
    echo(format_llm_table(summary))
    return 0


# -- labile bench longmemeval ---------------------------------------------------------


def longmemeval_options(p: argparse.ArgumentParser) -> None:
    """The dataset path, presets, cut-offs and the optional QA models."""
    p.add_argument("path")
    p.add_argument("--preset", nargs="+", default=["hybrid"])
    p.add_argument("--k", nargs="+", type=int, default=[5, 10])
    p.add_argument("--limit", type=int)
    p.add_argument("--json", dest="json_out")
    p.add_argument("--answer-model")
    p.add_argument("--judge-model")


def run_longmemeval_command(args: argparse.Namespace) -> int:
    """Run the presets over LongMemEval_S and print the JSON summary."""
    from labile_bench.longmemeval_run import run_longmemeval

    summary = run_longmemeval(args.path, presets=args.preset, k_list=args.k,
                              limit=args.limit, answer_model=args.answer_model,
                              judge_model=args.judge_model)
    write_summary(summary, args.json_out)
    return 0


# -- labile bench transfer ------------------------------------------------------------


def transfer_options(p: argparse.ArgumentParser) -> None:
    """The log to read and the embedder of its questions."""
    p.add_argument("log", help="a locomo-PRESET.jsonl written by 'bench locomo --log-dir'")
    p.add_argument("--embedder", default="minilm", help="embeds the questions (default: minilm)")
    p.add_argument("--json", dest="json_out")


def run_transfer_command(args: argparse.Namespace) -> int:
    """Bound what feedback on earlier questions could carry to later ones."""
    from labile import Memory
    from labile_bench.transfer import analyse_transfer, format_transfer

    path = Path(args.log)
    rows = read_question_log(path)
    with Memory.open({"store": {"type": "memory"}, "embedder": {"type": args.embedder},
                      "llm": {"type": "none"}}) as memory:
        vectors = memory.embedder.embed([str(r["question"]) for r in rows])
    try:
        report = analyse_transfer(rows, vectors)
    except ValueError as exc:
        raise LabileError(f"{path}: {exc}") from None
    echo(format_transfer(report))
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(report.to_dict(), indent=2) + "\n",
                                       encoding="utf-8")
    return 0


# -- labile bench compare -------------------------------------------------------------


def compare_options(p: argparse.ArgumentParser) -> None:
    """The two logs, the metric whose moves are listed, and the outputs."""
    p.add_argument("log_a", help="the reference log (A)")
    p.add_argument("log_b", help="the log compared against it (B)")
    p.add_argument("--metric", default="recall@5", help="metric whose moved questions are listed")
    p.add_argument("--list", action="store_true", help="list the questions that moved")
    p.add_argument("--json", dest="json_out")


def run_compare_command(args: argparse.Namespace) -> int:
    """Compare two per-question logs metric by metric, and count changed ranked lists."""
    from labile_bench.compare import compare_logs, format_comparison

    path_a, path_b = Path(args.log_a), Path(args.log_b)
    try:
        cmp = compare_logs(read_question_log(path_a), read_question_log(path_b),
                           focus=args.metric)
    except ValueError as exc:
        raise LabileError(f"{path_a} vs {path_b}: {exc}") from None
    echo(format_comparison(cmp, path_a.name, path_b.name))
    if args.list:
        for q in cmp.moved:
            echo(f"{q['sample_id']} #{q['index']} (cat {q['category']}) "
                 f"{args.metric} {q[args.metric][0]:.2f} -> {q[args.metric][1]:.2f}: "
                 f"{q['question']}")
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(cmp.to_dict(), indent=2) + "\n",
                                       encoding="utf-8")
    return 0


# -- labile bench crash ---------------------------------------------------------------


def crash_options(p: argparse.ArgumentParser) -> None:
    """``--preset``, ``--op``, ``--trials``, ``--s3``, ``--seed``, ``--dir``, ``--embedder``,
    ``--json``."""
    from labile_bench.crash_child import OPS

    p.add_argument("--preset", nargs="+", default=["realm"])
    p.add_argument("--op", nargs="+", default=["add"], choices=[*OPS, "all"],
                   help="what the killed writer does after each batch (default: add only)")
    p.add_argument("--trials", type=int, default=20, help="kills per preset and operation")
    p.add_argument("--s3", action="store_true",
                   help="on s3:// (moto's S3 server on loopback) instead of a local directory")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--dir", help="where the stores go (default: a temporary directory)")
    p.add_argument("--embedder", default="hashing",
                   help="embedder of every preset (default hashing: the writers start fast); "
                        "'preset' keeps each preset's own")
    p.add_argument("--json", dest="json_out", help="write the rows here")
    p.add_argument("--no-progress", action="store_true")


def run_crash_command(args: argparse.Namespace) -> int:
    """Run `labile_bench.crash.run_crash` per preset and operation; print a Markdown table
    (exit 1 on any failure)."""
    import contextlib
    import sys
    import tempfile

    from labile_bench.crash import moto_s3, run_crash
    from labile_bench.crash_child import OPS

    if args.trials < 1:
        raise LabileError(f"--trials must be at least 1, got {args.trials}")
    embedder = None if args.embedder == "preset" else args.embedder
    ops = list(OPS) if "all" in args.op else list(dict.fromkeys(args.op))
    rows: list[dict[str, Any]] = []
    failures = 0
    with tempfile.TemporaryDirectory(prefix="labile-crash-") as scratch:
        root = Path(args.dir or scratch)
        for preset in args.preset:
            for op in ops:
                with (moto_s3(f"{preset}-{op}") if args.s3
                      else contextlib.nullcontext()) as store:
                    tally = run_crash(preset, args.trials, directory=root, seed=args.seed,
                                      embedder=embedder, op=op, store=store,
                                      show_progress=False if args.no_progress else None)
                row = tally.row()
                if not rows:  # the table grows a row per run, as each finishes
                    echo("| " + " | ".join(row) + " |")
                    echo("|" + "---|" * len(row))
                rows.append(row)
                echo("| " + " | ".join(str(v) for v in row.values()) + " |")
                sys.stdout.flush()  # a long run shows each row as it finishes
                failures += tally.failures
                for problem in tally.problems:
                    echo(f"{preset} {op}: FAILED: {problem}")
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")
    return 1 if failures else 0
