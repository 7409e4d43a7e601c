"""One coverage-guided fuzzing process: ``python -m fuzz.harness TARGET [libFuzzer flags] CORPUS...``.

libFuzzer (through atheris) owns the process and exits it when it is done, so ``fuzz/run.py`` starts
one of these per target. Only ``dotboxd`` is instrumented for coverage (plus Lark for the text target;
atheris instruments whole top-level packages, about 8 s of start-up for ``dotboxd``), and everything
a target imports lazily is imported here first so that it is instrumented too. An input on which the
target raises (a ``Finding``, or anything else) is a crash: libFuzzer writes it to the artifact
prefix and the process exits non-zero.
"""

from __future__ import annotations

import sys

import atheris


def main() -> None:
    name = sys.argv[1]
    with atheris.instrument_imports(include=["dotboxd", "lark"] if name == "text" else ["dotboxd"]):
        import dotboxd.host
        import dotboxd.runtime.optimized
        import dotboxd.validator.prover.prover  # noqa: F401 - imported to be instrumented
        from fuzz.targets import TARGETS
    target = TARGETS[name]
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    atheris.Setup([sys.argv[0], *sys.argv[2:]], target)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
