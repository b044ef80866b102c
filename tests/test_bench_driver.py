"""The kernel driver of bench/drivers/ still builds against the operator's source and its kernel
still matches the driver's own scatter (fp32 sums rounded once), so the tool the performance
notes rely on does not rot between sessions."""
import subprocess

import pytest

import support

DRIVER = support.ROOT / "build" / "bench" / "max_pool_bw_slots"


@pytest.fixture(scope="module")
def driver():
    subprocess.run(["make", "-s", "build/bench/max_pool_bw_slots"], cwd=support.ROOT, check=True,
                   capture_output=True, text=True)
    return DRIVER


@pytest.mark.parametrize("dtype", ["bf16", "f16", "f32"])
@pytest.mark.parametrize("stream", ["0", "1"])
def test_driver_checks_and_times_the_slots_kernel(driver, dtype, stream):
    result = subprocess.run([str(driver), "2", dtype, "1"], capture_output=True, text=True, timeout=120,
                            env={"ACLNN_DRIVER_STREAM": stream})
    assert result.returncode == 0, result.stdout + result.stderr
    assert "ns per output" in result.stdout or "not used" in result.stdout, result.stdout
