"""The language-neutral conformance corpus (``cases/``) and its runner.

One job per module: ``model`` (case, expectation and result records), ``shape`` (strict case
checking), ``loader`` (files and corpus-wide rules), ``areas`` (which area a case file belongs to),
``generate`` (``moduleTextGenerator``), ``sources`` (the exact importer input), ``workspace``
(per-case temporary root), ``fixtures`` (fresh fixture bindings per evaluation, with our ``refuse``
kind), ``pipeline`` with ``stage_validate`` and ``stage_run`` (our implementation, stage by stage),
``availability`` (which backends this tree can run in process), ``backends`` (in process or ``--impl``),
``protocol`` (the line-delimited JSON protocol) with ``versions`` (its and the corpus's version), ``wire_form`` (``--wire``: every module as wire JSON),
``compare`` and ``values`` (verdicts), ``runner``
and ``report`` (a run and its output), ``coverage`` (what the corpus exercises), ``docmetrics`` (the
import budgets, measured); ``generator`` is the type-directed program generator and ``tools/`` the
scripts that write the generated case files. See ``conformance/README.md``.
"""
