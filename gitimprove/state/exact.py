"""Exact decimal arithmetic on the shortest reprs of floats, for the one-pass TSV writer:
a value as (digits, places), compared and subtracted as integers scaled by powers of ten (the
digits `Decimal` would give, without building one per row)."""

from __future__ import annotations

from decimal import Decimal


def signed(delta: Decimal) -> str:
    """`+1.9`, `-0.0001`, `-59` (both values integers), `0.0` for no change."""
    if delta == 0:
        return "0.0"
    text = format(delta.normalize(), "f")
    if delta.as_tuple().exponent != 0 and "." not in text:
        text += ".0"
    return text if text.startswith("-") else "+" + text


_PRECISE = 10**28  # the default decimal context's precision
_TEN = [10**i for i in range(32)]


def exact(value: int | float) -> tuple[int, int] | None:
    """`value` as (digits, places): value == digits / 10**places, exactly as `Decimal` reads
    its repr; None for a repr in scientific notation (left to `Decimal`)."""
    if type(value) is int:
        return value, 0
    text = repr(value)
    point = text.find(".")
    if point < 0 or "e" in text:
        return None
    return int(text[:point] + text[point + 1 :]), len(text) - point - 1


def to_decimal(value: tuple[int, int] | Decimal) -> Decimal:
    if isinstance(value, Decimal):
        return value
    digits, places = value
    return Decimal(digits) if not places else Decimal(f"{digits}E-{places}")


def less(a: tuple[int, int] | Decimal, b: tuple[int, int] | Decimal) -> bool:
    if isinstance(a, Decimal) or isinstance(b, Decimal):
        return to_decimal(a) < to_decimal(b)
    (da, pa), (db, pb) = a, b
    if pa < pb:
        da *= 10 ** (pb - pa)
    elif pb < pa:
        db *= 10 ** (pa - pb)
    return da < db


def signed_exact(value: tuple[int, int], prev: tuple[int, int] | Decimal) -> str:
    """`signed(Decimal(value) - Decimal(prev))` on exact (digits, places) pairs."""
    if isinstance(prev, Decimal):
        return signed(to_decimal(value) - prev)
    (dv, pv), (dp, pp) = value, prev
    places = max(pv, pp)  # at most 21: a float's repr is positional from 1e-4 to 1e16
    diff = dv * _TEN[places - pv] - dp * _TEN[places - pp]
    if diff == 0:
        return "0.0"
    if not -_PRECISE < diff < _PRECISE:  # `Decimal` rounds to 28 digits: let it
        return signed(to_decimal(value) - to_decimal(prev))
    sign = "-" if diff < 0 else "+"
    if places == 0:  # two integers: an integer delta, no decimal point
        return sign + str(abs(diff))
    whole, frac = divmod(abs(diff), _TEN[places])
    if frac == 0:
        return f"{sign}{whole}.0"
    return f"{sign}{whole}.{str(frac).rjust(places, '0').rstrip('0')}"
