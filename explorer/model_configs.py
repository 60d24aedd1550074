"""Real models' RoPE settings, as their public config.json files give them, for the rotary pages' presets.

Each model's file in ``explorer/data/model_configs/`` holds the RoPE-relevant keys of its
public config.json (head size, base, scaling, lengths), typed from the Hugging Face repository
named here and checked against it (tests/shared/test_model_configs.py reads every file with
``pe_core.rope_from_config`` and with transformers itself). The layout is not in a config.json:
it is how the model's code pairs the coordinates, recorded here from that code.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path

#: The folder of the JSON files.
CONFIG_FOLDER = Path(__file__).resolve().parent / "data" / "model_configs"


@dataclass(frozen=True)
class ModelConfig:
    """One model's preset: key (its file's name and URL value), display name, source and layout."""

    key: str
    name: str
    repo: str
    layout: str
    note: str = ""
    #: The page that says what the file holds, when it is not the repository's config.json.
    source_url: str = ""

    @property
    def url(self) -> str:
        """The public config.json (or the page the settings come from)."""
        return self.source_url or f"https://huggingface.co/{self.repo}/blob/main/config.json"

    @property
    def path(self) -> Path:
        return CONFIG_FOLDER / f"{self.key}.json"


MODEL_CONFIGS: tuple[ModelConfig, ...] = (
    ModelConfig(
        "llama-2-7b", "Llama 2 7B", "meta-llama/Llama-2-7b-hf", "half",
        "No rope_theta in its config.json (written by transformers 4.31): transformers' default 10000 applies. "
        "Meta's own code pairs coordinates interleaved (freqs_cis); the Hugging Face weights are permuted "
        "for the half layout.",
    ),
    ModelConfig("llama-3-8b", "Llama 3 8B", "meta-llama/Meta-Llama-3-8B", "half", "Base 500000, 8192 positions."),
    ModelConfig(
        "llama-3.1-8b", "Llama 3.1 8B", "meta-llama/Llama-3.1-8B", "half",
        "llama3 scaling x8 from 8192 positions to 131072.",
    ),
    ModelConfig(
        "llama-3.2-1b", "Llama 3.2 1B", "meta-llama/Llama-3.2-1B", "half",
        "llama3 scaling with factor 32 (Meta's reference apply_scaling hard-coded 8: llama-models #166).",
    ),
    ModelConfig(
        "qwen2.5-7b-instruct", "Qwen2.5 7B Instruct", "Qwen/Qwen2.5-7B-Instruct", "half",
        "As shipped: no scaling, 32768 positions, base 1000000.",
    ),
    ModelConfig(
        "qwen2.5-7b-instruct-yarn", "Qwen2.5 7B Instruct, YaRN x4", "Qwen/Qwen2.5-7B-Instruct", "half",
        "The rope_scaling its model card adds for texts past 32768 tokens; max_position_embeddings stays 32768 "
        "(transformers releases of 2025 before PR #40320 then used factor 1: transformers #38224).",
        "https://huggingface.co/Qwen/Qwen2.5-7B-Instruct#processing-long-texts",
    ),
    ModelConfig(
        "mistral-7b-v0.1", "Mistral 7B v0.1", "mistralai/Mistral-7B-v0.1", "half",
        "Base 10000 and 32768 positions (its attention window is 4096).",
    ),
    ModelConfig(
        "gpt-neox-20b", "GPT-NeoX 20B", "EleutherAI/gpt-neox-20b", "half",
        "Partial rotary: rotary_pct 0.25 rotates 24 of each head's 96 coordinates.",
    ),
    ModelConfig(
        "gpt-j-6b", "GPT-J 6B", "EleutherAI/gpt-j-6b", "interleaved",
        "rotary_dim 64 of each head's 256 coordinates, paired interleaved (rotate_every_two); base 10000 "
        "is in its code, not its config.",
    ),
    ModelConfig(
        "deepseek-v3", "DeepSeek-V3", "deepseek-ai/DeepSeek-V3", "interleaved",
        "YaRN x40 from 4096, on the 64 decoupled rotary coordinates (qk_rope_head_dim) of its MLA heads; "
        "mscale = mscale_all_dim = 1, so cos and sin keep amplitude 1 and the attention scale gets "
        "(0.1 ln 40 + 1)**2 instead. Its code pairs coordinates interleaved (complex freqs_cis).",
    ),
    ModelConfig(
        "gpt-oss-20b", "gpt-oss-20b", "openai/gpt-oss-20b", "half",
        "YaRN x32 from 4096 with truncate false: the ramp's bounds are not rounded to whole pairs.",
    ),
    ModelConfig(
        "gemma-3-4b-it", "Gemma 3 4B", "google/gemma-3-4b-it", "half",
        "Linear x8 on the global (full-attention) layers, base 1000000; the sliding-window layers (5 in 6) "
        "use base 10000 without scaling. The public file lists only non-default text keys; head_dim, heads, "
        "bases and length here are the Gemma3TextConfig defaults transformers fills in.",
    ),
    ModelConfig(
        "phi-3-mini-128k-instruct", "Phi-3 mini 128k Instruct", "microsoft/Phi-3-mini-128k-instruct", "half",
        "LongRoPE: short_factor up to 4096 positions, long_factor beyond; no factor in the file, so "
        "transformers takes 131072 / 4096 = 32 (attention factor 1.19).",
    ),
    ModelConfig(
        "codellama-7b", "Code Llama 7B", "codellama/CodeLlama-7b-hf", "half",
        "Llama 2 retrained with base 1000000 and 16384 positions.",
    ),
)

_BY_KEY = {model.key: model for model in MODEL_CONFIGS}


def model_config(key: str) -> ModelConfig:
    """The preset with this key; ValueError naming the keys for any other."""
    if key not in _BY_KEY:
        raise ValueError(f"No model preset {key!r}; the presets are {', '.join(_BY_KEY)}.")
    return _BY_KEY[key]


@cache
def _text(key: str) -> str:
    return model_config(key).path.read_text()


def load_config(key: str) -> dict:
    """The preset's config.json keys as a fresh dict (safe to change), ready for rope_from_config."""
    return json.loads(_text(key))
