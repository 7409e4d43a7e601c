"""Rebuild the seed corpus in ``fuzz/corpus/<target>/`` from the conformance cases and the examples.

Run ``python -m fuzz.seeds`` from the repository root. The choice is deterministic (smallest inputs
of each area first, a fixed count per target) so regenerating yields the same files; the corpus is
committed so that fuzzing starts from real kernels, not from random bytes. Findings live apart, in
``fuzz/regressions/<target>/``, and are never overwritten here.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections import defaultdict
from pathlib import Path

from dotboxd.core.diagnostics import DotBoxDError
from dotboxd.grammar.text import parse_text
from dotboxd.grammar.wire import dumps_wire

ROOT = Path(__file__).resolve().parents[1]
CASES = ROOT / "conformance" / "cases"
CORPUS = ROOT / "fuzz" / "corpus"
MAX_BYTES = 4_000
PER_AREA = {"importer": 6, "text": 4, "wire": 5}
LIMIT = {"importer": 60, "text": 30, "validator": 40, "prover": 30, "differential": 40}


def _cases() -> list[tuple[str, dict[str, object]]]:
    out = []
    for path in sorted(CASES.rglob("*.json")):
        if "generated" in path.parts:
            continue
        data = json.loads(path.read_text(encoding="utf-8"))
        area = path.parent.name
        out.extend((area, case) for case in data.get("cases", [data]))
    return out


def _wire_from_text(text: str) -> bytes | None:
    try:
        return dumps_wire(parse_text(text), indent=None).encode("utf-8")
    except DotBoxDError:
        return None


def collect() -> dict[str, list[bytes]]:
    """The inputs of each target, smallest first within each area, capped per area and per target."""
    raw: dict[str, dict[str, list[bytes]]] = defaultdict(lambda: defaultdict(list))
    for area, case in _cases():
        if "module" in case:
            raw["wire"][area].append(json.dumps(case["module"], separators=(",", ":")).encode())
        elif "moduleText" in case:
            raw["importer"][area].append(str(case["moduleText"]).encode("utf-8", "surrogatepass"))
        elif "moduleBase64" in case:
            raw["importer"][area].append(base64.b64decode(str(case["moduleBase64"])))
        elif "kernelText" in case:
            text = str(case["kernelText"])
            raw["text"][area].append(text.encode("utf-8"))
            wire = _wire_from_text(text)
            if wire is not None:
                raw["wire"][area].append(wire)
    for example in sorted((ROOT / "examples").glob("*.json")):
        raw["wire"]["examples"].append(example.read_bytes())
    for example in sorted((ROOT / "examples").glob("*.dbk")):
        raw["text"]["examples"].append(example.read_bytes())

    def pick(kind: str, limit: int) -> list[bytes]:
        chosen: list[bytes] = []
        for area in sorted(raw[kind]):
            small = sorted({b for b in raw[kind][area] if len(b) <= MAX_BYTES}, key=lambda b: (len(b), b))
            chosen.extend(small[: PER_AREA[kind]])
        return chosen[:limit]

    wire = pick("wire", 200)
    return {
        "importer": (pick("importer", LIMIT["importer"] // 2) + wire)[: LIMIT["importer"]],
        "text": pick("text", LIMIT["text"]),
        "validator": wire[: LIMIT["validator"]],
        "prover": wire[: LIMIT["prover"]],
        "differential": wire[: LIMIT["differential"]],
    }


def main() -> None:
    for target, inputs in collect().items():
        folder = CORPUS / target
        folder.mkdir(parents=True, exist_ok=True)
        for old in folder.iterdir():
            old.unlink()
        for data in inputs:
            (folder / hashlib.sha1(data).hexdigest()).write_bytes(data)
        print(f"{target}: {len(inputs)} seeds")


if __name__ == "__main__":
    main()
