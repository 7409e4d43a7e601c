"""Pass 5, control flow: loops and returns are used where they mean something.

Invariants established:

* ``break`` and ``continue`` appear only inside a ``while`` or ``forRange`` body; they act on the
  innermost loop (E-LOOP-CONTROL);
* every path through a function ends in ``return`` (E-FN-RETURN). A block returns when one of its
  statements returns on every path: a ``return``, or an ``if`` whose two branches both return. A loop
  never counts as returning, even ``while true``, because the check is syntactic and must not depend
  on evaluating conditions; add a ``return`` after the loop.

Dead statements (after an unconditional exit in the same block) were marked by the type pass; they
are still checked here, so a stray ``break`` in dead code is still an error.
"""

from __future__ import annotations

from dotboxd.core.ast import Break, Continue, ForRange, Function, If, Return, Stmt, While

from .context import Context


def run(ctx: Context) -> None:
    for fn in ctx.functions.values():
        _loop_control(ctx, fn.body, 0)
        if not _returns(fn.body):
            _missing_return(ctx, fn)


def _loop_control(ctx: Context, stmts: tuple[Stmt, ...], loops: int) -> None:
    for s in stmts:
        tp = type(s)
        if tp is Break or tp is Continue:
            if loops == 0:
                word = "break" if tp is Break else "continue"
                ctx.report(
                    "E-LOOP-CONTROL",
                    f"'{word}' outside a loop",
                    s.pointer,
                    s.span,
                    "break and continue act on the innermost while or forRange loop",
                    statement=word,
                )
        elif tp is If:
            assert isinstance(s, If)
            _loop_control(ctx, s.then, loops)
            _loop_control(ctx, s.else_, loops)
        elif tp is While or tp is ForRange:
            assert isinstance(s, (While, ForRange))
            _loop_control(ctx, s.body, loops + 1)


def _returns(stmts: tuple[Stmt, ...]) -> bool:
    for s in stmts:
        if type(s) is Return:
            return True
        if type(s) is If:
            assert isinstance(s, If)
            if _returns(s.then) and _returns(s.else_):
                return True
    return False


def _fall_through_point(stmts: tuple[Stmt, ...], fallback: str) -> str:
    """The pointer of the statement after which control falls off the end (evidence)."""
    if not stmts:
        return fallback
    last = stmts[-1]
    if type(last) is If:
        assert isinstance(last, If)
        if not _returns(last.then):
            return _fall_through_point(last.then, last.pointer)
        return _fall_through_point(last.else_, last.pointer)
    return last.pointer


def _missing_return(ctx: Context, fn: Function) -> None:
    body_ptr = f"{fn.pointer}/body" if fn.pointer else ""
    ctx.report(
        "E-FN-RETURN",
        f"function '{fn.id}' can reach its end without returning a value",
        fn.pointer,
        fn.span,
        'end every path with return (Unit functions return {"unit": true}); loops never count as returning',
        function=fn.id,
        fallsThroughAfter=_fall_through_point(fn.body, body_ptr),
    )
