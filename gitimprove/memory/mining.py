"""Mine a Claude Code transcript (JSONL) for learning signals, incrementally.

The transcript format is internal to Claude Code and changes between versions, so parsing
is defensive: unknown line types and blocks are skipped, content may be a string or a list
of blocks, and a partial last line is left for the next pass. A per-session watermark (byte
offset of the last complete line, plus the little state the detectors carry across passes)
makes mining the same transcript twice add nothing.

Transcripts are read in chunks of CHUNK bytes, so a line of a gigabyte is never held whole:
a line longer than MAX_LINE is skipped (also across passes, while it is still being
written), one pass mines at most MAX_PASS bytes, and a line that cannot be parsed, or that
a detector cannot handle, is skipped — the watermark always moves past it.

Detectors (seed 003's capture table, plus two of our own): user corrections and convention
statements (keyword lists), positive reinforcement after multi-step work, repeated tool
failures, the same file edited 3+ times, shared commands, search thrashing, questions that
CLAUDE.md could have answered, tool rejections (with the user's reason when given), and
`[Request interrupted by user…]` followed by a redirect.
"""

from __future__ import annotations

import os
import re

from gitimprove.memory import transcript
from gitimprove.memory.capture import command_key, make_signal
from gitimprove.memory.mining_words import (
    CHILD_MARKER,
    CLI_NAMES,
    CONVENTION,
    EDIT_TOOLS,
    EMPTY_SEARCH,
    INTERRUPT,
    POSITIVE,
    QUESTION_HINTS,
    REJECTION,
    SEARCH_TOOLS,
    _kw,
    correction_sentence,
    is_correction,
    refers_back,
    user_speech,
)
from gitimprove.memory.transcript import MAX_LINE as MAX_LINE
from gitimprove.memory.transcript import MAX_PASS as MAX_PASS
from gitimprove.memory.transcript import State as State
from gitimprove.memory.transcript import watermark_path as watermark_path
from gitimprove.redaction import clip, redact
from gitimprove.util import reader

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


_CONV = _kw(CONVENTION)
_POS = _kw(POSITIVE)
_WORKFLOW = re.compile(
    r"\buse\s+`?([\w.:/@+-]+(?:\s[\w.:/@+-]+)?)`?\s+(?:not|instead of)\s+`?([\w.:/@+-]+)",
    re.IGNORECASE,
)
_RUN_CMD = re.compile(r"\b(?:run|use|try|execute|with)\s+`([^`\n]{2,120})`", re.IGNORECASE)
_CMD = re.compile(r"`([^`\n]{3,120})`")
_SENTENCE = re.compile(r"[^.!?\n]*(?:[.!?\n]|$)")


def _sentence_with(text: str, pattern: re.Pattern[str]) -> str:
    for m in _SENTENCE.finditer(text):
        s = m.group(0).strip()
        if s and pattern.search(s):
            return s[:300]
    return text.strip()[:300]


def _text_of(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content]
    out = []
    if isinstance(content, list):
        for b in content:
            if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str):
                out.append(b["text"])
    return out


def _result_text(block: dict[str, Any]) -> str:
    c = block.get("content")
    if isinstance(c, str):
        return c
    if isinstance(c, list):
        return "\n".join(str(b.get("text", "")) for b in c if isinstance(b, dict))
    return ""


class Miner:
    def __init__(self, state: State, session: str, hook: str, *, defer: bool = False) -> None:
        self.s = state
        self.session = session
        self.hook = hook
        self.defer = defer
        self.out: list[dict[str, Any]] = []

    def _emit(
        self,
        type_: str,
        content: str,
        context: str = "",
        confidence: int = 1,
        file: str | None = None,
        tags: tuple[str, ...] = (),
    ) -> None:
        self.out.append(
            make_signal(
                type_=type_,
                content=content,
                context=context,
                confidence=confidence,
                session=self.session,
                hook=self.hook,
                turn=self.s.turn,
                file=file,
                tags=tags,
                defer=self.defer,
            )
        )

    # --- one line ----------------------------------------------------------------------
    def line(self, obj: dict[str, Any]) -> None:
        kind = obj.get("type")
        msg = obj.get("message") if isinstance(obj.get("message"), dict) else {}
        content = msg.get("content") if msg else None
        if kind == "user":
            if isinstance(content, list):
                for b in content:
                    if isinstance(b, dict) and b.get("type") == "tool_result":
                        self.tool_result(b)
            # text the user did not write: a subagent's prompt (written by the agent),
            # a compaction summary, meta lines Claude Code adds, and lines of any origin but
            # a person's (`origin: {"kind": "task-notification"}`)
            if obj.get("isSidechain") or obj.get("isCompactSummary") or obj.get("isMeta"):
                return
            if obj.get("isVisibleInTranscriptOnly"):
                return
            origin = obj.get("origin")
            if isinstance(origin, dict) and origin.get("kind") not in (None, "human", "user"):
                return
            self.user_turn(_text_of(content))
        elif kind == "assistant" and isinstance(content, list):
            for b in content:
                if not isinstance(b, dict):
                    continue
                if b.get("type") == "tool_use":
                    self.tool_use(b)
                elif (
                    b.get("type") == "text"
                    and isinstance(b.get("text"), str)
                    and not obj.get("isSidechain")  # a subagent asks its parent, not the user
                ):
                    self.assistant_text(b["text"])

    def user_turn(self, texts: list[str]) -> None:
        """One user message: its blocks (IDE context, reminders, what the user typed) are one
        turn, and only if the user wrote something in it."""
        spoken = []
        for text in texts:
            if self.s.child is None and text.strip():
                self.s.child = CHILD_MARKER in text
            if text.strip().startswith(INTERRUPT):
                self.s.awaiting_redirect = True
                continue
            t = user_speech(text)
            if t:
                spoken.append(t)
        if spoken:
            self.prompt("\n".join(spoken))

    def prompt(self, t: str) -> None:
        self.s.turn += 1
        acted = self.s.turn > 1 or self.s.tools_since_prompt > 0
        t = redact(t)  # before any of the cuts below
        head = t[:1500]
        actions = self.s.actions
        if self.s.awaiting_redirect:
            self._emit(
                "correction",
                head[:300],
                context=f"after interrupting: {self.s.interrupted_after}".strip(),
                confidence=2,
                tags=("interrupt",),
            )
            self.s.awaiting_redirect = False
        else:
            wf = _WORKFLOW.search(head) if acted else None  # the first prompt is a task
            if wf and refers_back(_sentence_with(head, _WORKFLOW), actions):
                self._emit(
                    "correction",
                    _sentence_with(head, _WORKFLOW),
                    context=f"User said: {head[:200]}",
                    confidence=3,
                    tags=("workflow",),
                )
            elif acted and is_correction(head, actions):  # a correction refers back
                self._emit(
                    "correction",
                    correction_sentence(head, actions),
                    context=f"User said: {head[:200]}",
                    confidence=2,
                )
            if _CONV.search(head):
                self._emit(
                    "convention",
                    _sentence_with(head, _CONV),
                    context=f"User said: {head[:200]}",
                    confidence=2,
                )
        if self.s.tools_since_prompt >= 3 and len(t) < 200 and _POS.search(t):
            self._emit(
                "pattern",
                f"the approach before this was approved: {t[:200]}",
                context=f"after {self.s.tools_since_prompt} tool uses",
                confidence=1,
                tags=("positive",),
            )
        commands = dict.fromkeys(c.strip() for c in _RUN_CMD.findall(head))
        for cmd in _CMD.findall(head):
            first = cmd.strip().split(" ", 1)[0]
            if first in CLI_NAMES and " " in cmd.strip():
                commands[cmd.strip()] = None
        for cmd in commands:
            self._emit("command", f"run `{cmd}`", context=f"User said: {head[:200]}", confidence=2)
        self.s.tools_since_prompt = 0
        self.s.edit_counts = {}
        self.s.search_streak = 0
        self.s.actions = []

    def tool_use(self, b: dict[str, Any]) -> None:
        name = str(b.get("name") or "")
        raw = b.get("input")
        inp: dict[str, Any] = raw if isinstance(raw, dict) else {}
        self.s.tools_since_prompt += 1
        summary = clip(
            str(inp.get("command") or inp.get("file_path") or inp.get("pattern") or ""), 200
        )
        if b.get("id"):
            self.s.tool_names[str(b["id"])] = [name, summary]
        if summary:
            self.s.actions = [*self.s.actions[-19:], summary]
        if name in EDIT_TOOLS and inp.get("file_path"):
            f = str(inp["file_path"])
            self.s.edit_counts[f] = self.s.edit_counts.get(f, 0) + 1
            if self.s.edit_counts[f] == 3:
                self._emit(
                    "pattern",
                    f"{os.path.basename(f)} was edited 3 times in one turn",
                    file=f,
                    confidence=1,
                    tags=("multi-edit",),
                )

    def tool_result(self, b: dict[str, Any]) -> None:
        name, summary = self.s.tool_names.get(str(b.get("tool_use_id")), ["tool", ""])
        text = _result_text(b)
        if b.get("is_error"):
            text = clip(text, 4000)  # masked before the cuts below
            if text.startswith(REJECTION):
                _, sep, reason = text.partition("the user said:")
                reason = reason.strip()
                content = reason[:300] if sep and reason else f"the user rejected {name}: {summary}"
                self._emit(
                    "correction",
                    content,
                    context=f"rejected {name}: {summary}",
                    confidence=2,
                    tags=("rejection",),
                )
                self.s.interrupted_after = f"{name} {summary}".strip()
                return
            key = f"{name} {command_key(summary)}"  # the same command, not just the same tool
            if key == self.s.last_failed_tool:
                self.s.fail_streak += 1
            else:
                self.s.last_failed_tool, self.s.fail_streak = key, 1
            if self.s.fail_streak == 2:
                self._emit(
                    "failure",
                    f"{name} failed repeatedly: {text.strip()[:200]}",
                    context=summary,
                    confidence=2,
                    tags=(name,),
                )
            return
        if f"{name} {command_key(summary)}" == self.s.last_failed_tool:
            self.s.last_failed_tool, self.s.fail_streak = "", 0
        if name in SEARCH_TOOLS:
            if not text.strip() or text.strip().lower().startswith(EMPTY_SEARCH):
                self.s.search_streak += 1
            else:
                if self.s.search_streak >= 3:
                    self._emit(
                        "project_friction",
                        f"{self.s.search_streak} searches came back empty before finding {summary}",
                        confidence=1,
                        tags=("search",),
                    )
                self.s.search_streak = 0

    def assistant_text(self, text: str) -> None:
        t = text.strip()
        if t.endswith("?"):
            low = t.lower()
            if any(h in low for h in QUESTION_HINTS):
                t = redact(t)
                last = [s for s in re.split(r"(?<=[.!?])\s+", t) if s.endswith("?")]
                self._emit(
                    "discovery",
                    f"the agent had to ask: {(last[-1] if last else t)[-300:]}",
                    confidence=2,
                    tags=("question",),
                )


MAX_DEPTH = 64


def mine(
    path: str,
    improve_dir: str,
    session: str,
    hook: str,
    *,
    last_assistant_message: str | None = None,
    defer: bool = False,
) -> list[dict[str, Any]]:
    """Signals from the part of the transcript not mined yet; advances the watermark past
    every complete line, read or not. With `defer` (a hook) the signals' last cut is left
    to the flush (`capture.make_signal`)."""
    wm = watermark_path(improve_dir, session)
    state = State.load(wm)
    try:
        size = os.path.getsize(path)
    except OSError:
        return []
    if size < state.offset:  # the file was replaced: start over
        state = State()
    miner = Miner(state, session, hook, defer=defer)
    with open(path, "rb") as fh:
        fh.seek(state.offset)
        for raw, offset in transcript.complete_lines(fh, state):
            obj = (
                reader.loads(raw.strip(), max_bytes=transcript.MAX_LINE, max_depth=MAX_DEPTH)
                if raw.strip()
                else None
            )
            if isinstance(obj, dict):
                try:
                    miner.line(obj)
                except Exception:  # a line the detectors cannot handle is skipped
                    pass
            state.offset = offset
    if isinstance(last_assistant_message, str) and last_assistant_message:
        miner.assistant_text(last_assistant_message)
    import time

    state.mined_at = time.time()
    state.save(wm)
    return [] if state.child else miner.out
