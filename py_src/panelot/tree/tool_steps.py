"""Tool calls and results in a model context: the pairing providers require.

OpenAI- and Anthropic-style APIs refuse a request in which an assistant's tool call is
not answered right after that assistant turn, or in which a tool result answers no
call. A path through the tree can hold either (a result or a call was deleted, the
user moved on from a call that never got its result, a branch was made at a call), so
the context is made to follow one rule while it is derived:

* every call rides on an assistant message (``toolCalls``) and is answered by exactly
  one ``tool`` message, among the ``tool`` messages right after that assistant message;
* a result answers the open call with its ``itemId``; a result that answers none (its
  call was deleted, or it comes after its step was closed) is left out;
* a step closes when a user or assistant message, or a call after a result, follows
  it; each call of the step still unanswered then gets :data:`NOT_COMPLETED`, a fixed
  result, so the request prefix stays the same from one turn to the next;
* calls still unanswered at the end of the path are the step in progress (a call
  awaiting approval or execution): they are not sent, but reported as ``pending``.
"""

from __future__ import annotations

from typing import Any

__all__ = ["NOT_COMPLETED", "ToolSteps"]

NOT_COMPLETED = "no result: the call was not completed"
"""The text of the result given to a call that was left without one."""


class ToolSteps:
    """Builds a context's messages while keeping its tool calls and results paired."""

    def __init__(self, messages: list[dict[str, Any]]) -> None:
        self.messages = messages
        self.open: dict[str, dict[str, Any]] = {}
        """Calls of the current step without a result yet, by ``itemId``, in call order."""
        self.carrier: dict[str, Any] | None = None
        """The assistant message the current step's calls ride on."""
        self.answered = False
        self.used: set[str] = set()

    def message(self, msg: dict[str, Any]) -> None:
        """Add a user or assistant message: it closes the current step first."""
        self.close()
        self.messages.append(msg)

    def call(self, call: dict[str, Any]) -> None:
        """Add a tool call to the current step, or start a new step with it.

        A call whose ``itemId`` this path already used is left out: a later result
        could not say which one it answers.
        """
        item = call.get("itemId")
        if not isinstance(item, str) or item in self.used:
            return
        self.used.add(item)
        if self.carrier is None or self.answered:
            self.close()
            last = self.messages[-1] if self.messages else None
            if last is None or last["role"] != "assistant":
                last = {"role": "assistant", "content": []}
                self.messages.append(last)
            self.carrier = last
        self.carrier.setdefault("toolCalls", []).append(call)
        self.open[item] = call

    def result(self, msg: dict[str, Any]) -> None:
        """Add a ``tool`` message if it answers an open call of the current step."""
        item = msg.get("itemId")
        if not isinstance(item, str) or self.open.pop(item, None) is None:
            return
        self.answered = True
        self.messages.append(msg)

    def close(self) -> None:
        """Give each still-open call of the current step its fixed result."""
        for item in self.open:
            self.messages.append(
                {
                    "role": "tool",
                    "itemId": item,
                    "ok": False,
                    "content": [{"type": "text", "text": NOT_COMPLETED}],
                    "notCompleted": True,
                }
            )
        self.open, self.carrier, self.answered = {}, None, False

    def pending(self) -> list[dict[str, Any]]:
        """End the path: take the calls still open off their message and return them."""
        calls = list(self.open.values())
        carrier = self.carrier
        if calls and carrier is not None:
            kept = [c for c in carrier["toolCalls"] if c["itemId"] not in self.open]
            if kept:
                carrier["toolCalls"] = kept
            else:
                del carrier["toolCalls"]
                if not carrier["content"] and carrier is self.messages[-1]:
                    self.messages.pop()
        self.open, self.carrier, self.answered = {}, None, False
        return calls
