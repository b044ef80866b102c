"""tools/card_probe.c: it builds as a CANN program, runs on every product, and its output kept in
docs/card_probe/ is what the library computes today (a user with a card diffs against those
files, so they must not go stale: `make probe` rewrites them)."""
import re

import pytest

import support

PRODUCTS = ["Ascend910B", "Ascend910_93", "Ascend950", "Ascend910", "Ascend310P"]
# the card aclrtGetSocName reports for each family name (docs/compatibility.md, "Products")
CARDS = {"Ascend910B": "Ascend910B3", "Ascend910_93": "Ascend910_9391", "Ascend950": "Ascend950PR_9599",
         "Ascend910": "Ascend910A", "Ascend310P": "Ascend310P3"}
LINE = re.compile(r"^(# .*|\S+ (fp32|fp16|bf16) \w+\[\d+\] = 0x[0-9a-f]+ \(\S+\)|\S+ status = .*)$")


@pytest.fixture(scope="module")
def probe():
    return support.compile_program(support.ROOT / "tools" / "card_probe.c",
                                   out_dir=support.BIN_DIR / "tools")


@pytest.mark.parametrize("product", PRODUCTS)
def test_probe_output_is_the_documented_one(probe, product):
    result = support.run_program(probe, env={"ACLNN_SOC_VERSION": product})
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "# card_probe on %s" % CARDS[product]
    assert all(LINE.match(line) for line in lines), [line for line in lines if not LINE.match(line)][:3]
    documented = (support.ROOT / "docs" / "card_probe" / ("%s.txt" % product)).read_text().splitlines()
    assert lines == documented, "docs/card_probe/%s.txt is stale: run `make probe`" % product
