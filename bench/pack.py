"""Pack speed and size: the pack step's tarball vs stdlib gzip on the same artifact folder (F24).

The folder is the bundled MiniLM as the convert step ships it (fp32, about 90 MB). Each method
writes the same tar members with the same 4 MiB copy buffer; only the compressor differs:
the pack step's ``write_tarball`` (ISA-L gzip level 1, and 'none'), and stdlib ``gzip`` (zlib)
at levels 1 and 9. Methods are interleaved; the median of the repeats is kept. Targets: the pack
step >= 8x the MB/s of stdlib gzip level 1, its tarball <= stdlib level 9's size + 1%.

Usage: python bench/pack.py [--repeats 3]
"""

from __future__ import annotations

import argparse
import gzip
import tarfile
import tempfile
from pathlib import Path

from conversion_support import convert, interleaved, machine, table, write_figures

TARGET_SPEED = 8.0
TARGET_SIZE = 1.01


def stdlib_gzip(root: Path, target: Path, level: int) -> None:
    from workflows.steps.pack_artifact import COPY_BUFFER_BYTES

    members = sorted(p for p in root.rglob("*") if p.is_file())
    with (
        gzip.open(target, "wb", compresslevel=level) as raw,
        tarfile.TarFile(fileobj=raw, mode="w", copybufsize=COPY_BUFFER_BYTES) as archive,
    ):
        for path in members:
            archive.add(path, arcname=path.relative_to(root).as_posix(), recursive=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    from workflows.conversion.source import bundled_model_path
    from workflows.steps.pack_artifact import write_tarball

    with tempfile.TemporaryDirectory(prefix="bench-pack-") as folder:
        work = Path(folder)
        artifact = convert(bundled_model_path(), work / "artifact", task="embedding")
        size_in = sum(p.stat().st_size for p in artifact.rglob("*") if p.is_file())
        targets = {name: work / f"{name}.tar.gz" for name in ("pack", "pack-none", "gzip-1", "gzip-9")}
        ms = interleaved(
            {
                "pack": lambda: write_tarball(artifact, targets["pack"], "fast"),
                "pack-none": lambda: write_tarball(artifact, targets["pack-none"], "none"),
                "gzip-1": lambda: stdlib_gzip(artifact, targets["gzip-1"], 1),
                "gzip-9": lambda: stdlib_gzip(artifact, targets["gzip-9"], 9),
            },
            rounds=args.repeats,
        )
        sizes = {name: path.stat().st_size for name, path in targets.items()}
    mb = size_in / 2**20
    rows = [
        [
            name,
            f"{ms[name] / 1000:.2f}",
            f"{mb / (ms[name] / 1000):.0f}",
            f"{sizes[name] / 2**20:.2f}",
            f"{sizes[name] / size_in:.3f}",
        ]
        for name in ms
    ]
    print(f"artifact folder: {mb:.1f} MB")
    print(table(["method", "seconds", "MB/s", "MB out", "ratio"], rows))
    speed = ms["gzip-1"] / ms["pack"]
    size = sizes["pack"] / sizes["gzip-9"]
    print(
        f"\npack vs gzip-1: x{speed:.1f} (target x{TARGET_SPEED}); size vs gzip-9: {size:.4f} (target <= {TARGET_SIZE})"
    )
    write_figures(
        "pack",
        {
            "pack_vs_gzip_l1": round(speed, 2),
            "size_vs_gzip_l9": round(size, 4),
            "pack_mb_per_s": round(mb / (ms["pack"] / 1000), 1),
            "gzip_l1_mb_per_s": round(mb / (ms["gzip-1"] / 1000), 1),
            "gzip_l9_mb_per_s": round(mb / (ms["gzip-9"] / 1000), 1),
            "uncompressed_mb_per_s": round(mb / (ms["pack-none"] / 1000), 1),
            "pack_size_ratio": round(sizes["pack"] / size_in, 4),
            "gzip_l9_size_ratio": round(sizes["gzip-9"] / size_in, 4),
            "folder_mb": round(mb, 1),
            "repeats": args.repeats,
            "target_speed": TARGET_SPEED,
            "target_size": TARGET_SIZE,
            "meets_targets": speed >= TARGET_SPEED and size <= TARGET_SIZE,
            **machine(),
        },
    )


if __name__ == "__main__":
    main()
