"""dotboxd: run untrusted, author-supplied kernels safely inside a Python host.

A kernel is restricted, typed IR (JSON on the wire, a readable text form, or restricted Python). The
host imports it strictly (``dotboxd.grammar``), validates it against a policy
(``dotboxd.validator``), proves what it can with Z3 (``dotboxd.validator.prover``), and runs it
metered (``dotboxd.runtime``). Data flows one way through those layers; ``dotboxd.core`` holds what
every layer shares (AST, values, diagnostics, codes, costs, bindings).

The package map, lowest layer first (a package may import its own level and those below, never one
above; ``tests/architecture/test_layering.py`` enforces it):

* ``core`` - definitions: the IR, types, values, operator semantics, costs, codes, diagnostics;
* ``grammar`` - import of the three source forms into the IR, formatting and the module hash;
* ``validator`` - the passes from a module and a policy to an immutable ``ExecutionPlan``; the prover;
* ``runtime`` - metered execution: the reference interpreter, the optimized backend, the facades;
* ``host`` - the API a host program uses: bindings, ``Policy``, ``SandboxHost``; on the same level
  ``plugins`` (trusted code, no boundary) and ``isolation`` (third-party Python behind an OS boundary);
* ``conformance`` - the language-neutral case corpus and its runner; on its level ``distributed``
  (kernels over Dask partitions);
* ``testing`` - the pytest plugin for host developers (runs their cases through ``conformance``);
* ``cli`` - the ``dotboxd`` command.

The repository keeps ``grammar/``, ``validator/``, ``runtime/`` and ``conformance/`` as top-level
folders; ``pyproject.toml`` maps them into this namespace, and the editable install presents the
assembled package to tools (``tools/packaging/dotboxd_backend.py``).
"""

from pkgutil import extend_path

# The editable install serves the package from a tree of folder links (tools/packaging/); a process
# started in the repository root sees the root's partial dotboxd/ folder first. Extending __path__ with
# every dotboxd/ folder on sys.path lets such a process still find the mapped subpackages (grammar,
# validator, runtime, conformance). In a regular install there is one folder and this changes nothing.
__path__ = extend_path(__path__, __name__)

__version__ = "0.1.0"
