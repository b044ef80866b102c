"""The two quick-start examples a newcomer runs first (`make demo` runs them too)."""
import subprocess
import sys

import support


def test_c_quickstart_runs_and_checks_its_values():
    out = support.build_and_run_example("examples/quickstart.c")
    assert "quickstart: all values correct" in out
    assert out.count("prelu(") == 8


def test_python_quickstart_runs():
    result = subprocess.run([sys.executable, str(support.ROOT / "examples" / "quickstart.py")],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "two-phase result matches numpy" in result.stdout
    assert "caught ParamInvalidError: code 161002" in result.stdout
