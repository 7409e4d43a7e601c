"""dotboxd: run untrusted, author-supplied kernels safely inside a Python host.

A kernel is restricted, typed IR (JSON on the wire, a readable text form too). The host imports it
strictly (``dotboxd.grammar``), validates it against a policy (``dotboxd.validator``), proves what it
can with Z3, and runs it metered (``dotboxd.runtime``). Data flows one way through those layers;
``dotboxd.core`` holds what every layer shares (AST, diagnostics, codes, costs).
"""

from pkgutil import extend_path

# The editable install serves the package from a tree of folder links (tools/packaging/); a process
# started in the repository root sees the root's partial dotboxd/ folder first. Extending __path__ with
# every dotboxd/ folder on sys.path lets such a process still find the mapped subpackages (grammar,
# validator, runtime, conformance). In a regular install there is one folder and this changes nothing.
__path__ = extend_path(__path__, __name__)

__version__ = "0.1.0"
