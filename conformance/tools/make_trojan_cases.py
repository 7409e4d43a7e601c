"""Generate the import cases for look-alike identifiers, descriptor-style host references and opaque-id
traversal: ``conformance/cases/import/trojan-and-descriptors.json``.

    python conformance/tools/make_trojan_cases.py          # rewrite the case file
    python conformance/tools/make_trojan_cases.py --check  # fail if the file is out of date

The expectations come from spec/ir.md section 6 (identifier rule, host-reference scan and its word
edges) and section 5 (opaque ids), written down here by hand: nothing here imports the importer.
Each rule is pinned in the wire form and, where the text form can spell it, in the text form.
"""

from __future__ import annotations

import json
from typing import Any

from dotboxd.conformance.tools.kit import write_or_check

OUTPUT = "import/trojan-and-descriptors.json"

Case = dict[str, Any]

#: name -> (character, what it is). Each is refused in identifiers (E-IR-ID).
INVISIBLES: dict[str, tuple[str, str]] = {
    "zwsp": ("\u200b", "ZERO WIDTH SPACE"),
    "zwj": ("\u200d", "ZERO WIDTH JOINER"),
    "word-joiner": ("\u2060", "WORD JOINER"),
    "bom": ("\ufeff", "ZERO WIDTH NO-BREAK SPACE (BOM)"),
    "rlo": ("\u202e", "RIGHT-TO-LEFT OVERRIDE"),
    "lro": ("\u202d", "LEFT-TO-RIGHT OVERRIDE"),
    "rle": ("\u202b", "RIGHT-TO-LEFT EMBEDDING"),
    "rli": ("\u2067", "RIGHT-TO-LEFT ISOLATE"),
    "fsi": ("\u2068", "FIRST STRONG ISOLATE"),
    "pdi": ("\u2069", "POP DIRECTIONAL ISOLATE"),
    "rlm": ("\u200f", "RIGHT-TO-LEFT MARK"),
    "alm": ("\u061c", "ARABIC LETTER MARK"),
    "soft-hyphen": ("\u00ad", "SOFT HYPHEN"),
    "line-separator": ("\u2028", "LINE SEPARATOR"),
    "paragraph-separator": ("\u2029", "PARAGRAPH SEPARATOR"),
    "tag": ("\U000e0041", "TAG LATIN CAPITAL LETTER A"),
}

#: Descriptor-style names that carry one of DotBoxD's fragments at a word edge (E-IR-CLR-REF).
DESCRIPTOR_NAMES = [
    "rawIlBytes",
    "descriptor.rawIl",
    "RAWIL_BYTES",
    "method_rawMsil",
    "MSILBody",
    "myHostCode",
    "clrTypeName",
    "getRuntimeTypeHandle",
    "fileLoader",
    "HTTPLoader",
    "assemblyPathOverride",
    "IServiceProviderFactory",
    "loader2",
    "plugin.dll",
]

#: Ordinary names with a fragment inside one word: accepted.
ORDINARY_NAMES = ["callIndex", "downloader", "until_done", "recalling", "email_addr", "loaders"]

#: Opaque-id values holding '..' (E-JSON-ID) and nearby values that are fine.
TRAVERSALS = ["..", "..:secret", "a..b", "item..", "x:..:y", "..."]
PLAIN_IDS = ["a.b", "v1.2.3", ".hidden", "x:y:z", "a.b.c"]


def module(body: list[Any] | None = None, **extra: Any) -> str:
    fn = {
        "id": "main",
        "visibility": "entrypoint",
        "returnType": "I32",
        "body": [*(body or []), {"op": "return", "value": {"i32": 1}}],
    }
    return json.dumps({"id": "m", "version": "1.0.0", **extra, "functions": [fn]}, ensure_ascii=True)


def rejected(name: str, description: str, tags: list[str], code: str, pointer: str, **source: str) -> Case:
    expect = {"stage": "import", "outcome": "rejected", "diagnostic": code, "error": "ValidationError"}
    return {
        "name": name,
        "description": description,
        "tags": tags,
        **source,
        "expect": {**expect, "pointer": pointer},
    }


def accepted(name: str, description: str, tags: list[str], **source: str) -> Case:
    return {
        "name": name,
        "description": description,
        "tags": tags,
        **source,
        "expect": {"stage": "import", "outcome": "ok"},
    }


def escape(ch: str) -> str:
    """The JSON / text-form escape of ``ch`` (surrogate pair for an astral character)."""
    return json.dumps(ch)[1:-1]


def identifier_cases() -> list[Case]:
    tags = ["identifier", "trojan-source"]
    out: list[Case] = []
    for key, (ch, what) in INVISIBLES.items():
        out.append(
            rejected(
                f"import-trojan-function-id-{key}",
                f"A function id holding U+{ord(ch):04X} {what} would print like another name: E-IR-ID.",
                tags,
                "E-IR-ID",
                "/functions/0/id",
                moduleText=module().replace('"id": "main"', f'"id": "ma{escape(ch)}in"'),
            )
        )
        out.append(
            rejected(
                f"import-trojan-text-name-{key}",
                f"The same rule in the text form: a backtick name holding U+{ord(ch):04X} {what}.",
                [*tags, "text-form"],
                "E-IR-ID",
                "/functions/0/id",
                kernelText=f'module "m" version "1.0.0";\nentrypoint fn `ma{escape(ch)}in`() -> I32 {{ return 1; }}\n',
            )
        )
    rlo = escape("\u202e")
    out.append(
        rejected(
            "import-trojan-module-id-rlo",
            "A module id holding a right-to-left override: E-IR-ID.",
            tags,
            "E-IR-ID",
            "/id",
            moduleText=module().replace('"id": "m"', f'"id": "m{rlo}x"'),
        )
    )
    out.append(
        rejected(
            "import-trojan-metadata-key-zwsp",
            "A metadata key holding a zero-width space: E-IR-ID.",
            tags,
            "E-IR-ID",
            "/metadata/k\u200b",
            moduleText=module(metadata={"k\u200b": "v"}),
        )
    )
    out.append(
        rejected(
            "import-trojan-capability-id-lri",
            "A capability id holding a left-to-right isolate: E-IR-ID.",
            tags,
            "E-IR-ID",
            "/capabilityRequests/0/id",
            moduleText=module(capabilityRequests=[{"id": "file.read\u2066"}]),
        )
    )
    out.append(
        rejected(
            "import-trojan-local-name-rlo",
            "A local name holding a right-to-left override: E-IR-ID.",
            tags,
            "E-IR-ID",
            "/functions/0/body/0/name",
            moduleText=module([{"op": "set", "name": "x\u202e", "value": {"i32": 1}}]),
        )
    )
    out.append(
        accepted(
            "import-trojan-string-literal-may-hold-bidi",
            "A string literal is data: it may hold bidi and zero-width characters (printing escapes them).",
            ["identifier", "trojan-source", "literal"],
            moduleText=module([{"op": "expr", "value": {"string": "a\u202eb\u200bc\u2066"}}]),
        )
    )
    out.append(
        accepted(
            "import-trojan-plain-unicode-names",
            "Letters of any script, and emoji, stay valid in identifiers.",
            ["identifier", "trojan-source"],
            moduleText=module([{"op": "set", "name": "größe_计算_😀", "value": {"i32": 1}}]),
        )
    )
    return out


def descriptor_cases() -> list[Case]:
    tags = ["clr-ref", "descriptor-name"]
    out: list[Case] = []
    for name in DESCRIPTOR_NAMES:
        slug = name.lower().replace(".", "-").replace("_", "-")
        out.append(
            rejected(
                f"import-clr-descriptor-metadata-value-{slug}",
                f"A metadata value naming {name!r}: the fragment sits at a word edge.",
                tags,
                "E-IR-CLR-REF",
                "/metadata/descriptor",
                moduleText=module(metadata={"descriptor": name}),
            )
        )
        out.append(
            rejected(
                f"import-clr-descriptor-local-{slug}",
                f"A local named {name!r}.",
                tags,
                "E-IR-CLR-REF",
                "/functions/0/body/0/name",
                moduleText=module([{"op": "set", "name": name, "value": {"i32": 1}}]),
            )
        )
    out.append(
        rejected(
            "import-clr-descriptor-metadata-key-rawil",
            "A metadata key that is a descriptor name.",
            tags,
            "E-IR-CLR-REF",
            "/metadata/rawIlBase64",
            moduleText=module(metadata={"rawIlBase64": "AAAA"}),
        )
    )
    out.append(
        rejected(
            "import-clr-descriptor-reason-hostcode",
            "A capability reason naming host code.",
            tags,
            "E-IR-CLR-REF",
            "/capabilityRequests/0/reason",
            moduleText=module(capabilityRequests=[{"id": "file.read", "reason": "needs hostCodeAccess"}]),
        )
    )
    out.append(
        rejected(
            "import-clr-descriptor-text-string",
            "The text form scans string literals the same way.",
            [*tags, "text-form"],
            "E-IR-CLR-REF",
            "/functions/0/body/0/value/string",
            kernelText='module "m" version "1.0.0";\nentrypoint fn main() -> String { return "rawIlBytes"; }\n',
        )
    )
    for name in ORDINARY_NAMES:
        out.append(
            accepted(
                f"import-clr-descriptor-ordinary-{name.replace('_', '-').lower()}",
                f"{name!r} holds a fragment inside one word only: accepted.",
                tags,
                moduleText=module([{"op": "set", "name": name, "value": {"i32": 1}}], metadata={"k": name}),
            )
        )
    return out


def opaque_case(value: str, *, traversal: bool) -> Case:
    """The wire-form case of one opaque-id literal holding ``value``: rejected with E-JSON-ID when it
    is a ``traversal``, else accepted."""
    slug = value.replace(".", "dot").replace(":", "-")
    text = module([{"op": "expr", "value": {"opaqueId": {"type": "ItemId", "value": value}}}])
    tags = ["opaque-id", "traversal"]
    if not traversal:
        return accepted(
            f"import-opaque-plain-{slug}",
            f"A single dot is no traversal: {value!r} imports.",
            tags,
            moduleText=text,
        )
    return rejected(
        f"import-opaque-traversal-{slug}",
        f"An opaque-id value holding '..' ({value!r}) is a path traversal: E-JSON-ID.",
        tags,
        "E-JSON-ID",
        "/functions/0/body/0/value/opaqueId/value",
        moduleText=text,
    )


def opaque_cases() -> list[Case]:
    text_form = rejected(
        "import-opaque-traversal-text-form",
        "The text form gives the same code.",
        ["opaque-id", "traversal", "text-form"],
        "E-JSON-ID",
        "/functions/0/body/0/value/opaqueId/value",
        kernelText='module "m" version "1.0.0";\nentrypoint fn main() -> I32 { opaque ItemId "..:x"; return 1; }\n',
    )
    return [
        *(opaque_case(value, traversal=True) for value in TRAVERSALS),
        text_form,
        *(opaque_case(value, traversal=False) for value in PLAIN_IDS),
    ]


def build() -> str:
    cases = [*identifier_cases(), *descriptor_cases(), *opaque_cases()]
    return json.dumps({"cases": cases}, indent=2, ensure_ascii=True) + "\n"


def main(argv: list[str] | None = None) -> int:
    return write_or_check(__file__, {OUTPUT: build()}, argv, summary=f"wrote {OUTPUT}")


if __name__ == "__main__":
    raise SystemExit(main())
