"""A checkpoint's own files on the command line (``python -m pe_core.identify``) and in Rotary's checker
(explorer.uploads): .safetensors shards written by the safetensors package as transformers saves
them, with a persisted inv_freq and a bfloat16 cos cache beside ordinary weights; torch.save files,
refused without being unpickled; hostile headers (issue 39)."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import numpy as np
import pytest
from support.needs_torch import import_or_skip

import pe_core
from explorer import uploads
from pe_core.identify.__main__ import main

torch = import_or_skip("torch")
from safetensors.torch import save_file  # noqa: E402 (torch first: skip without it)

INV_FREQ = "gpt_neox.layers.0.attention.rotary_emb.inv_freq"
COS = "model.layers.0.self_attn.rotary_emb.cos_cached"
WEIGHT = "gpt_neox.layers.0.attention.dense.weight"


def pythia_like_shard(path: Path) -> Path:
    """A shard as a GPT-NeoX checkpoint persists it: its rotary inv_freq (float32, as transformers
    computes it) beside weights, and a bfloat16 cos cache (an early Llama conversion's)."""
    inv_freq = 1.0 / (10000 ** (torch.arange(0, 64, 2, dtype=torch.int64).float() / 64))
    cos = torch.cos(torch.outer(torch.arange(512).float(), inv_freq)).repeat(1, 2).to(torch.bfloat16)
    save_file({INV_FREQ: inv_freq, WEIGHT: torch.randn(256, 256), COS: cos.contiguous()}, str(path))
    return path


def test_the_cli_reads_a_shard_s_rotary_buffers_and_nothing_else(tmp_path, capsys) -> None:
    shard = pythia_like_shard(tmp_path / "model-00001-of-00002.safetensors")
    assert main([str(shard), "--json"]) == 0
    results = json.loads(capsys.readouterr().out)
    by_name = {entry["array"]: entry for entry in results} if isinstance(results, list) else results
    names = set(by_name)
    assert names == {f"{shard.name}[{INV_FREQ}]", f"{shard.name}[{COS}]"}, names  # the weight is never read
    inv, cos = by_name[f"{shard.name}[{INV_FREQ}]"], by_name[f"{shard.name}[{COS}]"]
    assert (inv["kind"], inv["n"], inv["d"]) == ("rope_inv_freq", 10000.0, 64)
    assert (cos["kind"], cos["n"], cos["layout"], cos["dtype_guess"]) == ("rope_cos", 10000.0, "half", "bfloat16")


def test_the_cli_reads_the_tensor_array_names_and_says_when_there_is_none(tmp_path, capsys) -> None:
    shard = tmp_path / "weights.safetensors"
    save_file({WEIGHT: torch.randn(8, 8)}, str(shard))
    assert main([str(shard)]) == 2
    said = capsys.readouterr()
    assert "holds no rotary buffer" in said.err + said.out and WEIGHT in said.err + said.out
    assert main([str(shard), "--array", "nope"]) == 2
    assert main([str(shard), "--array", WEIGHT]) == 1  # read, and not recognised


class _Marker:
    """A pickle that, once loaded, writes a file: proof that it was (or was not) unpickled."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __reduce__(self):
        return (Path.write_text, (self.path, "unpickled"))


@pytest.mark.parametrize("suffix", [".pt", ".pth", ".bin"])
def test_a_torch_file_is_refused_with_the_line_that_converts_it_and_never_unpickled(tmp_path, capsys,
                                                                                     suffix) -> None:
    marker = tmp_path / "marker.txt"
    path = tmp_path / f"model{suffix}"
    torch.save({"inv_freq": torch.ones(4), "payload": _Marker(marker)}, str(path))
    assert not marker.exists()
    assert main([str(path)]) == 2
    said = capsys.readouterr()
    assert "torch.load(f, weights_only=True)" in said.err + said.out
    with pytest.raises(ValueError, match="never loads it"):
        uploads.read_arrays(path.name, path.read_bytes())
    assert not marker.exists(), "the torch file was unpickled"
    pickle.loads(pickle.dumps(_Marker(marker)))  # the marker works: loading it does write the file
    assert marker.exists()


@pytest.mark.parametrize(("name", "data", "words"), [
    ("truncated.safetensors", (200).to_bytes(8, "little") + b'{"a": ', "not a readable .safetensors file"),
    ("huge.safetensors", (10**15).to_bytes(8, "little") + b"{}", "header too large"),
    ("tiny.safetensors", b"\x05", "not a readable .safetensors file"),
])
def test_hostile_safetensors_get_a_clear_message(tmp_path, capsys, name, data, words) -> None:
    path = tmp_path / name
    path.write_bytes(data)
    assert main([str(path)]) == 2
    said = capsys.readouterr()
    assert words in said.err + said.out
    with pytest.raises(ValueError, match=r"not a readable \.safetensors file"):
        uploads.read_arrays(name, data)


def test_rotary_s_checker_reads_an_uploaded_shard(tmp_path) -> None:
    shard = pythia_like_shard(tmp_path / "model.safetensors")
    arrays = uploads.read_arrays(shard.name, shard.read_bytes())
    assert {array.name for array in arrays} == {INV_FREQ, COS}  # the weight is not read
    by_name = {array.name: array for array in arrays}
    assert pe_core.identify_encoding(by_name[INV_FREQ].values)["kind"] == "rope_inv_freq"
    assert by_name[COS].values.shape == (512, 64)
    np.testing.assert_array_equal(by_name[COS].values[0], np.ones(64))


def checkpoint_folder(folder: Path, base: float) -> Path:
    """A downloaded checkpoint: config.json, a shard holding a persisted inv_freq of ``base``, a shard of weights."""
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({
        "model_type": "gpt_neox", "rope_theta": 10000.0, "hidden_size": 256, "num_attention_heads": 4,
        "max_position_embeddings": 2048}))
    inv_freq = 1.0 / (base ** (torch.arange(0, 64, 2, dtype=torch.int64).float() / 64))
    save_file({INV_FREQ: inv_freq, WEIGHT: torch.randn(8, 8)}, str(folder / "model-00001-of-00002.safetensors"))
    save_file({"embed_out.weight": torch.randn(8, 8)}, str(folder / "model-00002-of-00002.safetensors"))
    return folder


def test_a_checkpoint_folder_is_read_as_a_whole(tmp_path, capsys) -> None:
    folder = checkpoint_folder(tmp_path / "pythia", 10000.0)
    assert main([str(folder)]) == 0
    said = capsys.readouterr().out.replace("\n", " ")
    assert "config.json: d = 64, base 10000, scaling none, max positions 2048" in said
    assert "RoPE frequency vector (inv_freq)" in said and "It agrees with config.json." in said
    assert "1 of 2 shards hold no rotary buffer" in said
    wrong = checkpoint_folder(tmp_path / "converted", 500000.0)
    assert main([str(wrong)]) == 1
    assert "It differs from config.json's RoPE." in capsys.readouterr().out.replace("\n", " ")
    assert main([str(wrong), "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["config"]["base"] == 10000.0
