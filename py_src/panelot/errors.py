"""Domain errors, on the same base class as the storage layer's errors."""

from __future__ import annotations

from panelot.idb.errors import PanelotError, ValidationError

__all__ = [
    "AlreadyResolvedError",
    "AssetIntegrityError",
    "BindingDriftError",
    "ConflictError",
    "ImportError_",
    "MissingSnapshotError",
    "NetworkError",
    "PanelotError",
    "ReadOnlyAssetError",
    "SnapshotError",
    "SnapshotIntegrityError",
    "SnapshotTooLargeError",
    "SnapshotVersionError",
    "SyncDigestError",
    "SyncPausedError",
    "TransitionError",
    "UnknownCommandError",
    "ValidationError",
]


class ConflictError(PanelotError):
    """A submission id was reused for a different request (its fingerprint differs)."""

    name = "ConflictError"


class AdmissionError(PanelotError):
    """The thread is being deleted and accepts no new commands."""

    name = "AdmissionError"


class UnknownCommandError(PanelotError):
    """The command or query type is not known."""

    name = "UnknownCommandError"


class ImportError_(ValidationError):  # noqa: N801 - avoids shadowing the builtin ImportError
    """An import was refused by its pre-check; ``problems`` lists what is wrong."""

    name = "ImportError"

    def __init__(self, problems: list[str]) -> None:
        shown = "; ".join(problems[:20]) + (
            f"; and {len(problems) - 20} more" if len(problems) > 20 else ""
        )
        field = problems[0].split(":", 1)[0] if problems else None
        super().__init__(f"import refused: {shown}", field=field)
        self.problems = problems


class NetworkError(PanelotError):
    """An HTTP call failed, or its answer was refused.

    No connection, a timeout, a response over its size limit, or a server's answer that
    a caller refuses (a 401, a 5xx, a body that is no JSON).

    Its message names the method, the URL (never with credentials) and what went wrong;
    it never holds a request's headers, so an ``Authorization`` header cannot leak.
    """

    name = "NetworkError"


class SyncDigestError(PanelotError):
    """The sync server sent something other than what it said: nothing of it is written.

    An attachment's bytes whose MD5 digest or length is not the server's, or a record
    that is not the revision this device knows.
    """

    name = "SyncDigestError"


class SyncPausedError(PanelotError):
    """Sync is paused (after a backup restore) until ``sync.resume`` says how to go on."""

    name = "SyncPausedError"


class TransitionError(PanelotError):
    """A run was asked to move to a state its current state does not allow (see ``runs``)."""

    name = "TransitionError"


class AlreadyResolvedError(PanelotError):
    """An approval or interaction was claimed after it had already been resolved."""

    name = "AlreadyResolvedError"


class SnapshotError(PanelotError):
    """Base class of the reasons a run's RunEnvironmentSnapshot is refused on recovery."""

    name = "SnapshotError"


class MissingSnapshotError(SnapshotError):
    """The run has no RunEnvironmentSnapshot (a run started before snapshots existed)."""

    name = "MissingSnapshotError"


class SnapshotVersionError(SnapshotError):
    """The snapshot's format version is not one this store understands."""

    name = "SnapshotVersionError"


class SnapshotIntegrityError(SnapshotError):
    """The snapshot's SHA-256 digest does not match its content, or its shape is invalid."""

    name = "SnapshotIntegrityError"


class SnapshotTooLargeError(SnapshotError):
    """The snapshot exceeds MAX_SNAPSHOT_BYTES or MAX_SNAPSHOT_DEPTH."""

    name = "SnapshotTooLargeError"


class BindingDriftError(SnapshotError):
    """The current connection transport or execution bindings differ from the snapshot's."""

    name = "BindingDriftError"


class ReadOnlyAssetError(PanelotError):
    """A plugin asset already exists at that path; assets are replaced only by reinstalling."""

    name = "ReadOnlyAssetError"


class AssetIntegrityError(PanelotError):
    """A stored plugin asset's bytes no longer match its recorded SHA-256 (or size)."""

    name = "AssetIntegrityError"
