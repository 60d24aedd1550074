"""Which positional encoding a matrix is, from the matrix alone (``identify_encoding``).

- ``sinusoidal``: the variants of the sinusoidal encoding (layout, convention, base, start,
  transposed, swapped, zeros set aside), and ``identify_encoding``, which tries the rotary
  reading first;
- ``rotary``: what a rotary model holds (inv_freq, a cos or sin table, freqs_cis), read into its
  layout, start, attention factor and frequencies;
- ``frequencies``: what a vector of RoPE frequencies says about the base and the scaling
  (``read_frequencies``);
- ``table`` and ``verdicts``: what a rotary table is read as, and the sentences that say it;
- ``__main__``: ``python -m pe_core.identify FILE`` in a terminal or a CI job.
"""

from pe_core.identify.sinusoidal import identify_encoding

__all__ = ["identify_encoding"]
