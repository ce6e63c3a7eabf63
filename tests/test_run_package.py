"""trajcheck.run: the run side as one package -- its public names, the worker's light start, and
the old import paths (trajcheck.run.runner, .tools, .sandbox, .simulate) giving the same objects."""

import importlib
import subprocess
import sys
import warnings

import pytest

import trajcheck.run as run


def test_every_public_name_is_the_defining_modules_object():
    assert sorted(run.__all__) == sorted(run._WHERE)
    for name in run.__all__:
        mod = importlib.import_module(f"trajcheck.run.{run._WHERE[name]}")
        assert getattr(run, name) is getattr(mod, name), name
    assert run.simulate is importlib.import_module("trajcheck.run.simulated_user").simulate
    assert callable(run.simulate)  # a function, not a submodule shadowing it
    with pytest.raises(AttributeError, match="no attribute 'run_suit'"):
        run.run_suit  # noqa: B018


def test_worker_starts_without_the_registry_sandbox_or_jsonschema():
    # the worker runs `python -m trajcheck.run.worker`; importing the package first must stay light
    code = ("import sys, trajcheck.run.worker; "
            "print(sorted(m for m in ('trajcheck.run.tools', 'trajcheck.run.sandbox', "
            "'trajcheck.run.runner', 'jsonschema') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize(("old", "new"), [("runner", "runner"), ("tools", "tools"), ("sandbox", "sandbox"),
                                          ("simulate", "simulated_user")])
def test_old_import_paths_warn_and_give_the_same_objects(old, new):
    sys.modules.pop(f"trajcheck.{old}", None)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        shim = importlib.import_module(f"trajcheck.{old}")
    assert any(issubclass(w.category, DeprecationWarning) and f"trajcheck.run.{new}" in str(w.message)
               for w in caught)
    mod = importlib.import_module(f"trajcheck.run.{new}")
    assert shim.__all__ and set(shim.__all__) == set(mod.__all__)
    for name in shim.__all__:
        assert getattr(shim, name) is getattr(mod, name), name
