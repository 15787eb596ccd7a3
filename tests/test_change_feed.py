"""The change feed's publishing policy, on a clock of the test's own.

A commit after a pause goes out at once; the commits of a burst (each within
``BURST`` of the previous) wait for the frame (``BATCH`` after the last message) and go
out together; a pause during a burst sends what waited at once. The policy is pure
Python, the same on both cores; the behavior cases check the cores' channels.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from loops import run_async
from panelot.idb.observe import ObsSet
from panelot.idb.observe.feed import BATCH, BURST, ChangeFeed
from panelot.idb.observe.ranges import RangeSet

PART = "idb://db/nodes/"


class Recorder:
    """A channel that keeps what is published."""

    def __init__(self) -> None:
        self.messages: list[ObsSet] = []

    def publish(self, changes: ObsSet) -> None:
        self.messages.append(changes)

    def later(self, delay: float, callback: Callable[[], None]) -> None:
        asyncio.get_event_loop().call_later(delay, callback)

    def close(self) -> None:
        """Nothing to release."""


def change(key: str) -> ObsSet:
    return {PART: RangeSet().add_key(key)}


def keys_of(message: ObsSet) -> list[str]:
    return [k for k in "abcdefghijklmnopqrstuvwxyz" if message[PART].has_key(k)]


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def feed_with(clock: Clock) -> tuple[ChangeFeed, Recorder]:
    feed = ChangeFeed("db", clock=clock)
    channel = Recorder()
    feed.channel = channel
    return feed, channel


def test_commits_after_pauses_go_out_at_once() -> None:
    async def body() -> None:
        clock = Clock()
        feed, channel = feed_with(clock)
        heard: list[ObsSet] = []
        feed.subscribe(heard.append)
        for n, key in enumerate("abc"):
            feed.committed(change(key))
            # Published before committed() returns: no wait for a frame.
            assert [keys_of(m) for m in channel.messages][n] == [key]
            clock.now += BURST * 2  # a pause, though shorter than a frame
        assert len(channel.messages) == 3 and len(heard) == 3

    run_async(body())


def test_a_burst_waits_for_the_frame_and_goes_out_together() -> None:
    async def body() -> None:
        clock = Clock()
        feed, channel = feed_with(clock)
        heard: list[ObsSet] = []
        feed.subscribe(heard.append)
        for key in "abcdef":
            feed.committed(change(key))
            clock.now += BURST / 3
        # The first goes out at once, the rest wait: this connection heard each.
        assert [keys_of(m) for m in channel.messages] == [["a"]]
        assert len(heard) == 6
        await asyncio.sleep(BATCH * 2)  # the frame's timer (the loop's own clock) fires
        assert [keys_of(m) for m in channel.messages] == [["a"], ["b", "c", "d", "e", "f"]]
        assert feed.published == 2

    run_async(body())


def test_a_pause_in_a_burst_sends_what_waited_at_once() -> None:
    async def body() -> None:
        clock = Clock()
        feed, channel = feed_with(clock)
        feed.committed(change("a"))
        clock.now += BURST / 2
        feed.committed(change("b"))  # a burst: waits
        assert len(channel.messages) == 1
        clock.now += BURST * 1.5  # a pause, still within the frame
        feed.committed(change("c"))
        assert [keys_of(m) for m in channel.messages] == [["a"], ["b", "c"]]
        await asyncio.sleep(BATCH * 2)
        assert len(channel.messages) == 2  # the frame's timer finds nothing left

    run_async(body())


def test_close_publishes_what_waited() -> None:
    async def body() -> None:
        clock = Clock()
        feed, channel = feed_with(clock)
        feed.committed(change("a"))
        feed.committed(change("b"))  # same instant: a burst
        feed.close()
        assert [keys_of(m) for m in channel.messages] == [["a"], ["b"]]

    run_async(body())
