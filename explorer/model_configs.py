"""Real models' RoPE settings, as their public config.json files give them, for the rotary pages' presets.

Each model's file in ``explorer/data/model_configs/`` holds the position-relevant keys of its
public config.json (head size, base, scaling, lengths; for the layer page also the layer count,
layer types, windows and NoPE layers), typed from the Hugging Face repository named here and
checked against it or, where ``sources`` says so, against public copies and quotations of it
(tests/shared/test_model_configs.py reads every file with ``pe_core.rope_from_config`` and
tests/shared/test_layer_presets.py with ``pe_core.model_layers``, both against transformers
itself). The layout is not in a config.json: it is how the model's code pairs the coordinates,
recorded here from that code.

``MODEL_CONFIGS`` feeds the rotary pages' preset selects (one RoPE per model: for a model of several layer
types, the one ``rope_from_config`` reads, which those pages name); ``LAYER_PRESETS`` the layer page
("Your model, layer by layer"); ``MROPE_MODELS`` (keys ``MROPE_PRESETS``) the page "Images and video
(M-RoPE)": vision-language models whose text decoder rotates by three positions (time, height, width),
kept out of ``MODEL_CONFIGS`` while ``rope_from_config`` refuses their ``mrope`` configs
(tests/shared/test_mrope_presets.py reads their files with transformers itself). ``model_config`` finds
every preset of either tuple.
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
    #: Public copies and quotations of the config.json the values were checked against, besides
    #: the repository (what each confirms when it is not the whole file).
    sources: tuple[str, ...] = ()

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
        sources=("num_hidden_layers 32: vLLM's config-printing example (the LlamaConfig of meta-llama/Llama-3.1-8B, "
                 "rope_scaling and all as here)",),
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
        sources=("num_hidden_layers 61: DeepSeek-V3 config dicts in third-party tests (with qk_rope_head_dim 64, "
                 "max_position_embeddings 163840)",),
    ),
    ModelConfig(
        "gpt-oss-20b", "gpt-oss-20b", "openai/gpt-oss-20b", "half",
        "YaRN x32 from 4096 with truncate false: the ramp's bounds are not rounded to whole pairs.",
        sources=("num_hidden_layers 24 and sliding_window 128: tinygrad's gpt-oss example config",
                 "layer_types: gpt-oss-120b's config.json quoted in a test (sliding and full alternating from layer 0, "
                 "window 128)"),
    ),
    ModelConfig(
        "gemma-3-4b-it", "Gemma 3 4B", "google/gemma-3-4b-it", "half",
        "Linear x8 on the global (full-attention) layers, base 1000000; the sliding-window layers (5 in 6) "
        "use base 10000 without scaling. The public file lists only non-default text keys; head_dim, heads, "
        "bases and length here are the Gemma3TextConfig defaults transformers fills in.",
        sources=("num_hidden_layers 34: transformers' convert_gemma3_weights_orbax_to_hf.py (variant gemma3_4b: "
                 "34 layers, sliding_window 1024, rope_local_base_freq 10000, global base 1000000)",
                 "a third-party gemma3_text 4B test config (34 layers, pattern 6, linear x8)"),
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
    ModelConfig(
        "llama-4-scout-17b-16e-instruct", "Llama 4 Scout (17B, 16 experts) Instruct",
        "meta-llama/Llama-4-Scout-17B-16E-Instruct", "interleaved",
        "llama3 scaling x16 from 8192 positions with low and high frequency factors both 1 (no band between), "
        "to 10485760; every fourth layer (3, 7, ..., 47) has no RoPE and scales its queries instead "
        "(attention temperature tuning, floor_scale 8192, attn_scale 0.1), the others attend within chunks "
        "of 8192. Changed from the published file: attn_temperature_tuning is true here; the file was written "
        "with 4 (Llama4TextConfig's default then, transformers #37479), which transformers 5.18 refuses "
        "(a bool field) and older code read as on, as true is. Whether the hub file says true today could "
        "not be checked. no_rope_layers [] (as an unsloth mirror of the text_config has it) means "
        "transformers' default, every no_rope_layer_interval (4)-th layer without RoPE. Its code pairs "
        "coordinates interleaved (complex freqs_cis).",
        sources=(
            "transformers' convert_llama4_weights_to_hf.py (max_position_embeddings 10485760 for the 16-expert "
            "Instruct; llama3 rope_scaling, original 8192)",
            "llama-models PR #322 (only Scout uses scaled RoPE: factor 16)",
            "vLLM TPU inference's Llama 4 model, citing the Instruct config.json (factor 16, low 1, high 1, "
            "original 8192, rope_theta 500000, chunk 8192, floor_scale 8192, attn_scale 0.1, head_dim 128)",
            "the Llama-4-Scout-17B-16E config dump and vLLM issue #20581 (48 layers, hidden 5120, 40 heads, "
            "attention_chunk_size 8192, attn_temperature_tuning 4, no_rope_layers [1, 1, 1, 0] x 12)",
            "vllm-ascend issue #693 (max_position_embeddings 10485760 in the config.json)",
        ),
    ),
    ModelConfig(
        "qwen3.5-27b", "Qwen3.5 27B", "Qwen/Qwen3.5-27B", "half",
        "48 of its 64 layers are linear attention (Gated DeltaNet) without positions; every fourth is full "
        "attention with RoPE on a quarter of its 256-wide heads (partial_rotary_factor 0.25: 64 coordinates), "
        "base 10000000, 262144 positions. Its interleaved MRoPE sections give a text token the same position "
        "on all three axes, so text sees plain RoPE.",
        sources=(
            "a Qwen3.5 RoPE walk-through quoting the 27B config.json's text_config (hidden 5120, 24 heads, "
            "head_dim 256, 262144 positions, rope_parameters as here)",
            "THUDM/slime scripts/models/qwen3.5-27B.sh (64 layers, 24 heads, kv-channels 256, rotary-percent 0.25, "
            "rotary-base 10000000)",
            "Megatron-Bridge's Qwen3.5-27B test config (64 layers, full_attention_interval 4)",
            "layer_types: the family's files list them (a Qwen3.5-35B-A3B config audit pinned to revision "
            "59d61f3c; same-architecture 27B configs); the list here is the one full_attention_interval 4 gives",
        ),
    ),
    ModelConfig(
        "command-a-03-2025", "Command A", "CohereLabs/c4ai-command-a-03-2025", "interleaved",
        "Three sliding-window layers (4096 keys) with RoPE, base 50000, then one global layer without "
        "positions (NoPE), 64 layers; 131072 positions as configured (the model card: 256K supported). "
        "Head size 12288 / 96 = 128. Its code pairs coordinates interleaved (repeat_interleave).",
        sources=(
            "a Keras Cohere2 preset table (command-a-03-2025: 64 layers, 96 heads, 8 KV heads, head_dim 128, "
            "sliding_window 4096, sliding_window_pattern 4, rope_theta 50000)",
            "a TensorRT-LLM Command-A README quoting the config.json (window 4096, 131072 positions, "
            "sliding and full 3:1)",
            "transformers' cohere2 docs (three sliding layers with RoPE, a fourth global without positions)",
        ),
    ),
    ModelConfig(
        "qwen3-8b", "Qwen3 8B", "Qwen/Qwen3-8B", "half",
        "Base 1000000, 40960 positions, no scaling; sliding windows off (use_sliding_window false), so "
        "every layer attends to all before it.",
        sources=(
            "a planner's fixtures (Qwen/Qwen3-8B: 36 layers, 32 heads, head_dim 128, 40960 positions)",
            "LiteRT's Qwen3-8B config, 'matches config.json' (rotary_base 1000000)",
            "Qwen3-8B-based files quoted in full (Qwen3-Reranker-8B: max_window_layers 36, use_sliding_window "
            "false, sliding_window null, rope_scaling null, rope_theta 1000000)",
        ),
    ),
    ModelConfig(
        "phi-4-mini-instruct", "Phi-4-mini Instruct", "microsoft/Phi-4-mini-instruct", "half",
        "LongRoPE on 96 of each head's 128 coordinates (partial_rotary_factor 0.75): short_factor all 1 up to "
        "4096 positions, long_factor beyond; transformers takes the factor 131072 / 4096 = 32 (attention "
        "factor 1.19). Its sliding_window 262144 is on every layer, longer than the model's positions.",
        sources=(
            "a copy of the config.json's values pinned to revision cfbefacb99257ffa30c83adab238a50856ac3083 "
            "(every key here, long_factor included)",
            "a planner's fixtures (microsoft/Phi-4-mini-instruct: 32 layers, 24 heads, partial 0.75, "
            "sliding_window 262144)",
        ),
    ),
    ModelConfig(
        "gemma-4-e2b-it", "Gemma 4 E2B", "google/gemma-4-E2B-it", "half",
        "Four sliding-window layers (512 keys, base 10000, 256-wide heads) then one global layer, 35 layers; "
        "the global layers' heads are 512 wide (global_head_dim) and rotate their first quarter with "
        "'proportional' RoPE, base 1000000: exponents over the whole 512, the other pairs unrotated.",
        sources=(
            "transformers' convert_gemma4_weights.py, which wrote the file (variant gemma-4-e2b: 35 layers, "
            "layer_types (4 sliding, 1 full) x 7, 8 heads, rope_parameters as here; head_dim 256, "
            "global_head_dim 512, sliding_window 512 and 131072 positions are Gemma4TextConfig's defaults)",
            "test fixtures quoting the E2B checkpoint's text_config (mlxcel's real_gemma4_e2b_text_config, a Swift "
            "Gemma 4 configuration test, Raschka's Gemma 4 E2B config)",
        ),
    ),
)

#: The layer page's presets ("Your model, layer by layer"), in the issue's order.
LAYER_PRESETS: tuple[str, ...] = (
    "gemma-3-4b-it", "gemma-4-e2b-it", "gpt-oss-20b", "llama-4-scout-17b-16e-instruct", "qwen3.5-27b",
    "deepseek-v3", "command-a-03-2025", "llama-3.1-8b", "qwen3-8b", "phi-4-mini-instruct",
)

#: The M-RoPE presets (page "Images and video (M-RoPE)"). Their text tokens stand on all three axes at
#: once (time = height = width), so text alone sees plain RoPE; an image's tokens share one time and
#: count merged patch cells (spatial_merge_size x patch_size pixels) in height and width. What
#: transformers 5.18's get_rope_index reads of a config.json is vision_config.spatial_merge_size (and
#: Qwen2.5-VL's vision_config.tokens_per_second); image_token_id and video_token_id mark the tokens
#: it gives grid positions (the processor's mm_token_type_ids); the text rotary embedding reads
#: rope_theta, the head size and mrope_section. The layout is each head's: all three rotate halves.
MROPE_MODELS: tuple[ModelConfig, ...] = (
    ModelConfig(
        "qwen2-vl-7b-instruct", "Qwen2-VL 7B Instruct", "Qwen/Qwen2-VL-7B-Instruct", "half",
        "M-RoPE in blocks: of each 128-wide head's 64 frequency pairs the first 16 (the fastest) turn with "
        "time, the next 24 with height, the last 24 (the slowest) with width (mrope_section [16, 24, 24]); "
        "base 1000000, 32768 positions. Height and width count 28-pixel cells (patch_size 14, "
        "spatial_merge_size 2), time counts pairs of frames (temporal_patch_size 2). The file is flat (its "
        "text keys at the top, no text_config); transformers 5.18 reads rope_scaling's type 'mrope' as "
        "rope_type 'default' with the sections.",
        sources=(
            "PaddleMIX's tests/models/test_qwen2vl.py before it moved to the 2B (a whole copy of the 7B "
            "Instruct config.json, 'configs copy from' its page: every key here)",
            "the Triton TensorRT-LLM backend's multimodal preprocessing model (vision_token_id 151654, "
            "image_token_id 151655, video_token_id 151656, 'Retrieved from' the 7B Instruct config.json)",
            "NVIDIA NeMo's Qwen2-VL model (mrope_section [16, 24, 24], the same in the 2B, 7B and 72B "
            "Instruct config.json files it cites)",
            "an M-RoPE walk-through citing the 7B Instruct config.json (hidden_size 3584 over 28 heads: head "
            "size 128; mrope_section [16, 24, 24])",
        ),
    ),
    ModelConfig(
        "qwen2.5-vl-7b-instruct", "Qwen2.5-VL 7B Instruct", "Qwen/Qwen2.5-VL-7B-Instruct", "half",
        "Qwen2-VL's M-RoPE in blocks (mrope_section [16, 24, 24], base 1000000) with time in seconds: a video's "
        "time position steps tokens_per_second (2) x the seconds each pair of frames spans (the processor's "
        "second_per_grid_ts, temporal_patch_size / fps), so one step per half second whatever the sampling "
        "rate; an image keeps one time. 128000 positions. The file is flat, as Qwen2-VL's.",
        sources=(
            "TensorRT-LLM's tests/unittest/_torch/modeling/test_modeling_qwen2_5vl.py (QWEN2_5_VL_7B_CONFIG, the "
            "config.json with its layer and vision depths cut for testing: every key here)",
            "a layer-skipping README quoting a local copy of the 7B Instruct config.json (transformers_version "
            "4.41.2: every key here)",
            "a copy re-saved by transformers 4.53.1 (the text encoder of HunyuanImage-2.1 in a third-party "
            "trainer: the same values, its text keys also nested in a text_config)",
        ),
    ),
    ModelConfig(
        "qwen3-vl-8b-instruct", "Qwen3-VL 8B Instruct", "Qwen/Qwen3-VL-8B-Instruct", "half",
        "Interleaved M-RoPE (mrope_interleaved): the 64 frequency pairs of each 128-wide head cycle time, "
        "height, width from the fastest, 20 of each, and the last 4 turn with time (mrope_section [24, 20, "
        "20]), so every axis spans the whole frequency range; base 5000000, 262144 positions. Height and "
        "width count 32-pixel cells (patch_size 16, spatial_merge_size 2). Videos carry their time as text "
        "timestamps: each frame pair is its own grid with one time. The text keys are nested in text_config.",
        sources=(
            "TensorRT-LLM's tests/unittest/_torch/modeling/test_modeling_qwen3vl.py (QWEN3_VL_8B_CONFIG, the "
            "config.json with 4 of its 36 text layers for testing: every key here)",
            "nvidia/Cosmos-Reason2-8B's Qwen3-VL-8B text_config quoted in a third-party loader (36 layers, 32 "
            "heads, head_dim 128, 262144 positions, rope_theta 5000000, rope_scaling as here)",
            "notes citing the 8B Instruct config.json (text_config.max_position_embeddings 262144, "
            "num_hidden_layers 36; patch_size 16, temporal_patch_size 2 in a Conv3d test for the 8B and 32B)",
        ),
    ),
)

#: The M-RoPE page's presets, in the order of the family.
MROPE_PRESETS: tuple[str, ...] = tuple(model.key for model in MROPE_MODELS)

_BY_KEY = {model.key: model for model in (*MODEL_CONFIGS, *MROPE_MODELS)}


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
