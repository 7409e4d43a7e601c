"""dotboxd: run untrusted, author-supplied kernels safely inside a Python host.

A kernel is restricted, typed IR (JSON on the wire, a readable text form too). The host imports it
strictly (``dotboxd.grammar``), validates it against a policy (``dotboxd.validator``), proves what it
can with Z3, and runs it metered (``dotboxd.runtime``). Data flows one way through those layers;
``dotboxd.core`` holds what every layer shares (AST, diagnostics, codes, costs).
"""

__version__ = "0.1.0"
