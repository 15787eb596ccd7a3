import os

from browser_harness import run_py


def test_probe(harness_page):
    code = open(os.environ.get("PROBE", "/tmp/probe/code.py")).read()
    print("RESULT:", run_py(harness_page, code))
