"""Command line: ``python -m cookbook run | list | notebooks | stamp-colab | world | compare | verdicts | record``.

A signal (SIGINT, SIGTERM) at any moment stops a command with one line and exit status 130: from this module's
first line on, either raises ``KeyboardInterrupt`` (once: a second one is ignored while the first is handled), and
:func:`main` turns it into that line, and so whatever error it caused on its way (a library interrupted while it
was being imported can raise ``ImportError`` instead). ``run`` has its own handlers while notebooks run
(:func:`cookbook.run.runner.run`).
"""

from __future__ import annotations

import os
import signal
import sys
import threading

__all__ = ["cli", "main"]


_SIGNALLED: list[str] = []  # the name of the signal that stopped the command, once one has


def _interrupt(signum, frame):
    if not _SIGNALLED:  # a second signal must not cut the first one's clean-up short
        _SIGNALLED.append(signal.Signals(signum).name)
        raise KeyboardInterrupt(_SIGNALLED[0])


def _catch_signals() -> dict:
    """Our handler for SIGINT and SIGTERM; the handlers it replaced (none outside the main thread)."""
    if threading.current_thread() is not threading.main_thread():
        return {}
    return {sig: signal.signal(sig, _interrupt) for sig in (signal.SIGINT, signal.SIGTERM)}


if __name__ == "__main__":  # python -m cookbook: from the first line, before anything is imported
    _catch_signals()


def _parser():
    import argparse

    ap = argparse.ArgumentParser(prog="cookbook", description="GraphRAG Cookbook notebook series")
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="execute notebooks with papermill and write build/")
    r.add_argument("--only", nargs="+", help="notebook numbers or stems, e.g. 01 05")
    r.add_argument("--scale", default=None, help="ci | tiny | class | large (default: -p SCALE, else class)")
    r.add_argument("--corpus", choices=("world", "factbook", "all"), default=None,
                   help="the corpus the notebooks load; all (the default): each notebook on every corpus that has "
                        "--scale, world then factbook, one row each")
    r.add_argument("--out", default="build", help="output folder (default: build)")
    r.add_argument("--timeout", type=int, default=600, help="per-cell timeout in seconds")
    r.add_argument("--jobs", "-j", type=int, default=None,
                   help="notebooks executed at once, one kernel each (default: the number of CPU cores)")
    r.add_argument("--notebooks", default=None, help="folder of notebooks (default: the repository's)")
    r.add_argument("-p", "--param", action="append", default=[], metavar="NAME=VALUE",
                   help="set a name of the notebooks' parameters cell; a string parameter takes VALUE as typed, "
                        "any other reads it as a YAML literal of the default's type, e.g. -p LLM=openai -p SEED=11 "
                        "-p STRICT=false")
    r.add_argument("--no-html", action="store_true", help="skip the HTML rendering")
    r.add_argument("--quiet", action="store_true", help="no progress bars")
    r.add_argument("--wait", action="store_true",
                   help="when another run is writing to --out, wait for it instead of stopping (exit 2)")
    sub.add_parser("list", help="list the notebooks")
    nb = sub.add_parser("notebooks", help="copy the notebooks into a folder of your own, for editing")
    nb.add_argument("--to", required=True, help="folder to copy into (created if missing)")
    nb.add_argument("--force", action="store_true",
                    help="replace notebooks already there (a link is replaced, never written through)")
    st = sub.add_parser("stamp-colab", help="rewrite every notebook's Colab badge and setup cell from pyproject.toml")
    st.add_argument("--url", default=None, help="repository URL (default: pyproject.toml's [project.urls])")
    w = sub.add_parser("world", help="generate a world and write it as JSONL (how data/ is made)")
    w.add_argument("--scale", default="class")
    w.add_argument("--seed", type=int, default=None, help="default: the committed world's seed")
    w.add_argument("--out", required=True, help="folder to write, e.g. data/world-class")
    w.add_argument("--force", action="store_true",
                   help="replace world files already there (never the committed world: that is only regenerated "
                        "byte for byte)")
    c = sub.add_parser("compare", help="compare two build folders: identical checks and non-timing outputs?")
    c.add_argument("builds", nargs=2, metavar="BUILD")
    v = sub.add_parser("verdicts", help="the six lessons' verdicts on each corpus, from a build, as a markdown table")
    v.add_argument("build", nargs="?", default="build", help="a build folder (default: build)")
    v.add_argument("--readme", metavar="FILE", help="render the table into FILE between its verdict markers "
                   "(e.g. README.md) instead of printing it")
    v.add_argument("--recorded", default=None, metavar="BUILD",
                   help="a build made with a recorded model (cookbook run -p LLM=replay --out BUILD): its verdicts "
                        "beside the stand-in's (default: BUILD-recorded when it exists)")
    rec = sub.add_parser("record", help="share a real model's run: export its cached answers to one file, which "
                                        "LLM='replay' (COOKBOOK_RECORDING=FILE) answers from, offline")
    rec_sub = rec.add_subparsers(dest="action", required=True)
    ex = rec_sub.add_parser("export", help="write the cache's answers of one model to FILE (.json, or .json.gz)")
    ex.add_argument("file", metavar="FILE")
    ex.add_argument("--model", default=None, help="the model to export (default: the only real model cached)")
    ex.add_argument("--force", action="store_true", help="replace FILE if it exists")
    rec_sub.add_parser("models", help="the models the cache holds answers of, with their counts")
    return ap


def _stamp_colab(args) -> int:
    from .run.colab import stamp

    try:
        changed = stamp(url=args.url)
    except ValueError as e:
        print(f"cookbook stamp-colab: {e}", file=sys.stderr)
        return 2
    print(f"stamped {len(changed)} notebook(s)" + "".join(f"\n  {p.name}" for p in changed))
    return 0


def _committed_data() -> set:
    """The data folders whose worlds are committed (the checkout's or the wheel's, and the one load_world reads)."""
    from pathlib import Path

    from .data.storage import data_dir
    from .paths import shipped

    found = {data_dir()}
    try:
        found.add(shipped("data"))
    except FileNotFoundError:
        pass
    return {Path(d).resolve() for d in found if d is not None}


def _world(args) -> int:
    import tempfile
    from pathlib import Path

    from .data.records import DEFAULT_SEED
    from .data.storage import save_world
    from .data.world import make_world
    from .paths import place_files

    try:
        if not args.out.strip():  # Path("") is the working folder
            raise ValueError("--out is empty: name the folder to write the world to")
        world = make_world(DEFAULT_SEED if args.seed is None else args.seed, args.scale)
        with tempfile.TemporaryDirectory() as tmp:
            files = {p.name: p.read_bytes() for p in sorted(save_world(world, tmp).iterdir())}
        out = Path(args.out).expanduser()
        if out.resolve() in _committed_data():
            raise ValueError(f"{out} is the series' data folder: a world goes in a folder of its own (e.g. world-tiny)")
        if out.resolve().parent in _committed_data():
            there = {name: (out / name).read_bytes() for name in files if (out / name).is_file()}
            if there and there == files and not any((out / n).is_symlink() for n in files):
                print(f"{out} is the committed world and this reproduces it byte for byte: nothing to write")
                return 0
            if there or any(os.path.lexists(out / name) for name in files):
                differ = sorted(name for name in files if there.get(name) != files[name])
                raise ValueError(f"{out} holds a committed world, which is only regenerated byte for byte (`cookbook "
                                 f"world --scale {out.name.removeprefix('world-')} --out {out}`); this one differs in "
                                 f"{', '.join(differ)}: write it elsewhere")
        place_files(files, out, force=args.force)
        print(f"wrote {out}: {world.stats()}")
    except (ValueError, OSError) as e:
        print(f"cookbook world: {e}", file=sys.stderr)
        return 2
    return 0


def _compare(args) -> int:
    from .run.compare import compare_builds

    try:
        same, report = compare_builds(*args.builds)
    except ValueError as e:
        print(f"cookbook compare: {e}", file=sys.stderr)
        return 2
    print("\n".join(report))
    return 0 if same else 1


def _verdicts(args) -> int:
    from pathlib import Path

    from .harness.verdicts import backend_table, markdown_table, render_readme, verdicts
    from .paths import rewrite_text

    checks = Path(args.build) / "checks"
    try:
        if not checks.is_dir():
            raise ValueError(f"{args.build} holds no checks/ folder; build it with `cookbook run`")
        rows = verdicts(_named_damage(checks))
        table = markdown_table(rows)
    except (ValueError, TypeError, KeyError, AttributeError) as e:
        print(f"cookbook verdicts: {e}".splitlines()[0], file=sys.stderr)
        return 2
    recorded = args.recorded or f"{args.build.rstrip('/')}-recorded"
    if args.recorded and not os.path.isdir(os.path.join(recorded, "checks")):
        print(f"cookbook verdicts: {recorded} holds no checks/ folder", file=sys.stderr)
        return 2
    if args.readme is None and os.path.isdir(os.path.join(recorded, "checks")):
        try:
            side = verdicts(_named_damage(Path(recorded) / "checks"))
        except (ValueError, TypeError, KeyError, AttributeError) as e:
            print(f"cookbook verdicts: {recorded}: {e}".splitlines()[0], file=sys.stderr)
            return 2
        print(backend_table({"stand-in": rows, f"recorded model ({recorded})": side}))
        return 0
    if args.readme is None:
        print(table)
        return 0
    try:
        rewrite_text(Path(args.readme), lambda text: render_readme(text, rows))
    except (OSError, ValueError) as e:
        print(f"cookbook verdicts: {args.readme}: {e}", file=sys.stderr)
        return 2
    print(f"rendered the verdict table into {args.readme}")
    return 0


def _named_damage(checks):
    """``checks``, once every record in it reads (a damaged one is named as compare names it; a FIFO or a device is
    refused, never read)."""
    from .harness import checks as records
    from .run.compare import readable

    for path in sorted(checks.glob("*.json")):
        if not path.is_dir() and not path.name.startswith("."):
            readable(records.read, path)
    return checks


def _record(args) -> int:
    from .cache import cache_dir
    from .llm.recording import cached_models, export_recording

    if args.action == "models":
        held = cached_models()
        print("\n".join(f"{n:6d}  {m}" for m, n in held.items()) or f"no model answers in {cache_dir()}")
        return 0
    try:
        if not args.file.strip():  # Path("") is the working folder: ". exists; pass --force"
            raise ValueError("FILE is empty: name the file to write the recording to")
        info = export_recording(args.file, model=args.model, force=args.force)
    except FileExistsError:
        print(f"cookbook record export: {args.file} exists; pass --force to replace it", file=sys.stderr)
        return 2
    except ValueError as e:
        print(f"cookbook record export: {e}", file=sys.stderr)
        return 2
    print(f"wrote {info['answers']} answers of {info['model']!r} from {cache_dir()} to {info['path']}"
          + (f" ({info['left_out']} made with other generation parameters left out)" if info["left_out"] else "")
          + f"\nreplay it: COOKBOOK_RECORDING={info['path']} with LLM='replay'")
    return 0


def _list(args) -> int:
    from .paths import list_notebooks

    try:
        names = [p.name for p in list_notebooks()]
    except (ValueError, FileNotFoundError) as e:
        print(f"cookbook list: {e}", file=sys.stderr)
        return 2
    print("\n".join(names))
    return 0


def _notebooks(args) -> int:
    from .paths import copy_notebooks

    try:
        copied = copy_notebooks(args.to, force=args.force)
    except (ValueError, FileNotFoundError) as e:
        print(f"cookbook notebooks: {e}", file=sys.stderr)
        return 2
    print(f"copied {len(copied)} notebooks to {args.to}")
    return 0


# What `run` needs beyond the algorithms: the `notebooks` extra.
_JUPYTER = ("papermill", "nbformat", "nbconvert", "ipykernel")


def _run(args) -> int:
    import importlib.util
    import logging
    from pathlib import Path

    # A cell timeout leaves nbclient's output poller pending; asyncio would log "Task was destroyed but it is
    # pending!" and the task's repr when it is collected, after the table: the row already names the timeout.
    logging.getLogger("asyncio").setLevel(logging.CRITICAL)
    missing = [m for m in _JUPYTER if importlib.util.find_spec(m) is None]
    if missing:
        print(f"cookbook run: needs the Jupyter stack ({', '.join(missing)} not installed): "
              "pip install papermill ipykernel nbformat nbconvert (the notebooks extra: "
              "pip install -e '.[notebooks]' in a checkout)", file=sys.stderr)
        return 2
    from .paths import list_notebooks
    from .run import runner
    from .run.parameters import notebook_parameters, parse_parameters

    runner._received = _SIGNALLED  # one list: a signal a library swallowed still stops the run (runner._received)

    try:
        if args.timeout <= 0:
            raise ValueError(f"--timeout wants a positive number of seconds, got {args.timeout}")
        chosen = list_notebooks(args.notebooks, args.only)
        extra = parse_parameters(args.param, notebook_parameters(chosen))
        if args.corpus == "all" and "CORPUS" in extra:
            raise ValueError(f"--corpus all and -p CORPUS={extra['CORPUS']} disagree")
        corpora = None if args.corpus in (None, "all") else [args.corpus]  # -p CORPUS=… alone names one corpus
        results = runner.run(args.only, extra_parameters=extra, scale=args.scale, out=args.out, timeout=args.timeout,
                             notebooks=args.notebooks, jobs=args.jobs, corpora=corpora,
                             html_report=not args.no_html, progress=not args.quiet, wait=args.wait)
    except ValueError as e:
        print(f"cookbook run: {e}", file=sys.stderr)
        return 2
    except runner.Interrupted as e:
        print(f"cookbook run: {e}", file=sys.stderr)
        # The kernels are stopped and the partial build removed; a notebook thread still waiting on a kernel
        # that was stopped while it started must not keep the process alive (interpreter exit would wait).
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(130)
    except KeyboardInterrupt:  # before the run had anything to clean up
        print("cookbook run: interrupted before any notebook ran; no build was changed", file=sys.stderr)
        return 130
    print(runner.format_table(results))
    bad = [r.files for r in results if not r.ok]  # <notebook>.<corpus>, as the build names its files
    where = Path(args.out).expanduser().resolve()
    print(f"\n{len(results) - len(bad)}/{len(results)} notebooks passed; build written to {where}")
    if bad:
        print(f"FAILED: {', '.join(bad)}", file=sys.stderr)
    return 1 if bad else 0


_COMMANDS = {"run": _run, "list": _list, "notebooks": _notebooks, "stamp-colab": _stamp_colab, "world": _world,
             "compare": _compare, "verdicts": _verdicts, "record": _record}


def main(argv: list[str] | None = None) -> int:
    """Run the ``cookbook`` command line on ``argv`` (default ``sys.argv[1:]``) and return its exit code:
    0 done, 1 a notebook failed, two builds differ or the disk failed (one line), 2 bad input, 130
    interrupted. Each subcommand is one
    function below (``run``, ``list``, ``notebooks``, ``stamp-colab``, ``world``, ``compare``, ``verdicts``,
    ``record``); its
    package modules are imported only when it runs, so ``--help`` needs no Jupyter.

    >>> main(["list"])  # doctest: +ELLIPSIS
    00_quickstart.ipynb
    ...
    12_claims_resolution_updates.ipynb
    0
    """
    previous = _catch_signals()
    _SIGNALLED.clear()
    cmd = "cookbook"
    try:
        args = _parser().parse_args(argv)
        cmd = f"cookbook {args.cmd}"
        return _COMMANDS[args.cmd](args)
    except BrokenPipeError:  # `cookbook list | head`: the reader left; not an error of ours
        sys.stdout = None
        return 0
    except OSError as e:  # a full disk, a folder gone mid-run: one line, not a traceback
        if _SIGNALLED:
            print(f"{cmd}: interrupted by {_SIGNALLED[0]}", file=sys.stderr)
            return 130
        where = f": {e.filename}" if e.filename else ""
        print(f"{cmd}: cannot write or read a file ({e.strerror or e}){where}", file=sys.stderr)
        return 1
    except BaseException as e:  # a signal before or after the work, and whatever it broke on its way
        if not _SIGNALLED and not isinstance(e, KeyboardInterrupt):
            raise
        print(f"{cmd}: interrupted by {_SIGNALLED[0] if _SIGNALLED else 'SIGINT'}", file=sys.stderr)
        return 130
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def cli(argv: list[str] | None = None) -> None:
    """The ``cookbook`` program: :func:`main` on ``argv`` (default: the command line's), exiting with its status.
    After a signal it exits at once (``os._exit``): CPython marks a ``KeyboardInterrupt`` raised inside some C
    extensions' imports as unhandled even once caught, and would then end the process by SIGINT, not status 130.

    >>> cli(["compare", "/no/such/build", "/no/such/other"])  # one line on stderr, then
    Traceback (most recent call last):
    ...
    SystemExit: 2
    """
    code = main(argv)
    if _SIGNALLED:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError, AttributeError):  # a closed pipe, or no stream (stdout set to None)
                pass
        os._exit(code)
    sys.exit(code)


if __name__ == "__main__":
    cli()
