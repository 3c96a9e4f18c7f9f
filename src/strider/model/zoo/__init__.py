"""Weight-free real architectures shipped with Strider (structure and shapes only), made
by ``examples/models/build_models.py`` from their published definitions.

Examples
--------
>>> sorted(names())
['bert_attention', 'espcn', 'llama_block', 'resnet50', 'swin_window']
>>> path("espcn").name
'espcn.onnx'
"""

from __future__ import annotations

from pathlib import Path

from ...errors import ArgumentError

HERE = Path(__file__).resolve().parent


def names() -> list[str]:
    """The shipped models."""
    return sorted(p.stem for p in HERE.glob("*.onnx"))


def path(name: str) -> Path:
    """The file of shipped model ``name``."""
    if name not in names():
        raise ArgumentError(f"no shipped model {name!r}; choose one of {', '.join(names())}")
    return HERE / f"{name}.onnx"


__all__ = ["names", "path"]
