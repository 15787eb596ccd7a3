"""The hybrid logical clock of the merge clocks: ``"<ms:013d>-<counter:04d>-<deviceId>"``.

Compared as strings. ``ms`` is the larger of the wall clock and the largest clock
seen; ``counter`` breaks ties within a millisecond (carrying into ``ms`` past 9999);
the random device id makes two devices' clocks differ always (docs/sync.md Merges).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Hlc", "parse_hlc"]

_HLC = re.compile(r"^(\d{13})-(\d{4})-([A-Za-z0-9_-]{1,64})$")
_COUNTER_MAX = 9999


def parse_hlc(value: str) -> tuple[int, int, str]:
    """``(ms, counter, device)`` of a clock string; ``ValueError`` if it is not one."""
    match = _HLC.match(value)
    if match is None:
        raise ValueError(f"{value!r} is not a clock")
    return int(match[1]), int(match[2]), match[3]


@dataclass(slots=True)
class Hlc:
    """One device's clock: the last ``(ms, counter)`` it gave or saw."""

    device: str
    ms: int = 0
    counter: int = 0

    def __post_init__(self) -> None:
        if not re.fullmatch(r"[A-Za-z0-9_-]{1,64}", self.device):
            raise ValueError(f"{self.device!r} is not a device id")

    def _advance(self, ms: int) -> None:
        if ms > self.ms:
            self.ms, self.counter = ms, 0
        elif self.counter < _COUNTER_MAX:
            self.counter += 1
        else:
            self.ms, self.counter = self.ms + 1, 0

    def tick(self, wall_ms: int) -> str:
        """A new clock, later than every clock this one gave or saw."""
        self._advance(wall_ms)
        return str(self)

    def see(self, remote: str) -> None:
        """Take in a clock seen elsewhere: the next :meth:`tick` is later than it."""
        ms, counter, _ = parse_hlc(remote)
        if (ms, counter) > (self.ms, self.counter):
            self.ms, self.counter = ms, counter

    def __str__(self) -> str:
        return f"{self.ms:013d}-{self.counter:04d}-{self.device}"

    @classmethod
    def parse(cls, value: str) -> Hlc:
        """The clock that last gave ``value``."""
        ms, counter, device = parse_hlc(value)
        return cls(device, ms, counter)
