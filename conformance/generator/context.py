"""The typing context the generator draws from: what is in scope, callable and allowed right here.

It mirrors the validator's rules exactly (``validator/scopes.py``, ``validator/typecheck.py``,
``validator/control_flow.py``), because a program is well typed and well scoped by construction
only if the generator tracks the same facts the validator checks:

* **one type per name per function** (E-LOCAL-TYPE): ``FunctionState.types`` remembers the type of
  every name ever assigned in the function - in or out of scope - so a name is only ever re-set
  with its first type;
* **scopes** (E-LOCAL-UNKNOWN): ``Scope.visible`` holds the names readable here. Branches and loop
  bodies work on a child copy; after an ``if`` the survivors are the intersection of both branches,
  or the other branch's names when one branch always exits, or the union when both exit (the names
  are then only readable by dead code); nothing escapes a loop body;
* **loop variables** (E-LOCAL-SHADOW, E-LOCAL-LOOP-VAR): a ``forRange`` local is a name not in
  scope, and the variables of enclosing ``forRange`` loops are never assigned; the counters of
  enclosing ``while`` loops are frozen too, so every ``while`` terminates;
* **loop control** (E-LOOP-CONTROL): ``break``/``continue`` only where ``Scope.loops > 0``;
* **calls**: only functions defined earlier in the module (the call graph is acyclic by
  construction) and the module's fixture bindings.

A size budget (expression nodes left for the current function) keeps programs small enough that
most runs finish within the default limits.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from dotboxd.core.types import SandboxType


@dataclass(frozen=True, slots=True)
class FunctionSig:
    """A module function the generator may call: its id, named parameters and return type."""

    name: str
    params: tuple[tuple[str, SandboxType], ...]
    ret: SandboxType


@dataclass(frozen=True, slots=True)
class BindingSig:
    """A fixture binding the generator may call."""

    id: str
    params: tuple[SandboxType, ...]
    ret: SandboxType


@dataclass(slots=True)
class ModuleEnv:
    """Module-wide facts: declared brands, bindings, callable functions, and the feature tags seen."""

    brands: tuple[str, ...]
    bindings: tuple[BindingSig, ...]
    functions: list[FunctionSig] = field(default_factory=list)
    features: dict[str, None] = field(default_factory=dict)

    def note(self, feature: str) -> None:
        """Record a feature for the case's tags (insertion-ordered, so deterministic)."""
        self.features.setdefault(feature, None)


@dataclass(slots=True)
class FunctionState:
    """Facts that span the whole function being generated (shared by all its scopes)."""

    sig: FunctionSig
    types: dict[str, SandboxType]
    budget: int
    loop_vars: list[str] = field(default_factory=list)
    frozen: list[str] = field(default_factory=list)
    counter: int = 0

    def fresh(self, stem: str) -> str:
        """A name never used in this function."""
        while True:
            self.counter += 1
            name = f"{stem}{self.counter}"
            if name not in self.types:
                return name

    def spend(self, nodes: int = 1) -> None:
        self.budget -= nodes


@dataclass(slots=True)
class Scope:
    """The names readable at one point of a function, plus the loop and nesting depth there."""

    env: ModuleEnv
    fn: FunctionState
    visible: dict[str, SandboxType]
    loops: int = 0
    nest: int = 0

    def child(self, *, loop: bool = False) -> Scope:
        """A branch or loop-body scope: a copy of the visible names, one level deeper."""
        return Scope(self.env, self.fn, dict(self.visible), self.loops + (1 if loop else 0), self.nest + 1)

    def names_of(self, t: SandboxType) -> list[str]:
        """Readable names of type ``t`` (in insertion order: deterministic)."""
        return [name for name, have in self.visible.items() if have == t]

    def assignable(self) -> list[str]:
        """Readable names a ``set`` may target: not a loop variable, not a frozen loop counter."""
        blocked = set(self.fn.loop_vars) | set(self.fn.frozen)
        return [name for name in self.visible if name not in blocked]

    def reusable(self) -> list[str]:
        """Names typed earlier in this function but not readable here (re-set with the same type)."""
        blocked = set(self.fn.loop_vars) | set(self.fn.frozen)
        return [name for name in self.fn.types if name not in self.visible and name not in blocked]

    def declare(self, name: str, t: SandboxType) -> None:
        """``set name = <t>``: the name becomes readable and keeps ``t`` for the whole function."""
        self.fn.types.setdefault(name, t)
        self.visible[name] = t

    def merge_if(self, then: Scope, else_: Scope, then_exits: bool, else_exits: bool) -> None:
        """The scopes pass's rule for the names that survive an ``if``."""
        if then_exits and else_exits:
            survivors = {**then.visible, **else_.visible}
        elif then_exits:
            survivors = else_.visible
        elif else_exits:
            survivors = then.visible
        else:
            survivors = {n: t for n, t in then.visible.items() if n in else_.visible}
        for name, t in survivors.items():
            self.visible.setdefault(name, t)
