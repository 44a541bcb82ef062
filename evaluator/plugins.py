"""Plugins from installed packages: one loader for every kind (judges, metrics, and whatever comes next).

A package offers plugins under an entry-point group; in its pyproject.toml:

    [project.entry-points."ragmeter.metrics"]
    politeness = "ragmeter_politeness:METRICS"

The object named may be one item, a list of them, or a function returning either. A registry
(a plain dict of name -> item) owns a `PluginGroup`, which loads the group once per process, on the
first lookup of a name that is not built in. The package's own items may come in by the same door
(`register_builtin`, as the built-in metrics do). A plugin that fails to import, offers the wrong kind of
object, or reuses a built-in name is reported (`load()` returns why, `hint()` adds it to an unknown-name
error), never a crash: a broken package must not break ragmeter. Core layer: imports nothing of ragmeter.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from typing import Any, Callable, Dict, FrozenSet, Generic, List, Optional, Type, TypeVar

log = logging.getLogger("ragmeter")

T = TypeVar("T")


@dataclass
class PluginGroup(Generic[T]):
    """The plugins of one entry-point `group`, registered into `registry` under `name_of(item)`.

    `noun` names the kind in messages ("judge plugin 'x' (...) was not loaded: ...")."""

    group: str
    noun: str
    kind: Type[T]
    registry: Dict[str, T]
    name_of: Callable[[T], str]
    builtin: FrozenSet[str] = frozenset()
    loaded: bool = False  # plugins load once per process (load(reload=True) loads them again)
    problems: List[str] = field(default_factory=list)

    def register(self, item: T, *, replace: bool = False) -> T:
        """Add `item` so its name can be chosen; a name already taken is an error unless `replace`."""
        if not isinstance(item, self.kind):
            raise TypeError(f"register takes a {self.kind.__name__}, not {type(item).__name__}")
        name = self.name_of(item)
        current = self.registry.get(name)
        if current is not None and current is not item and not replace:
            raise ValueError(f"a {self.noun} named {name!r} is already registered; pass replace=True to replace it")
        self.registry[name] = item
        return item

    def register_builtin(self, provided: Any) -> List[T]:
        """Register the package's own items through the door a plugin's come in by: `provided` is what an
        entry point would name (one item, a list, or a function returning either). Their names become
        built in, so no plugin can take them."""
        items = self._items_of(provided)
        for item in items:
            self.register(item)
        self.builtin = self.builtin | frozenset(map(self.name_of, items))
        return items

    def load(self, *, reload: bool = False) -> List[str]:
        """Register every item the group's entry points offer; returns the problems met."""
        if self.loaded and not reload:
            return list(self.problems)
        self.loaded, self.problems = True, []
        for ep in entry_points(group=self.group):
            try:
                for item in self._items_of(ep.load()):
                    if self.name_of(item) in self.builtin:
                        raise ValueError(f"{self.noun} {self.name_of(item)!r} is a built-in {self.noun}'s name")
                    self.register(item, replace=True)  # a re-installed plugin replaces its older self
            except Exception as exc:  # a broken plugin must not break ragmeter
                problem = f"{self.noun} plugin {ep.name!r} ({ep.value}) was not loaded: {type(exc).__name__}: {exc}"
                self.problems.append(problem)
                log.warning(problem)
        return list(self.problems)

    def _items_of(self, provided: Any) -> List[T]:
        """The items an entry point names: one, a list, or a function returning either."""
        if callable(provided) and not isinstance(provided, self.kind):
            provided = provided()
        items = [provided] if isinstance(provided, self.kind) else list(provided)
        bad = [type(i).__name__ for i in items if not isinstance(i, self.kind)]
        if bad:
            raise TypeError(f"expected {self.kind.__name__} objects, got {', '.join(bad)}")
        return items

    def names(self) -> List[str]:
        """Every name that can be chosen, in registry order (built-ins, then plugins)."""
        self.load()
        return list(self.registry)

    def find(self, name: str) -> Optional[T]:
        """The item registered as `name`, loading the plugins on a miss; None when still unknown."""
        if name not in self.registry:
            self.load()
        return self.registry.get(name)

    def hint(self) -> str:
        """' (why plugins failed to load)' for an unknown-name error, or ''."""
        problems = self.load()
        return f" ({'; '.join(problems)})" if problems else ""
