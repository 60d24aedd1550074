r"""Llama 4's attention temperature tuning: the factor its layers without RoPE multiply each query by.

Llama 4 leaves every fourth decoder layer without a position (its NoPE layers, ``no_rope_layers[i] == 0``).
On those layers, when the config's ``attn_temperature_tuning`` is on, the query of the token at absolute
position :math:`p` is multiplied by

.. math::

    \tau(p) = 1 + a \,\ln\!\left(1 + \left\lfloor \frac{p + 1}{F} \right\rfloor\right)

with :math:`F` = ``floor_scale`` (8192) and :math:`a` = ``attn_scale`` (0.1): 1 for the first
:math:`F - 1` positions, then a step up every :math:`F` positions, growing like :math:`\ln p`, which
sharpens the softmax over the long sequences a NoPE layer sees whole.

Reference: transformers 5.18, ``models/llama4/modeling_llama4.py``, ``Llama4TextAttention.forward``::

    attn_scales = torch.log1p(torch.floor((cache_position.float() + 1.0) / self.floor_scale)) * self.attn_scale + 1.0
    query_states = query_states * attn_scales

(``cache_position``: the absolute 0-based positions, not ``position_ids``.)
"""

from __future__ import annotations

import numpy as np

from pe_core._validate import MAX_LENGTH, MAX_POSITION, check_int, check_real


def llama4_query_scale(positions: object, *, floor_scale: int = 8192, attn_scale: float = 0.1) -> np.ndarray:
    r"""The factor :math:`\tau(p) = 1 + a \ln(1 + \lfloor (p + 1)/F \rfloor)` Llama 4 multiplies the query of
    position p by on its NoPE layers.

    Computed in float64 (transformers computes in float32, within its rounding: 1.2e-7 relative).

    Args:
        positions: whole-number absolute positions p, 0 <= p <= 10**12, any shape (at most 2**20 values).
        floor_scale: F, the config's ``floor_scale``, a whole number >= 1 (Llama 4: 8192).
        attn_scale: a, the config's ``attn_scale``, finite and >= 0 (Llama 4: 0.1).

    Returns:
        float64 array of the positions' shape.

    Raises:
        ValueError: a position that is negative, fractional, too large, NaN or not a number; a
            floor_scale below 1; an attn_scale that is negative or not finite.

    Example:
        >>> llama4_query_scale([0, 8190, 8191], floor_scale=8192, attn_scale=0.1).round(6)
        array([1.      , 1.      , 1.069315])

    Reference: transformers 5.18 ``Llama4TextAttention`` (its ``attn_temperature_tuning``).
    """
    floor_scale = check_int("floor_scale", floor_scale, low=1, high=MAX_POSITION)
    attn_scale = check_real("attn_scale", attn_scale)
    if attn_scale < 0:
        raise ValueError(f"attn_scale must be >= 0 (Llama 4 uses 0.1), got {attn_scale!r}.")
    try:
        array = np.asarray(positions)
    except (ValueError, TypeError) as error:  # ragged lists
        raise ValueError(f"positions must be whole numbers, got {positions!r} ({error}).") from None
    if array.size > MAX_LENGTH:
        raise ValueError(f"positions holds {array.size:,} values; at most {MAX_LENGTH:,} are computed at once.")
    if array.dtype.kind not in "iuf" or array.dtype == np.bool_:
        raise ValueError(f"positions must be whole numbers, got values of type {array.dtype}.")
    values = array.astype(np.float64)
    if array.dtype.kind == "f" and not np.all(np.isfinite(values) & (values == np.floor(values))):
        raise ValueError("positions must be whole numbers (no fractions, NaN or infinity).")
    if values.size and (values.min() < 0 or values.max() > MAX_POSITION):
        raise ValueError(f"positions must lie in 0 .. {MAX_POSITION:,}, got {values.min():g} .. {values.max():g}.")
    # Whole positions: (p + 1) // F is exact in float64 up to 2**53.
    return 1.0 + attn_scale * np.log1p(np.floor((values + 1.0) / floor_scale))
