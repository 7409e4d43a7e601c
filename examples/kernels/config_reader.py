"""Read the game's settings file through the standard `file.readText` binding (twin of
config-reader.dbk). `path(...)` from dotboxd.lang writes a sandbox path literal."""

from dotboxd.lang import String, entrypoint, module, path, requires

module("config-reader", version="1.0.0")
requires("file.read", reason="read the game's settings file")


@entrypoint
def main() -> String:
    return file.readText(path("config/settings.json"))
