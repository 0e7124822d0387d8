"""EVRT_CHECK on torch programs (docs/check.md, "Torch programs"): each
program of tests/check/ names its verdict on its first line ("# expect:
data race", "use after free", "unsynchronized host access" or "clean").
Racy: exit status 66 and every report of the expected kind; clean: exit 0
and no report at all."""
import glob
import os
import re

import pytest

from conftest import HERE, run_python

CORPUS = sorted(glob.glob(os.path.join(HERE, "check", "*.py")))


def expected(path):
    with open(path) as f:
        m = re.match(r"# expect: (.+)", f.readline())
    assert m, path + ": no '# expect:' first line"
    return m.group(1).strip()


def test_corpus_has_both_verdicts():
    kinds = {expected(p) for p in CORPUS}
    assert "clean" in kinds and len(kinds) >= 4, kinds


@pytest.mark.parametrize("path", CORPUS, ids=[os.path.basename(p)[:-3] for p in CORPUS])
def test_verdict(path):
    want = expected(path)
    with open(path) as f:
        code = f.read()
    r = run_python(code, EVRT_CHECK="1")
    kinds = re.findall(r"^evrt-check: (data race|use after free|"
                       r"unsynchronized host access|deadlock)", r.stderr, re.M)
    if want == "clean":
        assert r.returncode == 0 and "evrt-check:" not in r.stderr, r.stderr
    else:
        assert r.returncode == 66, (r.returncode, r.stderr)
        assert kinds and set(kinds) == {want}, r.stderr
