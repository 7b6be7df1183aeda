"""The one check every offline embedder makes of what it is asked to embed."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["checked_texts"]


def checked_texts(texts: Sequence[str]) -> list[str]:
    """``texts`` as a list, after checking that it is a sequence of strings.

    Raises:
        TypeError: ``texts`` is a single ``str`` (which would embed each
            character) or holds something else than a string (named by index).
    """
    if isinstance(texts, str):
        raise TypeError("embed() takes a sequence of strings, not a single str")
    items = list(texts)
    for i, text in enumerate(items):
        if not isinstance(text, str):
            raise TypeError(f"texts[{i}] is {type(text).__name__}, expected str")
    return items
