"""How long a gen run will take: tokens from the texts, seconds from this machine.

A dry run's token estimate follows each call's input and its transform's length behaviour
(`Budget.length`: a paraphrase about as long as its input, an expansion three times, a
summary half), in tokens of about four characters, within the call's first budget. Its
time is a throughput measured here: every gen run that makes calls records what it
measured (calls, tokens, wall seconds, the load average when it began) in
`<cache>/throughput.json`, one record per backend, model and machine, the latest run
replacing the one before; a dry run scales that record by its own estimated tokens and by
its calls, and prints the geometric mean of the two. The record holds the calls gen
planned and those it made, so retries and larger budgets are in the time as often as that
run needed them. A record file that cannot be read is ignored with a warning, and the next
gen run writes a new one.
"""

from __future__ import annotations

import json
import logging
import math
import os
import socket
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, fields
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from shiftbench.llm.backends import Backend, Generation, OnDone, Request, Sampling
from shiftbench.llm.cache import default_cache_dir

if TYPE_CHECKING:
    from shiftbench.gen.rewrite import Variant

log = logging.getLogger(__name__)

THROUGHPUT_FILE = "throughput.json"
CHARS_PER_TOKEN = 4  # an English token is about four characters
GEN_RUN = "gen run"
CALIBRATION = "calibration"
SAME = 0.1  # the two scalings are shown as a range when they differ by more than this share


@dataclass(frozen=True)
class Throughput:
    """What one gen run measured on this machine.

    Attributes:
        backend: The backend's name.
        model: The model as the settings name it ("default" for the backend's default).
        host: The machine's name.
        measured_at: When the run ended, ISO 8601 in UTC.
        kind: "gen run", or "calibration" (a dry run's few calls).
        cores: The CPU cores this process could use.
        load_average: The one-minute load average when the run began (other work).
        planned_calls: The first-attempt calls the run's plan counted.
        planned_tokens: The output tokens the plan estimated for them.
        calls: The calls made, retries and larger budgets included.
        generated_tokens: Output tokens, as the backend counted them (else characters / 4).
        prompt_tokens: Prompt tokens, counted the same way.
        seconds: Wall seconds the backend was at work (a call in flight).
        overhead_seconds: Wall seconds of the rest of the run (reading, checks, language
            ID, writing), the model's load apart.
        load_seconds: Wall seconds of loading the model (0 when it was loaded already).
    """

    backend: str
    model: str
    host: str
    measured_at: str
    kind: str
    cores: int
    load_average: float
    planned_calls: int
    planned_tokens: int
    calls: int
    generated_tokens: int
    prompt_tokens: int
    seconds: float
    overhead_seconds: float
    load_seconds: float


def throughput_file(cache_dir: Path | None = None) -> Path:
    """The record file: in `cache_dir`, else $SHIFTBENCH_CACHE_DIR, else ~/.cache/shiftbench."""
    return (cache_dir or default_cache_dir()) / THROUGHPUT_FILE


def machine() -> str:
    return socket.gethostname()


def cores() -> int:
    """The cores this process may run on (a container's share, not the host's count)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def load_average() -> float:
    """The one-minute load average (0.0 where the system keeps none)."""
    try:
        return round(os.getloadavg()[0], 2)
    except OSError:
        return 0.0


def _key(backend: str, model: str | None, host: str) -> str:
    return f"{backend} | {model or 'default'} | {host}"


def _read_all(path: Path) -> dict[str, Any]:
    """Every record in the file, as stored; {} for a missing file, and a warning and {}
    for one that is not a record file."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        log.warning("%s is no throughput record (%s); ignored", path, _reason(exc))
        return {}
    if not isinstance(data, dict) or not isinstance(data.get("records"), dict):
        log.warning("%s is no throughput record (no 'records' object); ignored", path)
        return {}
    return data["records"]


def _reason(exc: Exception) -> str:
    if isinstance(exc, json.JSONDecodeError):
        return f"not JSON: {exc.msg} at line {exc.lineno}"
    return type(exc).__name__


def read_throughput(
    backend: str, model: str | None, cache_dir: Path | None = None
) -> Throughput | None:
    """The latest measurement of `backend` and `model` on this machine, or None.

    A file or record that cannot be read is ignored with a warning (it is a cache: the
    next gen run writes a new one)."""
    path = throughput_file(cache_dir)
    found = _read_all(path).get(_key(backend, model, machine()))
    if found is None:
        return None
    try:
        names = {f.name for f in fields(Throughput)}
        return Throughput(**{k: v for k, v in found.items() if k in names})
    except TypeError:
        log.warning("%s: the record of %s %s lacks fields; ignored", path, backend, model)
        return None


def record_throughput(measured: Throughput, cache_dir: Path | None = None) -> None:
    """Keep `measured` as the latest of its backend, model and machine, written at once
    (a temporary file renamed over the old one). A folder that cannot be written is
    logged as a warning: the run itself is not affected."""
    path = throughput_file(cache_dir)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        records = _read_all(path)
        records[_key(measured.backend, measured.model, measured.host)] = asdict(measured)
        blob = json.dumps({"records": records}, indent=1, sort_keys=True) + "\n"
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".throughput-")
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                out.write(blob)
            os.replace(temporary, path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
    except OSError as exc:
        log.warning("could not keep the measured throughput in %s: %s", path, exc)


def call_tokens(variant: Variant, step: int, given: str | None, previous: int) -> int:
    """The output tokens expected of call `step`: its input's tokens (`given`, or the
    previous call's expected output when that is not known yet) times the transform's
    length, within the call's first budget."""
    length = variant.transform.steps[step].budget.length
    if given is not None:
        tokens_in = math.ceil(len(given) / CHARS_PER_TOKEN)
        budget = variant.step_budget(step, given)
    else:
        tokens_in = previous
        budget = variant.step_cap(step)
    return max(1, min(budget, math.ceil(tokens_in * length)))


class Metered:
    """A backend that counts what passes through it: calls, output and prompt tokens.

    Counts come from the backend's own figures where it reports them, else from the
    characters (four to a token), and the wall seconds it was at work (`busy`: while at
    least one call was in flight). Everything else is the backend's own."""

    def __init__(self, backend: Backend) -> None:
        self._backend = backend
        self._lock = threading.Lock()
        self.calls = 0
        self.generated_tokens = 0
        self.prompt_tokens = 0
        self.busy = 0.0
        self._in_flight = 0
        self._since = 0.0

    def _enter(self) -> None:
        with self._lock:
            if not self._in_flight:
                self._since = now()
            self._in_flight += 1

    def _leave(self) -> None:
        with self._lock:
            self._in_flight -= 1
            if not self._in_flight:
                self.busy += now() - self._since

    def __getattr__(self, name: str) -> Any:
        return getattr(self._backend, name)

    def generate(
        self, requests: list[Request], sampling: Sampling, on_done: OnDone | None = None
    ) -> list[Generation]:
        counted: set[int] = set()

        def count(index: int, made: Generation) -> None:
            with self._lock:
                if index in counted:
                    return
                counted.add(index)
                self.calls += 1
                self.generated_tokens += made.output_tokens or math.ceil(
                    len(made.text) / CHARS_PER_TOKEN
                )
                self.prompt_tokens += made.prompt_tokens or math.ceil(
                    len(requests[index].prompt) / CHARS_PER_TOKEN
                )

        def seen(index: int, made: Generation) -> None:
            count(index, made)
            if on_done is not None:
                on_done(index, made)

        self._enter()
        try:
            results = self._backend.generate(requests, sampling, seen)
        finally:
            self._leave()
        for index, made in enumerate(results):
            count(index, made)
        return results


def measured(
    metered: Metered,
    *,
    backend: str,
    model: str | None,
    kind: str,
    load_average: float,
    planned_calls: int,
    planned_tokens: int,
    seconds: float,
    load_seconds: float,
) -> Throughput:
    """A Throughput of a run that sent its calls through `metered`."""
    return Throughput(
        backend=backend,
        model=model or "default",
        host=machine(),
        measured_at=datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        kind=kind,
        cores=cores(),
        load_average=load_average,
        planned_calls=planned_calls,
        planned_tokens=planned_tokens,
        calls=metered.calls,
        generated_tokens=metered.generated_tokens,
        prompt_tokens=metered.prompt_tokens,
        seconds=round(metered.busy, 2),
        overhead_seconds=round(max(0.0, seconds - metered.busy), 2),
        load_seconds=round(load_seconds, 2),
    )


@dataclass(frozen=True)
class Estimate:
    """A dry run's estimate: the calls and tokens to generate, and their time.

    Attributes:
        backend: The backend's name.
        model: The model as the settings name it.
        calls: First-attempt calls to make (neither cached nor shared).
        tokens: The output tokens expected of them.
        record: The measurement the time scales, or None.
        load_now: The one-minute load average now.
        note: Why there is no measurement, when a calibration was tried and failed.
    """

    backend: str
    model: str | None
    calls: int
    tokens: int
    record: Throughput | None
    load_now: float
    note: str | None = None

    def _scaled(self, mine: int, planned: int) -> float | None:
        """The record's generating seconds scaled by `mine` / `planned` (None: no record)."""
        r = self.record
        return None if r is None or not planned else mine * r.seconds / planned

    @property
    def seconds_by_tokens(self) -> float | None:
        """The record's generating seconds scaled by the estimated tokens."""
        return self._scaled(self.tokens, self.record.planned_tokens if self.record else 0)

    @property
    def seconds_by_calls(self) -> float | None:
        """The record's generating seconds scaled by the calls."""
        return self._scaled(self.calls, self.record.planned_calls if self.record else 0)

    @property
    def generating_seconds(self) -> float | None:
        """The estimate's seconds of generating: the geometric mean of the two scalings.
        Neither alone holds: a batched backend's time follows its batches (calls) as much
        as the tokens in them; the mean came within 1.2x of the measured time on the
        sample and on BIOSSES (docs/guides/gen.md)."""
        by_tokens, by_calls = self.seconds_by_tokens, self.seconds_by_calls
        return None if by_tokens is None or by_calls is None else math.sqrt(by_tokens * by_calls)

    @property
    def seconds(self) -> float | None:
        """The estimate printed: generating, plus the record's other work and model load."""
        r, generating = self.record, self.generating_seconds
        if r is None or generating is None:
            return None
        return generating + r.overhead_seconds + r.load_seconds

    def lines(self, calibrate_hint: str) -> list[str]:
        """The lines a dry run prints; `calibrate_hint` says how to get a measurement."""
        head = (
            f"estimate: {self.calls:,} calls, about {self.tokens:,} tokens to generate "
            "(first attempts: each input's length times its transform's, within the "
            "call's budget)"
        )
        if not self.calls:
            return [f"{head}; nothing to time"]
        r, generating, total = self.record, self.generating_seconds, self.seconds
        by_tokens, by_calls = self.seconds_by_tokens, self.seconds_by_calls
        if r is None or generating is None or total is None:
            model = f"{self.backend} {self.model or 'default'}"
            why = (
                f"a calibration of {model} failed ({self.note})"
                if self.note
                else f"no gen run of {model} has been measured on this machine"
            )
            return [head, f"time: not known yet: {why}; {calibrate_hint}"]
        assert by_tokens is not None and by_calls is not None  # as `generating` is known
        extra = r.overhead_seconds + r.load_seconds
        low, high = sorted((by_tokens + extra, by_calls + extra))
        spread = f" ({duration(low)} to {duration(high)} scaled by tokens or by calls)" * (
            high > low * (1 + SAME)
        )
        # A calibration tries each text once: the time of a few texts' retries swamps the
        # rest, and how many texts a run retries is the run's own (a record of a gen run
        # holds its retries, in the share that run needed).
        made, after = "retries and larger budgets included", ""
        if r.kind == CALIBRATION:
            made = "first attempts, larger budgets included"
            after = "; texts that fail their checks are tried again on top of this"
        return [
            head,
            f"time: about {duration(total)}{spread}: {duration(generating)} "
            f"generating, {duration(r.overhead_seconds)} reading, checking and writing, "
            f"{duration(r.load_seconds)} loading the model",
            f"measured: a {r.kind} of {r.backend} {r.model} on this machine at "
            f"{r.measured_at.replace('T', ' ').replace('Z', ' UTC')}, load average "
            f"{r.load_average:.1f} on {r.cores} cores: {r.planned_calls:,} planned calls "
            f"(about {r.planned_tokens:,} tokens) took {r.seconds:.0f} s of generating, with "
            f"{r.calls:,} calls made ({made}) and {r.generated_tokens:,} "
            f"tokens generated; the estimate holds at that load (load average now "
            f"{self.load_now:.1f}){after}",
        ]


def combine(estimates: list[Estimate]) -> Estimate | None:
    """One estimate for several sources of one generator (a spec's), or None if none."""
    if not estimates:
        return None
    first = estimates[0]
    record = next((e.record for e in estimates if e.record is not None), None)
    note = next((e.note for e in estimates if e.note), None)
    return Estimate(
        first.backend, first.model, sum(e.calls for e in estimates),
        sum(e.tokens for e in estimates), record, first.load_now, note,
    )  # fmt: skip


def duration(seconds: float) -> str:
    """Seconds as people read them: 45 s, 12 min 05 s, 2 h 07 min."""
    whole = round(seconds)
    if whole < 60:
        return f"{whole} s"
    if whole < 3600:
        return f"{whole // 60} min {whole % 60:02d} s"
    return f"{whole // 3600} h {whole % 3600 // 60:02d} min"


def now() -> float:
    return time.monotonic()
