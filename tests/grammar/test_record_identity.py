"""One record encoder: module, policy, binding-manifest and plan hashes write strings the same way.

``dotboxd.core.records`` is the only encoder; ``grammar/canonical`` and ``core/bindings`` re-export
it. These tests pin the lone-surrogate rule (spec/canonical.md section 6): a hash must tell apart two
texts that differ only by an unpaired surrogate versus U+FFFD, which .NET's ``Encoding.UTF8``
replacement would merge, and it must give a surrogate pair held as two code points the bytes of the
astral character it is in UTF-16.
"""

from __future__ import annotations

import hashlib

from dotboxd.core import ast, bindings, records
from dotboxd.core.bindings import BindingDescriptor, binding_manifest_hash
from dotboxd.core.effects import Effect
from dotboxd.core.types import I32
from dotboxd.grammar import canonical
from dotboxd.grammar.canonical import module_hash
from dotboxd.validator.policy import PolicyBuilder

LONE, REPLACEMENT = "\ud800", "\ufffd"


def _module_with_text(text: str) -> ast.Module:
    body = (ast.Return(ast.Call("string.length", (ast.Literal(ast.LiteralKind.STRING, text),))),)
    main = ast.Function("main", ast.Visibility.ENTRYPOINT, (), ast.TypeRef("I32"), body)
    return ast.Module("m", "1.0.0", "1.0.0", (), (main,))


def _binding(version: str) -> BindingDescriptor:
    return BindingDescriptor(
        "game.score",
        (I32,),
        I32,
        Effect.CPU,
        None,
        bindings.Cost(1),
        bindings.AuditLevel.NONE,
        bindings.Safety.PURE_HOST_FACADE,
        version=version,
    )


def test_one_encoder_serves_every_hash() -> None:
    assert canonical.encode_record is records.encode_record
    assert canonical.hash_records is records.hash_records
    assert canonical.canonical_bytes is records.canonical_bytes
    assert bindings.canonical_record is records.canonical_record
    assert bindings.sha256_lines is records.hash_records


def test_canonical_record_writes_ints_and_bools_as_invariant_text() -> None:
    assert records.canonical_record("a\\b", 42, True, False, None) == "s4:a\\\\b;s2:42;s4:true;s5:false;n;"
    assert records.canonical_record("x", "y") == records.encode_record("x", "y")


def test_lone_surrogate_is_hashed_apart_from_the_replacement_character() -> None:
    assert records.canonical_bytes(LONE) != records.canonical_bytes(REPLACEMENT)
    assert records.sha256_hex(LONE) != records.sha256_hex(REPLACEMENT)


def test_module_hash_does_not_merge_a_lone_surrogate_with_u_fffd() -> None:
    assert module_hash(_module_with_text(LONE)) != module_hash(_module_with_text(REPLACEMENT))


def test_binding_manifest_hash_does_not_merge_a_lone_surrogate_with_u_fffd() -> None:
    lone = binding_manifest_hash([_binding("1.0.0-" + LONE)])
    assert lone != binding_manifest_hash([_binding("1.0.0-" + REPLACEMENT)])


def test_policy_hash_does_not_merge_a_lone_surrogate_with_u_fffd() -> None:
    lone = PolicyBuilder().with_policy_id("p" + LONE).build().policy_hash
    assert lone != PolicyBuilder().with_policy_id("p" + REPLACEMENT).build().policy_hash


def test_split_surrogate_pair_hashes_as_the_astral_character() -> None:
    assert records.canonical_bytes("\ud83d\ude00") == "\U0001f600".encode()
    assert records.hash_records(["\ud83d\ude00"]) == hashlib.sha256("\U0001f600".encode()).hexdigest()


def test_valid_text_hashes_as_plain_utf8() -> None:
    text = "caf\xe9 \U0001f600 \\ \x85"
    assert records.canonical_bytes(text) == text.encode("utf-8")
