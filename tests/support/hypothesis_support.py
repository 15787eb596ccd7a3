"""Hypothesis profiles for the suite, and example counts that scale with the active one.

* ``ci`` (what ``build.py test`` loads): derandomized, so every run of the same code (and
  Hypothesis and Python) tests the same examples, whatever ``.hypothesis/`` holds (derandomize implies
  ``database=None``); nothing timed (no deadline, no ``too_slow`` health check, which
  a loaded machine could trip); a failure prints the blob that reproduces it.
* ``fuzz`` (what ``build.py fuzz`` loads): random seeds and FUZZ_FACTOR times the
  examples; failures are saved in ``.hypothesis/`` and replayed first on the next run.

A test that needs its own count writes ``@settings(max_examples=examples(N))``: N in
``ci`` (and in Hypothesis' default profile), FUZZ_FACTOR * N in ``fuzz``. A hard-coded
``max_examples`` would override the profile and not scale. A test's own
``suppress_health_check`` replaces the profile's list, so it names ``too_slow`` too.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from pathlib import Path

from hypothesis import HealthCheck, settings
from hypothesis.database import DirectoryBasedExampleDatabase

#: The examples of a test that sets no count (Hypothesis' own default, 100).
BASE_EXAMPLES = 100
#: How many times more examples ``fuzz`` runs than ``ci``.
FUZZ_FACTOR = 10
#: Where ``fuzz`` keeps the failures it finds, in the checkout (git ignores it).
FUZZ_DATABASE = Path(__file__).resolve().parents[2] / ".hypothesis" / "examples"


def register_profiles() -> None:
    """Register the ``ci`` and ``fuzz`` profiles (conftest.py does, before any test loads)."""
    settings.register_profile(
        "ci",
        max_examples=BASE_EXAMPLES,
        derandomize=True,
        database=None,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow],
        print_blob=True,
    )
    settings.register_profile(
        "fuzz",
        max_examples=BASE_EXAMPLES * FUZZ_FACTOR,
        derandomize=False,
        # Named, not inherited: with CI set in the environment, Hypothesis' default
        # settings carry no database, and fuzz would forget what it found.
        database=DirectoryBasedExampleDatabase(FUZZ_DATABASE),
        deadline=None,
        print_blob=True,
    )


def examples(base: int) -> int:
    """``base`` examples scaled by the active profile's count against BASE_EXAMPLES.

    Evaluated when a test module is imported, which pytest does after the
    ``--hypothesis-profile`` option has loaded the profile.
    """
    active = settings.default
    count = active.max_examples if active is not None else BASE_EXAMPLES
    return max(1, base * count // BASE_EXAMPLES)


def uses_hypothesis(test: Callable[..., object]) -> bool:
    """Whether a test function is a hypothesis test or defines and runs one inside.

    ``@given`` marks what it wraps; a test that builds its ``@given`` function per
    parameter (``test_command_payloads``) is found by that decorator in its source.
    """
    if getattr(test, "is_hypothesis_test", False):
        return True
    try:
        source = inspect.getsource(test)
    except (OSError, TypeError):
        return False
    return "@given(" in source
