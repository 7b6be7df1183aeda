"""``labile add | list | get | forget | purge | export | import``: data in, data out, data gone.

Results go to stdout, progress bars and logs to stderr. Reading commands
(``list``, ``get``, ``export``, ``forget``, ``purge``) refuse a path that
holds no store; ``add`` and ``import`` create one.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from datetime import UTC, datetime, tzinfo
from pathlib import Path
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import attrs

from labile.plugin import (
    InputError,
    NotFoundError,
    Observation,
    add_limit_options,
    add_memory_options,
    echo,
    open_memory,
    require_namespace,
)

if TYPE_CHECKING:
    from labile_io.formats import Skipped

__all__ = ["register_commands"]


def register_commands(register: Any) -> None:
    """Register every command of this module."""
    register("add", run=run_add, configure=add_options,
             help="add a chat log (labile JSONL, chat JSONL, OpenAI messages, LoCoMo, "
                  "LongMemEval)")
    register("list", run=run_list, configure=list_options,
             help="list a namespace's observations (or nodes), one page at a time")
    register("get", run=run_get, configure=get_options, help="show observations (or nodes) by id")
    register("forget", run=run_forget, configure=forget_options,
             help="forget observations and everything derived from them")
    register("purge", run=run_purge, configure=purge_options, help="remove a whole namespace")
    register("export", run=run_export, configure=export_options,
             help="write a namespace as versioned JSON lines, or its graph (GraphML, DOT, "
                  "JSON Graph)")
    register("namespaces", run=run_namespaces, configure=namespaces_options,
             help="list the namespaces that hold data, with their counts")
    register("import", run=run_import, configure=import_options,
             help="load an export into an empty namespace")


# -- options --------------------------------------------------------------------------


def _namespace(p: argparse.ArgumentParser, required: bool = True) -> None:
    add_memory_options(p)
    p.add_argument("--namespace", "-n", required=required,
                   help="the namespace (a user, an agent, a conversation)" + (
                       "" if required else "; required unless the file names its own"))


def add_options(p: argparse.ArgumentParser) -> None:
    """``FILE``, ``-n``, ``--format``, ``--timestamp``, ``--tz``, ``--batch-size``,
    ``--skip-roles``, ``--speaker``, ``--require-timestamps``."""
    from labile_io.formats import DEFAULT_SKIP_ROLES, FORMATS

    _namespace(p, required=False)
    p.add_argument("file", help="the chat log")
    p.add_argument("--format", choices=FORMATS, help="default: detected from the file")
    p.add_argument("--skip-roles", default=",".join(DEFAULT_SKIP_ROLES), metavar="ROLES",
                   help="comma-separated roles whose messages are not stored (a system "
                        "prompt, raw tool output); each is reported on stderr. '' keeps all")
    p.add_argument("--speaker", action="append", default=[], metavar="ROLE=NAME",
                   help="who a role is: 'user=Elena' stores Elena's turns under her name "
                        "(the role is kept in their metadata) and wins over a name learned "
                        "from the log or from earlier adds; 'user=user' undoes a learned "
                        "name; repeatable (default: none: roles are named by the log's "
                        "'name' field, by a self-introduction such as \"I'm Elena\", or "
                        "by the namespace's earlier adds)")
    p.add_argument("--timestamp",
                   help="ISO time of every message when the file gives none (default: now)")
    p.add_argument("--require-timestamps", action="store_true",
                   help="refuse a file where some messages have a time and some do not "
                        "(default: those take the time of the message before, with a "
                        "warning)")
    p.add_argument("--tz", default="UTC",
                   help="zone of timestamps written without one (IANA name; default UTC)")
    p.add_argument("--batch-size", type=int, default=64,
                   help="observations per batch (fewer when the batch would pass "
                        "--max-batch-chars); each batch is kept once acknowledged")
    add_limit_options(p)
    p.add_argument("--chunk", action="store_true",
                   help="cut a message longer than --max-text-chars into parts with ids "
                        "ID#1, ID#2, ... whose metadata 'chunk_of' names the original and "
                        "the character range (default: refuse it)")


def list_options(p: argparse.ArgumentParser) -> None:
    """``-n``, ``--nodes``, ``--offset``, ``--limit``, ``--json``."""
    _namespace(p)
    p.add_argument("--nodes", action="store_true", help="list nodes instead of observations")
    p.add_argument("--offset", type=int, default=0, help="skip this many first")
    p.add_argument("--limit", type=int, default=20, help="show at most this many")
    p.add_argument("--json", action="store_true", help="one JSON object per line")


def get_options(p: argparse.ArgumentParser) -> None:
    """``-n``, ``IDS``, ``--nodes``, ``--json``."""
    _namespace(p)
    p.add_argument("ids", nargs="+", help="observation ids (node ids with --nodes)")
    p.add_argument("--nodes", action="store_true", help="the ids are node ids")
    p.add_argument("--edges", action="store_true",
                   help="with --nodes: also show each node's edges (in and out)")
    p.add_argument("--json", action="store_true", help="one JSON object per line")


def namespaces_options(p: argparse.ArgumentParser) -> None:
    """``--json``."""
    add_memory_options(p)
    p.add_argument("--json", action="store_true", help="one JSON object")


def _erase(p: argparse.ArgumentParser) -> None:
    p.add_argument("--erase", action="store_true",
                   help="also drop the store's earlier data versions at once (otherwise "
                        "they keep removed data until compaction drops them)")


def forget_options(p: argparse.ArgumentParser) -> None:
    """``-n``, ``IDS``, ``--erase``."""
    _namespace(p)
    p.add_argument("ids", nargs="+", help="observation ids")
    _erase(p)


def purge_options(p: argparse.ArgumentParser) -> None:
    """``-n``, ``--yes``, ``--erase``."""
    _namespace(p)
    p.add_argument("--yes", action="store_true", help="confirm: the namespace is removed")
    _erase(p)


def export_options(p: argparse.ArgumentParser) -> None:
    """``-n``, ``--output``, ``--format``."""
    from labile_io.graphs import GRAPH_FORMATS

    _namespace(p)
    p.add_argument("--output", "-o", help="file to write (default: stdout)")
    p.add_argument("--format", choices=("jsonl", *GRAPH_FORMATS), default="jsonl",
                   help="jsonl: the versioned export that `labile import` reads (default); "
                        "graphml, dot, json-graph: the graph with kinds, predicates, weights, "
                        "validity and sources as attributes")


def import_options(p: argparse.ArgumentParser) -> None:
    """``FILE``, ``-n``."""
    _namespace(p, required=False)
    p.add_argument("file", help="a file written by `labile export`")
    add_limit_options(p)


# -- add ------------------------------------------------------------------------------


def _zone(name: str) -> tzinfo:
    try:
        return UTC if name.upper() == "UTC" else ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise InputError(f"--tz {name!r}: not a known time zone (use an IANA name such as "
                         "'Europe/Paris', or UTC)") from None


def _default_time(text: str | None, zone: tzinfo) -> datetime:
    if text is None:
        return datetime.now(UTC)
    try:
        stamp = datetime.fromisoformat(text)
    except ValueError:
        raise InputError(f"--timestamp {text!r}: not an ISO 8601 time "
                         "(e.g. 2024-05-01T09:30)") from None
    return stamp if stamp.tzinfo is not None else stamp.replace(tzinfo=zone)


def run_add(args: argparse.Namespace) -> int:
    """Read the file, then add it batch by batch with a progress bar and a summary."""
    from tqdm import tqdm

    from labile_io.formats import ReadOptions, read_file
    from labile_io.speakers import name_with_stored, parse_speakers

    if args.batch_size < 1:
        raise InputError(f"--batch-size must be >= 1, got {args.batch_size}")
    zone = _zone(args.tz)
    options = ReadOptions(default_time=_default_time(args.timestamp, zone), tz=zone,
                          skip_roles=[r for r in args.skip_roles.split(",") if r.strip()],
                          require_timestamps=args.require_timestamps,
                          speakers=parse_speakers(args.speaker))
    conversations = read_file(Path(args.file), args.format, options)
    for conv in conversations:
        if conv.namespace is None and not args.namespace:
            raise InputError("this format has no namespace of its own: pass --namespace/-n")
    skipped = [s for c in conversations for s in c.skipped]
    if skipped:
        sys.stderr.write(f"warning: {args.file}: {_skipped_summary(skipped)}\n")
    filled = [where for c in conversations for where in c.filled_times]
    if filled:
        sys.stderr.write(f"warning: {args.file}: {_filled_summary(filled)}\n")
    total = sum(len(c.observations) for c in conversations)
    if total == 0:
        raise InputError(f"{args.file}: no message to add"
                         + (" (every record was skipped, see above)" if skipped else ""))
    totals = {"added": 0, "already stored": 0, "nodes written": 0, "edges written": 0,
              "batches": 0}
    start = time.perf_counter()
    with open_memory(args, create=True) as memory, \
            tqdm(total=total, unit="obs", file=sys.stderr, disable=None) as bar:
        try:
            merged = args.namespace and len(conversations) > 1
            for conv in conversations:
                namespace = str(args.namespace or conv.namespace)
                observations = conv.observations
                if merged:  # several conversations in one namespace: keep their ids apart
                    observations = tuple(attrs.evolve(o, id=f"{conv.namespace}:{o.id}")
                                         for o in observations)
                observations = tuple(name_with_stored(memory, namespace, observations,
                                                      options.speakers))
                if args.chunk:
                    observations = tuple(memory.limits.fit(observations))
                for batch in memory.limits.batches(observations, args.batch_size):
                    report = memory.add(batch, namespace=namespace)
                    totals["added"] += len(report.added)
                    totals["already stored"] += len(report.skipped_existing)
                    totals["nodes written"] += report.nodes_written
                    totals["edges written"] += report.edges_written
                    totals["batches"] += 1
                    bar.update(len(batch))
        except KeyboardInterrupt:
            _summary(totals, start, conversations)
            sys.stderr.write("interrupted: the batches above are stored; run the same command "
                             "again to add the rest\n")
            return 130
    _summary(totals, start, conversations)
    if totals["added"] == 0:
        echo(f"nothing new: every message of {args.file} is already stored in this namespace "
             "(ids come from the messages, not the file's name)")
    return 0


def _filled_summary(filled: Sequence[str]) -> str:
    """``"3 messages without a time took the time of the one before (lines 4, 7, 9)"``."""
    unit, numbers = filled[0].split()[0], [w.split()[-1] for w in filled]
    shown = ", ".join(numbers[:20]) + (f" and {len(numbers) - 20} more"
                                       if len(numbers) > 20 else "")
    noun = "message" if len(filled) == 1 else "messages"
    return (f"{len(filled)} {noun} without a time took the time of the one before, or the "
            f"first one's ({unit}{'s' if len(numbers) > 1 else ''} {shown}); "
            "--require-timestamps refuses such a file")


def _skipped_summary(skipped: Sequence[Skipped]) -> str:
    """``"skipped 3 records, not stored: role 'system' (line 1); no text (lines 4, 7)"``:
    one line for any number of records (past 20 per reason, the rest are counted)."""
    by_reason: dict[str, list[str]] = {}
    for s in skipped:
        by_reason.setdefault(s.reason, []).append(s.where)
    parts = []
    for reason, places in by_reason.items():
        unit, numbers = places[0].split()[0], [p.split()[-1] for p in places]
        shown = ", ".join(numbers[:20]) + (f" and {len(numbers) - 20} more"
                                           if len(numbers) > 20 else "")
        parts.append(f"{reason} ({unit}{'s' if len(numbers) > 1 else ''} {shown})")
    noun = "record" if len(skipped) == 1 else "records"
    return f"skipped {len(skipped)} {noun}, not stored: {'; '.join(parts)}"


def _summary(totals: dict[str, int], start: float, conversations: Sequence[Any]) -> None:
    # "written": what these batches wrote; `labile stats` counts what the store
    # holds now, which differs once later turns replace or merge earlier nodes.
    counts = ", ".join(f"{k} {v}" for k, v in totals.items())
    echo(f"{counts}; {len(conversations)} conversation(s) in "
         f"{time.perf_counter() - start:.1f} s")


# -- read back ----------------------------------------------------------------------------


def _observation_row(obs: Observation) -> dict[str, Any]:
    return {"id": obs.id, "timestamp": obs.timestamp.isoformat(), "speaker": obs.speaker,
            "session": obs.session, "text": obs.text, "metadata": obs.metadata}


def _node_row(node: Any) -> dict[str, Any]:
    return {"id": node.id, "kind": node.kind, "visible": node.visible,
            "time": node.time_start.isoformat() if node.time_start else None,
            "content": node.content, "description": node.description,
            "sources": list(node.sources)}


def _show(rows: Sequence[dict[str, Any]], as_json: bool) -> None:
    for row in rows:
        if as_json:
            echo(json.dumps(row, ensure_ascii=False, default=str))
        elif "kind" in row:
            echo(f"{row['id']}  [{row['kind']}{'' if row['visible'] else ', archived'}] "
                 f"{row['description'] or row['content']}")
            echo(f"      sources: {', '.join(row['sources']) or '-'}")
        else:
            who = f"{row['speaker']}: " if row["speaker"] else ""
            echo(f"{row['id']}  {row['timestamp']}  {who}{row['text']}")


def run_list(args: argparse.Namespace) -> int:
    """Print one page, then where the next one starts."""
    with open_memory(args) as memory:
        require_namespace(memory, args.namespace)
        if args.nodes:
            page: Any = memory.list_nodes(args.namespace, offset=args.offset, limit=args.limit)
            rows = [_node_row(n) for n in page.items]
        else:
            page = memory.list(args.namespace, offset=args.offset, limit=args.limit)
            rows = [_observation_row(o) for o in page.items]
    _show(rows, args.json)
    if not args.json:
        more = f"; next: --offset {page.next_offset}" if page.next_offset is not None else ""
        echo(f"({len(rows)} of {page.total} from offset {page.offset}{more})")
    return 0


def run_get(args: argparse.Namespace) -> int:
    """Print the records found; exit 1 if any id is unknown."""
    if args.edges and not args.nodes:
        raise InputError("--edges shows the edges of nodes: pass --nodes too")
    edges: list[dict[str, Any]] = []
    with open_memory(args) as memory:
        require_namespace(memory, args.namespace)
        if args.nodes:
            rows = [_node_row(n) for n in memory.get_nodes(args.namespace, args.ids)]
            if args.edges and rows:
                from labile_io.graphs import edge_dict

                edges = [edge_dict(e) for e in memory.store.edges_of(
                    args.namespace, [r["id"] for r in rows], direction="both")]
        else:
            rows = [_observation_row(o) for o in memory.get(args.namespace, args.ids)]
    _show(rows, args.json)
    _show_edges(edges, args.json)
    missing = sorted(set(args.ids) - {r["id"] for r in rows})
    if missing:
        sys.stderr.write(f"not found in {args.namespace!r}: {', '.join(missing)}\n")
        return 1
    return 0


def _show_edges(edges: Sequence[dict[str, Any]], as_json: bool) -> None:
    for e in edges:
        if as_json:
            echo(json.dumps({"type": "edge", **e}, ensure_ascii=False, default=str))
        else:
            edits = f", {len(e['history'])} edit(s)" if e["history"] else ""
            echo(f"edge  {e['src']} -[{e['predicate']} {e['weight']:.2f}]-> {e['dst']}  "
                 f"({e['origin']}{edits}{'' if e['active'] else ', inactive'})")


def run_namespaces(args: argparse.Namespace) -> int:
    """Print every namespace that holds data with its counts."""
    with open_memory(args) as memory:
        spaces = memory.namespaces()
    if args.json:
        echo(json.dumps(spaces))
    elif not spaces:
        echo("(no namespace holds data)")
    for name, counts in ([] if args.json else spaces.items()):
        echo(f"{name}  " + ", ".join(f"{k} {v}" for k, v in counts.items()))
    return 0


# -- forget, purge ------------------------------------------------------------------------


def run_forget(args: argparse.Namespace) -> int:
    """Forget the observations and print what went; unknown ids are named on stderr
    (exit 1), and when none is known nothing is done."""
    with open_memory(args) as memory:
        require_namespace(memory, args.namespace)
        known = {o.id for o in memory.get(args.namespace, args.ids)}
        missing = [i for i in dict.fromkeys(args.ids) if i not in known]
        if not known:
            raise NotFoundError(f"none of these ids is in {args.namespace!r}: "
                                f"{', '.join(missing)}; nothing was forgotten")
        counts = memory.forget(args.namespace, [i for i in args.ids if i in known],
                               erase=args.erase)
    echo(", ".join(f"{k.replace('_', ' ')} {v}" for k, v in counts.items())
         + ("; earlier versions erased" if args.erase else ""))
    if missing:
        sys.stderr.write(f"not found in {args.namespace!r}: {', '.join(missing)}\n")
        return 1
    return 0


def run_purge(args: argparse.Namespace) -> int:
    """Remove the namespace (only with ``--yes``)."""
    if not args.yes:
        raise InputError(f"purge removes every record of {args.namespace!r}: pass --yes")
    with open_memory(args) as memory:
        require_namespace(memory, args.namespace)
        memory.purge(args.namespace, erase=args.erase)
    echo(f"purged {args.namespace!r}" + ("; earlier versions erased" if args.erase else ""))
    return 0


# -- export, import -------------------------------------------------------------------


def run_export(args: argparse.Namespace) -> int:
    """Write the namespace as JSON lines (or a graph format) to ``--output`` or stdout."""
    from labile_io.transfer import export_records

    with open_memory(args) as memory:
        require_namespace(memory, args.namespace)
        if args.format != "jsonl":
            text = _graph_text(memory, args.namespace, args.format)
            if args.output:
                Path(args.output).write_text(text, encoding="utf-8")
                sys.stderr.write(f"wrote the {args.format} graph to {args.output}\n")
            else:
                echo(text.rstrip("\n"))
        elif args.output:
            lines = 0
            with open(args.output, "w", encoding="utf-8") as fh:
                for record in export_records(memory, args.namespace):
                    fh.write(json.dumps(record, ensure_ascii=False) + "\n")
                    lines += 1
            sys.stderr.write(f"wrote {lines} lines to {args.output}\n")
        else:
            for record in export_records(memory, args.namespace):
                echo(json.dumps(record, ensure_ascii=False))
    return 0


def _graph_text(memory: Any, namespace: str, fmt: str) -> str:
    from labile_io.graphs import whole

    view = whole(memory.store, namespace)
    if fmt == "json-graph":
        return json.dumps(view.to_json_graph(namespace), ensure_ascii=False, indent=1)
    return view.write(fmt)


def run_import(args: argparse.Namespace) -> int:
    """Load an export into an empty namespace and print the counts."""
    from labile_io.transfer import import_records

    path = Path(args.file)
    if not path.is_file():
        raise InputError(f"{path}: no such file")
    with open(path, encoding="utf-8") as fh:
        numbered = [(i, line) for i, line in enumerate(fh, 1) if line.strip()]
    records = [_line(path, i, line) for i, line in numbered]
    header = records[0] if records else None
    if not isinstance(header, dict):
        raise InputError(f"{path}: not a labile export (no header line)")
    if not args.config and not args.preset:
        args.config = _exporting_pipeline(header, args.path)
    with open_memory(args, create=True) as memory:
        counts = import_records(memory, records, args.namespace,
                                lines=[i for i, _ in numbered])
    echo(", ".join(f"{k} {v}" for k, v in counts.items()))
    return 0


def _exporting_pipeline(header: dict[str, Any], path: str | None) -> dict[str, Any] | None:
    """The export's pipeline for a new store at ``path``; ``None`` when a store is there
    (it opens with its own recorded pipeline) or the header has none."""
    from labile.plugin import holds_store

    pipeline = header.get("pipeline")
    target = Path(path) if path else None
    if not isinstance(pipeline, dict) or target is None or holds_store(target):
        return None
    return {**pipeline, "store": {**pipeline.get("store", {}), "path": str(target)}}


def _line(path: Path, lineno: int, line: str) -> Any:
    try:
        return json.loads(line)
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}: line {lineno}: not JSON ({exc.msg})") from None
