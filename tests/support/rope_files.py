"""What a rotary model holds, made by transformers' and Meta's own code and saved as engineers save it.

- transformers: Llama 3.1 8B's rotary embedding (``LlamaRotaryEmbedding`` of its config.json,
  explorer/data/model_configs), its ``inv_freq`` buffer and the cos and sin it returns for a
  batch, (1, L, d), in the dtype of the hidden states (bfloat16 as the model runs), saved as
  ``np.save('cos.npy', cos.float().numpy())``: NumPy has no bfloat16, and ``.float()`` keeps
  every value exactly;
- Meta's ``precompute_freqs_cis`` (llama-models, models/llama3/model.py, re-typed; Llama 3 8B:
  dim 128, theta 500000, no scaling): the complex64 table ``torch.polar`` gives, saved by
  ``np.save(freqs_cis.numpy())``.

Import this module after ``needs_torch.import_or_skip("torch")`` and ``("transformers")``.
"""

from __future__ import annotations

import io

import numpy as np
import torch
import transformers
from transformers import CONFIG_MAPPING
from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding

from explorer.model_configs import load_config

transformers.logging.set_verbosity_error()

#: Llama 3.1 8B: rotary dimension, base (rope_theta) and its llama3 scaling, as its config.json says.
LLAMA31 = {"d": 128, "base": 500000.0, "factor": 8.0, "original_length": 8192}


def llama31_rotary_embedding() -> LlamaRotaryEmbedding:
    keys = dict(load_config("llama-3.1-8b"))
    return LlamaRotaryEmbedding(CONFIG_MAPPING[keys.pop("model_type")](**keys))


def llama31_cos(length: int, dtype: torch.dtype = torch.bfloat16) -> np.ndarray:
    """``cos.float().numpy()`` of the rotary embedding's (cos, sin) for positions 0 .. length - 1: (1, length, 128)."""
    cos, _ = llama31_rotary_embedding()(torch.zeros(1, length, 8, dtype=dtype), torch.arange(length)[None])
    return cos.float().numpy()


def llama31_inv_freq() -> np.ndarray:
    """The rotary embedding's ``inv_freq`` buffer (float32, 64 values)."""
    return llama31_rotary_embedding().inv_freq.numpy()


def meta_freqs_cis(dim: int = 128, end: int = 512, theta: float = 500000.0) -> np.ndarray:
    """Meta's precompute_freqs_cis (Llama 3, no scaling): complex64, end x dim/2."""
    freqs = 1.0 / (theta ** (torch.arange(0, dim, 2)[: (dim // 2)].float() / dim))
    t = torch.arange(end, device=freqs.device, dtype=torch.float32)
    freqs = torch.outer(t, freqs)
    return torch.polar(torch.ones_like(freqs), freqs).numpy()


def npz(**arrays: np.ndarray) -> bytes:
    """``np.savez('rope.npz', **arrays)`` as bytes."""
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return buffer.getvalue()
