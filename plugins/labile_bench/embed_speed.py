"""``labile bench embed``: embedder speed on LoCoMo turns, each embedder against the first.

Contract:

* **Texts.** The first ``n`` turns of a LoCoMo file in file order (conversation,
  session, turn), each rendered as ``speaker: text`` by `labile_text.render.turn_text`
  without its date (a shared photo's caption follows, as when turns are embedded).
  Every embedder sees the same texts. A file with fewer turns gives what it has,
  and the summary says so (``texts`` < ``texts_requested``, and a ``note``).
* **Building.** Each spec (``{"type": name, **options}``, as `parse_llm_spec` reads
  ``--embedder``) is built, in the order given and in this process, the way a
  `labile.Memory` builds its embedder: its options structured strictly into the
  registered component's config, then ``Registries.build`` with the pipeline's
  `CoreDeps`. An unknown name raises `labile.UnknownComponentError` listing the
  registered embedders; a bad option raises `labile.ConfigError`.
* **Measuring**, per embedder: one warm-up ``embed([texts[0]])`` (the offline
  embedders load their model on the first call); ``load_rss_mb``, the growth of
  the process's resident memory (``VmRSS``) from before the build to after the
  warm-up: roughly the RAM of the loaded model, about 0 when this process already
  holds that model (the offline embedders share loaded sessions), ``None`` where
  ``/proc/self/status`` is missing; one timed batched ``embed(texts)`` →
  ``texts_per_s``; ``singles`` timed ``embed([t])`` calls over the texts in order
  (repeating them if there are fewer) → ``single_p50_ms`` / ``single_p95_ms``;
  ``dim``, the width of the vectors.
* **Comparing** with the first embedder (the baseline, run in the same process):
  ``vs_first`` is ``texts_per_s`` over the first's (1.0 for the first);
  ``cosine_mean`` / ``cosine_min`` are the mean and least cosine between the two
  vectors of each text, only when the dimensions match (else ``None``; ``None``
  for the first). An embedder with a ``memo`` option set can serve repeated texts
  from it; leave it at its default (off) to time the model.
* The machine's load average (1, 5, 15 min) at the start and the end goes into the
  summary: shared machines are noisy, so only the ratios are comparable.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from labile import LabileError, Memory
from labile.plugin import ComponentSpec, CoreDeps, Embedder, get_logger, structure_options
from labile_bench.metrics import percentile
from labile_io.locomo import load_locomo, observations_of
from labile_text.render import turn_text

__all__ = ["build_embedder", "embed_summary", "format_embed_table", "locomo_texts",
           "resolve_embedder", "run_embed_speed"]

log = get_logger(__name__)

#: The pipeline that lends its registries and deps to the embedders built here.
_HOST = {"preset": "bm25", "store": {"type": "memory"}, "embedder": {"type": "hashing"},
         "llm": {"type": "none"}}


def locomo_texts(path: str | os.PathLike[str], n: int) -> list[str]:
    """The first ``n`` turns of the LoCoMo file at ``path`` as ``speaker: text`` (fewer if
    the file has fewer).

    Raises:
        LabileError: the file is not in the LoCoMo layout.
        OSError: the file cannot be read.
    """
    try:
        conversations, _ = load_locomo(path)
    except ValueError as exc:
        raise LabileError(f"{path} is not a LoCoMo file: {exc}") from None
    texts: list[str] = []
    for conv in conversations:
        for batch in observations_of(conv):
            for obs in batch:
                if len(texts) == n:
                    return texts
                texts.append(turn_text(obs, dated=False))
    return texts


def resolve_embedder(spec: Mapping[str, Any], host: Memory,
                     where: str = "--embedder") -> ComponentSpec:
    """``spec`` checked against the embedder registry of ``host``: its name resolved and its
    options structured strictly, as a config's ``[embedder]`` table is.

    Raises:
        UnknownComponentError: no embedder of that name (the message lists the registered).
        ConfigError: an option the embedder does not take, or a bad value (``where`` says
            which spec).
    """
    registries = host.registries
    component = registries["embedder"].get(str(spec["type"]))
    options = {k: v for k, v in spec.items() if k != "type"}
    config = structure_options(component, options, where, registries)
    return ComponentSpec(kind="embedder", type=component.name, config=config)


def build_embedder(spec: ComponentSpec, host: Memory) -> Embedder:
    """The embedder ``spec`` names, built by the registry with the deps ``host``'s pipeline
    gave its own embedder."""
    deps = CoreDeps(schema=host.schema, usage=host.usage, registries=host.registries)
    embedder: Embedder = host.registries.build(spec, deps)
    return embedder


def run_embed_speed(specs: Sequence[Mapping[str, Any]], texts: Sequence[str], *, singles: int,
                    labels: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """One row per spec, in order (see the module doc); ``labels`` name the rows
    (default: each spec's type).

    Every spec is checked (`resolve_embedder`) before the first is built.

    Raises:
        ValueError: no spec, no text, ``singles`` < 1, or ``labels`` of another length.
        UnknownComponentError, ConfigError: as `resolve_embedder`.
    """
    if not specs or not texts or singles < 1:
        raise ValueError("give at least one embedder, one text and one single call")
    names = list(labels) if labels is not None else [str(s["type"]) for s in specs]
    if len(names) != len(specs):
        raise ValueError(f"{len(names)} labels for {len(specs)} embedders")
    rows: list[dict[str, Any]] = []
    first: NDArray[np.float32] | None = None
    with Memory.open(dict(_HOST)) as host:
        resolved = [resolve_embedder(spec, host, f"--embedder {name}")  # all, before any load
                    for name, spec in zip(names, specs, strict=True)]
        for name, spec in zip(names, resolved, strict=True):
            row, vectors = _measure(name, spec, host, texts, singles)
            if first is None:
                first, row["vs_first"] = vectors, 1.0
            else:
                row["vs_first"] = round(row["texts_per_s"] / rows[0]["texts_per_s"], 3)
                row.update(_agreement(first, vectors))
            log.info("bench.embed.row", **row)
            rows.append(row)
    return rows


def embed_summary(data: str | os.PathLike[str], specs: Sequence[Mapping[str, Any]], *,
                  texts: int, singles: int,
                  labels: Sequence[str] | None = None) -> dict[str, Any]:
    """`run_embed_speed` on the first ``texts`` turns of ``data``, with the load average
    before and after and what was asked; a ``note`` when the file had fewer turns.

    Raises:
        LabileError: ``texts`` or ``singles`` < 1, a malformed file or one without turns.
        UnknownComponentError: an embedder that is not registered (the message lists them).
        ConfigError: an option the embedder does not take, or a bad value.
    """
    if texts < 1 or singles < 1:
        raise LabileError(f"--texts and --singles must be at least 1, got {texts} and {singles}")
    chosen = locomo_texts(data, texts)
    if not chosen:
        raise LabileError(f"{data} holds no turns")
    summary: dict[str, Any] = {"data": str(data), "texts_requested": texts,
                               "texts": len(chosen), "singles": singles,
                               "load_avg_start": _load_avg()}
    if len(chosen) < texts:
        summary["note"] = f"asked for {texts} texts; {data} has only {len(chosen)} turns"
        log.warning("bench.embed.few_texts", asked=texts, turns=len(chosen), data=str(data))
    summary["rows"] = run_embed_speed(specs, chosen, singles=singles, labels=labels)
    summary["load_avg_end"] = _load_avg()
    return summary


def _load_avg() -> list[float] | None:
    """The 1, 5 and 15 minute load averages, ``None`` where the system has none."""
    try:
        return [round(v, 2) for v in os.getloadavg()]
    except (OSError, AttributeError):  # not computable here; no such function (Windows)
        return None


def _measure(name: str, spec: ComponentSpec, host: Memory, texts: Sequence[str],
             singles: int) -> tuple[dict[str, Any], NDArray[np.float32]]:
    before = _rss_mb()
    embedder = build_embedder(spec, host)
    embedder.embed([texts[0]])
    after = _rss_mb()
    start = time.perf_counter()
    vectors = np.asarray(embedder.embed(list(texts)), dtype=np.float32)
    seconds = time.perf_counter() - start
    latencies = []
    for i in range(singles):
        start = time.perf_counter()
        embedder.embed([texts[i % len(texts)]])
        latencies.append((time.perf_counter() - start) * 1000)
    return {
        "embedder": name, "dim": int(vectors.shape[1]),
        "texts_per_s": round(len(texts) / max(seconds, 1e-9), 1),
        "single_p50_ms": round(percentile(latencies, 50), 2),
        "single_p95_ms": round(percentile(latencies, 95), 2),
        "load_rss_mb": None if before is None or after is None else round(after - before, 1),
        "cosine_mean": None, "cosine_min": None,
    }, vectors


def _agreement(first: NDArray[np.float32], other: NDArray[np.float32]) -> dict[str, Any]:
    """Mean and least row-wise cosine of two vector sets of one shape, else ``None``s."""
    if first.shape != other.shape:
        return {"cosine_mean": None, "cosine_min": None}
    norms = np.linalg.norm(first, axis=1) * np.linalg.norm(other, axis=1)
    cosines = np.einsum("ij,ij->i", first, other) / np.maximum(norms, 1e-12)
    return {"cosine_mean": round(float(cosines.mean()), 4),
            "cosine_min": round(float(cosines.min()), 4)}


def _rss_mb() -> float | None:
    """This process's resident memory in MiB (``VmRSS``), ``None`` without ``/proc``."""
    try:
        with Path("/proc/self/status").open(encoding="ascii") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


_COLUMNS = (("embedder", "embedder"), ("dim", "dim"), ("texts_per_s", "texts/s"),
            ("vs_first", "vs first"), ("single_p50_ms", "single p50 ms"),
            ("single_p95_ms", "single p95 ms"), ("load_rss_mb", "load RSS MB"),
            ("cosine_mean", "cos mean"), ("cosine_min", "cos min"))


def format_embed_table(rows: Sequence[Mapping[str, Any]]) -> str:
    """The rows as a Markdown table (``-`` for a missing figure)."""
    lines = ["| " + " | ".join(title for _, title in _COLUMNS) + " |",
             "|" + "---|" * len(_COLUMNS)]
    lines += ["| " + " | ".join("-" if row.get(key) is None else str(row[key])
                                for key, _ in _COLUMNS) + " |" for row in rows]
    return "\n".join(lines)
