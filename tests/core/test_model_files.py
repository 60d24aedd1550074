"""A checkpoint's own files on the command line (``python -m pe_core.identify``) and in Rotary's checker
(explorer.uploads): .safetensors shards written by the safetensors package as transformers saves
them, with a persisted inv_freq and a bfloat16 cos cache beside ordinary weights; torch.save files,
refused without being unpickled; hostile headers (issue 39)."""

from __future__ import annotations

import io
import json
import math
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
    assert "holds no table of positions" in said.err + said.out and WEIGHT in said.err + said.out
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


def test_the_cli_says_how_much_of_a_big_shard_it_read(tmp_path, capsys) -> None:
    """A shard of 64 MB of weights: the header and the inv_freq are read, and the CLI says how much that was."""
    shard = tmp_path / "model-00001-of-00004.safetensors"
    inv_freq = 1.0 / (10000 ** (torch.arange(0, 64, 2, dtype=torch.int64).float() / 64))
    save_file({INV_FREQ: inv_freq, WEIGHT: torch.zeros(4096, 4096)}, str(shard))
    header = 8 + int.from_bytes(shard.read_bytes()[:8], "little")
    expected = header + inv_freq.numel() * 4
    assert main([str(shard)]) == 0
    said = capsys.readouterr().out.replace("\n", " ")
    size = shard.stat().st_size
    assert f"Read {expected:,} of its {size:,} bytes from disk ({100 * expected / size:.2g} %: its header" in said, said
    assert expected / size < 1e-5  # 360 bytes of 67 MB


def test_a_folder_says_how_much_of_its_shards_it_read(tmp_path, capsys) -> None:
    folder = checkpoint_folder(tmp_path / "pythia", 10000.0)
    shards = sorted(folder.glob("*.safetensors"))
    headers = sum(8 + int.from_bytes(shard.read_bytes()[:8], "little") for shard in shards)
    assert main([str(folder)]) == 0
    said = capsys.readouterr().out.replace("\n", " ")
    read = headers + 32 * 4  # the headers and the one inv_freq of 32 float32
    assert f"Read {read:,} of its {sum(s.stat().st_size for s in shards):,} bytes from disk" in said, said


def annotated_transformer_state(max_len: int = 200, d_model: int = 128) -> dict[str, np.ndarray]:
    """The Annotated Transformer's state_dict as safetensors keeps it: its PositionalEncoding's ``pe``
    buffer (persistent, shape (1, max_len, d_model), interleaved sin and cos), under
    src_embed = Sequential(Embeddings, PositionalEncoding), beside its embedding weight."""
    position = np.arange(max_len, dtype=np.float32)[:, None]
    div_term = np.exp(np.arange(0, d_model, 2, dtype=np.float32) * np.float32(-(math.log(10000.0) / d_model)))
    pe = np.zeros((max_len, d_model), dtype=np.float32)
    pe[:, 0::2] = np.sin(position * div_term)
    pe[:, 1::2] = np.cos(position * div_term)
    return {"src_embed.0.lut.weight": np.ones((50, d_model), dtype=np.float32), "src_embed.1.pe": pe[None]}


def test_pitfalls_checker_reads_a_checkpoint_s_table_of_positions(tmp_path) -> None:
    """The Annotated Transformer's ``pe`` buffer, and Marian's sin | cos ``embed_positions.weight``."""
    from safetensors.numpy import save_file as save_numpy

    annotated = tmp_path / "annotated.safetensors"
    save_numpy(annotated_transformer_state(), str(annotated))
    upload = uploads.read_matrix(annotated.name, annotated.read_bytes())
    assert upload.matrix.shape == (200, 128) and upload.notes[0] == "Read src_embed.1.pe."
    result = pe_core.identify_encoding(upload.matrix)
    assert (result["kind"], result["layout"], result["convention"], result["n"]) == (
        "sinusoidal", "interleaved", "paper", 10000.0)
    marian = tmp_path / "marian.safetensors"
    position = np.arange(64, dtype=np.float64)[:, None]
    angle = position / 10000 ** (2 * np.arange(32) / 64)  # Marian: pos / 10000^(2 (j // 2) / d), j = 2i, 2i + 1
    table = np.concatenate([np.sin(angle), np.cos(angle)], axis=1).astype(np.float32)
    save_numpy({"model.encoder.embed_positions.weight": table, "model.decoder.embed_positions.weight": table,
                "model.shared.weight": np.ones((8, 64), dtype=np.float32)}, str(marian))
    upload = uploads.read_matrix(marian.name, marian.read_bytes())
    assert pe_core.identify_encoding(upload.matrix)["layout"] == "concatenated"
    [note] = upload.notes
    names = ("model.decoder.embed_positions.weight", "model.encoder.embed_positions.weight")  # the file's order
    assert note.startswith(f"Read {names[0]}; the file also holds {names[1]}") and "--array NAME" in note


def test_pitfalls_checker_says_what_it_does_not_read(tmp_path) -> None:
    from safetensors.numpy import save_file as save_numpy

    weights = tmp_path / "weights.safetensors"
    save_numpy({"model.layers.0.mlp.weight": np.ones((4, 4), dtype=np.float32)}, str(weights))
    with pytest.raises(ValueError, match=r"holds no table of positions .*--array NAME"):
        uploads.read_matrix(weights.name, weights.read_bytes())
    with pytest.raises(ValueError, match="the Rotary page's checker reads it"):
        uploads.read_matrix("model.gguf", b"GGUF" + bytes(60))
    with pytest.raises(ValueError, match=r"Upload a \.npy, a \.npz, a \.csv or a \.safetensors file"):
        uploads.read_matrix("notes.txt", b"0.1, 0.2")
    only_vectors = io.BytesIO()
    np.savez(only_vectors, inv_freq=np.ones(8))
    with pytest.raises(ValueError, match=r"holds no 2-D matrix .*inv_freq \(a vector of 8 values\)"):
        uploads.read_matrix("rope.npz", only_vectors.getvalue())
