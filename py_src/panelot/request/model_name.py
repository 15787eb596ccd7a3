"""A model's name as commands and queries take it: one rule, wherever a model is named.

``thread.request``, ``thread.sent``, ``thread.rescued`` and the ``summary.*`` commands
all key something by model (a recorded cut, a summary), so they must agree on what a
model name is: a string of 1 to :data:`MAX_MODEL_CHARS` characters, not blank, without
lone surrogates (it is stored, and a key that IndexedDB holds but JSON cannot carry would
be a different key after a backup).
"""

from __future__ import annotations

from typing import Any

from panelot.idb.errors import ValidationError
from panelot.surrogates import check_well_formed

__all__ = ["MAX_MODEL_CHARS", "check_model"]

MAX_MODEL_CHARS = 200
"""The longest model name accepted."""


def check_model(model: Any, field: str = "model") -> str:
    """``model`` if it is a model name; else a ValidationError naming ``field``."""
    if not isinstance(model, str) or not model.strip() or len(model) > MAX_MODEL_CHARS:
        raise ValidationError(
            f"{field}: must be a model name of 1 to {MAX_MODEL_CHARS} characters, not blank",
            field=field,
        )
    return check_well_formed(model, field)
