"""What the device walker knows at a point of the cell (names bound, kernel names spoiled, autograd and
autocast, queued CUDA asserts) and the findings it has made: the base the judging and evaluating halves
share."""

from __future__ import annotations

import ast
from dataclasses import dataclass

from ...context import CellContext
from ...flow import Site
from .values import Module, Value


@dataclass
class Found:
    rule: str
    message: str
    evidence: list[str]
    line: int | None
    exc: str  # builtin base class an `except` must name to swallow it


class WalkerState:
    """The state the walker carries through the cell; Judge, Evaluator and Walker build on it in turn."""

    def __init__(self, ctx: CellContext) -> None:
        self.ctx = ctx
        self.sites = {id(s.node): s for s in ctx.sites}
        self.env: dict[str, Value] = {}  # names the cell bound (None: unknown)
        self.spoiled: set[str] = set()  # kernel names whose object the cell may have changed
        self.found: list[Found] = []
        torch = next((m for m in ctx.view.modules.values() if m.module == "torch"), None)
        self.grad: bool | None = torch.grad_enabled if torch is not None else None
        autocast = torch.facts.get("autocast") if torch is not None else None
        self.autocast: bool | None = autocast if isinstance(autocast, bool) else None
        sklearn = next((m for m in ctx.view.modules.values() if m.module == "sklearn"), None)
        dispatch = sklearn.facts.get("array_api_dispatch") if sklearn is not None else None
        self.sklearn_converts = dispatch is False
        self.pending: list[tuple[str, list[str]]] = []  # CUDA asserts queued, not yet surfaced
        self.modules_open = False  # some module was changed in place: kernel modules are unknown now
        # True once a call may have run the notebook's own code, which can rebind or change any global.
        # The flow's own barrier also rises for a tensor the cell bound and passes to a library call (it
        # could be a callable); here the values are known, so the walker keeps its own.
        self.barrier = False
        self.full_pass = False  # inside the body of a loop over every batch of a loader

    def site(self, node: ast.AST) -> Site | None:
        """The flow's site of `node`; for a node the walker made up (`x += y` read as `x + y`), the site
        of the first expression under it that the flow recorded."""
        for sub in ast.walk(node):
            site = self.sites.get(id(sub))
            if site is not None:
                return site
        return None

    def report(self, node: ast.AST, found: Found) -> None:
        site = self.site(node)
        if site is None or site.caught((found.exc,)):
            return
        self.found.append(found)

    def grad_of(self, tracked: bool | None) -> bool | None:
        """requires_grad of a result: False when autograd is off, else what the inputs say."""
        return False if self.grad is False else tracked

    def lookup_name(self, name: str) -> Value:
        if name in self.env:
            return self.env[name]
        return None

    def spoil(self, name: str) -> None:
        if name in self.env:
            self.env[name] = None
        else:
            self.spoiled.add(name)

    def modules_moved(self, keep: str | None = None) -> None:
        """A module changed in place. Other names may hold the same object or share its submodules
        (`best = model`, `enc = model.encoder`), so what is known of every other module is dropped."""
        self.modules_open = True
        for name, value in self.env.items():
            if isinstance(value, Module) and name != keep:
                self.env[name] = None
