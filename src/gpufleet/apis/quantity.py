"""Kubernetes resource quantities as the API server reads them, with Kubernetes' own bounds: the one
parser that the simulators, the pack and verify share.

The grammar is resource.Quantity's (kubernetes/apimachinery @v0.35.0, commit
a591bed02c1d3ea330221c235e2854395f3e44d0, the release Kubernetes 1.35.0 publishes):
pkg/api/resource/quantity.go L40-L58 (number, sign, binarySI Ki..Ei, decimalSI, an `e`/`E`
exponent) and the suffixes of pkg/api/resource/suffix.go L113-L132 (n and u among the decimal
ones). An amount is rounded away from zero (quantity.go L369-L375) and read as `ScaledValue`
reads it, ceil(q / 10^scale) in an int64 (quantity.go L814-L835): the scheduler's counts are
int64s. Kubernetes lets an amount past int64 wrap ("This could overflow an int64", L826) or caps
it (L377-L381, binary suffixes only); gpufleet refuses it instead, naming it, since a wrapped
count is never what its author meant. An exponent Go reads as an int64 and keeps as an int32
(suffix.go L189-L195): one outside int32 is refused too, rather than wrapped.

Linear in the text: the number is read as a decimal (libmpdec reads digits in linear time) and
its magnitude is judged from its exponent before any power of ten is formed.
"""

from __future__ import annotations

import decimal
import math
import re

from gpufleet.errors import InputError

INT64_MAX = 2**63 - 1
_INT32 = 2**31
# quantity.go L44-L58 and suffix.go L113-L132; [0-9], not \d, which also takes other scripts' digits.
_GRAMMAR = re.compile(r"([+-]?)([0-9]*)(?:\.([0-9]*))?(?:[eE]([+-]?[0-9]+)|(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)?)")
# (base, exponent) of each suffix, as suffix.go's newSuffixer adds them.
_DECIMAL = {suffix: (10, 3 * i - 9) for i, suffix in enumerate(("n", "u", "m", "", "k", "M", "G", "T", "P", "E"))}
_SUFFIX = _DECIMAL | {f"{prefix}i": (2, 10 * i) for i, prefix in enumerate("KMGTPE", 1)}
_SHOWN = 40
_EXPONENT_DIGITS = 19  # an int64's; longer exponent text fails Go's ParseInt (suffix.go L190)


class QuantityError(InputError):
    """Not a Kubernetes resource quantity, or one beyond what Kubernetes keeps."""


class OutOfRange(QuantityError):
    """A quantity Kubernetes reads, beyond the int64 it counts in."""


def _shown(value: object) -> str:
    """The value as an error names it: a long text cut, a long integer by its size (Python will
    not print one past 4300 digits)."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 64:
        return f"an integer of {value.bit_length()} bits"
    text = repr(value)
    return text if len(text) <= _SHOWN else f"{text[:_SHOWN]}... ({len(text)} characters)"


def _past_int64(value: object, scale: int = 0) -> OutOfRange:
    unit = f" thousandths ({INT64_MAX // 1000}.{INT64_MAX % 1000})" if scale == 3 else ""
    return OutOfRange(f"{_shown(value)} is out of range: Kubernetes counts it in an int64, at most {INT64_MAX}{unit}")


def _text(value: object) -> str:
    """The quantity's text: a wire number is read as the JSON text Kubernetes would unmarshal, and
    a string with its surrounding space trimmed (quantity.go L744, L766)."""
    if isinstance(value, int) and not isinstance(value, bool):
        if value.bit_length() > 64:
            raise _past_int64(value)
        return str(value)
    if isinstance(value, float) and math.isfinite(value):
        return repr(value)
    if isinstance(value, str):
        return value.strip()
    raise QuantityError(f"{_shown(value)} is not a quantity")


def scaled_value(value: object, scale: int = 0) -> int:
    """ceil(q * 10^scale) of a quantity (scale 3: millis, as MilliValue), away from zero, as an
    int64; QuantityError where the text is no quantity or the amount leaves int64."""
    text = _text(value)
    match = _GRAMMAR.fullmatch(text)
    if not match or not (match.group(2) or match.group(3)):
        raise QuantityError(f"{_shown(value)} is not a quantity")
    sign, whole, fraction, exponent, suffix = match.groups()
    if exponent is not None and len(exponent.lstrip("+-").lstrip("0")) > _EXPONENT_DIGITS:
        raise QuantityError(f"{_shown(value)} is not a quantity: its exponent is not an int64")
    base, power = (10, int(exponent)) if exponent is not None else _SUFFIX[suffix or ""]
    if not -_INT32 <= power < _INT32:
        raise OutOfRange(f"{_shown(value)} is out of range: its exponent is beyond an int32")
    digits = (whole or "") + (fraction or "")
    context = decimal.Context(prec=len(digits) + 40, Emax=decimal.MAX_EMAX, Emin=decimal.MIN_EMIN, traps=[decimal.InvalidOperation])
    number = context.create_decimal(f"{whole or 0}.{fraction or 0}")
    shift = scale + (power if base == 10 else 0)
    amount = context.scaleb(context.multiply(number, 2**power if base == 2 else 1), shift)
    if amount.is_zero():
        return 0
    # Past 10^19 an amount is past int64 whatever its digits: judged before any is formed.
    counted = None if amount.adjusted() >= 19 else int(amount.to_integral_value(rounding=decimal.ROUND_UP, context=context))
    if counted is None or counted > INT64_MAX:
        raise _past_int64(value, scale)
    return -counted if sign == "-" else counted


def quantity(resource: str, value: object) -> int:
    """A resource quantity in the scheduler's integer units: millicores for cpu (MilliValue), else
    base units (Value: bytes for memory, hugepages and storage; a count for pods and extended
    resources)."""
    try:
        return scaled_value(value, 3 if resource == "cpu" else 0)
    except QuantityError as err:
        raise type(err)(f"{resource}: {err}") from None
