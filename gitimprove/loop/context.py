"""What every stage of a run reads (`RunContext`) and what the round's threads share (`Shared`).

`RunContext` is fixed once the run has started: the repository, the configuration read from
the run's base, the agent, the rule, scope and caps. `Shared` is the one object the threads of
a tournament round write, each attribute behind its single lock; nothing else is shared.
The measurement helpers (one metric run, the incumbent's checkout, the guard) live here
because every stage that measures uses them the same way.
"""

from __future__ import annotations

import contextlib
import functools
import secrets
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from gitimprove.agents import Agent
from gitimprove.agents.sandbox import Sandbox
from gitimprove.config import Config
from gitimprove.git import caches, strays, trees
from gitimprove.git.checkout import Checkout, checkout, hand_over, release, take_off_mounts
from gitimprove.git.renew import Spares
from gitimprove.git.repo import Repo
from gitimprove.git.watch import RepoState, objects_hint, put_back
from gitimprove.git.workspace import Workspaces
from gitimprove.loop import guard_report, inprocess, lookup, runtimes, siblings, sites
from gitimprove.loop.decide import Rule
from gitimprove.loop.implicit import ts_extended_in
from gitimprove.loop.importable import importable_names, interpreters
from gitimprove.loop.integrity import Tampered, after_run, reset_checkout
from gitimprove.loop.metrics import MetricRun, relative_of, run_metric
from gitimprove.util import inherited, proc, reaper
from gitimprove.util.files import rechoose_tempdir

if TYPE_CHECKING:
    from gitimprove.loop.runs import RunOptions

Event = dict[str, Any]
Emit = Callable[[Event], None]
_T = TypeVar("_T")


INHERITED = "the harness's resource limits, cgroup, CPU affinity, priority or I/O priority"


@dataclass(frozen=True)
class Measuring:
    """One measurement run's environment (with its token) and what kills its leftovers."""

    env: dict[str, str]
    reap: Callable[[], object]
    writable: tuple[Path, ...] = ()  # under Landlock: the run's own temporary folder


class MetricFailed(Exception):
    """A metric run that gave no number (crash, timeout, unparsable output)."""

    def __init__(self, run: MetricRun) -> None:
        super().__init__(run.error)
        self.run = run


@dataclass
class RoundBudget:
    """A round's running totals, for deciding whether one more candidate fits the caps."""

    spent: float = 0.0  # agent cost of the run before this round
    avg_cost: float | None = None
    avg_seconds: float | None = None
    running: int = 0
    cost: float = 0.0
    done: int = 0
    seconds: float = 0.0
    trees: dict[str, int] = field(default_factory=dict)  # tree -> the candidate that made it


class Shared:
    """State the threads of one run share: locks, slots, the round's budget, the incumbent's
    checkout. Every write goes through a method that takes `lock`."""

    def __init__(self, jobs: int, measure_jobs: int) -> None:
        self.lock = threading.RLock()  # pygit2 objects and every attribute below
        self.rule_lock = threading.Lock()  # one decision at a time
        self.agent_slots = threading.Semaphore(max(1, jobs))
        self.measure_slots = threading.Semaphore(max(1, measure_jobs))
        self.budget = RoundBudget()
        self.refs: dict[str, str | None] = {}  # the run's refs as the last transaction left them
        self.last_form = ""  # how the last metric run's value was found (for calibration)
        # the user's repository as last seen unchanged (after an agent call or a measurement)
        self.repo_state: RepoState | None = None
        self._checkouts = contextlib.ExitStack()
        self._incumbent: Checkout | None = None
        # measurement checkouts kept after use, patched into the next one (git/renew.py)
        self.spares = Spares(limit=2)
        # agents' workspaces kept after their attempt, renewed for the next one
        self.workspaces = Workspaces(limit=max(1, jobs), release=siblings.release)
        self.guard_tests: int | None = None  # tests a pytest guard ran on the run's base

    def landed(self, moves: dict[str, str | None]) -> None:
        with self.lock:
            self.refs.update(moves)

    @contextlib.contextmanager
    def processes(self, token: reaper.Token) -> Iterator[dict[str, str]]:
        """The environment for processes carrying `token`; all of them die when this exits."""
        try:
            yield token.env()
        finally:
            reaper.sweep(token)

    def new_round(self, budget: RoundBudget) -> None:
        with self.lock:
            self.budget = budget

    def agent_started(self) -> None:
        with self.lock:
            self.budget.running += 1

    def agent_finished(self, seconds: float, cost: float, first: bool) -> None:
        with self.lock:
            b = self.budget
            b.running -= 1
            b.done += 1 if first else 0
            b.seconds += seconds
            b.cost += cost

    def claim_tree(self, tree: str, candidate: int) -> bool:
        """False when another candidate of this round already made this exact tree."""
        with self.lock:
            if self.budget.trees.get(tree, candidate) != candidate:
                return False
            self.budget.trees[tree] = candidate
            return True

    def incumbent_checkout(self, repo: Repo, commit: str, name: str) -> Checkout:
        """The incumbent's measurement checkout, kept while the incumbent stays the same (and
        verified before each use, see `RunContext.metric`)."""
        with self.lock:
            if self._incumbent and self._incumbent.commit == commit:
                return self._incumbent
            self._checkouts.close()
            self._checkouts = contextlib.ExitStack()
            co = self._checkouts.enter_context(checkout(repo, commit, name, self.spares))
            siblings.clean(co)
            self._incumbent = co
            return co

    def kept_incumbent(self) -> Checkout | None:
        """The incumbent's checkout kept now, if any."""
        with self.lock:
            return self._incumbent

    def adopt_checkout(self, co: Checkout) -> None:
        """A kept candidate's checkout becomes the incumbent's: it holds exactly the commit
        the run now stands on, as written or provably unchanged since (after each run
        `Checkout.reset` kept it only so, or wrote it anew), and is verified before each use
        like any other; writing the same tree again is spared."""
        with self.lock:
            if co.handed or (self._incumbent is not None and self._incumbent.commit == co.commit):
                return
            self._checkouts.close()
            self._checkouts = contextlib.ExitStack()
            hand_over(co)
            self._checkouts.callback(self._retire, co)
            self._incumbent = co

    def _retire(self, co: Checkout) -> None:
        """An incumbent's checkout no longer used: a spare, unless it was found tampered."""
        if co.spent:
            release(co)
        else:
            self.spares.give(co)

    def drop_checkout(self, co: Checkout | None) -> None:
        """Forget a tampered incumbent checkout; the next use writes a fresh one."""
        with self.lock:
            if co is not None:
                co.spent = True
            if co is not None and self._incumbent is co:
                self._checkouts.close()
                self._checkouts = contextlib.ExitStack()
                self._incumbent = None

    def close(self) -> None:
        with self.lock:
            self._checkouts.close()
            self._incumbent = None
            self.spares.close()
            self.workspaces.close()


@dataclass
class RunContext:
    """Everything a stage needs to know about the run it belongs to."""

    repo: Repo
    name: str
    base: str
    cfg: Config
    opts: RunOptions
    agent: Agent
    rule: Rule
    confidence: float
    base_tree: str
    sealed_tree: str
    sealed: list[str]
    mutable: list[str]
    iterations: int
    candidates: int
    shared: Shared
    emit: Emit
    sandbox: Sandbox = field(default_factory=lambda: Sandbox("none"))
    extraction: str | None = None  # the metric's output form, pinned at calibration
    learning: bool = False  # calibration's first run: the unchanged base fixes that form
    # the user's Go env file at the run's start: what measurements read without the sandbox
    # (`go env -w GOFLAGS=-run=^$` by an agent would make every later `go test` run no test)
    go_env: bytes | None = field(default_factory=lookup.read_go_env)
    started: float = field(default_factory=time.monotonic)

    @functools.cached_property
    def sealed_paths(self) -> list[str]:
        return trees.blob_paths(self.repo, self.sealed_tree)

    @functools.cached_property
    def importable(self) -> frozenset[str]:
        """The module names the metric's and guard's interpreters import (asked once)."""
        commands = [self.cfg.metric_command, self.cfg.guard_command]
        return importable_names(commands, self.repo.work_tree or Path.cwd())

    @functools.cached_property
    def command_paths(self) -> list[Path]:
        """The files and folders outside the repository the metric and guard commands name by
        path (loop/sites.py `command_paths`), watched around agent calls (a metric run may
        write a file its command names: an output); none in the sandbox, where they are
        read-only to agents."""
        if self.sandbox.active:
            return []
        # the git directory alone: a virtualenv in the work tree (`.venv/`, ignored, so no
        # status shows a change there) is the user's environment like any other
        inside = list(dict.fromkeys((self.repo.git_dir, self.repo.common_dir)))
        named = sites.command_paths([self.cfg.metric_command, self.cfg.guard_command], inside)
        # a TypeScript config's `extends` by absolute name: its `paths` apply as the config's
        configs = [
            p
            for p in trees.blob_paths(self.repo, self.base_tree)
            if runtimes.is_ts_config(p.rpartition("/")[2])
        ]
        configs += [p for p in ts_extended_in(self.repo, self.base_tree) if p not in configs]
        extended = runtimes.outside_extends(
            configs, lambda p: trees.read_in(self.repo, self.base_tree, p)
        )
        return [*named, *sites.existing_outside([Path(p) for p in extended], inside, named)]

    @functools.cached_property
    def site_folders(self) -> list[Path]:
        """The folders outside the repository the metric's and guard's Python reads code from
        at every start (loop/sites.py); none in the sandbox, where they are read-only."""
        if self.sandbox.active:
            return []
        cwd = self.repo.work_tree or Path.cwd()
        pythons = interpreters([self.cfg.metric_command, self.cfg.guard_command], cwd)
        # the git directory alone: a virtualenv in the work tree (`.venv/`, ignored, so no
        # status shows a change there) is the user's environment like any other
        inside = list(dict.fromkeys((self.repo.git_dir, self.repo.common_dir)))
        return sites.folders(pythons, inside)

    @functools.cached_property
    def unbuilt(self) -> list[str]:
        """The paths the metric and guard commands name that the run's base does not hold
        (a build's output: `dist/bench.js`; loop/inprocess.py `unbuilt_named`)."""
        files = set(trees.blob_paths(self.repo, self.base_tree))
        folders = {f.rsplit("/", i)[0] for f in files for i in range(1, f.count("/") + 1)}
        return inprocess.unbuilt_named(
            self.cfg.metric_command,
            self.cfg.guard_command or "",
            lambda p: "file" if p in files else "folder" if p in folders else None,
            lambda p: trees.read_in(self.repo, self.base_tree, p),
        )

    @functools.cached_property
    def runner_files(self) -> list[Path]:
        """The files runners and toolchains read from your home and the folders above the
        repository (loop/sites.py `runner_files`); none in the sandbox, where they are
        read-only."""
        if self.sandbox.active:
            return []
        return sites.runner_files(self.repo.work_tree, self.repo.common_dir)

    def token(self) -> reaper.Token:
        return reaper.Token.new(reaper.repo_key(self.repo.common_dir), self.name)

    @property
    def max_cost(self) -> float | None:
        if self.opts.max_cost is not None:
            return self.opts.max_cost
        value = self.cfg.get("loop", "max_cost_usd")
        return float(value) if value is not None else None

    @property
    def max_time(self) -> float:
        if self.opts.max_time is not None:
            return self.opts.max_time
        return float(self.cfg.get("loop", "max_time"))

    @property
    def target(self) -> float | None:
        if self.opts.target is not None:
            return self.opts.target
        value = self.cfg.get("loop", "target")
        return float(value) if value is not None else None

    def can_launch(self) -> bool:
        """Launch another candidate only if what is left of the caps can cover one more."""
        with self.shared.lock:
            b = self.shared.budget
            per = b.avg_cost
            if per is None and b.done and b.cost > 0:
                per = b.cost / b.done
            cap = self.max_cost
            if (
                cap is not None
                and per is not None
                and b.spent + b.cost + (b.running + 1) * per > cap
            ):
                return False
            dur = b.avg_seconds
            if dur is None and b.done:
                dur = b.seconds / b.done
            elapsed = time.monotonic() - self.started
            return not (dur is not None and elapsed + dur > self.max_time)

    # --- measuring ------------------------------------------------------------------------

    @contextlib.contextmanager
    def measuring(self, co: Checkout, what: str) -> Iterator[Measuring]:
        """Around one run in a checkout: verify it and the user's repository before, kill what
        the run left (also before its output is read), verify both after. Raises Tampered
        naming the paths on any difference (stopping the run for the user's repository)."""
        with co.lock:
            mounted = take_off_mounts(co.path.parent)  # `lstat` cannot see a stacked one
            if mounted:
                raise Tampered(f"a mount on the checkouts before the {what}", mounted, checkout=co)
            bad = co.verify()
            if bad:
                writers = self.suspects(siblings.clean_since(co), changed=co, paths=bad)
                if writers:  # a sibling's agent, since the last run left it as written
                    reset_checkout(co, what, rewrite=True)
                    siblings.clean(co)
                    raise siblings.Spoiled(bad, writers)
                raise Tampered(f"the checkout changed before the {what}", bad, checkout=co)
            before = None
            if not self.sandbox.active:  # in the sandbox the user's repository is hidden
                with self.shared.lock:
                    before = self.shared.repo_state or RepoState.take(self.repo, ignored=True)
            python = sites.take(self.site_folders)
            runners = sites.take(self.runner_files)
            token = self.token()
            stops = reaper.continued()
            since = siblings.tick()  # another attempt's agent at work from here on: a suspect
            # the build caches of this run alone (in the sandbox: its private /tmp)
            fresh = None if self.sandbox.active else tempfile.mkdtemp(prefix="gitimprove-cache-")
            with (
                _removed(fresh),
                caches.watched(self.repo.improve_dir),  # measured code may write them (none)
                strays.watched(self.repo.improve_dir, reachable=before is not None) as left,
                self.shared.processes(token) as env,
            ):
                # the checkout holds only the commit's files (no compiled Python), and the
                # run writes none (a fresh cache prefix instead would compile every imported
                # module, the standard library's too, in every run); nothing of the user's
                # site folder runs (a planted `usercustomize.py`)
                # nor does a command's name find one of the candidate's files through a
                # search list's relative entry (`PATH=bin:…`; loop/lookup.py)
                env = {
                    **env,
                    **lookup.measured_env(),
                    **(self._pinned_go_env(fresh) if fresh else {}),
                    **lookup.go_workspace(co.tree),
                    "PYTHONDONTWRITEBYTECODE": "1",
                    "PYTHONNOUSERSITE": "1",
                }
                # under Landlock the run writes its checkout and this folder alone, as in
                # bwrap's private /tmp: its temporary files and caches go there
                own: tuple[Path, ...] = ()
                if fresh and self.sandbox.contained:
                    own = (Path(fresh),)
                    env.update(TMPDIR=fresh, XDG_CACHE_HOME=f"{fresh}/.cache")
                # In a tournament without the sandbox a sibling's agent could stop (SIGSTOP),
                # renice or kill the processes of this run, seen in /proc as its own: it runs
                # while no agent works (in the sandbox no agent sees it).
                apart = self.candidates > 1 and not self.sandbox.active
                with (
                    siblings.alone() if apart else contextlib.nullcontext(),
                    siblings.window(strays.current_owner() if self.candidates > 1 else None),
                ):
                    yield Measuring(env, lambda: reaper.sweep(token), own)
            if before is not None and reaper.continued() != stops:
                raise Tampered(
                    f"the harness was stopped and continued during the {what} (its output "
                    "could have been written while nothing watched)",
                    ["SIGSTOP/SIGCONT of the harness"],
                    checkout=co,
                )
            drifted, restored = ([], True) if before is None else inherited.changes()
            if not restored:
                raise inherited.Stuck(drifted, f"the {what}")
            rechoose_tempdir()
            writers = self.suspects(since) if drifted else []
            if writers:  # set back: measured again while no agent works, then laid on them
                raise siblings.Spoiled(drifted, writers, INHERITED)
            if drifted:  # set back
                raise Tampered(
                    f"{INHERITED} changed during the {what} (every later measurement would run "
                    "under them)",
                    drifted,
                    checkout=co,
                )
            planted = sites.changes(python, sites.take(self.site_folders))
            if planted:
                raise Tampered(
                    f"the folders Python reads code from at every start changed during the "
                    f"{what} (a `.pth`, `sitecustomize.py` or module there runs in every later "
                    "measurement)",
                    planted,
                    checkout=co,
                    stop=True,
                    hint=sites.HINT,
                )
            planted = sites.changes(runners, sites.take(self.runner_files))
            if planted:
                raise Tampered(
                    f"files your runners and toolchains read from your home or a folder above "
                    f"the repository changed during the {what} (every later measurement reads "
                    "them)",
                    planted,
                    checkout=co,
                    stop=True,
                    hint=sites.RUNNER_HINT,
                )
            changed: list[str] = []
            moved: list[str] = []
            if before is not None:
                with self.shared.lock:
                    after = RepoState.take(self.repo, ignored=True)
                    changed = before.changes(after)
                    self.shared.repo_state = None if changed else after
                    if changed:
                        moved = put_back(self.repo, before, after)
            if changed:
                raise Tampered(
                    f"your repository changed during the {what}",
                    changed,
                    checkout=co,
                    stop=True,
                    hint=objects_hint(moved, changed),
                )
            try:
                after_run(self, co, what)
            except Tampered as exc:
                writers = [] if exc.stop else self.suspects(since)
                if writers:  # measured again alone before any blame
                    raise siblings.Spoiled(exc.paths, writers) from None
                raise
            siblings.clean(co)
            if left:  # removed: no later run reads them
                raise Tampered(f"the {what} wrote into gitimprove's folder", left, checkout=co)

    def _pinned_go_env(self, folder: str) -> dict[str, str]:
        """Fresh build caches under `folder` and, when Go reads an env file, a copy there of
        the user's as it was at the run's start (`lookup.read_go_env`)."""
        out = lookup.fresh_caches(folder)
        if lookup.go_env_path() is not None:
            Path(folder, "go.env").write_bytes(self.go_env or b"")
            out["GOENV"] = f"{folder}/go.env"
        return out

    def measured_command(
        self, command: str, co: Checkout, writable: Sequence[Path] = ()
    ) -> tuple[list[str] | str, bool]:
        """(argv, shell) of a metric or guard command: in the sandbox when one is in force."""
        return self.sandbox.wrap(
            command, shell=True, workdir=co.path, measure=True, writable=writable
        )

    def metric(self, co: Checkout) -> float:
        """One metric run in a measurement checkout; raises MetricFailed without a number."""
        command = self.cfg.metric_command
        writable: list[Path] = []
        with contextlib.ExitStack() as stack:
            if guard_report.is_pytest(command):  # a pytest benchmark: kept to the checkout too
                folder = Path(tempfile.mkdtemp(prefix="gitimprove-metric-"))
                stack.callback(shutil.rmtree, folder, True)
                (folder / "pytest.ini").write_text("[pytest]\n")
                command = guard_report.confined(command, co.path, folder / "pytest.ini")
                writable = [folder]
            got = self._again_alone(co, "metric run", lambda: self._metric(co, command, writable))
        if got.status == "tampered":
            raise Tampered(str(got.error), ["stdout"], checkout=co)
        if got.status != "ok" or got.value is None:
            raise MetricFailed(got)
        with self.shared.lock:
            self.shared.last_form = got.form
        return got.value

    def _metric(self, co: Checkout, command: str, writable: Sequence[Path]) -> MetricRun:
        with self.shared.measure_slots, self.measuring(co, "metric run") as run:
            return run_metric(
                self.measured_command(command, co, [*writable, *run.writable]),
                co.path,
                timeout=float(self.cfg.get("metric", "timeout")),
                spec=str(self.cfg.get("metric", "extract")),
                name=self.cfg.metric_name,
                env=run.env,
                pinned=self.extraction,
                learn=self.learning,
                before_read=run.reap,
                limit=int(self.cfg.get("loop", "max_output")),
                relative=relative_of(self.cfg.get("metric", "min_delta")),
            )

    def suspects(
        self,
        since: int | None,
        *,
        anyone: bool = False,
        changed: Checkout | None = None,
        paths: list[str] | None = None,
    ) -> list[str]:
        """The other attempts (with `anyone`, every attempt) whose agent or measured code was
        at work from `since` on — of those, the ones at work when the last of `paths` of
        `changed` (as `Checkout.verify` names them) was written — in a tournament without
        the sandbox (loop/siblings.py); [] otherwise."""
        if since is None or self.sandbox.active or self.candidates < 2:
            return []
        named = [p.rsplit(" (", 1)[0] for p in paths or ()]  # "src/x.py (changed)"
        when = None if changed is None or not named else siblings.changed_at(changed.path, named)
        but = None if anyone else strays.current_owner()
        return siblings.at_work_since(since, but=but, when=when)

    def _again_alone(self, co: Checkout, what: str, run: Callable[[], _T]) -> _T:
        """`run`; when its checkout changed while another attempt's agent was at work (a
        tournament without the sandbox: loop/siblings.py), once more while no agent works —
        a change then is the measured code's own (`Tampered`), else the change is laid on
        the agents at work during the first run and this one's result stands."""
        try:
            return run()
        except siblings.Spoiled as first:
            paths, writers = list(first.paths), set(first.writers)
            victim = first.victim or f"the checkout of {co.commit[:10]} ({what})"
        with siblings.alone():
            for _ in range(3):  # written again before the last agent ended: made anew once more
                try:
                    got = run()
                    break
                except siblings.Spoiled as again:
                    paths += [p for p in again.paths if p not in paths]
                    writers |= set(again.writers)
            else:
                raise Tampered(f"the checkout changed before the {what}", paths, checkout=co)
        siblings.blame(sorted(writers), victim, paths)
        return got

    def incumbent_checkout(self, commit: str) -> Checkout:
        return self.shared.incumbent_checkout(self.repo, commit, f"{self.name}-incumbent")

    def look_at_incumbent(self) -> None:
        """After each agent call and before a round is decided (a tournament without the
        sandbox): the incumbent's checkout, kept across rounds, as written — else what changed
        there since it last was is laid on the agents at work meanwhile (loop/siblings.py) and
        it is dropped (the next use writes a fresh one)."""
        co = self.shared.kept_incumbent()
        if co is None:
            return
        with co.lock:
            bad = co.verify()
            since = siblings.clean_since(co)
            writers = self.suspects(since, anyone=True, changed=co, paths=bad) if bad else []
            if not bad:  # as written now: a later change is a later agent's
                siblings.clean(co)
        if writers:  # never used again: the next use writes a fresh one
            self.shared.drop_checkout(co)
            siblings.blame(writers, f"the checkout of {co.commit[:10]} (the incumbent's)", bad)

    def guard(self, co: Checkout, *, keep_tail: bool = False) -> dict[str, Any]:
        """The guard's result as the note stores it: status, exit code, the tail on failure
        (always, with keep_tail)."""
        if not self.cfg.guard_command.strip():
            return {"status": "skipped"}
        command, pytest = self.cfg.guard_command, guard_report.is_pytest(self.cfg.guard_command)
        folder = Path(tempfile.mkdtemp(prefix="gitimprove-guard-"))
        report = folder / f"{secrets.token_hex(12)}.xml"
        with contextlib.ExitStack() as stack:
            stack.callback(shutil.rmtree, folder, True)
            if pytest:  # its configuration and conftests from the checkout alone
                empty = folder / "pytest.ini"
                empty.write_text("[pytest]\n")
                command = guard_report.confined(command, co.path, empty)
                command = guard_report.with_report(command, report)
            out = self._again_alone(
                co, "guard run", lambda: self._guard(co, command, [folder], keep_tail=keep_tail)
            )
            if pytest and out["status"] == "pass":
                counted = guard_report.count(report)
                why = guard_report.judged(counted, self.shared.guard_tests)
                if why:
                    out.update(status="fail", tail=why)
                elif counted is not None:
                    out["tests"] = counted.ran
        return out

    def _guard(
        self, co: Checkout, command: str, writable: Sequence[Path], *, keep_tail: bool
    ) -> dict[str, Any]:
        with self.measuring(co, "guard run") as run:
            argv, shell = self.measured_command(command, co, [*writable, *run.writable])
            res = proc.run(
                argv,
                cwd=co.path,
                shell=shell,
                timeout=float(self.cfg.get("guard", "timeout")),
                env=proc.clean_env({"GITIMPROVE_CHILD": "1", **run.env}),
                before_read=run.reap,
                limit=int(self.cfg.get("loop", "max_output")),
            )
        out: dict[str, Any] = {
            "status": "pass" if res.ok and not res.over else "fail",
            "exit_code": None if res.timed_out else res.returncode,
        }
        if not res.ok or res.over or keep_tail:
            out["tail"] = res.tail(1500)
        if res.over:  # a suite that prints gigabytes fails: what it said cannot all be read
            out["tail"] = f"[the guard printed too much: {res.over}]\n" + out["tail"]
        return out


@contextlib.contextmanager
def _removed(folder: str | None) -> Iterator[None]:
    """Removes `folder` (when one is given) on the way out."""
    try:
        yield
    finally:
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)
