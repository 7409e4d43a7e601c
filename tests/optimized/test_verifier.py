"""The generated-code verifier: every tampered module is refused before ``compile()`` and never runs.

The mutation suite starts from a real generated module (loops of every kind, inlined and real
calls, a binding, text and GUID literals) and applies one tampering at a time: imports, eval and
getattr, attribute and dunder chains, subscripts, a missing meter charge, an unlisted stub, global
and nonlocal writes, oversize and string constants, lambdas, with/try/raise, generators, classes,
comprehensions, keyword and starred arguments, calls outside the plan, out-of-range table indexes,
tampered tables. Each must raise ``VerifierFailure`` from ``artifact.bind`` - the only path to
``compile()`` - and leave the sentinel untouched (the code never ran).
"""

from __future__ import annotations

import ast
import copy
import types
from collections.abc import Callable

import pytest

from dotboxd.runtime.optimized.artifact import ArtifactKey, bind
from dotboxd.runtime.optimized.codegen import GenOptions, generate
from dotboxd.runtime.optimized.errors import VerifierFailure
from dotboxd.runtime.optimized.tables import Tables
from dotboxd.runtime.optimized.verifier import ALLOWED_NODES, allowed_globals, verify_code, verify_module

from .kernels import FEATURES, prepare

PLAN = prepare(FEATURES)
BASE = generate(PLAN)
KEY = ArtifactKey.for_plan(PLAN, GenOptions())

Mutation = Callable[[ast.Module, Tables], None]


def _function(module: ast.Module, name: str = "") -> ast.FunctionDef:
    for stmt in module.body:
        if isinstance(stmt, ast.FunctionDef) and (not name or stmt.name == name):
            return stmt
    raise AssertionError("no function")


def _entry(module: ast.Module) -> ast.FunctionDef:
    index = PLAN_FUNCTIONS.index("main")
    return _function(module, f"_fn{index}")


PLAN_FUNCTIONS = list(BASE.tables.functions)


def _insert(code: str, where: str = "function") -> Mutation:
    """Insert the statements of ``code`` at the top of the entry function (or the module)."""

    def mutate(module: ast.Module, tables: Tables) -> None:
        statements = ast.parse(code).body
        if where == "module":
            module.body[0:0] = statements
        else:
            body = _entry(module).body
            body[0:0] = statements

    return mutate


def _whiles(module: ast.Module) -> list[ast.While]:
    return [node for node in ast.walk(_entry(module)) if isinstance(node, ast.While)]


def _fors(module: ast.Module) -> list[ast.For]:
    return [node for node in ast.walk(_entry(module)) if isinstance(node, ast.For)]


def _calls_stub(stmt: ast.stmt, stub: str) -> bool:
    value = stmt.value if isinstance(stmt, ast.Assign) else None
    return isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == stub


def _drop_while_charge(module: ast.Module, tables: Tables) -> None:
    charged = [w for w in _whiles(module) if isinstance(w.body[0], ast.AugAssign)]
    assert charged, "the base module has a while loop that starts with a charge"
    loop = charged[0]
    loop.body[0] = ast.Pass()


def _drop_for_charge(module: ast.Module, tables: Tables) -> None:
    metered = [f for f in _fors(module) if _calls_stub(f.body[0], "_s_liter")]
    assert metered, "the base module has a per-iteration metered for loop"
    metered[0].body[0] = ast.Pass()


def _drop_reservation(module: ast.Module, tables: Tables) -> None:
    for loop in _whiles(module):
        first = loop.body[0]
        if isinstance(first, ast.Assign) and _calls_stub(first, "_s_cap"):
            first.value = ast.Constant(10**6)
            return
    raise AssertionError("the base module has a bulk loop")


def _drop_capped_reservation(module: ast.Module, tables: Tables) -> None:
    """A fast counter-capped chunk (``_s_capm``; its body starts with no charge of its own) whose
    reservation is replaced: its steps run unchecked, so without the reservation nothing would
    bound them."""
    for node in ast.walk(_entry(module)):
        if isinstance(node, ast.While) and len(node.body) > 1:
            first, chunk = node.body[0], node.body[1]
            fast = isinstance(chunk, ast.For) and not isinstance(chunk.body[0], ast.AugAssign)
            if fast and isinstance(first, ast.Assign) and _calls_stub(first, "_s_capm"):
                first.value = ast.Constant(10**6)
                return
    raise AssertionError("the base module has a counter-capped bulk loop")


def _unbounded_bulk_range(module: ast.Module, tables: Tables) -> None:
    for loop in _fors(module):
        assert isinstance(loop.iter, ast.Call)
        args = loop.iter.args
        if len(args) == 2 and isinstance(args[1], ast.BinOp):
            args[1] = ast.Constant(10**9)
            return
    raise AssertionError("the base module has a bulk chunk loop")


def _tables(edit: Callable[[Tables], None]) -> Mutation:
    def mutate(module: ast.Module, tables: Tables) -> None:
        edit(tables)

    return mutate


def _retarget_binding(module: ast.Module, tables: Tables) -> None:
    for node in ast.walk(module):
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "_s_bind":
            node.args[4] = ast.Constant(len(tables.bindings) + 3)
            return
    raise AssertionError("the base module calls a binding")


def _fault_site_to_segment(module: ast.Module, tables: Tables) -> None:
    for node in ast.walk(module):
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "_s_f2":
            node.args[3] = ast.Constant(0)  # site 0 is the empty fuel segment, not an operation
            return
    raise AssertionError("the base module has a fault site")


def _decorate(module: ast.Module, tables: Tables) -> None:
    _entry(module).decorator_list.append(ast.Name("_s_fx", ast.Load()))


def _defaults(module: ast.Module, tables: Tables) -> None:
    fn = _entry(module)
    fn.args.defaults = [ast.Constant(1)]


def _rename_function(module: ast.Module, tables: Tables) -> None:
    _entry(module).name = "_fn99"


def _extra_param(module: ast.Module, tables: Tables) -> None:
    _entry(module).args.args.append(ast.arg("v99"))


def _while_test(module: ast.Module, tables: Tables) -> None:
    _whiles(module)[0].test = ast.Name("v0", ast.Load())


def _bounded(module: ast.Module) -> ast.While:
    """The first ``while k < e:`` bulk forRange loop of the entry function."""
    bounded = [w for w in _whiles(module) if isinstance(w.test, ast.Compare)]
    assert bounded, "the base module has a bulk forRange loop with a bounds test"
    return bounded[0]


def _bounded_test(code: str) -> Mutation:
    """Replace the bounds test of a bulk forRange loop by the expression ``code``."""

    def mutate(module: ast.Module, tables: Tables) -> None:
        expression = ast.parse(code, mode="eval").body
        _bounded(module).test = expression

    return mutate


def _bounded_without_reservation(module: ast.Module, tables: Tables) -> None:
    loop = _bounded(module)
    loop.body.insert(0, ast.parse("v0 = v0").body[0])


def _bounded_charge_loop(module: ast.Module, tables: Tables) -> None:
    """A loop that starts with a charge is metered under ``while True:`` only."""
    charged = [w for w in _whiles(module) if isinstance(w.body[0], ast.AugAssign)]
    assert charged, "the base module has a while loop that starts with a charge"
    charged[0].test = ast.parse("t0 < v0", mode="eval").body


def _bounded_else(module: ast.Module, tables: Tables) -> None:
    _bounded(module).orelse = [ast.Pass()]


MUTATIONS: dict[str, Mutation] = {
    "import os (module level)": _insert("import os", "module"),
    "import os (in a function)": _insert("import os"),
    "from os import system": _insert("from os import system"),
    "eval": _insert("t0 = eval('1 + 1')"),
    "exec": _insert("exec(v0)"),
    "getattr": _insert("t0 = getattr(v0, 'real')"),
    "attribute access": _insert("t0 = v0.real"),
    "getattr chain to subclasses": _insert("t0 = ().__class__.__bases__[0].__subclasses__()"),
    "dunder name": _insert("t0 = __builtins__"),
    "__import__": _insert("t0 = __import__(v0)"),
    "subscript": _insert("t0 = v1[0]"),
    "missing charge in a while loop": _drop_while_charge,
    "missing charge in a for loop": _drop_for_charge,
    "bulk loop without its reservation": _drop_reservation,
    "bulk loop ranging past its reservation": _unbounded_bulk_range,
    "counter-capped bulk loop without its reservation": _drop_capped_reservation,
    "capped reservation without its room": _insert("n9 = _s_capm(R, f, d, lr, 0, None, 0, 0, 1, 0)"),
    "capped reservation with an extra argument": _insert(
        "n9 = _s_capm(R, f, d, lr, 0, None, 0, 0, 1, 0, 5, 6)"
    ),
    "for over a non-range iterable": _insert(
        "for t0 in v1:\n    f -= 1\n    if f < 0:\n        _s_fx(R, f, lr, 1)"
    ),
    "_range used as a value": _insert("t0 = _range(10)"),
    "unlisted stub": _insert("_s_evil(R, f)"),
    "global statement": _insert("global f"),
    "nested function with nonlocal": _insert("def t9():\n    nonlocal f"),
    "global write to a stub": _insert("_s_fx = 1", "module"),
    "write to a stub name inside a function": _insert("_s_liter = v0"),
    "oversize constant": _insert("t0 = " + str(2**70)),
    "string constant": _insert("t0 = 'rm -rf /'"),
    "bytes constant": _insert("t0 = b'x'"),
    "non-finite constant": lambda m, t: _infinite_constant(m, t),
    "lambda": _insert("t0 = lambda: 1"),
    "with": _insert("with v0:\n    pass"),
    "try/except": _insert("try:\n    pass\nexcept Exception:\n    pass"),
    "raise": _insert("raise v0"),
    "yield (generator)": _insert("yield 1"),
    "await": _insert("async def t9():\n    await v0", "module"),
    "class definition": _insert("class T:\n    pass", "module"),
    "list comprehension": _insert("t0 = [v0 for v0 in _range(3)]"),
    "f-string": _insert("t0 = f'{v0}'"),
    "walrus": _insert("_s_fx(R, (t0 := 1), lr, 1)"),
    "keyword argument": _insert("_s_liter(R, f, lr=0)"),
    "starred argument": _insert("_s_liter(R, *v1)"),
    "call to a function outside the plan": _insert("t0, f = _fn99(R, f, d, lr)"),
    "run state used as a value": _insert("t0 = R"),
    "assignment to the frame budget": _insert("d = 10 ** 6"),
    "delete": _insert("del v0"),
    "assert": _insert("assert v0"),
    "dict literal": _insert("t0 = {1: 2}"),
    "conditional expression": _insert("t0 = 1 if v0 else 2"),
    "while with a real test": _while_test,
    "bounded while not starting with its reservation": _bounded_without_reservation,
    "bounded while around a charged body": _bounded_charge_loop,
    "bounded while with else": _bounded_else,
    "bounded while test calling a stub": _bounded_test("k0 < _p_max(k0, 1)"),
    "bounded while test calling on the left": _bounded_test("_p_min(k0, 1) < k0"),
    "bounded while test with a chained comparison": _bounded_test("k0 < v0 < v0"),
    "bounded while test with another operator": _bounded_test("k0 != v0"),
    "bounded while test negated": _bounded_test("not k0 < v0"),
    "bounded while test reading a stub": _bounded_test("k0 < _s_fx"),
    "bounded while test reading the run state": _bounded_test("k0 < R"),
    "bounded while test with a string constant": _bounded_test("k0 < 'x'"),
    "bounded while test with a walrus": _bounded_test("(t0 := k0) < v0"),
    "binding index out of range": _retarget_binding,
    "fault site naming a fuel segment": _fault_site_to_segment,
    "decorator": _decorate,
    "default argument": _defaults,
    "function not in the plan": _rename_function,
    "parameters differ from the plan": _extra_param,
    "tables list a function the plan lacks": _tables(lambda t: t.functions.__setitem__(0, "no.such.fn")),
    "tables list a binding the plan lacks": _tables(lambda t: t.bindings.append("os.system")),
}


def _infinite_constant(module: ast.Module, tables: Tables) -> None:
    _insert("t0 = 1.0")(module, tables)
    _set_first_float(module, float("inf"))


def _set_first_float(module: ast.Module, value: float) -> None:
    for node in ast.walk(module):
        if isinstance(node, ast.Constant) and type(node.value) is float:
            node.value = value
            return


def test_the_mutation_suite_is_large_enough() -> None:
    assert len(MUTATIONS) >= 30


def test_the_untampered_module_passes() -> None:
    artifact = bind(PLAN, KEY, copy.deepcopy(BASE.module), copy.deepcopy(BASE.tables), BASE.ir_nodes)
    assert set(artifact.functions) == set(PLAN_FUNCTIONS)


@pytest.mark.parametrize("name", sorted(MUTATIONS))
def test_tampered_module_is_rejected_and_never_runs(name: str) -> None:
    module = copy.deepcopy(BASE.module)
    tables = copy.deepcopy(BASE.tables)
    MUTATIONS[name](module, tables)
    ast.fix_missing_locations(module)
    with pytest.raises(VerifierFailure):
        bind(PLAN, KEY, module, tables, BASE.ir_nodes)


def test_every_node_type_generated_is_on_the_allowlist() -> None:
    from .kernels import LOOPS_AND_FAULTS

    for text in (FEATURES, LOOPS_AND_FAULTS):
        for options in (GenOptions(), GenOptions(bulk_loops=False), GenOptions(inline=False)):
            module = generate(prepare(text), options).module
            assert {type(n) for n in ast.walk(module)} <= ALLOWED_NODES


# --- code objects --------------------------------------------------------------------------


def _compiled() -> types.CodeType:
    code: types.CodeType = compile(BASE.module, "<test>", "exec", dont_inherit=True)
    return code


def _first_function_code(code: types.CodeType) -> types.CodeType:
    return next(c for c in code.co_consts if isinstance(c, types.CodeType))


def _replace_function_code(code: types.CodeType, new: types.CodeType) -> types.CodeType:
    consts = tuple(
        new if isinstance(c, types.CodeType) and c.co_name == new.co_name else c for c in code.co_consts
    )
    return code.replace(co_consts=consts)


GLOBALS = allowed_globals(BASE.tables)


def test_the_compiled_module_passes_the_code_check() -> None:
    verify_code(_compiled(), GLOBALS)


def test_code_object_naming_an_unlisted_global_is_rejected() -> None:
    code = _compiled()
    fn = _first_function_code(code)
    tampered = fn.replace(co_names=tuple("open" if n == "_s_fx" else n for n in fn.co_names))
    with pytest.raises(VerifierFailure, match="names 'open'"):
        verify_code(_replace_function_code(code, tampered), GLOBALS)


def test_code_object_with_a_string_constant_is_rejected() -> None:
    code = _compiled()
    fn = _first_function_code(code)
    tampered = fn.replace(co_consts=(*fn.co_consts, "/etc/passwd"))
    with pytest.raises(VerifierFailure, match="constant str"):
        verify_code(_replace_function_code(code, tampered), GLOBALS)


def test_generator_code_object_is_rejected() -> None:
    code = _compiled()
    fn = _first_function_code(code)
    tampered = fn.replace(co_flags=fn.co_flags | 0x20)
    with pytest.raises(VerifierFailure, match="forbidden flags"):
        verify_code(_replace_function_code(code, tampered), GLOBALS)


def test_import_opcode_is_rejected() -> None:
    source = compile("def _fn0(R, f, d, lr):\n    import os\n    return (os, f)\n", "<x>", "exec")
    with pytest.raises(VerifierFailure):
        verify_code(source, GLOBALS | {"os"})


def test_attribute_opcode_is_rejected() -> None:
    source = compile("def _fn0(R, f, d, lr):\n    return (R.meter, f)\n", "<x>", "exec")
    with pytest.raises(VerifierFailure, match="LOAD_ATTR"):
        verify_code(source, GLOBALS | {"meter"})


def test_closure_is_rejected() -> None:
    source = compile(
        "def _fn0(R, f, d, lr):\n    def t0():\n        return f\n    return (t0, f)\n", "<x>", "exec"
    )
    with pytest.raises(VerifierFailure):
        verify_code(source, GLOBALS)


def test_direct_verify_module_rejects_a_non_module() -> None:
    with pytest.raises(VerifierFailure):
        verify_module(ast.Expression(body=ast.Constant(1)), BASE.tables, PLAN)
