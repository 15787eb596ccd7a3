"""The model request of a thread: its context within budget, slimmed, with files and images.

:mod:`.build` is the entry point (``build_request``: the slimmed request of a thread's
path); it takes the newest turns within the context budget (:mod:`.context`,
:mod:`.history`), applies the pure slimming plan of :mod:`.slimming`, sends attached
text files as their text (:mod:`.file_text`) and images as thumbnails
(:mod:`.thumbnails`). The ``thread.request`` query is in :mod:`panelot.api.requests`.

The overflow rescue: :mod:`.overflow` says whether a provider's error is a context
overflow, :mod:`.rescue` is the pure plan that cuts a refused request's large items (and,
if needed, its history budget), :mod:`.rescued` builds a request with that cut or with
the one recorded on the thread, and :mod:`.sent` says what the next request leaves out
(``thread.sent``); their command and queries are in :mod:`panelot.api.rescue`.
"""
