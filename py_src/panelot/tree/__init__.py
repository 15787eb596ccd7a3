"""Conversation trees: threads and their nodes, branches, reading, views and transfer.

:mod:`.records` types the ``threads`` and ``nodes`` tables; :mod:`.nodes` holds the tree
operations inside a caller's transaction (``create_thread``, ``append_node``,
``edit_message``, ``regenerate``, ``switch_branch``) and :mod:`.tombstones` deleting a
message. Reading: :mod:`.reading`, :mod:`.loading` (``load_thread``, with the
:mod:`.integrity` repair), the caches of :mod:`.cache` and :mod:`.path_memo`, the branch
rules of :mod:`.descent` and the ``shown`` counts of :mod:`.shown` and :mod:`.backfill`.
Views: :mod:`.views` and :mod:`.context` (model context, UI snapshot, Markdown, with
:mod:`.tool_steps` and :mod:`.provider_state`), :mod:`.listing` (the conversation list)
and :mod:`.transfer` (JSON export and import of whole threads). Their commands and
queries are in :mod:`panelot.api.threads` and :mod:`panelot.api.messages`
(``message.send`` in :mod:`panelot.api.send`).
"""
