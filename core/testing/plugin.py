"""The pytest plugin (entry point ``pytest11: trajcheck``): the ``trajcheck`` fixture and
``--trajcheck-report DIR``.

Registered for every pytest session once trajcheck is installed, and inert unless used: it
adds one option and one fixture, imports nothing of trajcheck until a test asks for the
fixture, and writes nothing without ``--trajcheck-report``.

- ``trajcheck`` fixture: ``assert_calls``, ``assert_no_forbidden``, ``assert_called`` as in
  ``trajcheck.testing``, each also recording the trajectory it checked with what was
  expected of it;
- ``--trajcheck-report DIR``: at the end of the session every recorded trajectory is scored
  as ``trajcheck eval`` would (``score.suite.score_runs``; the case is what the assertions
  expected: ``assertions.case_for``) and written to DIR as ``scorecard.json``,
  ``scorecard.md``, ``report.html`` and ``junit.xml``. A test is one case; a test
  parametrised over an argument named ``trial`` (``@pytest.mark.parametrize("trial",
  range(4))``) gives that case one run per trial, so the scorecard has pass^k up to the
  fewest trials of a case. A test that checks several trajectories gives one case per
  trajectory (``<test>#2``, ...).

The recorded runs are kept on the pytest config (``config.stash``), not in module state.
With pytest-xdist each worker holds its own runs and no report is written.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest

_RUNS = pytest.StashKey[list]()
_WRITTEN = pytest.StashKey[dict]()


def pytest_addoption(parser: pytest.Parser) -> None:
    """``--trajcheck-report DIR``."""
    group = parser.getgroup("trajcheck")
    group.addoption("--trajcheck-report", dest="trajcheck_report", metavar="DIR", default=None,
                    help="Score every trajectory the trajcheck fixture asserted and write "
                         "scorecard.json, scorecard.md, report.html and junit.xml to DIR.")


def pytest_configure(config: pytest.Config) -> None:
    """Make the session's store of recorded runs."""
    config.stash[_RUNS] = []


@dataclass
class _Checked:
    """One trajectory a test checked and what its assertions expected."""

    source: Any  # what the test passed (kept so its id stays unique while recorded)
    traj: Any
    expected: tuple[Any, ...] = ()
    mode: str = "superset"
    forbidden: list[str] = field(default_factory=list)


class TrajcheckFixture:
    """The ``trajcheck`` fixture: the assertions of ``trajcheck.testing``, recording each
    trajectory checked for the session scorecard (``--trajcheck-report``)."""

    def __init__(self, case_id: str, trial: int) -> None:
        self.case_id = case_id
        self.trial = trial
        self._checked: dict[int, _Checked] = {}

    def _entry(self, trajectory: Any) -> _Checked:
        from .assertions import as_trajectory

        e = self._checked.get(id(trajectory))
        if e is None:
            e = _Checked(trajectory, as_trajectory(trajectory))
            self._checked[id(trajectory)] = e
        return e

    def assert_calls(self, trajectory: Any, expected: Any, mode: str = "in_order", *,
                     args_mode: str | None = None, dialect: str | None = None) -> Any:
        """``trajcheck.testing.assert_calls``, recorded.

        Args:
            trajectory: the run.
            expected: the expected calls.
            mode: the trajectory mode.
            args_mode: how arguments compare.
            dialect: the framework of ``mode``'s name.

        Returns:
            The trajectory read.

        Raises:
            AssertionError: as ``assert_calls``.
        """
        __tracebackhide__ = True
        from ..metrics.trajectory_modes import lookup_mode
        from .assertions import assert_calls, expected_calls

        e = self._entry(trajectory)
        exp = expected_calls(expected)
        row = lookup_mode(mode, dialect)
        e.expected, e.mode = exp, (mode if row is None else row.neutral)
        return assert_calls(e.traj, exp, mode, args_mode=args_mode, dialect=dialect)

    def assert_called(self, trajectory: Any, name: str, args: dict[str, Any] | None = None, *,
                      match: dict[str, Any] | None = None) -> Any:
        """``trajcheck.testing.assert_called``, recorded (as an expected call, extras allowed).

        Args:
            trajectory: the run.
            name: the tool.
            args: the expected arguments, or None.
            match: per-argument matchers.

        Returns:
            The trajectory read.

        Raises:
            AssertionError: as ``assert_called``.
        """
        __tracebackhide__ = True
        return self.assert_calls(trajectory, [{"name": name, "args": args, "match": match or {}}],
                                 "superset")

    def assert_no_forbidden(self, trajectory: Any, forbidden: Any) -> Any:
        """``trajcheck.testing.assert_no_forbidden``, recorded (as forbidden calls).

        Args:
            trajectory: the run.
            forbidden: tool names the run must not call.

        Returns:
            The trajectory read.

        Raises:
            AssertionError: as ``assert_no_forbidden``.
        """
        __tracebackhide__ = True
        from .assertions import assert_no_forbidden

        e = self._entry(trajectory)
        names = [forbidden] if isinstance(forbidden, str) else list(forbidden)
        e.forbidden += [n for n in names if n not in e.forbidden]
        return assert_no_forbidden(e.traj, names)

    def runs(self) -> list[tuple[Any, Any]]:
        """The ``(Trajectory, Case)`` pairs this test recorded, keyed to their case and trial.

        Returns:
            One pair per trajectory checked.
        """
        from .assertions import case_for

        out = []
        for n, e in enumerate(self._checked.values()):
            cid = self.case_id if n == 0 else f"{self.case_id}#{n + 1}"
            case = case_for(e.expected, mode=e.mode, traj=e.traj, forbidden=e.forbidden,
                            case_id=cid)
            meta = dict(e.traj.metadata, case_id=cid, trial=self.trial,
                        run_id=f"{cid}-{self.trial}")
            out.append((replace(e.traj, metadata=meta), case))
        return out


def _case_and_trial(node: Any) -> tuple[str, int]:
    base = node.nodeid.split("[", 1)[0]
    params = dict(getattr(getattr(node, "callspec", None), "params", None) or {})
    trial = params.pop("trial", None)
    if not (isinstance(trial, int) and not isinstance(trial, bool)):
        if trial is not None:
            params["trial"] = trial
        trial = 0
    if params:
        shown = ",".join(f"{k}={v!r}"[:60] for k, v in params.items())
        base = f"{base}[{shown}]"
    return base, trial


@pytest.fixture
def trajcheck(request: pytest.FixtureRequest) -> Any:
    """Assertions over an agent's tool calls (``assert_calls``, ``assert_called``,
    ``assert_no_forbidden``); each trajectory checked goes in the ``--trajcheck-report``
    scorecard, one case per test, one run per ``trial`` parameter."""
    cid, trial = _case_and_trial(request.node)
    fx = TrajcheckFixture(cid, trial)
    yield fx
    request.config.stash[_RUNS].extend(fx.runs())


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Write the session scorecard when ``--trajcheck-report DIR`` was given."""
    config = session.config
    out = config.getoption("trajcheck_report")
    runs = config.stash.get(_RUNS, [])
    if not out or not runs or hasattr(config, "workerinput"):
        return
    from ..report.html import to_html
    from ..report.junit import write_junit
    from ..report.text import to_markdown
    from ..score.suite import score_runs

    d = Path(out)
    d.mkdir(parents=True, exist_ok=True)
    sc = score_runs(runs, meta={"source": "pytest session"})
    sc.write_json(d / "scorecard.json")
    (d / "scorecard.md").write_text(to_markdown(sc), encoding="utf-8")
    (d / "report.html").write_text(to_html(sc), encoding="utf-8")
    write_junit(sc, d / "junit.xml", name="trajcheck pytest session")
    config.stash[_WRITTEN] = {"dir": str(d), "scorecard": sc}


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    """One line naming the report and its headline figures, when one was written."""
    w = config.stash.get(_WRITTEN, None)
    if not w:
        if config.getoption("trajcheck_report") and not config.stash.get(_RUNS, []):
            terminalreporter.write_line("trajcheck: no trajectory was asserted with the "
                                        "trajcheck fixture; no report written")
        return
    s = w["scorecard"].suite
    ks = " ".join(f"pass^{k} {v:.4g}" for k, v in sorted(s.pass_hat_k.items()))
    terminalreporter.write_line(
        f"trajcheck: {s.n_runs} run(s) of {s.n_cases} case(s): task success "
        f"{s.task_success_rate.value:.4g}, {ks}; scorecard.json, scorecard.md, report.html, "
        f"junit.xml in {w['dir']}")
