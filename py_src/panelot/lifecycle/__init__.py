"""A thread's and the store's lifecycle: start-up housekeeping, retention, deletion.

:mod:`.startup` is what a store does when it opens (``start_up``: finish interrupted
work, then keep the bounds); :mod:`.retention` archives threads untouched for N days
(``archive_old_threads``, ``run_configured``, ``preview``), leaving the Markdown summary
of :mod:`.summaries` in place of their messages; :mod:`.thread_delete` is
``thread.delete``'s cascade (``stop_thread``, ``cascade_delete``,
``release_stale_deletes``). Their commands and queries are in :mod:`panelot.api.threads`
and :mod:`panelot.api.attachments`; :mod:`panelot.store` and :mod:`panelot.runtime` call
start-up and retention.
"""
