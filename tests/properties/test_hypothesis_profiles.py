"""The hypothesis profiles: ``ci`` repeats itself exactly, ``fuzz`` scales every count."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import test_command_fuzz as command_fuzz  # modules, not functions: pytest would run those
import test_receipt_fingerprint as fingerprint
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hypothesis_support import BASE_EXAMPLES, FUZZ_FACTOR, examples, uses_hypothesis


@contextmanager
def profile(name: str) -> Iterator[None]:
    """Load a profile for the block, then the one that was active."""
    before = settings.get_current_profile_name()
    settings.load_profile(name)
    try:
        yield
    finally:
        settings.load_profile(before)


def test_ci_is_derandomized_without_a_database() -> None:
    ci = settings.get_profile("ci")
    assert ci.derandomize is True
    assert ci.database is None
    assert ci.deadline is None and ci.print_blob is True
    assert HealthCheck.too_slow in ci.suppress_health_check  # the one timed health check
    assert ci.max_examples == BASE_EXAMPLES


def test_fuzz_is_random_with_more_examples() -> None:
    fuzz = settings.get_profile("fuzz")
    assert fuzz.derandomize is False
    assert fuzz.database is not None
    assert fuzz.max_examples == BASE_EXAMPLES * FUZZ_FACTOR


def test_examples_scale_with_the_active_profile() -> None:
    with profile("ci"):
        assert examples(40) == 40
    with profile("fuzz"):
        assert examples(40) == 40 * FUZZ_FACTOR
        # A settings object made now, as a test module's decorators are, takes the scale.
        assert settings(max_examples=examples(3)).max_examples == 3 * FUZZ_FACTOR
        assert settings().derandomize is False
    with profile("ci"):
        assert settings(max_examples=examples(3)).derandomize is True


def _drawn(strategy: st.SearchStrategy[Any]) -> list[Any]:
    seen: list[Any] = []

    @settings(max_examples=30)
    @given(strategy)
    def record(value: Any) -> None:
        seen.append(value)

    record()
    return seen


def test_ci_draws_the_same_examples_every_run() -> None:
    strategy = st.lists(st.text(), max_size=4)
    with profile("ci"):
        first, second = _drawn(strategy), _drawn(strategy)
    assert len(first) == 30
    assert first == second


def test_the_fuzz_marker_finds_every_hypothesis_test() -> None:
    assert uses_hypothesis(fingerprint.test_fingerprint_matches_the_reference_encoder)
    # It builds its @given function per parameter, inside the test.
    assert uses_hypothesis(command_fuzz.test_command_payloads)
    assert not uses_hypothesis(command_fuzz.test_every_registered_command_is_fuzzed)
