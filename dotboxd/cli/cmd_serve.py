"""``dotboxd serve --config server.toml [--host H] [--port P]``: run the networked server.

The config is checked before anything listens: a malformed file, a tenant without its token, a
policy or plugin that does not load is reported as a diagnostic (file, pointer, line:column) with
exit status 2, and nothing is served. ``--host``/``--port`` override the file. The server runs in
the foreground until interrupted (exit 0).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from dotboxd.cli.output import EXIT_OK, EXIT_USAGE, write_text
from dotboxd.core.diagnostics import DotBoxDError


def register(subparsers: Any) -> None:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "serve",
        help="run the HTTP/WebSocket server (service RPC, pushdown extensions)",
        description="Serve tenants over HTTP: RPC methods, and kernels they install and invoke.",
    )
    parser.add_argument("--config", required=True, metavar="server.toml", help="the server configuration")
    parser.add_argument("--host", default=None, help="listen address (overrides the file)")
    parser.add_argument("--port", type=int, default=None, help="listen port (overrides the file)")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from dotboxd.server import ServerState, build_app, load_config, serve_forever

    try:
        if args.port is not None and not 0 <= args.port <= 65535:
            write_text(sys.stderr, "dotboxd serve: --port must be in [0, 65535]\n")
            return EXIT_USAGE
        config = load_config(args.config).with_address(args.host, args.port)
        state = ServerState(config)
    except OSError as error:
        write_text(sys.stderr, f"dotboxd serve: cannot read {args.config}: {error.strerror}\n")
        return EXIT_USAGE
    except DotBoxDError as error:
        write_text(sys.stderr, error.diagnostic.render(None, args.config) + "\n")
        return EXIT_USAGE
    serve_forever(build_app(state), config.host, config.port, config.limits)
    return EXIT_OK
