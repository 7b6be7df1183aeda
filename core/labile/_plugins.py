"""Building the plugin manager: hook specs, kernel essentials, bundles, entry points.

A manager is built per call (no import-time global), so tests and embedding
applications get isolated registries. Plugins are found through the
``labile`` entry-point group — the bundles that ship with labile too — and
loaded tolerantly: a plugin that fails to import is reported (and logged) and
the others still load. Plugins can be blocked with ``LABILE_DISABLE_PLUGINS``
(comma-separated names) or a config's ``[plugins] disable``; the kernel's own
essentials cannot be blocked.

Kinds declared by plugins (``labile_declare_kinds``) get their registration
hook specs before the manager checks for unknown hooks, so a misspelt
``labile_register_…`` fails at startup whoever declared the kind. What
loading found (failed plugins, distributions) is kept in a typed
`PluginLoad` on the `LabilePluginManager`.
"""

from __future__ import annotations

import importlib
import importlib.metadata as md
import importlib.util
import os
from collections.abc import Iterable
from typing import Final

import attrs
import pluggy

from labile import _hookspecs as hookspecs
from labile._errors import PluginLoadError
from labile._kinds import Declare, KindSpec, KindTable
from labile._logconfig import get_logger

log = get_logger(__name__)

#: Bundles shipped with labile, as declared in pyproject's ``labile`` entry
#: points. Used when the distribution's metadata is not installed (a source
#: checkout on ``PYTHONPATH``); a test keeps it equal to pyproject.toml.
BUNDLED: Final[dict[str, str]] = {
    "offline": "labile_offline",
    "lancedb": "labile_lancedb",
    "baseline": "labile_baseline",
    "realm": "labile_realm",
    "allmem": "labile_allmem",
    "litellm": "labile_litellm",
    "llm": "labile_llm",
    "bench": "labile_bench",
    "llamacpp": "labile_llamacpp",
    "io": "labile_io",
    "mcp": "labile_mcp",
    "unite": "labile_unite",
    "retention": "labile_retention",
    "http": "labile_http",
}
ESSENTIALS: Final = "labile._essentials"
ENV_DISABLE: Final = "LABILE_DISABLE_PLUGINS"
ENV_LOAD: Final = "LABILE_LOAD_PLUGINS"


@attrs.define
class PluginLoad:
    """What loading the plugins of one manager found.

    Attributes:
        errors: A `PluginLoadError` for every plugin that failed to import or register.
        dists: Plugin name → (distribution, version) of every loaded entry-point plugin.
    """

    errors: list[PluginLoadError] = attrs.field(factory=list)
    dists: dict[str, tuple[str | None, str | None]] = attrs.field(factory=dict)


class LabilePluginManager(pluggy.PluginManager):
    """The pluggy manager of one labile session: the ``labile`` project plus its `PluginLoad`."""

    def __init__(self) -> None:
        super().__init__("labile")
        self.load = PluginLoad()


def load_report(pm: pluggy.PluginManager) -> PluginLoad:
    """What loading found for ``pm`` (empty for a manager built elsewhere)."""
    return pm.load if isinstance(pm, LabilePluginManager) else PluginLoad()


def get_plugin_manager(
    *,
    entry_points: bool = True,
    block: Iterable[str] = (),
    extra: Iterable[object] = (),
    only: Iterable[str] | None = None,
) -> LabilePluginManager:
    """A fresh plugin manager with the kernel essentials and the discovered plugins.

    Args:
        entry_points: Load plugins from the ``labile`` entry-point group (and
            the bundled fallback). ``False`` gives the kernel essentials only.
        block: Plugin names to skip, on top of ``LABILE_DISABLE_PLUGINS``.
        extra: Plugin objects (modules or instances) to register directly.
        only: Load only these entry-point plugins (default: ``LABILE_LOAD_PLUGINS``
            if set, else all).

    What loading found is in the manager's ``load`` (see `load_report`).

    Raises:
        pluggy.PluginValidationError: a plugin implements a hook no spec or
            declared kind defines (a misspelt hook name).
        DuplicateComponentError: two plugins declare the same kind.
    """
    from labile import _essentials as essentials

    pm = LabilePluginManager()
    pm.add_hookspecs(hookspecs)
    pm.register(essentials, name=ESSENTIALS)
    errors, dists = pm.load.errors, pm.load.dists
    blocked = set(block) | _env_names(ENV_DISABLE)
    blocked.discard(ESSENTIALS)
    for name in blocked:
        pm.set_blocked(name)
    if entry_points:
        only = set(only) if only is not None else _env_names(ENV_LOAD)
        for name, module, dist, version in _discover():
            if (only and name not in only) or pm.is_blocked(name) or pm.has_plugin(name):
                continue
            try:
                plugin = importlib.import_module(module)
                pm.register(plugin, name=name)
            except Exception as exc:  # a broken plugin must not take the others down
                where = f" (dist {dist} {version})" if dist else ""
                err = PluginLoadError(
                    f"plugin {name!r}{where} failed to load: {type(exc).__name__}: {exc}"
                )
                errors.append(err)
                log.warning("plugin_load_failed", plugin=name, dist=dist, error=str(exc))
                continue
            dists[name] = (dist, version)
    for i, obj in enumerate(extra):
        pm.register(obj, name=getattr(obj, "__name__", None) or f"extra-{i}")
    declare_kinds(pm)
    pm.check_pending()
    return pm


def declare_kinds(pm: pluggy.PluginManager) -> KindTable:
    """Every kind of ``pm``: the kernel's, then each plugin's ``labile_declare_kinds``.

    Adds the registration hook spec of every declared kind the manager does
    not know yet, so implementations are checked against it. Called when a
    manager is built and again by `labile._registry.collect` (plugins may be
    registered in between).
    """
    table = KindTable()
    for impl in reversed(pm.hook.labile_declare_kinds.get_hookimpls()):
        declare = _declarer(table, impl.plugin_name)
        impl.function(**{arg: declare for arg in impl.argnames})
    missing = {
        kind.hook: hookspecs.registration_spec(kind)
        for kind in table.declared_by_plugins()
        if not _has_spec(pm, kind.hook)
    }
    if missing:
        pm.add_hookspecs(type("DeclaredKindHooks", (), missing))
    return table


def _declarer(table: KindTable, plugin: str) -> Declare:
    def declare(kind: KindSpec) -> None:
        table.declare(kind, plugin)

    return declare


def _has_spec(pm: pluggy.PluginManager, hook: str) -> bool:
    caller = getattr(pm.hook, hook, None)
    return caller is not None and caller.has_spec()


def _env_names(var: str) -> set[str]:
    return {n.strip() for n in os.environ.get(var, "").split(",") if n.strip()}


def _discover() -> list[tuple[str, str, str | None, str | None]]:
    """(name, module, distribution, version) of every plugin, entry points first."""
    found: dict[str, tuple[str, str, str | None, str | None]] = {}
    for ep in md.entry_points(group="labile"):
        dist = ep.dist.name if ep.dist else None
        version = ep.dist.version if ep.dist else None
        found.setdefault(ep.name, (ep.name, ep.value.split(":")[0], dist, version))
    for name, module in BUNDLED.items():
        if name not in found and importlib.util.find_spec(module) is not None:
            found[name] = (name, module, "labile", _labile_version())
    return list(found.values())


def installed_plugin_names() -> set[str]:
    """Names of every plugin installed (entry points and the bundled ones), loaded or not."""
    return {name for name, *_ in _discover()}


def _labile_version() -> str | None:
    try:
        return md.version("labile")
    except md.PackageNotFoundError:
        return None
