"""The names a Python kernel file imports: ``from dotboxd.lang import I32, List, entrypoint, ...``.

A kernel file written in restricted Python is never executed, imported or compiled by dotboxd: the
front end (``dotboxd.grammar.pyfront``) only parses it with ``ast`` and lowers it to the IR. This
module exists so that the same file is also ordinary, importable and type-checkable Python: every
name here is a plain alias or a marker that does nothing, and none of them grants anything (a
``requires`` line is a request; only the host policy grants).

The lowerer recognises these names syntactically (``LANG_NAMES`` below is the list it accepts in
``from dotboxd.lang import ...``); their run-time values never matter to dotboxd.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NewType, TypeAlias, TypeVar

# --- value types (annotations) -------------------------------------------------------------------
I32: TypeAlias = int
I64: TypeAlias = int
F64: TypeAlias = float
Bool: TypeAlias = bool
String: TypeAlias = str
Unit: TypeAlias = None
List = list
Map = dict
Record = tuple  # type: ignore[type-arg]  # variadic: Record[I32, String] is tuple[int, str]
Guid = NewType("Guid", str)
SandboxPath = NewType("SandboxPath", str)
SandboxUri = NewType("SandboxUri", str)

_F = TypeVar("_F", bound=Callable[..., object])


def entrypoint(function: _F) -> _F:
    """Mark a function as an entrypoint of the kernel (functions without it are private)."""
    return function


def module(module_id: str, *, version: str, target: str = "1.0.0") -> None:
    """Declare the kernel module's id and version (the text form's ``module "id" version "v";``)."""


def requires(capability: str, *, reason: str | None = None) -> None:
    """Request a capability (a request, never a grant: the host policy decides)."""


def meta(key: str, value: str) -> None:
    """Attach one metadata entry to the module."""


# --- literal constructors (lowered to typed literals) ----------------------------------------------
def path(text: str) -> SandboxPath:
    """A sandbox path literal: ``path("config/settings.json")``."""
    return SandboxPath(text)


def uri(text: str) -> SandboxUri:
    """A sandbox URI literal: ``uri("https://example.com/x")``."""
    return SandboxUri(text)


def guid(text: str) -> Guid:
    """A GUID literal: ``guid("0f8fad5b-d9cb-469f-a165-70867728950e")``."""
    return Guid(text)


def opaque(brand: str, value: str) -> str:
    """An opaque-id literal of a declared brand: ``opaque("PlayerId", "p-1")``."""
    return value


LANG_NAMES: frozenset[str] = frozenset(
    {
        "I32",
        "I64",
        "F64",
        "Bool",
        "String",
        "Unit",
        "List",
        "Map",
        "Record",
        "Guid",
        "SandboxPath",
        "SandboxUri",
        "entrypoint",
        "module",
        "requires",
        "meta",
        "path",
        "uri",
        "guid",
        "opaque",
    }
)
"""Every name a kernel file may import from ``dotboxd.lang``."""
