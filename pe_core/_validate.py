"""Argument checks shared by every public function of pe_core.

Each check either returns the value in a canonical type or raises ValueError with a
sentence that names the argument, what it received and what is allowed, so that the
app can show the message as it is.
"""

from __future__ import annotations

import math
import numbers

import ml_dtypes
import numpy as np

#: Largest embedding size d a single call accepts.
MAX_D = 16_384
#: Largest number of positions a single call builds.
MAX_LENGTH = 1_048_576
#: Largest number of cells (positions x dimensions) a single call builds: 2**25, which is
#: exactly the app's largest view L=16384, d=2048 (256 MiB in float64).
MAX_CELLS = 2**25
#: Largest |position| or |offset|: beyond it a float64 angle has no correct digit left
#: in its fastest pair (the spacing of float64 numbers near 1e12 is 1e-4 rad).
MAX_POSITION = 10**12
#: The layouts and conventions understood everywhere.
LAYOUTS = ("interleaved", "concatenated")
CONVENTIONS = ("paper", "tensor2tensor")


def check_int(name: str, value: object, *, low: int | None = None, high: int | None = None) -> int:
    """Return ``value`` as an int, or raise if it is not a whole number in [low, high]."""
    if isinstance(value, bool) or value is None:
        raise ValueError(f"{name} must be a whole number, got {value!r}.")
    if isinstance(value, numbers.Integral):
        result = int(value)
    elif isinstance(value, numbers.Real):
        number = float(value)
        if not math.isfinite(number):
            raise ValueError(f"{name} must be a finite whole number, got {value!r}.")
        if not number.is_integer():
            raise ValueError(f"{name} must be a whole number, got {value!r}.")
        result = int(number)
    else:
        raise ValueError(f"{name} must be a whole number, got {type(value).__name__} {value!r}.")
    if low is not None and result < low:
        raise ValueError(f"{name} must be at least {low:,}, got {result:,}.")
    if high is not None and result > high:
        raise ValueError(f"{name} must be at most {high:,}, got {result:,}.")
    return result


def check_base(
    n: object, name: str = "n (the base)", symbol: str = "n", usual: str = "The paper uses 10000."
) -> float:
    """Return the base as a float, or raise unless it is a finite real number > 1.

    ``name``, ``symbol`` and ``usual`` let the rotary functions name their base
    (transformers' rope_theta) and quote the bases models use.
    """
    if isinstance(n, bool) or not isinstance(n, numbers.Real):
        raise ValueError(f"{name} must be a real number greater than 1, got {n!r}.")
    base = float(n)
    if not math.isfinite(base):
        raise ValueError(f"{name} must be finite, got {n!r}; {usual[0].lower()}{usual[1:]}")
    if base <= 1.0:
        raise ValueError(
            f"{name} must be greater than 1, got {n!r}: with {symbol} <= 1 the wavelengths "
            f"do not grow along the dimensions. {usual}"
        )
    return base


def check_choice(name: str, value: object, allowed: tuple[str, ...]) -> str:
    """Return ``value`` if it is one of ``allowed``, else raise naming the choices."""
    if not isinstance(value, str) or value not in allowed:
        choices = ", ".join(repr(a) for a in allowed)
        raise ValueError(f"{name} must be one of {choices}, got {value!r}.")
    return value


def check_d(d: object) -> int:
    """Return the embedding size d as an int in [1, MAX_D]."""
    return check_int("d (the embedding size)", d, low=1, high=MAX_D)


def check_even_d(d: int, what: str) -> None:
    """Raise for odd d where a function needs every sine to have its cosine partner."""
    if d % 2:
        raise ValueError(
            f"{what} needs an even d, got d={d}: the last sine column has no cosine "
            "partner to rotate with. Use an even d (the paper uses 512)."
        )


def check_cells(length: int, d: int) -> None:
    """Raise if a (length, d) result would exceed MAX_CELLS."""
    if length * d > MAX_CELLS:
        raise ValueError(
            f"length x d = {length:,} x {d:,} = {length * d:,} cells is more than the limit "
            f"of {MAX_CELLS:,} (16384 x 2048); ask for fewer positions or dimensions."
        )


def check_edges(name: str, edges: object, size: int, size_name: str = "") -> np.ndarray:
    """Return block edges as int64: whole numbers rising strictly from 0 to ``size``."""
    array = np.asarray(edges)
    if array.dtype.kind not in "iuf":
        raise ValueError(f"{name} must be whole numbers, got {array.dtype} values.")
    if array.dtype.kind == "f":
        whole = np.isfinite(array) & (array == np.round(array))
        if not whole.all():
            raise ValueError(f"{name} must be whole numbers, got {float(array[~whole][0])}.")
    ints = array.astype(np.int64)
    if ints.ndim != 1 or ints.size < 2 or ints[0] != 0 or ints[-1] != size or np.any(np.diff(ints) < 1):
        raise ValueError(f"{name} must rise strictly from 0 to {size_name}{size}, got {ints[:5]}...")
    return ints


#: The result types a matrix may be cast to: NumPy's floating types and ml_dtypes' low-precision ones.
LOW_PRECISION_DTYPES: dict[str, np.dtype] = {
    name: np.dtype(getattr(ml_dtypes, name)) for name in ("bfloat16", "float8_e4m3fn", "float8_e5m2")
}
_ALLOWED_DTYPES = "float16, float32, float64, " + ", ".join(LOW_PRECISION_DTYPES)


def check_dtype(dtype: object) -> np.dtype:
    """Return a NumPy floating dtype or one of ``LOW_PRECISION_DTYPES`` (by type or name), or raise."""
    try:
        result = LOW_PRECISION_DTYPES[dtype] if isinstance(dtype, str) and dtype in LOW_PRECISION_DTYPES \
            else np.dtype(dtype)
    except TypeError as error:
        raise ValueError(f"dtype must be a floating type ({_ALLOWED_DTYPES}), got {dtype!r}.") from error
    if result.kind != "f" and result not in LOW_PRECISION_DTYPES.values():
        raise ValueError(f"dtype must be a floating type ({_ALLOWED_DTYPES}), got {result}.")
    return result


def check_matrix(
    name: str, matrix: object, *, ndim: tuple[int, ...] = (2,), check_finite: bool = True
) -> np.ndarray:
    """Return ``matrix`` as a float64 array of an allowed ndim with only finite values.

    ``check_finite=False`` leaves the finiteness check to a caller that can fold it into
    its own pass over the data (see ``shift``); it must then call ``check_finite_values``.
    """
    try:
        array = np.asarray(matrix)
        is_complex = np.iscomplexobj(array)
        if not is_complex:
            array = array.astype(np.float64, copy=False)
    except (TypeError, ValueError) as error:
        raise ValueError(f"{name} must be an array of real numbers: {error}.") from error
    if is_complex:
        raise ValueError(f"{name} must be an array of real numbers, got complex values.")
    if array.ndim not in ndim:
        dims = " or ".join(f"{k}-D" for k in ndim)
        raise ValueError(f"{name} must be {dims}, got an array of shape {array.shape}.")
    if array.size == 0:
        raise ValueError(f"{name} is empty (shape {array.shape}); it needs at least one value.")
    if array.size > MAX_CELLS:
        raise ValueError(f"{name} has {array.size:,} values, more than the limit of {MAX_CELLS:,}.")
    if check_finite:
        check_finite_values(name, array)
    return array


def check_finite_values(name: str, array: np.ndarray) -> None:
    """Raise if ``array`` holds NaN or an infinity, saying how many."""
    if not np.all(np.isfinite(array)):
        bad = int(np.size(array) - np.count_nonzero(np.isfinite(array)))
        raise ValueError(f"{name} contains {bad:,} NaN or infinite value(s); every value must be finite.")


def check_whole_positions(name: str, array: np.ndarray) -> np.ndarray:
    """``array`` (numeric, any shape) as float64 positions: finite whole numbers within +-MAX_POSITION."""
    values = array.astype(np.float64)
    check_finite_values(name, values)
    if np.any(values != np.round(values)):
        raise ValueError(f"{name} must be whole numbers, got {values[values != np.round(values)][0]!r}.")
    if values.size and np.max(np.abs(values)) > MAX_POSITION:
        raise ValueError(f"{name} must lie within +-{MAX_POSITION:,}, got {np.max(np.abs(values)):,.0f}.")
    return values


def check_real(name: str, value: object) -> float:
    """Return ``value`` as a finite float, or raise for text, None, arrays, NaN or inf."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a real number, got {type(value).__name__} {value!r}.")
    number = float(value)
    if not math.isfinite(number):
        raise ValueError(f"{name} must be finite, got {value!r}.")
    return number


def check_position(name: str, value: object) -> int:
    """Return a whole-number position or offset with |value| <= MAX_POSITION."""
    return check_int(name, value, low=-MAX_POSITION, high=MAX_POSITION)
