"""identify_encoding on what a rotary model holds, from tables built here without pe_core.

The builders re-type transformers' recipe in NumPy float32 (inv_freq = 1 / base ** (arange(0, d, 2)
/ d), angles = outer(positions, inv_freq), cat(freqs, freqs) or repeat_interleave, cos and sin
times the attention factor, then the cast), and Meta's freqs_cis as exp(i p theta). The tables of
transformers' and Meta's own code are in test_rope_identify_transformers.py.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pe_core
from pe_core.identify.__main__ import main
from pe_core.identify.frequencies import MeasuredFrequencies, read_frequencies

ROOT = Path(__file__).resolve().parents[2]


def hf_inv_freq(d: int, base: float) -> np.ndarray:
    """transformers' default inv_freq, in float32 as it computes it."""
    exponent = np.arange(0, d, 2, dtype=np.float32) / np.float32(d)
    return (np.float32(1.0) / np.power(np.float32(base), exponent)).astype(np.float32)


def hf_tables(
    L: int, d: int, base: float, *, start: int = 0, layout: str = "half", inv_freq: np.ndarray | None = None,
    attention: float = 1.0, dtype: object = np.float32,
) -> tuple[np.ndarray, np.ndarray]:
    """cos and sin as a rotary embedding returns them (float32 arithmetic), cast to ``dtype``, as float64."""
    theta = hf_inv_freq(d, base) if inv_freq is None else np.asarray(inv_freq, dtype=np.float32)
    freqs = np.arange(start, start + L, dtype=np.float32)[:, None] * theta[None, :]
    emb = np.concatenate([freqs, freqs], axis=-1) if layout == "half" else np.repeat(freqs, 2, axis=-1)
    cos = (np.cos(emb) * np.float32(attention)).astype(dtype).astype(np.float64)
    sin = (np.sin(emb) * np.float32(attention)).astype(dtype).astype(np.float64)
    return cos, sin


def assert_rotary(result: dict, *, kind: str, layout: str | None, base: float | None, start: int, d: int,
                  scaling: str | None = None, factor: float | None = None, transposed: bool = False) -> None:
    verdict = result["verdict"]
    assert result["kind"] == kind, verdict
    assert result["layout"] == layout, verdict
    assert result["n"] == (None if base is None else pytest.approx(base, rel=1e-9)), verdict
    assert result["start"] == start and result["d"] == d and result["transposed"] is transposed, verdict
    assert result["convention"] is None and result["closest_convention"] is None
    if scaling is None:
        assert result["scaling"] is None, verdict
    else:
        assert result["scaling"]["method"] == scaling and result["scaling"]["factor"] == factor, verdict


# --------------------------------------------------------------------------------------
# Tables as transformers' recipe makes them.
# --------------------------------------------------------------------------------------

TABLE_CASES = [
    # L, d, base, start, layout, kind, dtype, dtype_guess
    (64, 128, 10000.0, 0, "half", "cos", np.float32, "float32"),
    (100, 64, 500000.0, 1000, "half", "sin", np.float32, "float32"),
    (128, 96, 1e6, 7, "interleaved", "cos", np.float16, "float16"),
    (256, 128, 500000.0, 0, "interleaved", "sin", ml_dtypes.bfloat16, "bfloat16"),
    (200, 32, 150000.0, 4000, "half", "cos", ml_dtypes.bfloat16, "bfloat16"),
    (50, 24, 10000.0, 0, "half", "sin", np.float64, "float32"),  # float32 values held in float64
]


@pytest.mark.parametrize(("L", "d", "base", "start", "layout", "kind", "dtype", "dtype_guess"), TABLE_CASES)
def test_tables_of_transformers_recipe(L, d, base, start, layout, kind, dtype, dtype_guess):
    cos, sin = hf_tables(L, d, base, start=start, layout=layout, dtype=dtype)
    result = pe_core.identify_encoding(cos if kind == "cos" else sin)
    assert_rotary(result, kind=f"rope_{kind}", layout=layout, base=base, start=start, d=d)
    assert result["attention_factor"] == 1.0 and result["dtype_guess"] == dtype_guess
    assert f"positions {start} to {start + L - 1}" in result["verdict"]


def test_transposed_table_says_so_in_its_own_orientation():
    cos, _ = hf_tables(80, 64, 10000.0, start=5)
    result = pe_core.identify_encoding(cos.T)
    assert_rotary(result, kind="rope_cos", layout="half", base=10000.0, start=5, d=64, transposed=True)
    assert "rows are the 64 dimensions and its columns the 80 positions" in result["verdict"]
    wrong = cos.T.copy()
    wrong[9, 30] += 0.5
    near = pe_core.identify_encoding(wrong)
    assert near["kind"] is None and near["worst_cell"] == [9, 30], near["verdict"]
    assert "row 9, column 30" in near["verdict"]


def test_attention_factor_is_the_amplitude():
    cos, _ = hf_tables(100, 64, 10000.0, attention=1.25)
    result = pe_core.identify_encoding(cos)
    assert result["kind"] == "rope_cos" and result["attention_factor"] == pytest.approx(1.25, rel=1e-6)
    assert "only for yarn and longrope" in result["verdict"]


@pytest.mark.parametrize("dtype", [np.float32, np.float16, ml_dtypes.bfloat16])
def test_yarn_s_attention_factor_is_written_as_the_value_read(dtype) -> None:
    """Issue 39: a bfloat16 YaRN table's verdict said "Attention factor 1.13872 = 0.1 ln 4 + 1" where
    its value, 0.1 ln 4 + 1, is 1.13863: one value, one number."""
    cos, _ = pe_core.rope_cache(8192, 128, 10000.0, scaling=pe_core.RopeScaling("yarn", 4.0, 4096))
    result = pe_core.identify_encoding(cos.astype(dtype).astype(np.float32))
    assert result["attention_factor"] == pytest.approx(0.1 * np.log(4.0) + 1.0, rel=1e-12)
    assert f"Attention factor {0.1 * np.log(4.0) + 1.0:.6g} = 0.1 ln 4 + 1" in result["verdict"]


def test_linear_scaling_and_what_a_table_cannot_tell_from_it():
    s = 4.0
    cos, _ = hf_tables(120, 64, 10000.0, start=12, inv_freq=hf_inv_freq(64, 10000.0) / np.float32(s))
    result = pe_core.identify_encoding(cos)
    assert_rotary(result, kind="rope_cos", layout="half", base=10000.0, start=12, d=64, scaling="linear", factor=s)
    # The same numbers: no scaling at positions 12/4, 13/4, ... (position interpolation itself).
    interpolated = np.cos(np.multiply.outer(np.arange(12, 132) / s, 10000.0 ** (-np.arange(0, 64, 2) / 64)))
    assert np.max(np.abs(np.concatenate([interpolated, interpolated], 1) - cos)) < 1e-5
    assert "no scaling at positions 12/4, (12 + 1)/4" in result["verdict"]
    assert "LongRoPE with every divisor 4" in result["verdict"]


def test_a_single_pair_has_no_base():
    cos, _ = hf_tables(50, 2, 10000.0)
    result = pe_core.identify_encoding(cos)
    assert result["kind"] == "rope_cos" and result["n"] is None and result["d"] == 2
    assert "both layouts are the same for d = 2" in result["verdict"]


def test_slow_pairs_are_named_not_guessed():
    cos, _ = hf_tables(64, 128, 500000.0, dtype=ml_dtypes.bfloat16)
    result = pe_core.identify_encoding(cos)
    unread = result["unreadable_pairs"]
    assert result["kind"] == "rope_cos" and unread and unread == list(range(unread[0], 64)), result["verdict"]
    # Read to worse than 5 %: the slowest pairs; the very slowest is a column of ones in bfloat16.
    assert np.all(cos[:, 63] == 1.0) and 63 in unread
    assert f"Pairs {unread[0]}-63 turn too slowly to read at these positions" in result["verdict"]


@settings(max_examples=30, deadline=None)
@given(
    half_d=st.integers(min_value=2, max_value=64),
    log10_base=st.floats(min_value=2.0, max_value=7.0),
    L=st.integers(min_value=16, max_value=160),
    start=st.integers(min_value=0, max_value=5000),
    layout=st.sampled_from(["half", "interleaved"]),
    kind=st.sampled_from(["cos", "sin"]),
)
def test_identified_table_rebuilds_the_table(half_d, log10_base, L, start, layout, kind):
    """Whatever base, start and layout: the reading rebuilds the table to the error it reports, and that
    error is within float32 round-off (a base within it of a round one is read as the round one)."""
    d, base = 2 * half_d, 10.0**log10_base
    theta = base ** (-np.arange(0, d, 2) / d)
    angle = np.multiply.outer(np.arange(start, start + L, dtype=np.float64), theta)
    columns = np.concatenate([angle, angle], 1) if layout == "half" else np.repeat(angle, 2, axis=1)
    table = np.cos(columns) if kind == "cos" else np.sin(columns)
    result = pe_core.identify_encoding(table)
    assert result["kind"] == f"rope_{kind}" and result["layout"] == layout, result["verdict"]
    assert result["start"] == start and result["scaling"] is None, result["verdict"]
    read = result["n"] ** (-np.arange(0, d, 2) / d)
    rebuilt = np.multiply.outer(np.arange(start, start + L, dtype=np.float64), read)
    rebuilt = np.concatenate([rebuilt, rebuilt], 1) if layout == "half" else np.repeat(rebuilt, 2, axis=1)
    error = np.max(np.abs((np.cos(rebuilt) if kind == "cos" else np.sin(rebuilt)) - table))
    assert error == pytest.approx(result["max_abs_error"], rel=1e-6, abs=1e-15)
    assert error <= 1e-6 * (1 + start + L)


# --------------------------------------------------------------------------------------
# Near misses: the closest reading and where it differs most.
# --------------------------------------------------------------------------------------


def test_one_wrong_column_is_named():
    cos, _ = hf_tables(100, 64, 10000.0, dtype=np.float64)
    cos[:, 7] = np.cos(0.3 * np.arange(100))
    result = pe_core.identify_encoding(cos)
    assert result["kind"] is None and result["worst_cell"][1] == 7, result["verdict"]
    assert "The two columns of pair 7 disagree" in result["verdict"]
    assert "base 10000" in result["verdict"] and "start 0" in result["verdict"]


def test_one_wrong_value_is_located():
    cos, _ = hf_tables(100, 64, 10000.0)
    cos[40, 9] += 0.2
    result = pe_core.identify_encoding(cos)
    assert result["kind"] is None and result["worst_cell"] == [40, 9]
    assert result["max_abs_error"] == pytest.approx(0.2, rel=1e-5)
    assert "1 of its 6,400 values differs" in result["verdict"] and "row 40, column 9" in result["verdict"]


def test_noise_is_a_near_miss_of_the_right_reading():
    cos, _ = hf_tables(100, 64, 10000.0, dtype=np.float64)
    noisy = cos + np.random.default_rng(0).normal(0.0, 1e-3, cos.shape)
    result = pe_core.identify_encoding(noisy)
    assert result["kind"] is None and result["layout"] == "half" and result["start"] == 0, result["verdict"]
    assert result["n"] == pytest.approx(10000.0, rel=1e-3)
    assert 1e-3 < result["max_abs_error"] < 1e-2
    row, column = result["worst_cell"]
    assert result["max_abs_error"] == pytest.approx(abs(noisy[row, column] - cos[row, column]), rel=1e-3)


def test_a_base_one_percent_off_is_read_as_it_is_and_called_not_round():
    result = pe_core.identify_encoding(hf_tables(100, 64, 10100.0)[0])
    assert result["kind"] == "rope_cos" and result["n"] == 10100.0
    assert {"method": "dynamic", "base": 10000.0, "step": pytest.approx(1.0097, rel=1e-4)} in result["alternatives"]
    assert "Base 10100 is not round" in result["verdict"]


# --------------------------------------------------------------------------------------
# Not rotary: sinusoids stay sinusoidal, garbage is None.
# --------------------------------------------------------------------------------------


def test_a_sinusoidal_table_is_still_named_sinusoidal():
    theta = 10000.0 ** (-np.arange(0, 64, 2) / 64)
    angle = np.multiply.outer(np.arange(100.0), theta)
    interleaved = np.empty((100, 64))
    interleaved[:, 0::2], interleaved[:, 1::2] = np.sin(angle), np.cos(angle)
    for table, layout in ((interleaved, "interleaved"), (np.concatenate([np.sin(angle), np.cos(angle)], 1),
                                                         "concatenated")):
        result = pe_core.identify_encoding(table)
        assert (result["kind"], result["layout"], result["convention"]) == ("sinusoidal", layout, "paper")
        assert result["d"] == 64 and result["scaling"] is None and result["attention_factor"] is None


GARBAGE = {
    "random": np.random.default_rng(0).normal(size=(100, 64)),
    "random pairs": np.tile(np.random.default_rng(1).uniform(-1, 1, (100, 32)), 2),
    "zeros": np.zeros((30, 8)),
    "ones": np.ones((30, 8)),
}


@pytest.mark.parametrize("name", list(GARBAGE))
def test_garbage_has_no_kind_and_says_why(name):
    result = pe_core.identify_encoding(GARBAGE[name])
    assert result["kind"] is None and result["scaling"] is None and result["attention_factor"] is None
    verdict = result["verdict"]
    if name == "random pairs":
        assert verdict.startswith("Not a RoPE cos or sin table as a model computes it: "), verdict
    else:
        assert verdict.startswith("Not a sinusoidal positional encoding: ") and "Nor is it a RoPE" in verdict


def test_too_few_positions():
    cos, _ = hf_tables(3, 16, 10000.0)
    result = pe_core.identify_encoding(cos)
    assert result["kind"] is None and "3 positions are too few" in result["verdict"]


# --------------------------------------------------------------------------------------
# inv_freq and freqs_cis.
# --------------------------------------------------------------------------------------


def test_inv_freq_plain_linear_and_bfloat16():
    plain = pe_core.identify_encoding(hf_inv_freq(128, 500000.0))
    assert (plain["kind"], plain["n"], plain["d"], plain["scaling"]) == ("rope_inv_freq", 500000.0, 128, None)
    assert plain["layout"] is None and plain["start"] is None and plain["attention_factor"] is None
    linear = pe_core.identify_encoding(hf_inv_freq(64, 10000.0) / np.float32(8))
    assert linear["scaling"] == {"method": "linear", "factor": 8.0} and linear["n"] == 10000.0
    stored = pe_core.identify_encoding(hf_inv_freq(128, 1e6).astype(ml_dtypes.bfloat16))
    assert stored["kind"] == "rope_inv_freq" and stored["n"] == 1e6 and stored["dtype_guess"] == "bfloat16"


def test_ntk_is_a_base_change_offered_as_such():
    d = 128
    changed = 10000.0 * 4.0 ** (d / (d - 2))  # bloc97's NTK-aware base
    result = pe_core.identify_encoding(1.0 / changed ** (np.arange(0, d, 2) / d))
    assert result["kind"] == "rope_inv_freq" and result["scaling"] is None
    assert result["n"] == pytest.approx(changed, rel=1e-4)
    assert {"method": "ntk", "factor": 4.0, "base": 10000.0} in result["alternatives"]
    assert "NTK-aware scaling by 4 of base 10000" in result["verdict"]


@pytest.mark.parametrize(
    ("vector", "reason"),
    [
        (np.zeros(5), "every frequency is positive"),
        (-hf_inv_freq(32, 10000.0), "every frequency is positive"),
        (np.sort(np.random.default_rng(0).uniform(0.01, 1, 16)), "rise from pair 0 to pair 1"),
        (hf_inv_freq(32, 10000.0) * 1.5, "pair 0 turns 1 rad per position"),
        # Subnormal and tiny values (hypothesis found [5e-324]: its factor 1/5e-324 overflowed to inf).
        (np.array([5e-324]), "below float32's smallest normal number"),
        (np.array([1.0, 5e-324]), "below float32's smallest normal number"),
        (np.array([1.0, 0.5, 1e-320]), "below float32's smallest normal number"),
        (np.array([1e-300, 1e-310]), "below float32's smallest normal number"),
        (np.array([1e300, 1.0]), "pair 0 turns 1 rad per position"),
        (np.array([1e-12, 1e300]), "rise from pair 0 to pair 1"),
        (np.array([1.0, 0.0625, 1e300]), "rise from pair 1 to pair 2"),
        (np.array([1.0, 1.9e-32, *[0.0] * 8]), "every frequency is positive"),
    ],
)
def test_vectors_that_are_no_inv_freq(vector, reason):
    result = pe_core.identify_encoding(vector)
    assert result["kind"] is None and reason in result["verdict"], result["verdict"]


EXTREME = st.floats(0, 2) | st.sampled_from([5e-324, 1e-320, 1e-300, 1e-40, 1e-38, 1e-12, 0.5, 1.0, 1e300])


@settings(max_examples=200, deadline=None)
@given(values=st.lists(EXTREME, min_size=1, max_size=40), falling=st.booleans(),
       dtype=st.sampled_from(["float64", "float32"]))
def test_any_vector_gets_a_verdict(values, falling, dtype):
    """Any 1-D vector, extreme values included (subnormal, 1e300, zeros after a tiny one): a reading or a
    one-line reason, never another exception (such vectors raised OverflowError and ZeroDivisionError)."""
    with np.errstate(over="ignore"):  # 1e300 cast to float32 is inf on purpose: a file can hold it
        vector = np.array(sorted(values, reverse=True) if falling else values, dtype=dtype)
    try:
        result = pe_core.identify_encoding(vector)
    except ValueError as refusal:  # 1e300 in float32 is infinite: refused at the edge, in one line
        assert str(refusal) and "\n" not in str(refusal)
        return
    assert isinstance(result["verdict"], str) and result["verdict"] and "\n" not in result["verdict"]


def test_a_single_subnormal_frequency_has_no_reading():
    """read_frequencies itself, whatever reads the frequencies: one pair at 5e-324 rad per position would be
    a linear scaling by 1/5e-324, which overflows; no reading fits, none has a scaling."""
    theta = np.array([5e-324])
    (reading,) = read_frequencies(MeasuredFrequencies(theta, np.zeros(1), theta), 2)
    assert reading.scaling is None and not reading.fits


def test_inv_freq_with_one_wrong_value():
    vector = hf_inv_freq(64, 10000.0).astype(np.float64)
    vector[10] *= 1.01
    result = pe_core.identify_encoding(vector)
    assert result["kind"] is None and result["n"] == 10000.0 and result["worst_cell"] == [10]
    assert "differs most at pair 10" in result["verdict"]


def test_freqs_cis_and_its_real_view():
    theta = hf_inv_freq(64, 500000.0)
    freqs_cis = np.exp(1j * np.multiply.outer(np.arange(300, 400, dtype=np.float32), theta)).astype(np.complex64)
    for M in (freqs_cis, np.stack([freqs_cis.real, freqs_cis.imag], axis=-1)):
        result = pe_core.identify_encoding(M)
        # Issue 39: its pairing is said, as for every other rotary table: adjacent coordinates.
        assert_rotary(result, kind="rope_complex", layout="interleaved", base=500000.0, start=300, d=64)
        assert "interleaved layout (pair i is coordinates 2i and 2i + 1" in result["verdict"]
    assert "real view (L, d/2, 2)" in result["verdict"]
    backwards = pe_core.identify_encoding(np.conj(freqs_cis))
    assert backwards["kind"] is None and "complex table" in backwards["verdict"]


@pytest.mark.parametrize(
    ("M", "message"),
    [
        (np.zeros((2, 3, 4)), "2-D"),
        (np.zeros(3, dtype=complex), "2-D"),
        (np.full((4, 4), np.nan + 0j), "NaN"),
        (np.zeros((0, 2, 2)), "empty"),
    ],
)
def test_invalid_input_raises(M, message):
    with pytest.raises(ValueError, match=message):
        pe_core.identify_encoding(M)


# --------------------------------------------------------------------------------------
# python -m pe_core.identify FILE
# --------------------------------------------------------------------------------------


def test_command_line_module(tmp_path):
    """The real invocation: verdict on stdout, exit 0, and nothing on stderr (no runpy warning)."""
    cos, _ = hf_tables(64, 128, 500000.0, dtype=ml_dtypes.bfloat16)
    np.save(tmp_path / "cos.npy", cos.astype(np.float32)[None])  # (1, L, d) as transformers returns it
    done = subprocess.run([sys.executable, "-m", "pe_core.identify", str(tmp_path / "cos.npy")], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    first, *rest = done.stdout.splitlines()
    assert first == "cos.npy: RoPE cos table, d = 128, half layout, base 500000, start 0"
    assert " ".join(rest).startswith("RoPE cos table, half layout")


def test_command_line_npz_csv_and_json(tmp_path, capsys):
    cos, sin = hf_tables(64, 64, 10000.0)
    np.savez(tmp_path / "tables.npz", cos=cos, sin=sin, noise=np.random.default_rng(0).normal(size=(20, 8)))
    assert main([str(tmp_path / "tables.npz")]) == 1  # the noise is not recognised
    out = capsys.readouterr().out
    assert "tables.npz[cos]: RoPE cos table" in out and "tables.npz[noise]: not recognised" in out
    assert main([str(tmp_path / "tables.npz"), "--array", "sin", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)["tables.npz[sin]"]
    assert (result["kind"], result["n"], result["start"]) == ("rope_sin", 10000.0, 0)
    csv = tmp_path / "inv_freq.csv"
    csv.write_text("inv_freq\n" + "\n".join(repr(float(v)) for v in hf_inv_freq(64, 10000.0)) + "\n")
    assert main([str(csv)]) == 0
    assert capsys.readouterr().out.startswith("inv_freq.csv: RoPE frequency vector (inv_freq), d = 64, base 10000")


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("objects.npy", None, "holds Python objects (a pickled array), which the checker never loads"),
        ("bf16.npy", np.ones((4, 4), dtype=ml_dtypes.bfloat16), "a bfloat16 array saved by np.save"),
        ("text.csv", "0.5,0.1\n0.3,abc\n", "not a table of plain numbers"),
        ("broken.npy", b"not numpy", "not a readable .npy file"),
        ("table.txt", "1,2\n", "reads .npy, .npz, .csv and .safetensors files"),
        ("missing.npz", False, "is not a file"),
    ],
)
def test_command_line_says_what_it_cannot_read(tmp_path, capsys, name, content, message):
    path = tmp_path / name
    if content is None:
        np.save(path, np.array([{"a": 1}], dtype=object), allow_pickle=True)
    elif isinstance(content, np.ndarray):
        np.save(path, content)
    elif isinstance(content, bytes):
        path.write_bytes(content)
    elif isinstance(content, str):
        path.write_text(content)
    assert main([str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and message in captured.err
