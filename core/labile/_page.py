"""Paging through a namespace's records."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Generic, TypeVar

import attrs

from labile._errors import InputError

T = TypeVar("T")


@attrs.frozen(kw_only=True)
class Page(Generic[T]):
    """One page of a listing: ``items`` from ``offset``; ``next_offset`` is ``None`` at the end."""

    items: tuple[T, ...]
    offset: int
    total: int
    next_offset: int | None

    @classmethod
    def of(cls, records: Iterable[T], offset: int, limit: int) -> Page[T]:
        """The page of ``records`` at ``offset`` with at most ``limit`` items.

        Raises:
            InputError: ``offset`` is negative or ``limit`` is not positive.
        """
        for name, value, low in (("offset", offset, 0), ("limit", limit, 1)):
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise InputError(f"{name} must be an integer >= {low}, got {value!r}")
        every = list(records)
        end = offset + limit
        return cls(items=tuple(every[offset:end]), offset=offset, total=len(every),
                   next_offset=end if end < len(every) else None)

