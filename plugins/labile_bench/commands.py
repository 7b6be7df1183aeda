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
from labile.plugin import DEFAULT_K, InputError, add_memory_options, echo, embed_queries


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
    p.add_argument("path", help="the LoCoMo JSON file")
    p.add_argument("--preset", nargs="+", default=["bm25", "hybrid"], help="presets to run")
    p.add_argument("--k", nargs="+", type=int, default=[5, 10], help="cut-offs of the metrics")
    p.add_argument("--limit-conversations", type=int,
                   help="only the first N conversations (default: all)")
    p.add_argument("--json", dest="json_out", help="write the summary here")
    p.add_argument("--log-dir", help="write per-question JSONL logs here")
    p.add_argument("--store-dir", help="keep the stores here (default: a temp dir)")
    p.add_argument("--reuse-stores", action="store_true",
                   help="with --store-dir: ingest each distinct construction once, keep a "
                        "snapshot, and start later runs from a copy of it")
    p.add_argument("--answer-model", help="litellm model that answers (enables QA metrics)")
    p.add_argument("--judge-model", help="litellm model that judges answers")
    p.add_argument("--no-progress", action="store_true", help="no progress bars on stderr")
    p.add_argument("--embedder", metavar="TYPE[:key=value,...]",
                   help="the embedder of every preset instead of its own, e.g. "
                        "'gguf:dims=256' (default: each preset's)")
    from labile_bench.retention_run import add_retain_option

    add_retain_option(p)
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
        if args.embedder:
            raise LabileError("--embedder goes with the offline run; with --llm each preset "
                              "keeps its own embedder")
        if args.retain:
            raise LabileError("--retain is for the offline run; --llm runs take no policy")
        return run_llm_locomo_command(args)
    if args.limit_sessions or args.limit_turns or args.limit_questions \
            or args.add_per != "turn":
        raise LabileError("--limit-sessions, --limit-turns, --limit-questions and --add-per go "
                          "with --llm (a real-model run); the offline run takes "
                          "--limit-conversations")
    from labile_bench.locomo_run import format_table, run_locomo
    from labile_bench.retention_run import parse_retain

    retention = parse_retain(args.retain)
    qa_factory = None
    if args.answer_model:
        from labile_bench.qa import make_qa_hook

        qa_factory = make_qa_hook(answer_model=args.answer_model,
                                  judge_model=args.judge_model or args.answer_model)
    overrides = None
    if args.embedder:
        from labile_bench.llm_spec import parse_llm_spec

        overrides = {"embedder": parse_llm_spec(args.embedder, flag="--embedder")}
    summary, cleaning = run_locomo(
        args.path, args.preset, ks=args.k, limit=args.limit_conversations,
        store_dir=args.store_dir, log_dir=args.log_dir, qa_hook_factory=qa_factory,
        config_overrides=overrides,
        show_progress=False if args.no_progress else None, reuse_stores=args.reuse_stores,
        retention=retention,
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
    from labile_io.locomo import load_locomo

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


# -- labile bench change -------------------------------------------------------------


def change_options(p: argparse.ArgumentParser) -> None:
    """The conversations (the shipped set by default), presets, cut-offs and outputs."""
    from labile_bench.change import DEFAULT_KS, DEFAULT_PRESETS

    p.add_argument("paths", nargs="*",
                   help="conversation files or folders (default: the shipped set)")
    p.add_argument("--preset", nargs="+", default=list(DEFAULT_PRESETS), help="presets to run")
    p.add_argument("--k", nargs="+", type=int, default=list(DEFAULT_KS),
                   help="cut-offs; Hit and R at the smallest, stale-first at the largest")
    p.add_argument("--json", dest="json_out", help="write the summary here")
    p.add_argument("--log-dir", help="write per-question JSONL logs here (change-PRESET.jsonl)")
    p.add_argument("--store-dir", help="keep the stores here (default: a temp dir)")
    p.add_argument("--no-progress", action="store_true", help="no progress bars on stderr")
    p.add_argument("--limit-conversations", type=int, default=None, metavar="N",
                   help="only the first N conversations (by id)")
    p.add_argument("--llm", metavar="TYPE[:key=value,...]",
                   help="the llm of every preset (a preset with LLM decisions, such as "
                        "realm-llm, then decides with it), e.g. 'llamacpp:n_threads=2'")
    from labile_bench.retention_run import add_retain_option

    add_retain_option(p)


def run_change_command(args: argparse.Namespace) -> int:
    """Run the presets over the change conversations and print the metric table."""
    from labile_bench.change import load_change
    from labile_bench.change_run import format_table, run_change

    if any(k < 1 for k in args.k):
        raise LabileError(f"--k takes positive cut-offs, got {' '.join(map(str, args.k))}")
    from labile_bench.retention_run import parse_retain

    retention = parse_retain(args.retain)
    if args.limit_conversations is not None and args.limit_conversations < 1:
        raise LabileError(f"--limit-conversations takes a positive count, got "
                          f"{args.limit_conversations}")
    try:
        conversations = load_change(args.paths or None)
    except (ValueError, OSError) as exc:
        raise LabileError(f"bench change: {exc}") from None
    if args.limit_conversations is not None:
        conversations = conversations[: args.limit_conversations]
    overrides = None
    if args.llm:
        from labile_bench.llm_spec import parse_llm_spec

        overrides = {"llm": parse_llm_spec(args.llm)}
    summary = run_change(
        args.preset, conversations,
        dataset=", ".join(args.paths) if args.paths else "labile_bench/data/change",
        ks=args.k, store_dir=args.store_dir, log_dir=args.log_dir, config_overrides=overrides,
        show_progress=False if args.no_progress else None, retention=retention)
    echo(f"change: {summary['conversations']} conversations, "
         f"{summary['questions']} questions ({summary['dataset']})")
    echo(format_table(summary))
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(summary, indent=2, default=str) + "\n",
                                       encoding="utf-8")
    return 0


# -- labile bench longmemeval ---------------------------------------------------------


def longmemeval_options(p: argparse.ArgumentParser) -> None:
    """The dataset path, presets, cut-offs and the optional QA models."""
    p.add_argument("path", help="the LongMemEval JSON file")
    p.add_argument("--preset", nargs="+", default=["hybrid"], help="presets to run")
    p.add_argument("--k", nargs="+", type=int, default=[5, 10], help="cut-offs of the metrics")
    p.add_argument("--limit", type=int, help="only the first N questions (default: all)")
    p.add_argument("--json", dest="json_out", help="write the summary here")
    p.add_argument("--answer-model", help="litellm model that answers (enables QA metrics)")
    p.add_argument("--judge-model", help="litellm model that judges answers")


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
    p.add_argument("--json", dest="json_out", help="write the summary here")


def run_transfer_command(args: argparse.Namespace) -> int:
    """Bound what feedback on earlier questions could carry to later ones."""
    from labile import Memory
    from labile_bench.transfer import analyse_transfer, format_transfer

    path = Path(args.log)
    rows = read_question_log(path)
    with Memory.open({"store": {"type": "memory"}, "embedder": {"type": args.embedder},
                      "llm": {"type": "none"}}) as memory:
        vectors = embed_queries(memory.embedder, [str(r["question"]) for r in rows])
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
    p.add_argument("--json", dest="json_out", help="write the comparison here")


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

    p.add_argument("--preset", nargs="+", default=["realm"], help="presets to run")
    p.add_argument("--op", nargs="+", default=["add"], choices=[*OPS, "all"],
                   help="what the killed writer does after each batch (default: add only)")
    p.add_argument("--trials", type=int, default=20, help="kills per preset and operation")
    p.add_argument("--s3", action="store_true",
                   help="on s3:// (moto's S3 server on loopback) instead of a local directory")
    p.add_argument("--seed", type=int, default=0, help="seed of the kill times")
    p.add_argument("--dir", help="where the stores go (default: a temporary directory)")
    p.add_argument("--embedder", default="hashing",
                   help="embedder of every preset (default hashing: the writers start fast); "
                        "'preset' keeps each preset's own")
    p.add_argument("--json", dest="json_out", help="write the rows here")
    p.add_argument("--no-progress", action="store_true", help="no progress bars on stderr")


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


# -- labile bench scale, workers (the lancedb store) ----------------------------------


def scale_options(p: argparse.ArgumentParser) -> None:
    """Options of ``labile bench scale``."""
    p.add_argument("--nodes", type=int, default=100_000, help="synthetic nodes to store")
    p.add_argument("--queries", type=int, default=200, help="searches to time")
    p.add_argument("--dim", type=int, default=384, help="vector length")
    p.add_argument("--json", dest="json_out", help="write the results here")
    p.add_argument("--candidates", help="comma-separated vector-search candidates to measure "
                   "(default: all; the exact scan always runs): exact, quantized, partitioned, "
                   "auto, ivf_rq, ivf_rq_np40, ivf_rq_p1024, ivf_rq_p1024_np32, hnsw_sq")
    p.add_argument("--in-ram", action="store_true",
                   help="measure only the in-memory candidates on a table filled directly, "
                        "without LanceDB (for 1M nodes, whose LanceDB ingest takes most of "
                        "an hour on a small machine)")


def run_scale_command(args: argparse.Namespace) -> int:
    """``labile bench scale``: the candidates' table on stderr, the summary as JSON on stdout."""
    import json
    import sys
    from pathlib import Path

    from labile_bench.lancedb_candidates import pick_candidates
    from labile_bench.lancedb_scale import run_scale_bench

    try:
        candidates = pick_candidates(args.candidates)
    except ValueError as exc:
        sys.stderr.write(f"labile bench scale: {exc}\n")
        return 2
    summary = run_scale_bench(args.nodes, dim=args.dim, n_queries=args.queries,
                              candidates=candidates, in_ram=args.in_ram)
    # The candidates' table for people on stderr; stdout stays one JSON document.
    sys.stderr.write(f"{summary['nodes']} nodes, {summary['queries']} queries\n"
                     f"{summary['table']}\n")
    text = json.dumps(summary, indent=2, default=str)
    echo(text)
    if args.json_out:
        Path(args.json_out).write_text(text + "\n", encoding="utf-8")
    return 0


# -- labile bench atc ---------------------------------------------------------------


def atc_options(p: argparse.ArgumentParser) -> None:
    """The LoCoMo file, which conversations, the preset, and the output."""
    p.add_argument("path", help="a LoCoMo JSON file (e.g. ../shared/data/locomo/locomo_dev.json)")
    p.add_argument("--conversation", "-c", action="append", default=None,
                   help="sample id to audit (repeatable; default: all)")
    p.add_argument("--preset", default="allmem", help="an All-Mem preset (default: allmem)")
    p.add_argument("--show", choices=("none", "executed", "proposals"), default="executed",
                   help="list the executed operations (default), every proposal, or none")
    p.add_argument("--text", action="store_true",
                   help="print the source turns' text under each operation (for judging)")
    p.add_argument("--json", dest="json_out", help="write the audits (ids only) here")


def run_atc(args: argparse.Namespace) -> int:
    """Audit ATC on each conversation (`labile_bench.allmem_audit`) and print what it did."""
    from pathlib import Path

    from labile import LabileError
    from labile_allmem.presets import PRESETS, preset_table
    from labile_bench.allmem_audit import audit_conversation, format_audit
    from labile_io.locomo import load_locomo

    if args.preset not in PRESETS:
        raise LabileError(f"unknown All-Mem preset {args.preset!r}; "
                          f"choose one of {', '.join(sorted(PRESETS))}")
    try:
        conversations, _ = load_locomo(args.path)
    except (OSError, ValueError) as exc:
        raise LabileError(f"cannot read LoCoMo file {args.path}: {exc}") from None
    wanted = set(args.conversation or [])
    unknown = wanted - {c.sample_id for c in conversations}
    if unknown:
        raise LabileError(f"no conversation {', '.join(sorted(unknown))} in {args.path}")
    audits = []
    for conv in conversations:
        if wanted and conv.sample_id not in wanted:
            continue
        table = preset_table(args.preset)
        table["store"] = {"type": "memory"}
        audit = audit_conversation(conv, table)
        audits.append(audit)
        turns = {t.id: t for s in conv.sessions for t in s.turns} if args.text else None
        echo(format_audit(audit, show=args.show, turns=turns))
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(
            [{**a.table_row(), "outcomes": [o.to_dict() for o in a.outcomes],
              "proposals": [o.to_dict() for o in a.proposals]} for a in audits], indent=1)
            + "\n", encoding="utf-8")
    return 0


# -- labile bench serve ---------------------------------------------------------------


def bench_serve_options(p: argparse.ArgumentParser) -> None:
    """Clients, duration and corpus size of the serve benchmark."""
    add_memory_options(p, env=False)  # it writes synthetic turns: never the user's store
    p.add_argument("--clients", type=int, default=4, help="concurrent MCP clients (default: 4)")
    p.add_argument("--seconds", type=float, default=5.0,
                   help="how long each phase runs (default: 5)")
    p.add_argument("--turns", type=int, default=300,
                   help="synthetic conversation turns to store first (default: 300)")
    p.add_argument("-k", type=int, default=DEFAULT_K, help="hits per search")
    p.add_argument("--json", dest="json_out", help="also write the summary here")


def run_bench_serve(args: argparse.Namespace) -> int:
    """Run `labile_bench.mcp_serve.run_bench` and print its summary as JSON."""
    from labile_mcp.commands import cli_level, log_to_stderr, require_mcp

    require_mcp()
    from labile_bench.mcp_serve import BenchSettings, run_bench

    if args.clients < 1 or args.seconds <= 0 or args.turns < 1:
        raise InputError("--clients and --turns must be >= 1 and --seconds > 0")
    log_to_stderr(cli_level(args))
    summary = run_bench(BenchSettings(config=args.config, preset=args.preset, path=args.path,
                                      clients=args.clients, seconds=args.seconds,
                                      turns=args.turns, k=args.k))
    text = json.dumps(summary, indent=2)
    echo(text)
    if args.json_out:
        Path(args.json_out).write_text(text + "\n", encoding="utf-8")
    return 0


# -- labile bench http ----------------------------------------------------------------


def bench_http_options(p: argparse.ArgumentParser) -> None:
    """Clients, duration and corpus size of the HTTP benchmark."""
    add_memory_options(p, env=False)  # it writes synthetic turns: never the user's store
    p.add_argument("--clients", type=int, nargs="+", default=[1, 8, 32],
                   help="concurrent clients of each phase (default: 1 8 32)")
    p.add_argument("--seconds", type=float, default=3.0,
                   help="how long each phase runs (default: 3)")
    p.add_argument("--turns", type=int, default=200,
                   help="synthetic turns stored before searching (default: 200)")
    p.add_argument("-k", type=int, default=5, help="hits per search (default: 5)")
    p.add_argument("--json", dest="json_out", help="also write the summary here")


def run_bench_http(args: argparse.Namespace) -> int:
    """Run `labile_bench.http_serve.run_bench` and print its summary as JSON."""
    from labile_http.commands import require_serve
    from labile_mcp.commands import cli_level, log_to_stderr

    require_serve()
    from labile_bench.http_serve import HttpBenchSettings, run_bench

    if min(args.clients) < 1 or args.seconds <= 0 or args.turns < 1 or args.seconds > 60:
        raise InputError("--clients and --turns must be >= 1 and --seconds in (0, 60]")
    log_to_stderr(cli_level(args))
    summary = run_bench(HttpBenchSettings(config=args.config, preset=args.preset,
                                          clients=tuple(args.clients), seconds=args.seconds,
                                          turns=args.turns, k=args.k))
    text = json.dumps(summary, indent=2)
    echo(text)
    if args.json_out:
        Path(args.json_out).write_text(text + "\n", encoding="utf-8")
    return 0


# -- labile bench cycles: a Memory per request ----------------------------------------


def cycles_options(p: argparse.ArgumentParser) -> None:
    """Options of ``labile bench cycles``."""
    p.add_argument("--cycles", type=int, default=1000, help="cycles to run (default: 1000)")
    p.add_argument("--every", type=int, default=100,
                   help="cycles between checkpoints (default: 100)")
    p.add_argument("--preset", default="realm", help="preset to open (default: realm)")
    p.add_argument("--embedder", default=None,
                   help="embedder type instead of the preset's (e.g. hashing, minilm)")
    p.add_argument("--no-session-pool", action="store_true",
                   help="load an ONNX session per open, as before the pool (the baseline)")


def run_cycles_command(args: argparse.Namespace) -> int:
    """``labile bench cycles``: threads and RSS per checkpoint of open/search/close cycles."""
    from labile_bench.cycles import WARM_UP, run_cycles

    if args.cycles < 1 or args.every < 1:
        raise InputError("--cycles and --every must be at least 1")
    config = {"embedder": {"type": args.embedder}} if args.embedder else None
    echo("cycle  os_threads  py_threads  rss_mb  ms/cycle")
    warm = last = None
    for last in run_cycles(args.cycles, config=config, preset=args.preset, every=args.every,
                           pool=not args.no_session_pool):
        if last.cycle == min(WARM_UP, args.cycles):
            warm = last
        echo(f"{last.cycle:5d}  {last.os_threads:10d}  {last.python_threads:10d}  "
             f"{last.rss_mb:6.1f}  {last.ms_per_cycle:8.1f}")
    if warm is not None and last is not None and last is not warm:
        echo(f"after the warm-up (cycle {warm.cycle}): threads "
             f"{last.os_threads - warm.os_threads:+d}, RSS {last.rss_mb - warm.rss_mb:+.1f} MB")
    return 0


# -- labile bench bigturn: one very long message ---------------------------------------


def bigturn_options(p: argparse.ArgumentParser) -> None:
    """``--preset``, ``--sizes``, ``--chunk``, ``--embedder``, ``--dir``, ``--json``."""
    p.add_argument("--preset", nargs="+", default=["realm"], help="presets (default: realm)")
    p.add_argument("--sizes", nargs="+", type=int, default=[50_000, 500_000, 5_000_000],
                   metavar="CHARS", help="message sizes in characters (default: 50,000 "
                   "500,000 5,000,000)")
    p.add_argument("--chunk", action="store_true",
                   help="cut the message into parts under the default limit instead of "
                        "raising the limit to fit it whole")
    p.add_argument("--embedder", default="hashing",
                   help="embedder of every preset (default hashing: construction alone is "
                        "timed); 'preset' keeps each preset's own")
    p.add_argument("--dir", help="where the stores go (default: a temporary directory)")
    p.add_argument("--json", dest="json_out", help="write the rows here")


def run_bigturn_command(args: argparse.Namespace) -> int:
    """Run `labile_bench.bigturn.run_bigturn` per preset; print a Markdown table."""
    from labile_bench.bigturn import run_bigturn

    if any(size < 1 for size in args.sizes):
        raise LabileError(f"--sizes must be positive, got {args.sizes}")
    embedder = None if args.embedder == "preset" else args.embedder
    rows: list[dict[str, Any]] = []
    for preset in args.preset:
        for row in run_bigturn(preset, args.sizes, chunk=args.chunk, embedder=embedder,
                               directory=Path(args.dir) if args.dir else None):
            if not rows:
                echo("| " + " | ".join(row) + " |")
                echo("|" + "---|" * len(row))
            rows.append(row)
            echo("| " + " | ".join(str(v) for v in row.values()) + " |")
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")
    return 0


# -- labile bench embed: embedder speed on LoCoMo turns ----------------------------------


def embed_options(p: argparse.ArgumentParser) -> None:
    """``--embedder``, ``--texts``, ``--singles``, ``--data``, ``--json``."""
    p.add_argument("--embedder", nargs="+", required=True, metavar="TYPE[:key=value,...]",
                   help="embedders in the order run, the first the baseline; each as "
                        "'bench locomo --embedder' takes it, e.g. minilm "
                        "gguf:threads=1,quant=q8_0")
    p.add_argument("--texts", type=int, default=200,
                   help="embed the first N LoCoMo turns (default: 200)")
    p.add_argument("--singles", type=int, default=20,
                   help="single-text calls timed per embedder (default: 20)")
    p.add_argument("--data", help="a LoCoMo JSON file (default: $LABILE_LOCOMO, else "
                                  "../shared/data/locomo/locomo_dev.json beside the "
                                  "repository, when there is one)")
    p.add_argument("--json", dest="json_out", help="write the summary here")


def default_locomo_file() -> Path:
    """Where the LoCoMo dev file is expected: ``$LABILE_LOCOMO``, else beside the source
    checkout this bundle runs from (`labile_io.locomo.default_locomo_path`)."""
    from labile_io.locomo import default_locomo_path

    return default_locomo_path(Path(__file__).resolve().parents[2])


def run_embed_command(args: argparse.Namespace) -> int:
    """Run `labile_bench.embed_speed.embed_summary`; print a Markdown table."""
    from labile_bench.embed_speed import embed_summary, format_embed_table
    from labile_bench.llm_spec import parse_llm_spec

    specs = [parse_llm_spec(spec, flag="--embedder") for spec in args.embedder]
    data = Path(args.data) if args.data else default_locomo_file()
    if not args.data and not data.is_file():
        raise InputError(f"no LoCoMo file at {data} (the default: $LABILE_LOCOMO, else "
                         "../shared/data/locomo/locomo_dev.json beside the repository): "
                         "give --data PATH")
    summary = embed_summary(data, specs, texts=args.texts, singles=args.singles,
                            labels=args.embedder)
    echo(f"LoCoMo {data}: {summary['texts']} turns, {summary['singles']} single calls; "
         f"load average {summary['load_avg_start']} -> {summary['load_avg_end']}")
    if "note" in summary:
        echo(f"note: {summary['note']}")
    echo(format_embed_table(summary["rows"]))
    if args.json_out:
        write_summary(summary, args.json_out)
    return 0
