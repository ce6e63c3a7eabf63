"""Finding the agent under test and its tools: ``load_agent`` imports the callable a
``module:attr`` or ``file.py:attr`` spec names, ``resolve_tools`` finds its ``ToolRegistry``,
and the name recorded for an agent in its traces (``trajcheck.run.runner``'s module doc has
the agent contract)."""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from pathlib import Path
from typing import Any

from ..errors import AgentError
from .tools import ToolRegistry

__all__ = ["agent_name_of", "agent_name_of_spec", "load_agent", "resolve_tools", "tools_from_module"]


def load_agent(spec: str, *, add_cwd: bool = True, want_callable: bool = True) -> Any:
    """The callable named by ``spec``: ``"package.module:attr"`` (``attr`` may be dotted) or
    ``"path/to/file.py:attr"`` (loaded from the file; its folder is put on ``sys.path`` so
    it can import its siblings). The working directory is on the import path, as with
    ``python -m``. With ``add_cwd=False`` (an agent worker) the working directory is not
    added and the file's folder goes to the end of ``sys.path``, so neither can shadow the
    standard library. ``want_callable=False`` loads any object (``--tools`` naming a
    ``ToolRegistry``).

    Raises AgentError with a clear message when the spec has no ``:``, the module or file is
    not found, importing it fails, the attribute is missing, or it is not callable.
    """
    if not isinstance(spec, str) or ":" not in spec:
        raise AgentError(f"agent {spec!r}: expected module:callable (e.g. mypkg.agents:my_agent) "
                         "or path/to/file.py:callable")
    mod_part, attr = spec.rsplit(":", 1)
    if not mod_part or not attr:
        raise AgentError(f"agent {spec!r}: expected module:callable")
    if mod_part.endswith(".py") or os.sep in mod_part or "/" in mod_part:
        path = Path(mod_part)
        if not path.is_file():
            raise AgentError(f"agent {spec!r}: file {mod_part!r} not found")
        d = str(path.resolve().parent)
        if d not in sys.path:
            if add_cwd:
                sys.path.insert(0, d)
            else:
                sys.path.append(d)
        name = f"_trajcheck_agent_{abs(hash(str(path.resolve())))}"
        s = importlib.util.spec_from_file_location(name, path)
        if s is None or s.loader is None:
            raise AgentError(f"agent {spec!r}: cannot load {mod_part!r} as a Python module")
        mod = importlib.util.module_from_spec(s)
        sys.modules[name] = mod
        try:
            s.loader.exec_module(mod)
        except Exception as e:
            sys.modules.pop(name, None)
            raise AgentError(f"agent {spec!r}: importing {mod_part!r} failed: {type(e).__name__}: {e}") from e
    else:
        if add_cwd and os.getcwd() not in sys.path and "" not in sys.path:
            sys.path.insert(0, os.getcwd())
        try:
            mod = importlib.import_module(mod_part)
        except ModuleNotFoundError as e:
            if e.name and (mod_part == e.name or mod_part.startswith(e.name + ".")):
                raise AgentError(f"agent {spec!r}: module {mod_part!r} not found "
                                 f"(no module named {e.name!r})") from e
            raise AgentError(f"agent {spec!r}: importing {mod_part!r} failed: {e}") from e
        except Exception as e:
            raise AgentError(f"agent {spec!r}: importing {mod_part!r} failed: {type(e).__name__}: {e}") from e
    obj: Any = mod
    for part in attr.split("."):
        if not hasattr(obj, part):
            avail = sorted(n for n in dir(mod) if not n.startswith("_") and callable(getattr(mod, n)))
            raise AgentError(f"agent {spec!r}: module {mod_part!r} has no attribute {attr!r}"
                             + (f"; callables there: {', '.join(avail[:15])}" if avail else ""))
        obj = getattr(obj, part)
    if want_callable and not callable(obj):
        raise AgentError(f"agent {spec!r}: {attr!r} is a {type(obj).__name__}, not a callable")
    return obj  # type: ignore[no-any-return]


def resolve_tools(agent: Any, tools: Any = None) -> ToolRegistry:
    """The registry for ``agent`` (see the module doc): ``tools`` if given, else
    ``agent.tools``, else the agent module's ``TOOLS``; each may be a ``ToolRegistry`` or a
    zero-argument callable returning one. Raises AgentError for anything else."""
    cand = tools
    where = "tools"
    if cand is None:
        cand = getattr(agent, "tools", None)
        where = "agent.tools"
    if cand is None:
        mod = sys.modules.get(getattr(agent, "__module__", "") or "")
        cand = getattr(mod, "TOOLS", None) if mod is not None else None
        where = "the agent module's TOOLS"
    if cand is None:
        return ToolRegistry()
    if not isinstance(cand, ToolRegistry) and callable(cand):
        cand = cand()
    if not isinstance(cand, ToolRegistry):
        raise AgentError(f"{where} must be a trajcheck.run.ToolRegistry, got {type(cand).__name__}")
    return cand


def agent_name_of(agent: Any) -> str:
    """The name recorded for an agent object: ``module:qualname`` (a file-loaded module by
    its file name)."""
    mod = getattr(agent, "__module__", None) or "?"
    if mod.startswith("_trajcheck_agent_"):
        f = getattr(sys.modules.get(mod), "__file__", None)
        mod = Path(f).name if f else mod
    return f"{mod}:{getattr(agent, '__qualname__', None) or type(agent).__name__}"


def agent_name_of_spec(spec: str) -> str:
    """The name recorded for an agent given by spec: ``file.py:attr`` for a file (its name,
    not its folder), the spec itself for a module."""
    mod, _, attr = spec.rpartition(":")
    if mod.endswith(".py") or "/" in mod or os.sep in mod:
        return f"{Path(mod).name}:{attr}"
    return spec


def tools_from_module(agent: Any) -> bool:
    """True when ``resolve_tools`` would take the tools from the agent's module or object."""
    if getattr(agent, "tools", None) is not None:
        return True
    mod = sys.modules.get(getattr(agent, "__module__", "") or "")
    return mod is not None and getattr(mod, "TOOLS", None) is not None

