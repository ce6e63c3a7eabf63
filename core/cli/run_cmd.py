"""``trajcheck run``: run an agent on the cases (or simulated-user scenarios), then score."""

from __future__ import annotations

from typing import Any

import click
from rich.markup import escape

from ..textsafe import visible
from .context import judge_setup, match_context
from .gates import gate
from .options import (
    ci_options,
    judge_options,
    parse_ks,
    report_options,
    semantic_options,
)
from .output import ci_reports, fail, k_error, show_judges, show_scorecard, write_reports


@click.command("run")
@click.option("--agent", "agent_spec", required=True, metavar="MODULE:CALLABLE",
              help="The agent: package.module:callable or path/to/file.py:callable.")
@click.option("--cases", "cases_path", type=click.Path(exists=True, dir_okay=False),
              help="Dataset of cases (JSONL/JSON/YAML). Give this or --scenarios.")
@click.option("--scenarios", "scenarios_path", type=click.Path(exists=True, dir_okay=False),
              help="Simulated-user scenarios (JSON/YAML, trajcheck.run.simulated_user): each is a conversation "
                   "between --user-model and the agent, one per trial (seeds 0..trials-1).")
@click.option("--user-model", "user_model_spec", metavar="SPEC",
              help="The simulated user for --scenarios: module:callable or file.py:callable (a "
                   "factory returning a model, or fn(messages) -> str), or openai:MODEL@BASE_URL.")
@click.option("--api-key-env", default="OPENAI_API_KEY", show_default=True, metavar="VAR",
              help="Environment variable holding the key of an openai:MODEL@BASE_URL user model.")
@click.option("--trials", default=1, show_default=True, type=click.IntRange(min=1), help="Runs per case.")
@click.option("--concurrency", default=1, show_default=True, type=click.IntRange(min=1),
              help="Runs at once (each in its own thread and sandbox).")
@click.option("--timeout", "timeout_s", default=60.0, show_default=True, type=click.FloatRange(min=0, min_open=True),
              help="Seconds per run; a run still going is recorded as failed ('timeout after Ns').")
@click.option("--out", "out_path", type=click.Path(dir_okay=False),
              help="JSONL file the traces are appended to as runs finish; re-running with the same "
                   "file resumes (finished (case, trial) pairs are not run again).")
@click.option("--tools", "tools_spec", metavar="MODULE:ATTR",
              help="The ToolRegistry (default: the agent's .tools attribute or its module's TOOLS). Given, "
                   "the agent's file is imported only inside its workers, never into trajcheck's process.")
@click.option("--fixture-root", "fixture_roots", multiple=True, type=click.Path(file_okay=False),
              help="A folder fixtures (initial_state) may come from besides the folder of the "
                   "--cases or --scenarios file (repeatable); any other fixture path is refused.")
@click.option("--isolation", type=click.Choice(["sandbox", "process", "inline"]), default="sandbox",
              show_default=True,
              help="sandbox: the agent runs in worker processes under bubblewrap: no network (see "
                   "--network), every file read-only but a scratch /tmp, its own PID namespace (it cannot "
                   "see or read trajcheck's memory), limits on processes, memory and file size, killed with "
                   "its children on timeout and when trajcheck dies, its output to --out's .log; it can still "
                   "read files this user can read, except the run file's key and --hide paths. Where the "
                   "sandbox cannot start: process, with a line saying so. process: plain worker processes "
                   "with the same limits; the agent can also read and write this user's files (the run "
                   "file's key among them) and use the network. inline: in trajcheck's own process, for "
                   "debugging; the agent can reach the grader. Exiting, crashing or hanging fails only its "
                   "run in sandbox and process (docs/security.md).")
@click.option("--network", is_flag=True, help="sandbox isolation: let the agent use the host's network "
                                              "(for agents that call a model API).")
@click.option("--hide", "hide_paths", multiple=True, type=click.Path(), metavar="PATH",
              help="A file or folder the sandbox shows empty (repeatable), e.g. your credentials.")
@click.option("--no-progress", is_flag=True, help="Do not show the progress bar.")
@report_options
@ci_options
@semantic_options
@judge_options
def run_command(agent_spec: str, cases_path: str | None, trials: int, concurrency: int, timeout_s: float,
                out_path: str | None, tools_spec: str | None, k_spec: str | None, json_out: str | None,
                html_out: str | None, md_out: str | None, fail_under: float | None, seed: int,
                no_progress: bool, quiet: bool, scenarios_path: str | None = None,
                user_model_spec: str | None = None, api_key_env: str = "OPENAI_API_KEY",
                semantic: bool = False, semantic_threshold: float | None = None,
                fixture_roots: tuple[str, ...] = (), judge_spec: str | None = None,
                judge_cache: str = ".trajcheck/judge-cache.sqlite",
                judge_price: str | None = None, isolation: str = "sandbox",
                junit_out: str | None = None, annotations: str | None = None,
                codequality_out: str | None = None, network: bool = False,
                hide_paths: tuple[str, ...] = ()) -> None:
    """Run an agent on every case TRIALS times, record the traces, and print a scorecard.

    The agent is called as agent(input, tools) (sync or async) with the case input and the
    tool registry bound to a fresh sandbox; it returns the final response (see
    trajcheck.run.runner for the full contract). Agent exceptions and timeouts are recorded as
    failed runs; cases that cannot be set up, recorded runs of unknown cases and cases
    without runs are listed as problems, and the rest is scored as `trajcheck eval` does.

    With --scenarios (instead of --cases), each scenario is a conversation between the
    --user-model and the agent (trajcheck.run.simulated_user), run once per trial with seeds
    0..TRIALS-1, each in a fresh sandbox, then scored the same way; --out then receives the
    conversations' traces (overwritten, no resume) and --concurrency/--timeout do not apply.
    --semantic scores 'semantic' argument matchers with the offline embedding model.
    --judge adds the rubric and task-completion judges to the scorecard (with --scenarios,
    after each conversation, beside its final-state check), as in `trajcheck eval`.

    Exit codes: 0 when scored, 1 when --fail-under is given and the task success rate is
    below it, 2 for an unknown agent path, an invalid cases file, or nothing to score,
    130 when interrupted (re-run the same command with the same --out to resume).
    """
    from pathlib import Path

    from rich.console import Console

    from ..errors import TrajcheckError
    from ..score.suite import KTooLargeError

    err = Console(stderr=True)
    if (cases_path is None) == (scenarios_path is None):
        fail("give either --cases or --scenarios (one of them)", err)
    if scenarios_path is not None and not user_model_spec:
        fail("--scenarios needs --user-model", err)
    ks = parse_ks(k_spec)
    if ks and max(ks) > trials:
        # checked before any run is made: the runs would be made, then not scored
        fail(f"--k {k_spec} asks for pass^k/pass@k up to k={max(ks)}, but --trials {trials} "
              f"gives each case {trials} run(s): k cannot exceed the runs of a case (n >= k); "
              f"use --trials {max(ks)} or more, or --k {trials} or less", err)
    judge = judge_setup(judge_spec, judge_cache, judge_price, err)
    try:
        from ..read.dataset import load_cases
        from ..run.runner import load_agent, run_suite

        tools = load_agent(tools_spec, want_callable=False) if tools_spec else None
        if scenarios_path is not None:
            agent = load_agent(agent_spec)
            from ..run.simulated_user import load_scenarios, load_user_model, run_scenarios

            scenarios = load_scenarios(scenarios_path)
            umodel = load_user_model(str(user_model_spec), api_key_env=api_key_env)
            ctx = match_context(semantic, semantic_threshold, [x.to_case() for x in scenarios], err)
            srun = run_scenarios(scenarios, agent, umodel, seeds=range(trials), tools=tools,
                                 base_dir=Path(scenarios_path).parent, context=ctx,
                                 ks=ks, seed=seed, agent_name=agent_spec, out=out_path,
                                 fixture_roots=fixture_roots, isolation=isolation)
            from ..run.simulated_user import termination_label

            succ = {c.case_id: c.successes for c in srun.scorecard.cases}
            for sid, info in srun.summary.items():
                # the termination is the simulated user's view; task success is trajcheck's
                ends = ", ".join(f"{termination_label(k)} {v}"
                                 for k, v in sorted(info["termination"].items()))
                revs = "; ".join(f"{r['fact']} (seed {r['seed']}, user turn {r['turn']})"
                                 for r in info["unprompted_reveals"]) or "none"
                err.print(visible(f"scenario {sid}: {info['runs']} conversation(s): {ends}; "
                                  f"task success {succ.get(sid, 0)}/{info['runs']}; "
                                  f"revealed without being asked: {revs}"),
                          markup=False, highlight=False, soft_wrap=True)
        else:
            cases = load_cases(str(cases_path))
            ctx = match_context(semantic, semantic_threshold, cases, err)
            # the agent goes by its spec: with --tools, its file is imported only in its workers
            res = run_suite(agent_spec, cases, trials=trials, concurrency=concurrency, timeout_s=timeout_s,
                            out=out_path, tools=tools, base_dir=Path(str(cases_path)).parent,
                            progress=not no_progress, ks=ks, seed=seed,
                            agent_name=agent_spec, context=ctx, fixture_roots=fixture_roots,
                            isolation=isolation, network=network, hide=hide_paths)
            for line in (res.isolation, *res.notes):
                err.print(visible(line), markup=False, highlight=False, soft_wrap=True)
    except KTooLargeError as e:
        k_error(k_spec, e, err)
    except TrajcheckError as e:
        fail(e, err)
    except KeyboardInterrupt:
        where = f"; finished runs are in {out_path}: re-run the same command to resume" if out_path else ""
        err.print(f"[yellow]interrupted[/yellow]{escape(visible(where))}", highlight=False)
        raise SystemExit(130) from None
    from ..report import plural

    if scenarios_path is not None:
        sc = srun.scorecard
    else:
        sc = res.scorecard
        made = f"{plural(res.n_new, 'run')} made"
        if out_path:
            made += f", {res.n_resumed} resumed from {out_path}" if res.n_resumed else f", recorded in {out_path}"
        err.print(made, markup=False, highlight=False, soft_wrap=True)
    if judge is not None:
        try:
            if scenarios_path is not None:
                pairs = [(r.trajectory, s.to_case()) for s in scenarios for r in srun.results
                         if r.trajectory.metadata.get("case_id") == s.id]
            else:
                pairs = list(res.runs)
            sc = _judge_run(sc, judge, pairs, with_state=scenarios_path is not None)
        except TrajcheckError as e:
            fail(e, err)
    show_scorecard(sc, quiet, json_out, html_out, err)
    show_judges(sc, quiet)
    write_reports(sc, json_out, md_out, html_out, err)
    try:
        ci_reports(sc, junit_out, annotations, codequality_out, cases_path or scenarios_path, err)
    except TrajcheckError as e:
        fail(e, err)
    gate(sc, fail_under, err)


def _judge_run(sc: Any, judge: Any, pairs: list[tuple[Any, Any]], *, with_state: bool) -> Any:
    """``sc`` with ``meta["judges"]`` from judging the ``(trajectory, case)`` pairs that
    ``run`` made with ``judge`` (``judge_setup``'s pair); ``with_state``: count the
    final-state checks too, for simulated conversations."""
    from ..judges.run import judge_scorecard

    model, price = judge
    cases = {c.id: c for _, c in pairs}
    return judge_scorecard(sc, model, [t for t, _ in pairs], cases, price=price,
                           with_state=with_state)
