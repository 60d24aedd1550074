"""Rotary's "Check your RoPE" (explorer.topics.rotary's checker, pages/rotary_page.py's section) on
files written here by transformers' and Meta's own code (tests/rope_files.py): Llama 3.1 8B's
bfloat16 cos as ``cos.float().numpy()`` in a .npy, its inv_freq, Meta's complex64 freqs_cis alone
and in an .npz beside other arrays, a float32 cos table printed by np.savetxt; garbage, an
oversize file, a pickled .npy, a sinusoidal table (named, and sent to Pitfalls), a near miss; and
the other way round, a rotary table uploaded to Conventions and pitfalls (named, and sent here).

The expected readings come from the model's config.json (rope_files.LLAMA31) and from
transformers' own inv_freq, not from the reading; the page's metric boxes are checked against the
verdict's own words. Without torch or transformers this module skips, except under
PE_REQUIRE_TORCH=1 (tests/needs_torch.py).
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest
from support.app_runs import PAGE_BY_KEY, open_on_request, open_page
from support.engineer_files import npy, savetxt
from support.needs_torch import import_or_skip

import pe_core
from explorer import rope_presets, uploads
from explorer.topics import pitfalls, rotary
from explorer.topics.rotary import RotaryView
from pe_core.wording import pair_span

torch = import_or_skip("torch")
import_or_skip("transformers")
from support.rope_files import LLAMA31, llama31_cos, llama31_inv_freq, meta_freqs_cis, npz  # noqa: E402

#: Positions of the cos table: enough for the pairs between llama3's bounds to be read.
LENGTH = 2048


@pytest.fixture(scope="module")
def cos_bf16() -> np.ndarray:
    return llama31_cos(LENGTH)


@pytest.fixture(scope="module")
def cos_check(cos_bf16: np.ndarray) -> rotary.RopeCheck:
    return rotary.check_upload("cos.npy", npy(cos_bf16))


def llama31_scaling() -> pe_core.RopeScaling:
    return rope_presets.rope_preset("llama-3.1-8b").scaling


def assert_metrics_say_the_verdict(metrics: dict[str, str], result: dict) -> None:
    """Each metric box shows the number the verdict's text says, in the verdict's own form."""
    verdict = result["verdict"]
    assert f"d = {metrics['d']}" in verdict and f"base {metrics['base']}" in verdict, (metrics, verdict)
    if metrics["start"] != "-":
        assert f"positions {metrics['start']} to " in verdict, (metrics, verdict)
    scaling = metrics["scaling"]
    if scaling == "none":
        assert "No scaling" in verdict
    else:
        method, factor = scaling.split(" ×")
        assert f"{method} scaling by {factor}" in verdict, (metrics, verdict)
    if metrics["attention factor"] != "-":
        assert re.search(rf"(Amplitude|Attention factor) {re.escape(metrics['attention factor'])}[ :.]", verdict)
    read, pairs = (int(x) for x in metrics["pairs read"].split(" of "))
    unread = result["unreadable_pairs"]
    assert pairs - read == len(unread) and pairs == result["d"] // 2
    if unread:
        assert f"Pair{'s' if len(unread) > 1 else ''} {pair_span(unread)} turn" in verdict


# --------------------------------------------------------------------------- transformers' and Meta's files


def test_llama31_bfloat16_cos_is_read_with_its_scaling_and_what_it_assumed(cos_check: rotary.RopeCheck) -> None:
    [reading] = cos_check.readings
    result = reading.result
    assert reading.status == "rotary" and reading.shape == (LENGTH, 128)
    # transformers returns (batch, positions, d): the batch axis is dropped, and the page says so.
    assert reading.notes == (
        f"The array has shape (1, {LENGTH}, 128): its axis of size 1 (as transformers returns cos and sin, "
        f"(batch, positions, d)) was dropped, and it is read as {LENGTH:,} x 128.",
    )
    assert (result["kind"], result["d"], result["layout"], result["n"], result["start"], result["dtype_guess"]) == (
        "rope_cos", LLAMA31["d"], "half", LLAMA31["base"], 0, "bfloat16")
    scaling = result["scaling"]
    assert (scaling["method"], scaling["factor"], scaling["original_length"]) == (
        "llama3", LLAMA31["factor"], LLAMA31["original_length"])
    metrics = rotary.reading_metrics(result)
    assert metrics == {"kind": "cos table", "d": "128", "layout": "half", "base": "500000", "start": "0",
                       "scaling": "llama3 ×8", "attention factor": "1", "pairs read": metrics["pairs read"]}
    assert_metrics_say_the_verdict(metrics, result)
    # What the table fixes, what follows with the defaults, and what was assumed.
    table = rotary.scaling_table(scaling)["how the table tells it"]
    assert table["factor s"] == "read from the table"
    for key in scaling["assumed"]:
        assert table[key] == "assumed: the method's default"
    assert table["original_max_position_embeddings"] == "follows from the table with the assumed values"


def test_the_reading_opens_on_the_page_as_the_models_own_frequencies(cos_check: rotary.RopeCheck) -> None:
    opening = rotary.opening(cos_check.readings[0].result)
    assert opening.values == {"d": 128, "n": 500000.0, "model": rope_presets.CUSTOM, "rope_layout": "half",
                              "scaling": "llama3", "factor": 8.0, "original": 8192.0, "low_freq": 1.0,
                              "high_freq": 4.0}
    # The page's controls build the frequencies transformers computes for Llama 3.1 (in float32: the blend of
    # llama3's middle band rounds a few times).
    theta = pe_core.rope_frequencies(128, 500000.0, scaling=opening.scaling)
    np.testing.assert_allclose(theta, llama31_inv_freq(), rtol=4 * 2.0**-23)
    np.testing.assert_array_equal(theta, pe_core.rope_frequencies(128, 500000.0, scaling=llama31_scaling()))
    assert opening.shown_by(RotaryView(128, 500000.0, 100, "half", opening.scaling))
    assert not opening.shown_by(RotaryView(128, 500000.0, 100, "interleaved", opening.scaling))
    assert not opening.shown_by(RotaryView(128, 500000.0, 100, "half", None))


def test_llama31_inv_freq_names_its_wavelength_bounds() -> None:
    [reading] = rotary.check_upload("inv_freq.npy", npy(llama31_inv_freq())).readings
    result = reading.result
    assert (result["kind"], result["d"], result["n"]) == ("rope_inv_freq", 128, 500000.0)
    metrics = rotary.reading_metrics(result)
    assert (metrics["kind"], metrics["layout"], metrics["start"], metrics["attention factor"], metrics["scaling"]) == (
        "inv_freq", "-", "-", "-", "llama3 ×8")
    assert_metrics_say_the_verdict(metrics, result)
    table = rotary.scaling_table(result["scaling"])["value"]
    # 8192 / low_freq_factor and 8192 / high_freq_factor: Meta's bounds, read from the frequencies.
    assert table["wavelength bound: original / low_freq_factor"] == "8192 positions"
    assert table["wavelength bound: original / high_freq_factor"] == "2048 positions"
    opening = rotary.opening(result)
    assert "rope_layout" not in opening.values and opening.values["scaling"] == "llama3"


def test_metas_complex64_freqs_cis_is_read_as_it_is() -> None:
    table = meta_freqs_cis()
    assert table.dtype == np.complex64
    [reading] = rotary.check_upload("freqs_cis.npy", npy(table)).readings
    result = reading.result
    assert reading.shape == (512, 64) and reading.notes == ()
    assert (result["kind"], result["d"], result["n"], result["start"], result["scaling"]) == (
        "rope_complex", 128, 500000.0, 0, None)
    metrics = rotary.reading_metrics(result)
    assert metrics["kind"] == "freqs_cis" and metrics["layout"] == "interleaved"  # issue 39: its pairing said
    assert_metrics_say_the_verdict(metrics, result)
    # Meta pairs neighbouring coordinates: the interleaved layout.
    assert rotary.opening(result).values == {"d": 128, "n": 500000.0, "model": rope_presets.CUSTOM,
                                             "rope_layout": "interleaved", "scaling": "none"}


def test_an_npz_of_several_arrays_reads_each_and_shows_the_first_rotary_one() -> None:
    data = npz(token_ids=np.arange(12), freqs_cis=meta_freqs_cis(end=256), inv_freq=llama31_inv_freq(),
               mask=np.tril(np.ones((8, 8))))
    check = rotary.check_upload("rope.npz", data)
    names = [r.name for r in check.readings]
    assert names == ["token_ids", "freqs_cis", "inv_freq", "mask"]
    statuses = {r.name: r.status for r in check.readings}
    assert statuses["freqs_cis"] == statuses["inv_freq"] == "rotary" and statuses["mask"] == "unknown"
    assert statuses["token_ids"] in ("near", "unknown")
    assert check.first_rotary == 1 and check.readings[1].label == "freqs_cis (256 x 64)"
    table = rotary.arrays_table(check)
    assert list(table.index) == names and table.loc["freqs_cis", "shape"] == "256 x 64"
    assert table.loc["freqs_cis", "what it is"] == (
        "RoPE complex table (Meta's freqs_cis), d = 128, interleaved layout, base 500000, scaling none")
    assert table.loc["inv_freq", "what it is"].endswith("scaling llama3 ×8")
    assert table.loc["mask", "what it is"] == "not recognised"


def test_a_float32_cos_table_printed_by_savetxt_is_read_at_its_decimals() -> None:
    cos = llama31_cos(1024, torch.float32)[0]
    [reading] = rotary.check_upload("cos.csv", savetxt(cos, "%.6f")).readings
    result = reading.result
    assert (result["kind"], result["n"], result["dtype_guess"], result["scaling"]["method"]) == (
        "rope_cos", 500000.0, "6 decimals", "llama3")
    assert "a CSV with 6 decimals" in result["verdict"]


# --------------------------------------------------------------------------- what is not a rotary table


@pytest.mark.parametrize(
    ("name", "data", "message"),
    [
        ("garbage.npy", bytes(range(256)) * 4, "not a readable .npy"),
        ("big.npy", npy(np.zeros((9766, 128), np.float32)), "at most 5 MB"),
        ("pickled.npy", None, "Python objects"),
    ],
)
def test_a_file_that_cannot_be_read_is_one_line(name: str, data: bytes | None, message: str) -> None:
    if data is None:
        import io

        buffer = io.BytesIO()
        np.save(buffer, np.array([{"inv_freq": llama31_inv_freq()}], dtype=object), allow_pickle=True)
        data = buffer.getvalue()
    with pytest.raises(ValueError) as caught:
        rotary.check_upload(name, data)
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_a_sinusoidal_table_is_named_sinusoidal() -> None:
    [reading] = rotary.check_upload("pe.npy", npy(pe_core.positional_encoding(100, 64))).readings
    assert reading.status == "sinusoidal" and reading.result["kind"] == "sinusoidal"
    assert rotary.reading_metrics(reading.result) == {}
    assert rotary.reading_summary(reading) == "sinusoidal positional encoding, interleaved layout, n = 10000"
    assert rotary.opening(reading.result).values is None


def test_a_near_miss_names_the_closest_reading_and_the_cell_where_it_differs() -> None:
    table = llama31_cos(1024, torch.float32)[0]
    table[300, 70] += 0.05  # pair 6's second copy
    [reading] = rotary.check_upload("cos.npy", npy(table)).readings
    result = reading.result
    assert reading.status == "near" and result["kind"] is None
    metrics = rotary.reading_metrics(result)
    assert metrics["differs most at"] == "row 300, column 70" and result["worst_cell"] == [300, 70]
    assert "most at row 300, column 70" in result["verdict"]
    assert f"differs by up to {metrics['by up to']}," in result["verdict"]
    assert (metrics["d"], metrics["layout"], metrics["base"]) == ("128", "half", "500000")
    assert rotary.opening(result).values is None


@pytest.mark.parametrize(
    ("values", "reason"),
    [
        # NTK-aware by 4 of base 10000 is a base change the n slider cannot hold.
        (lambda: (10000 * 4 ** (64 / 62)) ** -(np.arange(0, 64, 2) / 64), "is not a stop of the sidebar's n slider"),
        # Phi-3's per-pair divisors beyond its original length.
        (lambda: pe_core.rope_frequencies(96, 10000.0, scaling=rope_presets.rope_preset(
            "phi-3-mini-128k-instruct").scaling, length=131072), "per-pair divisors (LongRoPE)"),
        # DeepSeek-V3's YaRN has attention factor 1 (mscale = mscale_all_dim): the page's YaRN gives 0.1 ln 40 + 1.
        (lambda: pe_core.rope_cache(4096, 64, 10000.0, scaling=rope_presets.rope_preset("deepseek-v3").scaling)[0],
         "the attention factor 1, where the page's scaling (YaRN) gives 1.36889"),
    ],
)
def test_a_reading_the_controls_cannot_hold_says_why(values, reason: str) -> None:
    [reading] = rotary.check_upload("t.npy", npy(values())).readings
    assert reading.status == "rotary", reading.result["verdict"]
    opening = rotary.opening(reading.result)
    assert opening.values is None and reason in opening.reason, opening.reason


# --------------------------------------------------------------------------- the page, through its uploader


def open_checker() -> AppTest:
    """Rotary with its checker opened (drawn on request)."""
    return open_on_request(open_page(PAGE_BY_KEY["rotary"]), "rotary_checker")


def upload(at: AppTest, name: str, data: bytes, key: str = "rotary_upload") -> AppTest:
    at.get("file_uploader")[[u.key for u in at.get("file_uploader")].index(key)].set_value(
        (name, data, "application/octet-stream"))
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def checker_metrics(at: AppTest) -> dict[str, str]:
    """The checker's metric boxes (the page's own metrics come before them, under other labels)."""
    labels = ("kind", "d", "layout", "base", "start", "scaling", "attention factor", "pairs read", "differs most at",
              "by up to")
    return {m.label: m.value for m in at.metric if m.label in labels}


def test_the_page_reads_the_bfloat16_cos_and_opens_its_reading(cos_bf16: np.ndarray,
                                                               cos_check: rotary.RopeCheck) -> None:
    at = open_checker()
    # Every type reaches the page (a torch file, a .txt), which says in a sentence what it does not read,
    # where the uploader would only show a red chip with a tooltip.
    assert not at.get("file_uploader")[0].allowed_type
    assert any(uploads.rotary_limits() in m.value for m in at.markdown)
    upload(at, "cos.npy", npy(cos_bf16))
    result = cos_check.readings[0].result
    assert [s.value for s in at.success] == [result["verdict"]]
    assert checker_metrics(at) == rotary.reading_metrics(result)
    assert cos_check.readings[0].notes[0] in [c.value for c in at.caption]
    assert not at.get("selectbox") or "Array shown below" not in [s.label for s in at.selectbox]
    at.button(key="rotary_open_reading").click().run()
    assert not at.exception
    state = {key: at.session_state[key] for key in ("d", "n", "model", "rope_layout", "scaling", "factor", "original",
                                                     "low_freq", "high_freq")}
    assert state == rotary.opening(result).values
    assert any(c.value.startswith("The charts above show this reading") for c in at.caption)
    assert (at.query_params["scaling"], at.query_params["n"]) == ("llama3", "500000")


def test_the_page_lists_an_npzs_arrays_and_shows_the_one_chosen() -> None:
    at = open_checker()
    upload(at, "rope.npz", npz(freqs_cis=meta_freqs_cis(end=256), inv_freq=llama31_inv_freq()))
    [choice] = [s for s in at.selectbox if s.label == "Array shown below"]
    assert choice.value == 0 and checker_metrics(at)["kind"] == "freqs_cis"
    assert list(at.dataframe[-1].value.index) == ["freqs_cis", "inv_freq"]
    choice.set_value(1).run()
    assert not at.exception
    metrics = checker_metrics(at)
    assert (metrics["kind"], metrics["scaling"]) == ("inv_freq", "llama3 ×8")


def test_the_page_sends_a_sinusoidal_table_to_pitfalls_and_a_bad_file_gets_one_line() -> None:
    at = open_checker()
    upload(at, "pe.npy", npy(pe_core.positional_encoding(100, 64)))
    [info] = [i.value for i in at.info if "sinusoidal" in i.value]
    assert info.startswith("A sinusoidal positional encoding, not what a rotary model holds. Interleaved layout")
    assert [link.proto.page for link in at.get("page_link") if "pitfalls" in link.proto.page]
    assert not at.success and not checker_metrics(at)
    upload(at, "garbage.npz", b"PK\x03\x04 not really a zip")
    assert [e.value for e in at.error] == [
        "This is not a readable .npz file (File is not a zip file)."]


def test_pitfalls_names_a_rotary_table_and_sends_it_here(cos_bf16: np.ndarray) -> None:
    check = pitfalls.check_upload("cos.npy", npy(cos_bf16), max_cells=10**6)
    assert check.rotary and check.result["kind"] == "rope_cos" and check.rebuilt is None
    assert check.rotary_note.startswith("A RoPE cos table: what a rotary model holds, not a sinusoidal encoding "
                                        "(d = 128, half layout, base 500000).")
    at = open_page(PAGE_BY_KEY["pitfalls"])
    upload(at, "cos.npy", npy(cos_bf16), key="pitfalls_upload")
    assert [i.value for i in at.info] == [check.rotary_note]
    assert [link.proto.page for link in at.get("page_link") if "rotary" in link.proto.page]
    assert not at.warning and not at.success and not [m for m in at.metric if m.label == "convention"]
    assert not any("not recognised" in text or "Not a sinusoidal" in text
                   for text in [e.value for e in at.info] + [c.value for c in at.caption])


def test_pitfalls_names_an_inv_freq_and_a_freqs_cis_which_it_cannot_read_as_a_matrix() -> None:
    for name, data, kind in (("inv_freq.npy", npy(llama31_inv_freq()), "rope_inv_freq"),
                             ("freqs_cis.npy", npy(meta_freqs_cis()), "rope_complex")):
        check = pitfalls.check_upload(name, data, max_cells=10**6)
        assert check.rotary and check.result["kind"] == kind
        assert check.rotary_note.startswith(f"A {uploads.KIND_NAMES[kind]}: what a rotary model holds")


def test_gptj_s_rotary_buffer_is_named_in_the_files_table() -> None:
    """Issue 39: the checker's table of arrays names GPT-J's embed_positions as a rotary buffer too."""
    angles = np.outer(np.arange(256, dtype=np.float32), (1.0 / 10000 ** (np.arange(0, 64, 2) / 64)).astype(np.float32))
    buffer = np.concatenate([np.sin(angles), np.cos(angles)], axis=1).astype(np.float32)
    check = rotary.check_upload("embed_positions.npy", npy(buffer))
    (reading,) = check.readings
    assert reading.status == "sinusoidal"
    assert "also GPT-J's and CodeGen's rotary buffer embed_positions" in rotary.reading_summary(reading)



def gemma4_global_rotary_embedding() -> torch.nn.Module:
    """transformers' own Gemma 4 rotary embedding, its default rope_parameters: the global layers' proportional,
    partial_rotary_factor 0.25, base 1e6, over global_head_dim 512."""
    import transformers
    from transformers.models.gemma4.modeling_gemma4 import Gemma4TextRotaryEmbedding

    config = transformers.Gemma4TextConfig(
        vocab_size=64, hidden_size=64, intermediate_size=32, num_attention_heads=4, num_key_value_heads=2,
        num_hidden_layers=2, layer_types=["sliding_attention", "full_attention"], head_dim=16, global_head_dim=512,
        vocab_size_per_layer_input=64, hidden_size_per_layer_input=8)
    return Gemma4TextRotaryEmbedding(config)


def test_gemma_4_s_global_inv_freq_is_read_as_proportional_and_opens_on_the_page() -> None:
    """The buffer the embedding holds for the global layers, uploaded."""
    inv_freq = gemma4_global_rotary_embedding().full_attention_inv_freq.numpy()
    (reading,) = rotary.check_upload("inv_freq.npy", npy(inv_freq)).readings
    assert reading.status == "rotary", reading.result["verdict"]
    assert reading.result["scaling"] == {"method": "proportional", "factor": 1.0, "partial_rotary_factor": 0.25,
                                         "rotated_pairs": 64}
    assert rotary.reading_metrics(reading.result)["scaling"] == "proportional ×1"
    table = rotary.scaling_table(reading.result["scaling"])
    assert table.loc["partial_rotary_factor (the rotated pairs' share)", "value"] == "0.25"
    opening = rotary.opening(reading.result)
    assert opening.values == {"d": 512, "n": 1e6, "model": rope_presets.CUSTOM, "factor": 1.0, "partial": 0.25,
                              "scaling": "proportional"}
    np.testing.assert_allclose(pe_core.rope_frequencies(512, 1e6, scaling=opening.scaling), inv_freq, rtol=5e-7)


def test_gemma_4_s_global_cos_table_in_bfloat16_is_read_as_proportional() -> None:
    """The cos the embedding returns for the global layers at positions 0..1023, cast to bfloat16 as the model runs
    and saved as float32 (cos.float().numpy())."""
    positions = torch.arange(1024)[None, :]
    cos, _ = gemma4_global_rotary_embedding()(torch.zeros(1, 1024, 8, dtype=torch.bfloat16), positions,
                                              layer_type="full_attention")
    (reading,) = rotary.check_upload("cos.npy", npy(cos[0].float().numpy())).readings
    assert reading.status == "rotary", reading.result["verdict"]
    result = reading.result
    assert (result["kind"], result["d"], result["n"], result["start"], result["layout"]) == (
        "rope_cos", 512, 1e6, 0, "half")
    assert result["scaling"]["method"] == "proportional" and result["scaling"]["partial_rotary_factor"] == 0.25
    assert result["unreadable_pairs"] == []
