"""The release spec: one YAML file that fixes every setting of a `shiftbench run`.

The schema below is the single list of what a spec may hold. Each field names the CLI
option it stands for; its default and its range or choices are the stage settings' own
(which the command reads too), and its help text is the option's
(`shiftbench.cli.commands.specdoc` writes the starter spec and the spec reference from it), so
`shiftbench init`, docs/reference/spec.md and `shiftbench run` cannot drift apart from the
commands and stage functions they drive. This module reads specs and needs no CLI.
Reading is strict: an unknown key, a value of the wrong type or out of range, or a
missing required key is an InputError naming the file, line and key.
"""

from __future__ import annotations

import dataclasses
import hashlib
import inspect
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, get_args, get_origin, get_type_hints

from shiftbench.cards.croissant import parse_rai
from shiftbench.cards.settings import ReleaseSettings
from shiftbench.core.data.parts import PARTS
from shiftbench.core.data.sources import load_source
from shiftbench.core.registry import suggest
from shiftbench.core.settings import bare, declarations, field_default, problem
from shiftbench.core.text.langid import IDENTIFIERS
from shiftbench.core.text.transforms import TARGETED_PROMPT, expand_transforms
from shiftbench.errors import InputError
from shiftbench.evaluate.settings import EvalSettings
from shiftbench.gen.api import GenSettings
from shiftbench.human_eval.settings import BatchSettings, ExportSettings
from shiftbench.llm.backends import backend_target
from shiftbench.runner.spec_yaml import dotted, load_yaml
from shiftbench.validate.settings import ValidateSettings

# What a field's YAML value must be.
STR, INT, FLOAT, BOOL = "string", "integer", "number", "true or false"
STR_LIST, INT_LIST = "list of strings", "list of integers"
MAPPING = "mapping"


@dataclass(frozen=True)
class Field:
    """One key of a spec section and the CLI option it stands for."""

    key: str
    kind: str
    command: str = ""  # "gen", "validate", "human-eval batch", ... ("" for spec-only keys)
    param: str = ""  # the option's parameter name (and setting's); default: the key
    help: str = ""  # spec-only keys carry their own help
    default: Any = None  # spec-only keys carry their own default
    required: bool = False
    path: bool = False  # a path, read relative to the spec file's folder
    single: bool = False  # a list key that also takes one string (as a one-item list)
    setting: str = ""  # the settings field, where the key is declared on one
    flag: str = ""  # the option, where the key is declared on a settings field
    owner: Any = None  # the settings class, where the key is declared on one of its fields


@dataclass(frozen=True)
class Section:
    key: str
    help: str
    fields: tuple[Field, ...]
    many: bool = False  # a list of mappings (sources) rather than one mapping


SOURCE_FIELDS = (
    Field("name", STR, required=True,
          help="An MTEB task name, 'sample', or a local folder in Hub layout (with "
          "task_type; a relative path such as ./my-sts is read from the spec's folder)."),
    Field("folder", STR,
          help="Sub-folder of the output for this source. Default: the source's name."),
    Field("task_type", STR, "gen"),
    Field("data_dir", STR, "gen", path=True),
    Field("subsets", STR_LIST, "gen", help="Subsets (Hub configs) to use. [] means all."),
    Field("splits", STR_LIST, "gen",
          help="Splits to use. [] means mteb's eval splits (a local folder: test)."),
    Field("source_language", STR, "gen"),
)  # fmt: skip

# what evaluate scores: not a setting (score_encoders takes it beside EvalSettings), so
# its one key is written here; the section's other keys are EvalSettings' fields
MODELS_FIELD = Field(
    "models", STR_LIST, "evaluate", default=[], flag="--model",
    help="Encoders to score on the original and every variant, each as evaluate -m takes "
    "it: a Hub id or local folder (a relative path is read from the spec's folder), "
    "mteb:NAME or openai:NAME[@URL], each optionally NAME=MODEL to be shown as NAME, e.g. "
    "[sentence-transformers/all-MiniLM-L6-v2, mini=./models/ft-3]. []: no evaluate stage.",
)  # fmt: skip

SCALE_FIELDS = (
    Field("runner", STR, default="local",
          help="local: gen runs in this process. ray: gen's rows are split into `shards` "
          "shards that Ray Data maps over the Ray cluster's workers (pip install "
          "'shiftbench[ray]'), then merged into the run folder one process would write."),
    Field("shards", INT, default=2, help="Shards per source (ray runner)."),
    Field("ray_address", STR,
          help="The Ray cluster to join (ray.init(address=...)), e.g. auto. null: start a "
          "local Ray instance."),
    Field("cpus_per_shard", FLOAT, default=1.0,
          help="CPUs Ray reserves for each shard's task."),
    Field("gpus_per_shard", FLOAT, default=0.0,
          help="GPUs Ray reserves for each shard's task (a vllm or embedded generator on GPU)."),
)  # fmt: skip


def _kind(hint: Any) -> str:
    """The spec's type of a settings field's type."""
    base = bare(hint)
    if get_origin(base) is tuple:
        return INT_LIST if get_args(base)[0] is int else STR_LIST
    if dict in (base, get_origin(base)):
        return MAPPING
    return {bool: BOOL, int: INT, float: FLOAT}.get(base, STR)


def settings_fields(owner: Any, command: str, own: str, where: str) -> tuple[Field, ...]:
    """The spec keys of settings class `owner`'s declared fields that the spec holds at
    `where` ("top", a section's key, or `own`, that of a field declared with spec "")."""
    hints = get_type_hints(owner)
    return tuple(
        Field(d.key or f.name, STR_LIST if d.spec_list else _kind(hints[f.name]), command,
              help=d.spec_help or d.help, path=d.path, single=d.single, setting=f.name,
              owner=owner, default=[field_default(f)] if d.spec_list else d.spec_default,
              flag=max(d.flags or ("--" + (d.key or f.name).replace("_", "-"),),
                       key=len).split("/")[0])
        for f, d in declarations(owner) if d.spec is not None and (d.spec or own) == where
    )  # fmt: skip


def schema(
    gen: Any = GenSettings,
    *,
    validate: Any = ValidateSettings,
    batch: Any = BatchSettings,
    export: Any = ExportSettings,
    evaluate: Any = EvalSettings,
    release: Any = ReleaseSettings,
) -> tuple[tuple[Field, ...], tuple[Section, ...]]:
    """The spec's top-level keys and its sections, each stage's keys read from its
    settings class's fields: gen's (its own section: generator), validate's, human-eval
    batch's and export's (human_eval), evaluate's and the release's (tests pass a wider
    class)."""

    def at(where: str) -> tuple[Field, ...]:
        return settings_fields(gen, "gen", "generator", where)

    output = Field("output", STR, required=True, path=True,
                   help="The output folder: one sub-folder per source (run/, human-eval/, "
                   "results/, state).")  # fmt: skip
    return (output, *at("top")), (
        Section("sources", "What to rewrite: one entry per source.",
                (*SOURCE_FIELDS, *at("sources")), many=True),
        Section("generator", "The LLM that rewrites, and how it samples.", at("generator")),
        Section("validate", "Automatic checks, judges, and the error-rate gate.",
                settings_fields(validate, "validate", "validate", "validate")),
        Section("human_eval", "Rating batches for people, and their export.",
                (*settings_fields(batch, "human-eval batch", "human_eval", "human_eval"),
                 *settings_fields(export, "human-eval export", "human_eval", "human_eval"))),
        Section("evaluate", "Encoders scored on the original and every variant, into each "
                "source's results/ folder beside run/; the card and the release carry their "
                "scores.", (MODELS_FIELD, *settings_fields(evaluate, "evaluate", "evaluate",
                                                           "evaluate"))),
        Section("release", "The Hugging Face Hub release.",
                settings_fields(release, "publish", "release", "release")),
        Section("scale", "Beyond one machine: where gen runs.", SCALE_FIELDS),
    )  # fmt: skip


def stage_settings(owner: Any, values: dict[str, Any], **given: Any) -> Any:
    """Settings class `owner` from a stage's checked spec values (its section, or any
    mapping of its keys), each declared field by its spec key; `given` wins. A list is a
    tuple (an empty one where the setting's default is None is None), a mapping a copy. A
    key that lists several values of one setting (spec_list: export's formats) is the
    caller's to give."""
    settings = dict(given)
    for f, d in declarations(owner):
        key = d.key or f.name
        if d.spec is None or d.spec_list or f.name in settings or key not in values:
            continue
        value = values[key]
        if isinstance(value, list):
            value = tuple(value) or (None if field_default(f) is None else ())
        elif isinstance(value, dict):  # the settings' own copy, not the spec's
            value = dict(value)
        settings[f.name] = value
    return owner(**settings)


def gen_settings(values: dict[str, Any], source: dict[str, Any], owner: Any = GenSettings,
                 **given: Any) -> Any:  # fmt: skip
    """Settings class `owner` (gen's) from a checked spec's values, each gen key from
    where the spec holds it (a source's entry for `sources` keys); `given` (output, quiet)
    wins."""
    top, sections = schema(owner)
    found = {}
    for at, keys in [(values, top), *((source if s.many else values[s.key], s.fields)
                                      for s in sections)]:  # fmt: skip
        found.update({f.key: at[f.key] for f in keys if f.owner is owner})
    return stage_settings(owner, found, **given)


TOP_FIELDS, SECTIONS = schema()

# evaluate follows human-eval (faithful: human reads its ratings) and comes before card and
# publish, which carry its scores (the card's model-index and results table, the release's
# eval_results/)
STAGES = ("gen", "validate", "human-eval", "evaluate", "card", "publish")


def _owners(command: str) -> tuple[Any, ...]:
    """The settings classes (and functions) whose defaults a command's options take."""

    return {
        "gen": (GenSettings, load_source),
        "evaluate": (EvalSettings,),
    }[command]


def _setting_default(f: Field) -> Any:
    name = f.setting or f.param or f.key
    for owner in (f.owner,) if f.owner else _owners(f.command):
        if dataclasses.is_dataclass(owner):
            for d in dataclasses.fields(owner):
                if d.name == name:
                    if d.default_factory is not dataclasses.MISSING:
                        return d.default_factory()
                    return d.default
        else:
            parameter = inspect.signature(owner).parameters.get(name)
            if parameter is not None:
                return parameter.default
    raise LookupError(f"no settings of {f.command} hold {name}")


def default(f: Field) -> Any:
    """The field's default: the stage settings' own (the CLI reads the same), in the
    spec's types."""
    if not f.command or f.default is not None:
        return f.default
    value = _setting_default(f)
    if value is None and f.kind in (INT_LIST, STR_LIST):
        return None  # the setting's None: chosen elsewhere (e.g. by the protocol)
    if f.kind == INT_LIST:
        return [int(x) for x in value or ()]
    if f.kind == STR_LIST:
        return list(value or ())
    if f.kind == MAPPING:
        return dict(value or {})
    if isinstance(value, tuple):  # a repeatable option the spec takes once
        return value[0] if value else None
    if isinstance(value, Path):
        return str(value)
    return value


# -- reading -----------------------------------------------------------------------------


@dataclass
class Spec:
    """A checked spec: every section filled in with defaults, paths made absolute."""

    path: Path
    text: str
    values: dict[str, Any]

    @property
    def sources(self) -> list[dict[str, Any]]:
        return list(self.values["sources"])

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()


def read_spec(path: Path, gen: Any = GenSettings, **owners: Any) -> Spec:
    """Read and check a spec file; any problem is one InputError naming file:line. Its gen
    keys are settings class `gen`'s, another stage's those of its class in `owners`
    (`validate=`, `batch=`, `export=`, `evaluate=`, `release=`, as `schema` takes them)."""
    stock = gen is GenSettings and not owners
    top, sections = (TOP_FIELDS, SECTIONS) if stock else schema(gen, **owners)
    where = str(path)
    text, raw, lines = load_yaml(path)
    if not isinstance(raw, dict):
        raise InputError(f"{where}:1: a spec is a mapping of keys (output, sources, ...)")

    def fail(at: tuple[Any, ...], message: str) -> InputError:
        return InputError(f"{where}:{lines.line(at)}: {dotted(at)}: {message}")

    base = path.resolve().parent
    values = _check_mapping(raw, (), top, {s.key for s in sections}, fail, base)
    for section in sections:
        given = raw.get(section.key)
        at = (section.key,)
        if section.many:
            if given is None:
                raise InputError(f"{where}:1: the spec names no sources (key 'sources')")
            if not isinstance(given, list) or not given:
                raise fail(at, "needs a list of one or more entries")
            entries = []
            for i, entry in enumerate(given):
                if not isinstance(entry, dict):
                    raise fail((*at, i), "each entry is a mapping with at least 'name'")
                entries.append(_check_mapping(entry, (*at, i), section.fields, set(), fail, base))
            values[section.key] = entries
        else:
            if given is None:
                given = {}
            if not isinstance(given, dict):
                raise fail(at, "must be a mapping")
            values[section.key] = _check_mapping(given, at, section.fields, set(), fail, base)
    _check_choices(values, fail)
    _check_evaluate(values["evaluate"], fail, base)
    spec = Spec(path, text, values)
    _check_folders(spec, fail)
    return spec


def _check_mapping(
    given: dict[str, Any],
    at: tuple[Any, ...],
    fields: tuple[Field, ...],
    sections: set[str],
    fail: Callable[[tuple[Any, ...], str], InputError],
    base: Path,
) -> dict[str, Any]:
    known = {f.key: f for f in fields}
    for key in given:
        if key not in known and key not in sections:
            allowed = sorted([*known, *sections])
            raise fail(
                (*at, key),
                f"unknown key; allowed here: {', '.join(allowed)}{suggest(str(key), allowed)}",
            )
    out: dict[str, Any] = {}
    for f in fields:
        if f.key not in given or given[f.key] is None:
            if f.required:
                raise fail(at, f"needs '{f.key}'") if at else fail((f.key,), "is required")
            out[f.key] = default(f)
            continue
        value = _typed(given[f.key], f, (*at, f.key), fail)
        if f.path and value is not None:
            value = [_beside(v, base) for v in value] if isinstance(value, list) \
                else _beside(value, base)  # fmt: skip
        out[f.key] = value
    return out


def _beside(value: str, base: Path) -> str:
    """A path read from the spec's folder; in TRANSFORM[:STEP]=FILE, the FILE part."""

    found = TARGETED_PROMPT.match(value)
    if found:
        return f"{value[: found.start(3)]}{base / Path(found[3]).expanduser()}"
    return str(base / Path(value).expanduser())


def _typed(
    value: Any, f: Field, at: tuple[Any, ...], fail: Callable[[tuple[Any, ...], str], InputError]
) -> Any:
    def scalar(v: Any, kind: str, where: tuple[Any, ...]) -> Any:
        if kind == STR and isinstance(v, str):
            return v
        if kind == INT and isinstance(v, int) and not isinstance(v, bool):
            return v
        if kind == FLOAT and isinstance(v, int | float) and not isinstance(v, bool):
            return float(v)
        if kind == BOOL and isinstance(v, bool):
            return v
        raise fail(where, f"must be {_a(kind)}, not {_shown(v)}")

    if f.kind in (STR_LIST, INT_LIST):
        items = value if isinstance(value, list) else None
        if f.single and isinstance(value, str):
            items = [value]
        if items is None:
            raise fail(at, f"must be {_a(f.kind)}, not {_shown(value)}")
        kind = STR if f.kind == STR_LIST else INT
        checked: Any = [scalar(v, kind, (*at, i)) for i, v in enumerate(items)]
    elif f.kind == MAPPING:
        if not isinstance(value, dict):
            raise fail(at, f"must be a mapping, not {_shown(value)}")
        checked = dict(value)
    else:
        checked = scalar(value, f.kind, at)
    if f.command:
        _check_bounds(checked, f, at, fail)
    return checked


def _check_bounds(
    value: Any, f: Field, at: tuple[Any, ...], fail: Callable[[tuple[Any, ...], str], InputError]
) -> None:
    """Ranges and choices, as the stage settings' fields declare them."""
    name = f.setting or f.param or f.key
    for owner in (f.owner,) if f.owner else _owners(f.command):
        if not dataclasses.is_dataclass(owner):
            continue
        items = value if isinstance(value, list) else [value]
        for i, item in enumerate(items):
            found = problem(owner, name, item)
            if found is not None:
                raise fail((*at, i) if isinstance(value, list) else at, found)


def _a(kind: str) -> str:
    return kind if kind == BOOL else ("an " if kind[0] in "aeiou" else "a ") + kind


def _shown(value: Any) -> str:
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    return repr(value)


def _check_choices(
    values: dict[str, Any], fail: Callable[[tuple[Any, ...], str], InputError]
) -> None:
    """What the settings' bounds cannot see: transform names, the backend, the runner,
    the language identifier, the repository and the version's shape."""
    _check_generation(values, fail)
    scale = values["scale"]
    if scale["runner"] not in ("local", "ray"):
        raise fail(("scale", "runner"), "must be local or ray")
    if scale["shards"] < 1:
        raise fail(("scale", "shards"), "must be 1 or more")
    if scale["cpus_per_shard"] < 0 or scale["gpus_per_shard"] < 0:
        raise fail(("scale",), "cpus_per_shard and gpus_per_shard cannot be negative")

    if values["validate"]["langid"] not in IDENTIFIERS:
        raise fail(("validate", "langid"), "must be lingua or langdetect")
    human = values["human_eval"]
    if "prolific" in human["formats"]:
        try:
            stage_settings(ExportSettings, human, fmt="prolific")
        except InputError as exc:
            raise fail(("human_eval", "completion_code"), str(exc)) from None
    _check_release(values["release"], fail)


def _check_generation(
    values: dict[str, Any], fail: Callable[[tuple[Any, ...], str], InputError]
) -> None:
    """gen's keys: the transforms and seeds named, the protocol, the parts to rewrite and
    the generator's backend."""
    for i, name in enumerate(values["transforms"] or ()):
        try:
            expand_transforms((name,))
        except InputError as exc:
            raise fail(("transforms", i), str(exc)) from None
    if values["transforms"] == []:
        raise fail(("transforms",), "names no transform")
    if values["seeds"] == []:
        raise fail(("seeds",), "names no seed")
    if values["protocol"] is not None:
        from shiftbench.core.protocols import get_protocol

        try:
            get_protocol(values["protocol"])
        except InputError as exc:
            raise fail(("protocol",), str(exc)) from None

    for i, part in enumerate(values["rewrite"] or ()):
        if part not in PARTS:
            raise fail(("rewrite", i), f"unknown part {part!r}; parts: {', '.join(PARTS)}")

    try:
        backend_target(values["generator"]["backend"])
    except InputError as exc:
        raise fail(("generator", "backend"), str(exc)) from None


def _check_release(
    release: dict[str, Any], fail: Callable[[tuple[Any, ...], str], InputError]
) -> None:
    """The release section: the repository's and the version's shape, the RAI fields."""
    if release["repo"] is not None:
        from shiftbench.core.hub import check_repo, check_version

        try:
            check_repo(release["repo"])
        except InputError as exc:
            raise fail(("release", "repo"), str(exc)) from None
        if release["version"] is None:
            raise fail(("release",), "a repo needs a version")
        try:
            check_version(release["version"])
        except InputError as exc:
            raise fail(("release", "version"), str(exc)) from None
    for i, item in enumerate(release["rai"] or ()):
        try:
            parse_rai((item,))
        except InputError as exc:
            raise fail(("release", "rai", i), str(exc)) from None


def _check_evaluate(
    e: dict[str, Any], fail: Callable[[tuple[Any, ...], str], InputError], base: Path
) -> None:
    """The evaluate section, checked as the command checks its options, before any stage
    runs (not after hours of generation); each model's path is made absolute."""
    from shiftbench.core.models.encoders import encoder_names
    from shiftbench.core.models.names import NEVER_SPLIT, split_named

    def beside(spec: str) -> str:
        path = Path(spec).expanduser()
        if path.is_absolute() or spec.startswith(NEVER_SPLIT):
            return spec
        return str(base / path) if spec.startswith(".") or (base / path).exists() else spec

    models = []
    for i, item in enumerate(e["models"]):
        at = ("evaluate", "models", i)
        if not item.startswith(NEVER_SPLIT) and (base / Path(item).expanduser()).exists():
            models.append(beside(item))  # a folder whose name holds '=' is a folder
            continue
        try:
            name, model = split_named(item, "model")
        except InputError as exc:
            raise fail(at, str(exc)) from None
        models.append(beside(model) if name is None else f"{name}={beside(model)}")
    try:
        encoder_names(models, "models")
    except InputError as exc:
        raise fail(("evaluate", "models"), str(exc)) from None
    e["models"] = models
    if e["protocol"] is not None:
        from shiftbench.core.protocols import get_protocol

        try:
            get_protocol(e["protocol"])
        except InputError as exc:
            raise fail(("evaluate", "protocol"), str(exc)) from None
    if e["resamples"] < 0 or 0 < e["resamples"] < 1000:
        raise fail(("evaluate", "resamples"), "must be 0 (no intervals) or at least 1000, "
                   f"not {e['resamples']}")  # fmt: skip
    if e["faithful"] is not None:
        from shiftbench.evaluate.faithful import parse_faithful

        try:
            parse_faithful(e["faithful"])
        except InputError as exc:
            raise fail(("evaluate", "faithful"), str(exc)) from None
    for key, text in e["prompts"].items():
        if not isinstance(text, str):
            raise fail(("evaluate", "prompts", key), f"must be a string, not {_shown(text)}")


def folder_name(source: dict[str, Any]) -> str:
    if source["folder"]:
        return str(source["folder"])
    name = Path(source["name"]).name or source["name"]
    return re.sub(r"[^A-Za-z0-9._-]+", "-", name)


def _check_folders(spec: Spec, fail: Callable[[tuple[Any, ...], str], InputError]) -> None:
    seen: dict[str, int] = {}
    for i, source in enumerate(spec.sources):
        name = folder_name(source)
        if source["folder"] and (
            Path(name).is_absolute() or ".." in Path(name).parts or "/" in name or "\\" in name
        ):
            raise fail(("sources", i, "folder"), f"{name!r} must be one folder name inside the "
                       "output, not a path")  # fmt: skip
        if name in seen or name in (".", ".."):
            raise fail(("sources", i), f"folder {name!r} is taken by sources[{seen.get(name)}]; "
                       "give this source its own 'folder'")  # fmt: skip
        seen[name] = i
