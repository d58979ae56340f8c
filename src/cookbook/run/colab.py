"""The Colab badge and setup cell, generated from the repository URL in ``pyproject.toml``.

``python -m cookbook stamp-colab`` rewrites every notebook's badge and setup cell from here, so the URL
lives in one place. The setup cell installs the project only when ``google.colab`` is importable; it is
tagged ``remove-cell`` (:data:`SETUP_TAG`) so the rendered HTML pages leave it out.
"""

from __future__ import annotations

import re
from pathlib import Path

from ..paths import list_notebooks, place_files, repo_root

__all__ = ["LATER_EXTRAS", "LATER_TEMPLATE", "NOTEBOOK_EXTRAS", "SETUP_TAG", "SETUP_TEMPLATE", "badge", "repo_url",
           "setup_cell", "stamp", "without_badge"]

# The tag of the setup cell; the runner's HTML pages drop cells with it (nbconvert's TagRemovePreprocessor).
SETUP_TAG = "remove-cell"

SETUP_TEMPLATE = '''# Colab setup: in Google Colab, fetch the cookbook and install what this notebook needs,
# showing its progress; anywhere else this does nothing.
import os
import subprocess
import sys
import time

try:
    import google.colab  # noqa: F401
    IN_COLAB = True
except ImportError:
    IN_COLAB = False

if IN_COLAB:
    REPO_URL = "{repo_url}"
    CHECKOUT = "/content/graphrag-cookbook"
    EXTRAS = {extras!r}  # this notebook's extras of pyproject.toml (10 adds FalkorDB; 07 WordNet where it needs it)
    started = time.monotonic()

    def step(cmd, what):
        """Run ``cmd``, printing ``what`` at once and its progress lines as they come."""
        print(f"[{{time.monotonic() - started:3.0f}} s] {{what}}", flush=True)
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        tail = []
        for line in proc.stdout:
            tail = (tail + [line.rstrip()])[-30:]
            if line.strip().startswith(("Collecting", "Downloading", "Building", "Installing", "Successfully")):
                print("      " + line.strip()[:110], flush=True)
        if proc.wait() != 0:
            raise RuntimeError(f"{{what}} failed:\\n" + "\\n".join(tail))

    if not os.path.isdir(CHECKOUT):
        step(["git", "clone", "--depth", "1", "-q", REPO_URL, CHECKOUT], f"fetching {{REPO_URL}}")
    import tomllib

    with open(f"{{CHECKOUT}}/pyproject.toml", "rb") as f:
        project = tomllib.load(f)["project"]
    needs = project["dependencies"] + [r for e in EXTRAS for r in project["optional-dependencies"][e]]
    step([sys.executable, "-m", "pip", "install", "--progress-bar", "off", *needs],
         f"installing what Colab lacks of {{len(needs)}} requirements")
    sys.path.insert(0, f"{{CHECKOUT}}/src")  # the package itself runs from the checkout
    os.environ["COOKBOOK_DATA"] = f"{{CHECKOUT}}/data"  # committed data/ resolves from any cwd
    print(f"[{{time.monotonic() - started:3.0f}} s] ready", flush=True)'''

# Appended to the setup cell of a notebook with extras installed later (LATER_EXTRAS): the cell that needs one
# calls install_extra(name) first, so the notebook's first cells run without waiting for it.
LATER_TEMPLATE = '''


def install_extra(extra):
    """In Colab, install ``extra`` of pyproject.toml now, in the cell that needs it; anywhere else do nothing.
    {later}: {why}."""
    if IN_COLAB:
        global started
        started = time.monotonic()
        reqs = project["optional-dependencies"][extra]
        step([sys.executable, "-m", "pip", "install", "--progress-bar", "off", *reqs],
             f"installing the {{extra}} extra ({{', '.join(reqs)}}) for this cell")
        print(f"[{{time.monotonic() - started:3.0f}} s] ready", flush=True)'''

# The extras each notebook's setup cell installs in Colab (pyproject.toml's optional dependencies): the model
# backends for the notebooks with a real-model section, FalkorDB for 10; nothing else.
NOTEBOOK_EXTRAS = {"00": ("llm",), "02": ("llm",), "04": ("llm",), "05": ("llm",), "08": ("llm",),
                   "10": ("graphdb",), "11": ("llm",), "12": ("llm",)}
# The extras a notebook installs in the cell that needs them (its setup cell defines install_extra), with why:
# WordNet's source package is downloaded and built, the longest install of the series, and only 07's section 3
# reads it, so 07's first cells run without waiting for it.
LATER_EXTRAS = {"07": (("wordnet",), "its source package is downloaded and built (the longest install), so only the "
                                     "cell reading WordNet waits")}

_BADGE = re.compile(r"\[!\[Open In Colab\]\([^)]*\)\]\([^)]*\)")
# A badge as the first markdown cell starts with it, however damaged (a URL with ")" or a newline written by an
# older stamp): everything from "[![Open In Colab]" to the first blank line, so a later stamp replaces it whole.
_BADGE_BLOCK = re.compile(r"\A\s*\[!\[Open In Colab\].*?(?:\n[ \t]*\n\s*|\Z)", re.S)
# https://github.com/OWNER/REPO: GitHub's own characters for an owner (letters, digits, "-") and a repository
# (letters, digits, ".", "_", "-"); nothing else can reach the setup cell's Python string or the badge's link.
_REPO_URL = re.compile(r"https://github\.com/([A-Za-z0-9](?:[A-Za-z0-9-]{0,38}))/([A-Za-z0-9._-]{1,100}?)(?:\.git)?/?")


def repo_url(pyproject: str | Path | None = None) -> str:
    """``[project.urls] Repository`` from ``pyproject.toml`` (the checkout's, by default).

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     path = Path(d) / "pyproject.toml"
    ...     _ = path.write_text('[project.urls]\\nRepository = "https://github.com/o/r"\\n')
    ...     repo_url(path)
    'https://github.com/o/r'
    """
    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomli as tomllib
    path = Path(pyproject) if pyproject else repo_root() / "pyproject.toml"
    return tomllib.loads(path.read_text(encoding="utf-8"))["project"]["urls"]["Repository"]


def _check_url(url) -> str:
    """``url`` as ``https://github.com/OWNER/REPO`` (no trailing slash or ``.git``), or a ``ValueError``: the URL is
    written into Python code and markdown links, so only GitHub's own name characters pass.

    >>> _check_url("https://github.com/o/r.git/")
    'https://github.com/o/r'
    >>> _check_url('https://github.com/o/r"); import os; ("')  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: url must be a GitHub repository URL (https://github.com/OWNER/REPO; ...
    """
    if isinstance(url, str) and not url.strip():
        raise ValueError("url is empty: give the GitHub repository URL (https://github.com/OWNER/REPO), or leave "
                         "--url out to use pyproject.toml's [project.urls] Repository")
    m = _REPO_URL.fullmatch(url) if isinstance(url, str) else None
    if m is None or m.group(2) in (".", ".."):
        raise ValueError("url must be a GitHub repository URL (https://github.com/OWNER/REPO; OWNER letters, digits "
                         f"and '-', REPO letters, digits, '.', '_' and '-'), got {url!r}")
    return f"https://github.com/{m.group(1)}/{m.group(2)}"


def badge(url: str, notebook_name: str) -> str:
    """The "Open In Colab" markdown badge of ``notebook_name`` in the GitHub repository at ``url``.

    >>> badge("https://github.com/o/r", "00_quickstart.ipynb").split("](")[-1]
    'https://colab.research.google.com/github/o/r/blob/main/notebooks/00_quickstart.ipynb)'
    """
    url = _check_url(url)
    colab = url.replace("https://github.com/", "https://colab.research.google.com/github/")
    return (f"[![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)]"
            f"({colab}/blob/main/notebooks/{notebook_name})")


def without_badge(markdown: str) -> str:
    """``markdown`` with its Colab badge (and the blank lines after it) removed: the badge a cell starts with,
    up to the first blank line, or else the first well-formed badge in it.

    >>> without_badge(badge("https://github.com/o/r", "00_x.ipynb") + "\\n\\n# 00 · X")
    '# 00 · X'
    >>> without_badge('[![Open In Colab](x)](https://colab/o/r")\\nimport os)/00.ipynb)\\n\\n# 00 · X')
    '# 00 · X'
    """
    if _BADGE_BLOCK.match(markdown):
        return _BADGE_BLOCK.sub("", markdown, count=1)
    return re.sub(_BADGE.pattern + r"\s*", "", markdown, count=1)


def setup_cell(url: str, notebook: str = "") -> str:
    """The first code cell of ``notebook`` (a file name; its two-digit number picks :data:`NOTEBOOK_EXTRAS`):
    in Colab, clone ``url`` and pip-install the core requirements and that notebook's extras, printing its
    progress as it goes (the package itself runs from the checkout, so nothing is built); elsewhere do nothing.
    A notebook of :data:`LATER_EXTRAS` also gets ``install_extra(name)``, which its cell that needs the extra
    calls first (in Colab it installs it there; elsewhere it does nothing).

    >>> url = "https://github.com/o/r"
    >>> "EXTRAS = ('graphdb',)" in setup_cell(url, "10_x.ipynb"), "install_extra" in setup_cell(url, "07_x.ipynb")
    (True, True)
    """
    number = str(notebook)[:2]
    cell = SETUP_TEMPLATE.format(repo_url=_check_url(url), extras=NOTEBOOK_EXTRAS.get(number, ()))
    if number in LATER_EXTRAS:
        extras, why = LATER_EXTRAS[number]
        cell += LATER_TEMPLATE.format(later=", ".join(extras), why=why)
    return cell


def stamp(notebooks: str | Path | None = None, url: str | None = None) -> list[Path]:
    """Rewrite the badge (first markdown cell) and the setup cell (first code cell, tagged
    :data:`SETUP_TAG`) of every notebook; return the notebooks that changed. Outputs stay stripped; each notebook
    is written whole or not at all (:func:`cookbook.paths.place_files`).

    >>> import nbformat, tempfile
    >>> nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# 00 · X"),
    ...                                      nbformat.v4.new_code_cell("pass")])
    >>> with tempfile.TemporaryDirectory() as d:
    ...     nbformat.write(nb, str(Path(d) / "00_x.ipynb"))
    ...     first = [p.name for p in stamp(d, "https://github.com/o/r")]
    ...     again = stamp(d, "https://github.com/o/r")  # already stamped: nothing changes
    ...     cells = nbformat.read(str(Path(d) / "00_x.ipynb"), as_version=4).cells
    >>> first, again, cells[1].metadata["tags"], cells[0].source.endswith("# 00 · X")
    (['00_x.ipynb'], [], ['remove-cell'], True)
    """
    import nbformat

    url = repo_url() if url is None else url  # an empty or malformed URL given is refused, never replaced
    _check_url(url)
    changed = []
    for path in list_notebooks(notebooks):
        nb = nbformat.read(str(path), as_version=4)
        md = next((c for c in nb.cells if c.cell_type == "markdown"), None)
        code = next((c for c in nb.cells if c.cell_type == "code"), None)
        if md is None or code is None:
            raise ValueError(f"{path} has no {'markdown' if md is None else 'code'} cell to hold the badge and the "
                             "setup; nothing was stamped after it")
        new_md = badge(url, path.name) + "\n\n" + without_badge(md.source)
        new_code = setup_cell(url, path.name)
        tags = code.metadata.get("tags", [])
        new_tags = tags if SETUP_TAG in tags else [*tags, SETUP_TAG]
        if (new_md, new_code, new_tags) != (md.source, code.source, tags):
            md.source, code.source = new_md, new_code
            code.metadata["tags"] = new_tags
            text = nbformat.writes(nb)
            # beside it, then renamed into place: a full disk leaves the notebook as it was, never half written
            place_files({path.name: (text if text.endswith("\n") else text + "\n").encode("utf-8")}, path.parent,
                        force=True)
            changed.append(path)
    return changed
