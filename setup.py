"""Build hook: ship the notebook series and the committed world inside the wheel.

The repository keeps ``notebooks/`` and ``data/`` at the top level; a built wheel carries copies under
``cookbook/_bundle/`` so a non-editable install can list, run and copy out the notebooks
(``cookbook.paths.shipped``). Editable installs read the checkout and copy nothing.
"""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
# The recorded runs' text and answers ship too (their licences beside them); Dulce's parquet original does not (the
# JSON rendering under dulce/index is what load_corpus reads).
BUNDLE = {"notebooks": ("[0-9][0-9]_*.ipynb",),
          "data": ("world-*/*", "christmas-carol/*", "dulce/LICENSE", "dulce/ABOUT.md", "dulce/index/*")}


class BuildPyWithBundle(build_py):
    def run(self):
        super().run()
        if self.editable_mode:
            return
        bundle = Path(self.build_lib) / "cookbook" / "_bundle"
        shutil.rmtree(bundle, ignore_errors=True)  # an earlier build's copies (e.g. renamed notebooks) must not ship
        for folder, patterns in BUNDLE.items():
            files = []
            for pattern in patterns:
                found = sorted((ROOT / folder).glob(pattern))
                if not found:
                    raise SystemExit(f"cannot bundle {folder}/: no {pattern} under {ROOT / folder}")
                files += found
            for src in files:
                dst = bundle / src.relative_to(ROOT)
                dst.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(src, dst)


setup(cmdclass={"build_py": BuildPyWithBundle})
