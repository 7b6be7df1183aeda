"""labile-echo: the sample plugin of the plugin-authoring guide.

It registers one filter, ``echo.min_score``, that drops hits scoring below a
threshold and records in the search state how many it dropped, and one
command, ``labile echo``, that shows which scores that filter would keep.
"""

from __future__ import annotations

import argparse
from typing import Any

import attrs
from attrs.validators import ge, le

from labile.plugin import Deps, Hit, InputError, Query, Register, RegisterCommand, echo, hookimpl


@attrs.frozen(kw_only=True)
class MinScoreConfig:
    """Options of ``echo.min_score``.

    Attributes:
        threshold: Hits scoring below this are dropped.
    """

    threshold: float = attrs.field(default=0.0, validator=[ge(0.0), le(1.0)])


class MinScoreFilter:
    """Keeps the hits whose score is at least the threshold, best first."""

    def __init__(self, config: MinScoreConfig, deps: Deps) -> None:
        self._threshold = config.threshold

    def filter(self, query: Query, hits: list[Hit], state: dict[str, Any]) -> list[Hit]:
        """Drop low-scoring hits."""
        kept = [h for h in hits if h.score >= self._threshold]
        state["echo.dropped"] = len(hits) - len(kept)
        return sorted(kept, key=lambda h: -h.score)


@hookimpl
def labile_register_filters(register: Register) -> None:
    """Register ``echo.min_score``."""
    register("echo.min_score", MinScoreFilter, config=MinScoreConfig,
             summary="drop hits scoring below a threshold")


@hookimpl
def labile_register_commands(register: RegisterCommand) -> None:
    """Register ``labile echo``."""
    register("echo", run=run_echo, configure=echo_options,
             help="show which scores echo.min_score keeps at a threshold")


def echo_options(parser: argparse.ArgumentParser) -> None:
    """``labile echo [--threshold T] SCORE ...``."""
    parser.add_argument("--threshold", type=float, default=0.0,
                        help="keep scores at or above this, in [0, 1] (default: %(default)s)")
    parser.add_argument("scores", type=float, nargs="+", help="the scores to check")


def run_echo(args: argparse.Namespace) -> int:
    """Print the scores the filter keeps; a threshold outside [0, 1] is an input error."""
    try:
        config = MinScoreConfig(threshold=args.threshold)
    except ValueError as exc:
        raise InputError(f"--threshold: {exc}") from None
    kept = [s for s in args.scores if s >= config.threshold]
    echo(f"kept {len(kept)} of {len(args.scores)} scores at threshold {config.threshold}: "
         + (", ".join(f"{s:g}" for s in kept) or "none"))
    return 0
