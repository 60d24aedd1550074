"""The tests that compare pe_core with PyTorch and transformers themselves: skip without them, or fail.

Without torch (or transformers) such a test module skips with the reason, except where
PE_REQUIRE_TORCH=1 (CI, .ci/run), where a missing package is a failure: a suite that silently
skips its comparisons with the real library proves nothing.
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType

import pytest


def import_or_skip(name: str) -> ModuleType:
    """Import ``name`` for a test module; skip the module without it, or fail under PE_REQUIRE_TORCH=1."""
    try:
        return importlib.import_module(name)
    except ImportError as error:
        reason = (
            f"{name} is not installed ({error}); install torch (CI: .ci/run) and requirements-dev.txt's transformers"
        )
        if os.environ.get("PE_REQUIRE_TORCH") == "1":
            pytest.fail(f"PE_REQUIRE_TORCH=1 but {reason}", pytrace=False)
        pytest.skip(reason, allow_module_level=True)
