"""Effect bits: fixed integers (they are hashed), names, parsing and unknown bits."""

from __future__ import annotations

from dotboxd.core.effects import (
    ALL_EFFECTS,
    EFFECT_NAMES,
    PURE,
    Effect,
    effect_from_name,
    effect_names,
    effects_text,
    parse_effect_names,
    unknown_bits,
)


def test_bit_values_are_dotboxds_implemented_enum() -> None:
    assert {name: int(bit) for bit, name in EFFECT_NAMES.items()} == {
        "Cpu": 1,
        "Alloc": 2,
        "Time": 4,
        "Random": 8,
        "FileRead": 16,
        "FileWrite": 32,
        "Network": 64,
        "HostStateRead": 128,
        "HostStateWrite": 256,
        "Concurrency": 512,
        "Audit": 2048,
    }
    assert PURE == Effect.CPU | Effect.ALLOC


def test_bit_1024_and_beyond_are_unknown() -> None:
    assert unknown_bits(1024) == 1024
    assert unknown_bits(int(ALL_EFFECTS)) == 0
    assert unknown_bits(4096 | 1) == 4096


def test_names_round_trip_in_bit_order() -> None:
    e = Effect.AUDIT | Effect.CPU | Effect.FILE_READ
    assert effect_names(e) == ["Cpu", "FileRead", "Audit"]
    assert parse_effect_names(effect_names(e)) == (e, [])
    assert effects_text(Effect.NONE) == "None"
    assert effects_text(e) == "Cpu|FileRead|Audit"


def test_unknown_names_are_reported_not_dropped() -> None:
    assert parse_effect_names(["Cpu", "DatabaseRead", "cpu"]) == (Effect.CPU, ["DatabaseRead", "cpu"])
    assert effect_from_name("Concurrency") is Effect.CONCURRENCY
    assert effect_from_name("concurrency") is None
