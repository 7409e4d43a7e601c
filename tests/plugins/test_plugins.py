"""Trusted plugins (posture 2): explicit loading, accountable, removable - and NOT contained.

The first test is the point of this file: a loaded plugin reads a file no policy granted and opens a
socket, and the test asserts that it CAN. Nobody may read ``dotboxd.plugins`` as containment.
"""

from __future__ import annotations

import hashlib
import socket
import textwrap
from pathlib import Path

import pytest

import dotboxd.plugins
from dotboxd.core.diagnostics import DotBoxDError
from dotboxd.host import Policy, SandboxHost
from dotboxd.plugins import PluginManager
from dotboxd.plugins import loader as plugin_loader

PLUGIN = """
from dotboxd.host import Cost, Effect, host_binding

name = "tick"
version = "1.2.3"
torn_down = []


@host_binding(id="probe.tick", capability="probe.tick", effects=Effect.CPU | Effect.HOST_STATE_READ, cost=Cost(base_fuel={fuel}))
def tick() -> bool:
    return True


def setup(registry):
    registry.add_binding(tick)
    registry.add_method("tick.ping", lambda: "pong")
    registry.add_event_contract("tick.ticked", {{"type": "object"}})


def teardown():
    torn_down.append(True)
"""

KERNEL = 'module "t" version "1.0.0";\nentrypoint fn main() -> Bool { return probe.tick(); }\n'
GRANT = Policy.builder().grant("probe.tick").build()


def _write(tmp_path: Path, body: str, name: str = "tick_plugin.py") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(body), encoding="utf-8")
    return path


def test_plugin_is_not_contained_it_reads_ungranted_files_and_opens_sockets(tmp_path: Path) -> None:
    """Posture 2 is not a boundary: the plugin reads a secret outside any grant and talks on a socket."""
    secret = tmp_path / "outside-any-grant" / "secret.txt"
    secret.parent.mkdir()
    secret.write_text("host secret", encoding="utf-8")
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    port = listener.getsockname()[1]
    body = f"""
    import socket
    name = "escapee"
    version = "0"
    seen = {{}}

    def setup(registry):
        seen["secret"] = open({str(secret)!r}, encoding="utf-8").read()
        with socket.create_connection(("127.0.0.1", {port}), timeout=5) as conn:
            conn.sendall(b"hello from a plugin")
        seen["connected"] = True

    def teardown():
        pass
    """
    try:
        loaded = PluginManager(SandboxHost()).load_path(_write(tmp_path, body, "escapee.py"))
        conn, _ = listener.accept()
        with conn:
            conn.settimeout(5)
            assert conn.recv(100) == b"hello from a plugin"
    finally:
        listener.close()
    assert loaded.instance.seen == {"secret": "host secret", "connected": True}


def test_plugin_api_docstrings_say_it_is_not_a_boundary() -> None:
    for documented in (dotboxd.plugins, plugin_loader, PluginManager):
        text = " ".join((documented.__doc__ or "").split())
        assert "NOT A SECURITY BOUNDARY" in text, documented
    assert "full authority" in " ".join((dotboxd.plugins.__doc__ or "").split())


def test_plugin_contributions_are_audited_with_file_hashes_and_removed_on_unload(tmp_path: Path) -> None:
    host = SandboxHost()
    manager = PluginManager(host)
    path = _write(tmp_path, PLUGIN.format(fuel=1))
    loaded = manager.load_path(path)
    assert (loaded.name, loaded.version) == ("tick", "1.2.3")
    record = manager.audit_trail[0]
    assert record.action == "load" and record.bindings == ("probe.tick",)
    assert dict(record.file_hashes) == {str(path.resolve()): hashlib.sha256(path.read_bytes()).hexdigest()}
    assert manager.methods["tick.ping"]() == "pong" and "tick.ticked" in manager.events

    plan = host.prepare(KERNEL, GRANT)
    assert host.execute(plan).value is True

    manager.unload("tick")
    assert "probe.tick" not in host.catalog and not manager.methods and not manager.events
    assert loaded.instance.torn_down == [True]
    assert [r.action for r in manager.audit_trail] == ["load", "unload"]
    after = host.execute(plan)
    assert after.error is not None and after.error.code == "E-PLAN-BINDINGS"
    with pytest.raises(DotBoxDError) as refused:
        host.prepare(KERNEL, GRANT)
    assert refused.value.diagnostic.code.startswith("E-")


def test_plugin_binding_still_passes_the_binding_registry_and_the_meter(tmp_path: Path) -> None:
    """The safe-kernel boundary stays where it was: a plugin's binding is checked and charged."""
    host = SandboxHost()
    manager = PluginManager(host)
    manager.load_path(_write(tmp_path, PLUGIN.format(fuel=7)))
    ungranted = Policy.default()
    with pytest.raises(DotBoxDError) as denied:
        host.prepare(KERNEL, ungranted)
    assert denied.value.code == "E-POLICY-CAP"
    result = host.execute(host.prepare(KERNEL, GRANT))
    manager.unload("tick")
    manager.load_path(_write(tmp_path, PLUGIN.format(fuel=1), "cheap.py"))
    cheaper = host.execute(host.prepare(KERNEL, GRANT))
    assert result.usage.fuel_used - cheaper.usage.fuel_used == 6


def test_plugin_bad_binding_is_refused_and_leaves_the_host_unchanged(tmp_path: Path) -> None:
    host = SandboxHost()
    manager = PluginManager(host)
    before = host.catalog
    bad = PLUGIN.format(fuel=1).replace('id="probe.tick"', 'id="math.abs"')
    with pytest.raises(DotBoxDError) as refused:
        manager.load_path(_write(tmp_path, bad))
    assert refused.value.code == "E-BINDING-DUP"
    assert host.catalog is before and not manager.plugins and not manager.audit_trail


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ("name = 'x'\nversion = '1'\n", "E-PLUGIN-LOAD"),
        ("raise RuntimeError('boom')\n", "E-PLUGIN-LOAD"),
    ],
)
def test_plugin_without_contract_or_raising_is_a_clear_error(tmp_path: Path, body: str, code: str) -> None:
    with pytest.raises(DotBoxDError) as refused:
        PluginManager(SandboxHost()).load_path(_write(tmp_path, body, "broken.py"))
    assert refused.value.code == code


def test_plugin_name_and_method_conflicts_are_refused(tmp_path: Path) -> None:
    manager = PluginManager(SandboxHost())
    manager.load_path(_write(tmp_path, PLUGIN.format(fuel=1)))
    with pytest.raises(DotBoxDError) as again:
        manager.load_path(_write(tmp_path, PLUGIN.format(fuel=1), "copy.py"))
    assert again.value.code == "E-PLUGIN-CONFLICT"
    with pytest.raises(DotBoxDError) as unknown:
        manager.unload("nope")
    assert unknown.value.code == "E-PLUGIN-UNKNOWN"


def test_plugin_from_entry_point_group(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Entry points of the ``dotboxd.plugins`` group load by name; nothing loads by being installed."""
    package = tmp_path / "site"
    package.mkdir()
    (package / "ep_tick_plugin.py").write_text(textwrap.dedent(PLUGIN.format(fuel=1)), encoding="utf-8")
    dist = package / "ep_tick_plugin-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: ep-tick-plugin\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[dotboxd.plugins]\ntick = ep_tick_plugin\n")
    monkeypatch.syspath_prepend(str(package))
    host = SandboxHost()
    manager = PluginManager(host)
    assert "probe.tick" not in host.catalog
    loaded = manager.load_entry_point("tick")
    assert loaded.record.source == "entry-point:tick" and "probe.tick" in host.catalog
    assert list(loaded.record.file_hashes.values()) == [
        hashlib.sha256((package / "ep_tick_plugin.py").read_bytes()).hexdigest()
    ]
    with pytest.raises(DotBoxDError) as missing:
        manager.load_entry_point("absent")
    assert missing.value.code == "E-PLUGIN-LOAD"
