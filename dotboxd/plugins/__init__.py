"""Trusted plugins (posture 2). NOT A SECURITY BOUNDARY.

A plugin is ordinary Python code that the host operator chose to trust: it is imported into this
process and runs with the full authority of the process - it can read any file the process can, open
any socket, read the environment and change any object in memory. Nothing here contains it, and
unloading it is bookkeeping, not isolation. Load only first-party or vetted code; for a third party's
Python use ``dotboxd.isolation`` (an OS boundary), for untrusted logic use safe kernels
(``dotboxd.host.SandboxHost``).

What this package does give: explicit loading (from a path or the ``dotboxd.plugins`` entry-point
group, never by scanning), a name and version per plugin, an audit record with the SHA-256 of every
file loaded, and registries of what each plugin contributed (host bindings, service RPC methods,
event contracts) so that unloading removes exactly those. A binding a plugin contributes still goes
through the binding registry checks, and kernels that call it are still validated and metered: the
safe-kernel boundary stays where it was.
"""

from dotboxd.plugins.loader import PluginManager
from dotboxd.plugins.records import LoadedPlugin, PluginAuditRecord, PluginRegistry

__all__ = ["LoadedPlugin", "PluginAuditRecord", "PluginManager", "PluginRegistry"]
