"""The language-neutral conformance corpus (``cases/``) and its runner.

One job per module: ``model`` (case, expectation and result records), ``shape`` (strict case
checking), ``loader`` (files and corpus-wide rules), ``generate`` (``moduleTextGenerator``),
``sources`` (the exact importer input), ``workspace`` (per-case temporary root), ``pipeline`` with
``stage_validate`` and ``stage_run`` (our implementation, stage by stage), ``availability`` (which
backends and stages exist), ``backends`` (in process or ``--impl``), ``protocol`` (the line-delimited
JSON protocol), ``compare`` and ``values`` (verdicts), ``runner`` and ``report`` (a run and its
output), ``docmetrics`` (the import budgets, measured). See ``conformance/README.md``.
"""
