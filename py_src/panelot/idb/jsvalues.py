"""JS conversions Dexie's semantics rest on: ``Number(x)``, ``String(x)``, default sort.

Dexie's property modifications compute with ``Number(value)`` and sort lists with
``Array.prototype.sort()``, which compares the items' ``String()`` forms by UTF-16
code units. To give the same records, the same conversions are needed here, for the
values a record can hold (``None`` is ``null``; an absent field is ``undefined``).
"""

from __future__ import annotations

import math
import re
from datetime import datetime
from decimal import Decimal
from typing import Any

__all__ = [
    "js_number",
    "js_number_text",
    "js_sort",
    "js_string",
    "number_from_text",
    "same_value_zero",
]

_JS_SPACE = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)
_DECIMAL = re.compile(r"[+-]?(?:Infinity|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)")
_RADIX = re.compile(r"0([xXoObB])([0-9a-fA-F]+)")


def number_from_text(s: str) -> float:
    """JS ``Number(string)``: trimmed decimal, ``Infinity``, or 0x/0o/0b integers; else NaN."""
    s = s.strip(_JS_SPACE)
    if not s:
        return 0.0
    if _DECIMAL.fullmatch(s):
        return float(s.replace("Infinity", "inf"))
    m = _RADIX.fullmatch(s)
    if m:
        base = {"x": 16, "o": 8, "b": 2}[m.group(1).lower()]
        try:
            return float(int(m.group(2), base))
        except ValueError:
            return math.nan
    return math.nan


def js_number(x: Any) -> float:
    """JS ``Number(x)`` for a stored value (an absent field is NaN, ``None`` is 0)."""
    if x is None:
        return 0.0
    if isinstance(x, bool):
        return 1.0 if x else 0.0
    if isinstance(x, int | float):
        return x
    if isinstance(x, str):
        return number_from_text(x)
    if isinstance(x, datetime):
        return x.timestamp() * 1000
    if isinstance(x, list | bytes | bytearray):
        return number_from_text(js_string(x))
    return math.nan


def js_number_text(x: float) -> str:
    """JS ``String(number)`` (``Number::toString``): shortest digits, JS's exponent rules."""
    if isinstance(x, bool):
        return "true" if x else "false"
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    if x == 0:
        return "0"
    if isinstance(x, int):
        x = float(x) if abs(x) > 2**53 else x
        if isinstance(x, int):
            return str(x) if abs(x) < 10**21 else js_number_text(float(x))
    sign = "-" if x < 0 else ""
    d = Decimal(repr(abs(x))).normalize()
    _, digits_t, exp = d.as_tuple()
    digits = "".join(map(str, digits_t))
    k = len(digits)
    n = int(exp) + k
    if k <= n <= 21:
        out = digits + "0" * (n - k)
    elif 0 < n <= 21:
        out = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        out = "0." + "0" * (-n) + digits
    else:
        e = n - 1
        mant = digits if k == 1 else digits[0] + "." + digits[1:]
        out = f"{mant}e{'+' if e >= 0 else '-'}{abs(e)}"
    return sign + out


def js_string(x: Any) -> str:
    """JS ``String(x)`` for a stored value."""
    if x is None:
        return "null"
    if isinstance(x, str):
        return x
    if isinstance(x, bool | int | float):
        return js_number_text(x)
    if isinstance(x, list):
        return ",".join("" if v is None else js_string(v) for v in x)
    if isinstance(x, bytes | bytearray):
        return ",".join(str(b) for b in x)
    if isinstance(x, dict):
        return "[object Object]"
    return str(x)


def _units(s: str) -> bytes:
    return s.encode("utf-16-be", "surrogatepass")


def js_sort(items: list[Any]) -> list[Any]:
    """``items.sort()`` with no comparator: by ``String(item)`` in UTF-16 order, stable."""
    keyed = [(_units(js_string(v)), v) for v in items]
    keyed.sort(key=lambda kv: kv[0])  # list.sort is stable, as JS's sort
    return [v for _, v in keyed]


def same_value_zero(a: Any, b: Any) -> bool:
    """JS ``SameValueZero`` (what ``Array.prototype.includes`` uses): objects by identity."""
    if isinstance(a, dict | list) or isinstance(b, dict | list):
        return a is b
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if a is None or b is None:
        return a is b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b or (math.isnan(a) and math.isnan(b))
    return type(a) is type(b) and a == b
