"""The versions an outside implementer checks against: the ``--impl`` protocol and the corpus.

``PROTOCOL_VERSION`` changes when a request or response changes shape or meaning (a new required
key, a renamed outcome); ``CORPUS_VERSION`` (semver) changes when cases are added (minor) or an
expectation or the case format changes incompatibly (major). ``CHANGELOG.md`` records each bump.
Protocol 1 was the first, unversioned protocol (no ``hello`` exchange).
"""

from __future__ import annotations

PROTOCOL_VERSION = 2
CORPUS_VERSION = "1.3.0"
