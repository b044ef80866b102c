"""The checking mode's soak, short (docs/checking.md, "The soak"): tests/soak/soak.c runs every
operator with random shapes, dtypes, strided layouts and products on 2 threads x 3 streams, with
asynchronous copies, events, callbacks and host functions, under ACLNN_CHECK=1, checking every
result against its host reference.  `make soak` runs the same program for 10 minutes."""
import support

SECONDS = "20"


def test_soak_short_is_clean():
    exe = support.compile_program(support.ROOT / "tests" / "soak" / "soak.c",
                                  extra_flags=[f"-I{support.ROOT / 'libaclnn' / 'src'}"])
    env = {"ACLNN_CHECK": "1", "ACLNN_CHECK_EXITCODE": "86", "ACLNN_CHECK_LOG": ""}
    result = support.run_program(exe, env=env, args=[SECONDS, "2", "3"], timeout=120)
    out = result.stdout + result.stderr
    assert result.returncode == 0, out
    assert " 0 wrong results, 0 failed calls, 0 checking errors" in out, out
    assert "ACLNN_CHECK SUMMARY: 0 errors, 0 warnings" in result.stderr, out
    rounds = [line.split()[-2] for line in result.stdout.splitlines() if line.endswith(" rounds")]
    assert len(rounds) == 10 and all(int(n) > 0 for n in rounds), out


def test_soak_with_large_blocks_is_clean():
    """One Prelu round in 16 on blocks of 2 MiB and more (the checking mode's huge-page library
    views); the resident set swings with the quarantine's turnover, so it is not compared."""
    exe = support.compile_program(support.ROOT / "tests" / "soak" / "soak.c",
                                  extra_flags=[f"-I{support.ROOT / 'libaclnn' / 'src'}"])
    env = {"ACLNN_CHECK": "1", "ACLNN_CHECK_EXITCODE": "86", "ACLNN_CHECK_LOG": "",
           "SOAK_BIG_EVERY": "16", "SOAK_RSS_SLACK_MB": "100000"}
    result = support.run_program(exe, env=env, args=["10", "2", "3"], timeout=120)
    out = result.stdout + result.stderr
    assert result.returncode == 0, out
    assert " 0 wrong results, 0 failed calls, 0 checking errors" in out, out
    assert "ACLNN_CHECK SUMMARY: 0 errors, 0 warnings" in result.stderr, out
