"""The ``dotboxd`` command line: one module per sub-command, over the public layers.

``main`` parses the command and dispatches to ``cmd_<name>`` (``parse``, ``fmt``, ``hash``,
``lower``, ``check``, ``prove``, ``run``, ``conformance``, ``worker``), importing only the
sub-command it runs so a quick command stays quick. ``host_inputs`` loads the policy and binding
manifest that ``check``, ``prove`` and ``run`` validate against; ``output`` renders every result and
diagnostic, as text or ``--format json``.

Invariants. The CLI sits on top of the layering (it may import everything; nothing imports it)
and adds no semantics of its own: what a command accepts, refuses or computes is what the library
does. Every bad input ends in a DotBoxD diagnostic and a documented exit code (0 success, 1 refused
or failed, 2 usage), never a traceback; exit 3 is reserved for a fault in dotboxd itself, reported
in one line, and tests treat reaching it as a bug.
"""
