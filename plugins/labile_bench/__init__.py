"""The benchmark bundle: LoCoMo and LongMemEval runs, their metrics, and ``labile demo``.

Registers the commands ``labile bench locomo | change | longmemeval | transfer |
compare | crash`` and ``labile demo``; it adds no pipeline component. The modules
are a library too:

* `labile_io.locomo` / `labile_io.longmemeval` load the datasets into
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
* `labile_bench.embed_speed` times embedders on LoCoMo turns, each against the first;
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
    from labile_bench import lancedb_workers_cli

    register("bench scale", run=c.run_scale_command, configure=c.scale_options,
             help="synthetic scale benchmark of the lancedb store")
    register("bench workers", run=lancedb_workers_cli.run, configure=lancedb_workers_cli.configure,
             help="1, 2 and 4 worker processes on one store: local directory and object store")
    register("bench atc", run=c.run_atc, configure=c.atc_options,
             help="what offline ATC proposes and executes on LoCoMo conversations")
    register("bench bigturn", run=c.run_bigturn_command, configure=c.bigturn_options,
             help="time to add one very long message (50 kB, 500 kB, 5 MB by default), "
                  "whole or cut into parts; linear growth shows as 1.0 per character")
    register("bench embed", run=c.run_embed_command, configure=c.embed_options,
             help="embedder speed on LoCoMo turns: texts/s batched, single-text latency, RAM, "
                  "agreement with the first embedder")
    register("bench cycles", run=c.run_cycles_command, configure=c.cycles_options,
             help="open, search and close a Memory many times: threads and RSS per checkpoint")
    register("bench http", run=c.run_bench_http, configure=c.bench_http_options,
             help="requests/s and p50/p95 of search and add over the HTTP API at 1, 8 and 32 "
                  "clients, against in-process calls")
    register("bench serve", run=c.run_bench_serve, configure=c.bench_serve_options,
             help="requests/s and search latency of the MCP server over loopback HTTP, "
                  "against in-process Memory.search")
    from labile_bench import entity_cli, graph

    register("bench entities", run=entity_cli.run_entities_command,
             configure=entity_cli.entity_options,
             help="entity type precision / recall (labile_text, optionally spaCy) and merge "
                  "precision on hand-judged samples")

    register("bench graph", run=graph.run_graph_command, configure=graph.graph_options,
             help="build a preset's graph of LoCoMo conversations: counts per predicate, "
                  "ingest speed, and a sample of edges to judge")
