"""Agent runs: their records and state machine, approvals and interactions, snapshots.

:mod:`.records` holds one record per run and its transitions (``start_run``,
``transition``, ``recover_run``, ``run_summary``); :mod:`.approvals` the requests a run
waits on and their single claim (``request``, ``claim_approval``, ``claim_interaction``,
``pending``); :mod:`.snapshot` the frozen environment of a run
(``RunEnvironmentSnapshot``, ``make_snapshot``, ``verify_snapshot``). Their commands and
queries are in :mod:`panelot.api.runs`.
"""
