import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.skipif(shutil.which("ruff") is None and not (Path(sys.prefix) / "bin" / "ruff").exists(),
                    reason="ruff not installed (the test extra installs it)")
def test_ruff_clean():
    dirs = [d for d in ("src", "tests", "benchmarks") if (ROOT / d).is_dir()]
    r = subprocess.run([sys.executable, "-m", "ruff", "check", *dirs], cwd=ROOT,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
