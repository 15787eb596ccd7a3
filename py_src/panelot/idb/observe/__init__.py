"""Change observation: what a transaction changed, what a query read, and live queries.

Dexie 4 announces each committed read-write transaction as an *observability set*:
``{"idb://<db>/<table>/<part>": RangeSet}``, the part being ``""`` for primary keys,
``":dels"`` for deletions, or an index name. This package builds those sets in Python
(:mod:`~panelot.idb.observe.ranges`, :mod:`~panelot.idb.observe.changes`), records them
from the requests a transaction body issues (:mod:`~panelot.idb.observe.track`), hands
them between connections and contexts (:mod:`~panelot.idb.observe.feed`), and re-runs
the queries whose reads they touch (:mod:`~panelot.idb.observe.live`), reading only
the keys a change names (:mod:`~panelot.idb.observe.reuse`). A memo kept per connection
follows its feed through :mod:`~panelot.idb.observe.follow`.
"""

from panelot.idb.observe.changes import ObsSet, decode_set, encode_set, merge_sets, sets_overlap
from panelot.idb.observe.feed import ChangeFeed, Channel
from panelot.idb.observe.follow import FeedMemo, PerConnection
from panelot.idb.observe.live import LiveQuery
from panelot.idb.observe.ranges import RangeSet

__all__ = [
    "ChangeFeed",
    "Channel",
    "FeedMemo",
    "LiveQuery",
    "ObsSet",
    "PerConnection",
    "RangeSet",
    "decode_set",
    "encode_set",
    "merge_sets",
    "sets_overlap",
]
