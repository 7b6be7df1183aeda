"""``baseline.turns``: each observation becomes one node holding its dated text."""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from labile.plugin import AddReport, Deps, Node, Observation
from labile_text.render import turn_text


@attrs.frozen(kw_only=True)
class TurnExtractorConfig:
    """Options of ``baseline.turns``.

    Attributes:
        dated: Prefix the text with the observation's date, as the reference
            baselines index turns (``[<date>] <speaker>: <text>``).
    """

    dated: bool = True


class TurnExtractor:
    """Writes one ``baseline.turn`` node per observation, embedded in one batch call."""

    def __init__(self, config: TurnExtractorConfig, deps: Deps) -> None:
        self._config, self._deps = config, deps

    def ingest(
        self, namespace: str, observations: Sequence[Observation], report: AddReport
    ) -> None:
        """Write the nodes for ``observations`` (one embedding call per batch)."""
        texts = [turn_text(o, dated=self._config.dated) for o in observations]
        vectors = self._deps.embedder.embed(texts)
        nodes = [
            Node(
                id=obs.id, kind="baseline.turn", content=text, sources=(obs.id,),
                time_start=obs.timestamp, created_at=obs.timestamp, updated_at=obs.timestamp,
                embedding=vec, attrs={"speaker": obs.speaker, "session": obs.session},
            )
            for obs, text, vec in zip(observations, texts, vectors, strict=True)
        ]
        self._deps.store.upsert_nodes(namespace, nodes)
        report.nodes_written += len(nodes)

    def on_rollback(self, namespace: str) -> None:
        """Nothing to undo: this extractor keeps no state between calls."""
        del namespace
