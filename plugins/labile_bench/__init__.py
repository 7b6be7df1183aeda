"""The benchmark bundle: LoCoMo and LongMemEval runs, their metrics, and ``labile demo``.

Registers the commands ``labile bench locomo | change | longmemeval | transfer |
compare | crash`` and ``labile demo``; it adds no pipeline component. The modules
are a library too:

* `labile_bench.locomo` / `labile_bench.longmemeval` load the datasets into
  immutable records, cleaning LoCoMo's ``evidence`` ids with counted rules;
* `labile_bench.metrics` holds the turn-level retrieval metrics (Recall@k,
  NDCG@k, Hit@k), the local QA metrics (token F1, BLEU-1, ROUGE-L) and a
  percentile helper;
* `labile_bench.change` / `labile_bench.change_run` / `labile_bench.change_metrics`
  are the benchmark of change (hand-written conversations in ``data/change``);
* `labile_bench.locomo_run` / `labile_bench.longmemeval_run` drive a
  `labile.Memory` over a dataset; `labile_bench.qa` and `labile_bench.judge`
  add answering and the LLM judge;
* `labile_bench.compare` / `labile_bench.transfer` read per-question logs;
* `labile_bench.crash` kills writers (`labile_bench.crash_child`) and checks the store;
* `labile_bench.demo` is the README's first command.

Importing this package is cheap: command functions import the runners
when they run.
"""

from __future__ import annotations

from labile.plugin import RegisterCommand, hookimpl


@hookimpl
def labile_register_commands(register: RegisterCommand) -> None:
    """``labile demo`` and the ``labile bench`` group's dataset commands."""
    from labile_bench import commands as c

    register("demo", run=c.run_demo_command, configure=c.demo_options,
             help="ingest a sample conversation and ask it questions")
    register("bench", help="benchmarks")
    register("bench locomo", run=c.run_locomo_command, configure=c.locomo_options,
             help="turn-level retrieval (and QA) metrics on LoCoMo")
    register("bench change", run=c.run_change_command, configure=c.change_options,
             help="does memory answer with what is true now? current / past / change / "
                  "control questions on hand-written conversations of change")
    register("bench longmemeval", run=c.run_longmemeval_command,
             configure=c.longmemeval_options,
             help="session-level retrieval (and QA) on LongMemEval_S")
    register("bench transfer", run=c.run_transfer_command, configure=c.transfer_options,
             help="how much feedback on earlier questions could help later ones "
                  "(from a locomo per-question log)")
    register("bench compare", run=c.run_compare_command, configure=c.compare_options,
             help="question-by-question comparison of two per-question logs "
                  "(e.g. an ablation against its preset)")
    register("bench crash", run=c.run_crash_command, configure=c.crash_options,
             help="kill -9 a writer at random points and inside commits, reopen, verify "
                  "(acknowledged batches kept, store consistent, re-add idempotent)")
    from labile_bench import graph

    register("bench graph", run=graph.run_graph_command, configure=graph.graph_options,
             help="build a preset's graph of LoCoMo conversations: counts per predicate, "
                  "ingest speed, and a sample of edges to judge")
