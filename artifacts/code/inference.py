"""Serving code shipped in model.tar.gz under code/, for the Hugging Face inference DLC contract.

The container calls model_fn(model_dir) once per worker, then input_fn -> predict_fn -> output_fn
per request. It loads exactly the ONNX file the artifact manifest names (F30) with onnxruntime,
which the DLC does not ship: code/requirements.txt installs it at container start (F01). Each
worker holds its own session, so the endpoint runs one worker and gives onnxruntime every core
(SAGEMAKER_MODEL_SERVER_WORKERS=1, ORT_INTRA_OP_THREADS=0; F02). ORT_INTRA_OP_THREADS bounds OpenVINO's
threads too.

Request:  {"inputs": ..., "parameters": {"batch_size": 32, "padding": "max_length", "max_length": 128,
                                        "bucketing": true, ...task parameters}}
Response: the task's (code/deploybench_tasks.py: embeddings, predictions, zero-shot, reranking scores),
          with "served_by": {"runtime": ..., "provider": ..., "precision": ..., "note": ...} (the runtime
          and execution provider that really ran it, and the precision it computed in)

A CPU artifact whose serving plan names the ``openvino`` runtime runs the same ONNX file through
OpenVINO's CPU plugin (the ``openvino`` wheel from code/requirements.txt). OpenVINO computes in
bf16 wherever the CPU has AVX512-BF16 or AMX unless told otherwise, so the precision reported is
the one the compiled model reads back (``INFERENCE_PRECISION_HINT``), never the graph's file
precision: an fp32 graph served in bf16 says bf16.

On a GPU the manifest's ``serving`` plan names the provider the graph must run on (CUDA, or
TensorRT). onnxruntime falls back to CPU with only a warning when that provider's libraries do not
load (F36), so model_fn reads ``session.get_providers()`` and refuses to serve unless the requested
provider is first, naming what is missing. A machine without a GPU (the local SageMaker) sets
DEPLOYBENCH_SERVE_ON_CPU to a note: the GPU artifact then runs on CPU and says so in the log and in
every response.

The tokenizer is read from ``tokenizer/tokenizer.json`` with the ``tokenizers`` library, never
through transformers' class lookup: a tokenizer saved by a newer transformers names a class the
container's older one cannot import ("Tokenizer class TokenizersBackend does not exist", F35), while
tokenizer.json is the format both read. It is also cheaper to load (0.1 s and 8 MB against
25-35 s and 280-380 MB for AutoTokenizer in the DLC-like environment).

This file imports nothing from deploybench: it runs inside the container.
"""

from __future__ import annotations

import ctypes
import importlib.util
import json
import os

import numpy as np
import onnxruntime as ort

# The artifact manifest's file name. deploybench writes it under the same name
# (workflows/conversion/manifest.py MANIFEST_FILE; a test keeps the two equal). Never
# "manifest.json": the DLC's Multi Model Server reads that as a legacy archive manifest and stops.
MANIFEST_FILE = "deploybench-manifest.json"
DEFAULT_BATCH_SIZE = 32
# What one session.run costs beyond its tokens, in tokens' worth of compute: MiniLM at one thread
# ran 1 x 11 tokens in 5.0 ms and 32 x 25 in 273 ms (0.34 ms a token), so about 4 tokens; taken
# at 16 so that a micro-batch is split off only when that saves clearly more padding than a call.
CALL_COST_TOKENS = 16
# Provider order per engine; workflows/gpu/device.py PROVIDERS is the same table (a test keeps them equal).
PROVIDERS = {
    "cpu": ["CPUExecutionProvider"],
    "cuda": ["CUDAExecutionProvider", "CPUExecutionProvider"],
    "tensorrt": ["TensorrtExecutionProvider", "CUDAExecutionProvider", "CPUExecutionProvider"],
}
CPU_STAND_IN_ENV = "DEPLOYBENCH_SERVE_ON_CPU"
TASKS_FILE = "deploybench_tasks.py"
OPENVINO_FILE = "deploybench_openvino.py"
IO_BINDING_ENV = "DEPLOYBENCH_IO_BINDING"
TENSORRT_CACHE = "tensorrt-cache"


def _load_beside(file_name):
    """A module from the file beside this one (not through sys.path, which the container sets up
    differently from the local server)."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), file_name)
    spec = importlib.util.spec_from_file_location(file_name.removesuffix(".py"), path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# Each task's request and response handling; the OpenVINO runtime behind a session's calls.
TASKS = _load_beside(TASKS_FILE)
OPENVINO = _load_beside(OPENVINO_FILE)
served_precision = OPENVINO.served_precision


def tensorrt_options(serving, model_dir, inputs, fp16):
    """TensorRT provider options: engines and the timing cache under the model folder, one profile
    per benchmark shape (F21: an engine per shape, built by the warmup before anything is measured)."""
    cache = os.path.join(model_dir, TENSORRT_CACHE)
    options = {
        "trt_engine_cache_enable": "True",
        "trt_engine_cache_path": cache,
        "trt_timing_cache_enable": "True",
        "trt_timing_cache_path": cache,
        "trt_fp16_enable": "True" if fp16 else "False",
    }
    profiles = serving.get("tensorrt_profiles") or []
    if profiles:
        # A repeated input name starts another profile.
        def shapes(batch, length):
            return ",".join(f"{name}:{p[batch]}x{p[length]}" for p in profiles for name in inputs)

        options["trt_profile_min_shapes"] = shapes("min_batch", "min_length")
        options["trt_profile_opt_shapes"] = shapes("max_batch", "opt_length")
        options["trt_profile_max_shapes"] = shapes("max_batch", "max_length")
    return options


def execution_plan(manifest, model_dir, environ=os.environ):
    """The engine to run, the providers (with options) to ask for, and the stand-in note if any."""
    serving = manifest.get("serving") or {}
    engine = serving.get("engine", "cpu")
    note = environ.get(CPU_STAND_IN_ENV) if engine != "cpu" else None
    if note:
        engine = "cpu"
    if engine == "cpu":
        return engine, list(PROVIDERS["cpu"]), note
    providers = [(name, {}) for name in PROVIDERS[engine]]
    if engine == "tensorrt":
        options = tensorrt_options(
            serving, model_dir, manifest["inputs"], manifest.get("precision") == "fp16"
        )
        providers[0] = ("TensorrtExecutionProvider", options)
    return engine, providers, None


def _unloadable(names):
    missing = []
    for name in names:
        try:
            ctypes.CDLL(name)
        except OSError:
            missing.append(name)
    return missing


def missing_libraries(requested, available, serving):
    """What keeps ``requested`` from running: the GPU package, or the shared libraries it loads."""
    if requested not in available:
        return [
            f"onnxruntime-gpu (the installed onnxruntime has no {requested}; available: {available}): "
            f"code/requirements.txt must install {serving.get('requirement') or 'onnxruntime-gpu'} and not onnxruntime"
        ]
    cuda, cudnn = serving.get("cuda_major") or 12, serving.get("cudnn_major") or 9
    names = [f"libcudart.so.{cuda}", f"libcublas.so.{cuda}", f"libcublasLt.so.{cuda}", f"libcudnn.so.{cudnn}"]
    if requested == "TensorrtExecutionProvider":
        names = ["libnvinfer.so.10", "libnvinfer_plugin.so.10", "libnvonnxparser.so.10", *names]
    missing = _unloadable(["libcuda.so.1", *names])
    return missing or [
        f"none of {names} is missing: no GPU is visible, or the driver is older than CUDA {cuda}"
    ]


def check_provider(requested, active, available, serving):
    """Refuse a session whose first provider is not ``requested`` (onnxruntime's silent fallback, F36)."""
    if active and active[0] == requested:
        return
    missing = missing_libraries(requested, available, serving)
    raise RuntimeError(
        f"deploybench: this artifact must run on {requested}, but onnxruntime runs {active}: it fell back to the "
        f"CPU, and every figure would be a CPU figure under a GPU's name (F36). Missing: {'; '.join(missing)}. "
        "Refusing to serve; fix the image or code/requirements.txt (deploybench preflight names both versions)."
    )


def _session(path, providers):
    options = ort.SessionOptions()
    # 0 lets onnxruntime use every core; with one worker (F02) that is the whole instance.
    options.intra_op_num_threads = int(os.environ.get("ORT_INTRA_OP_THREADS", "0"))
    options.inter_op_num_threads = 1
    # Idle pool threads block instead of spinning: a spinning thread burns the core that the model
    # server's front end, the handler's own Python (tokenizer, JSON) and, on a shared host, other work
    # need, and at batch 1 a second thread saves little compute. MiniLM b1 at 2 threads on a busy 2-core
    # host (load 9): fp32 28.4 ms spinning, 10.0 ms blocking; INT8 20.5 and 5.2 ms; CPU time per call
    # 14.7 ms spinning, 10.2 blocking, 7.4 at 1 thread (bench/results/peers_threads.json).
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(path, options, providers=providers)


def run_graph(session, feed, device=None):
    """``session.run``'s first output; with ``device`` (``cuda``), through I/O binding: inputs are
    placed on the device once and outputs stay there until the copy back, instead of onnxruntime's
    per-call staging."""
    if device is None:
        return session.run(None, feed)[0]
    binding = session.io_binding()
    for name, array in feed.items():
        binding.bind_ortvalue_input(name, ort.OrtValue.ortvalue_from_numpy(array, device, 0))
    for output in session.get_outputs():
        binding.bind_output(output.name, device)
    session.run_with_iobinding(binding)
    return binding.copy_outputs_to_cpu()[0]


def _checked_onnx_path(model_dir, manifest):
    """The manifest's ONNX file, refused when missing or not the size the manifest records (F22, F30)."""
    name = manifest["onnx_file"]
    path = os.path.join(model_dir, name)
    if not os.path.isfile(path):
        present = sorted(f for f in os.listdir(model_dir) if f.endswith(".onnx"))
        raise FileNotFoundError(f"the manifest names {name}, which is not in {model_dir} (found: {present})")
    expected = next((f["size_bytes"] for f in manifest.get("files", []) if f["path"] == name), None)
    size = os.path.getsize(path)
    if expected is not None and size != expected:
        raise OSError(f"{name} is {size} bytes, the manifest says {expected}: truncated or replaced")
    return path


class FileTokenizer:
    """tokenizer.json through the ``tokenizers`` library, answering as a transformers tokenizer does
    for what this file uses: ``tokenizer(texts, pairs, truncation=True, max_length=n)`` and the
    padding attributes. Special tokens and padding side come from tokenizer_config.json (plain JSON)."""

    def __init__(self, folder):
        from tokenizers import Tokenizer

        self.backend = Tokenizer.from_file(os.path.join(folder, "tokenizer.json"))
        # The saved file may carry the padding and truncation of the last call made before saving.
        self.backend.no_padding()
        self.backend.no_truncation()
        config_path = os.path.join(folder, "tokenizer_config.json")
        config = {}
        if os.path.isfile(config_path):
            with open(config_path, encoding="utf-8") as handle:
                config = json.load(handle)
        pad = config.get("pad_token")
        pad = pad.get("content") if isinstance(pad, dict) else pad
        self.pad_token_id = self.backend.token_to_id(pad) if pad else None
        self.pad_token_type_id = 0
        self.padding_side = config.get("padding_side", "right")
        self.truncation_side = config.get("truncation_side", "right")

    def __call__(self, texts, text_pairs=None, truncation=True, max_length=None):
        if truncation and max_length:
            self.backend.enable_truncation(int(max_length), direction=self.truncation_side)
        else:
            self.backend.no_truncation()
        items = texts if text_pairs is None else list(zip(texts, text_pairs, strict=True))
        encodings = self.backend.encode_batch(items)
        return {
            "input_ids": [e.ids for e in encodings],
            "token_type_ids": [e.type_ids for e in encodings],
            "attention_mask": [e.attention_mask for e in encodings],
        }


def load_tokenizer(folder):
    """tokenizer.json with the tokenizers library (F35); transformers only for a folder without one."""
    if os.path.isfile(os.path.join(folder, "tokenizer.json")):
        return FileTokenizer(folder)
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(folder)


def model_fn(model_dir, context=None):
    with open(os.path.join(model_dir, MANIFEST_FILE), encoding="utf-8") as handle:
        manifest = json.load(handle)
    onnx_path = _checked_onnx_path(model_dir, manifest)
    engine, providers, note = execution_plan(manifest, model_dir)
    serving = manifest.get("serving") or {}
    threads = int(os.environ.get("ORT_INTRA_OP_THREADS", "0"))
    if engine == "cpu" and serving.get("runtime") == "openvino":
        session = OPENVINO.OpenVinoSession(onnx_path, threads, serving.get("inference_precision", ""))
        runtime = {"runtime": f"openvino {session.version}", "compute": session.inference_precision()}
    else:
        session = _session(onnx_path, providers)
        check_provider(PROVIDERS[engine][0], session.get_providers(), ort.get_available_providers(), serving)
        # onnxruntime's CPU and CUDA providers compute in the graph's own precision.
        runtime = {"runtime": f"onnxruntime {ort.__version__}", "compute": manifest.get("precision", "fp32")}
    active = session.get_providers()
    precision = served_precision(manifest.get("precision", "fp32"), runtime["compute"])
    binding = "cuda" if engine != "cpu" and os.environ.get(IO_BINDING_ENV, "1") != "0" else None
    tokenizer = load_tokenizer(os.path.join(model_dir, "tokenizer"))
    print(
        f"deploybench: loaded {manifest['onnx_file']} ({manifest.get('precision', '?')}, "
        f"{os.path.getsize(onnx_path)} bytes), inputs {[i.name for i in session.get_inputs()]}, "
        f"tokenizer {type(tokenizer).__name__}",
        flush=True,
    )
    print(
        f"deploybench: provider {active[0]} (session providers {active}"
        + (f"; I/O binding on {binding}" if binding else "")
        + (f"; GPU artifact served on CPU: {note}" if note else "")
        + f"), {runtime['runtime']} computing in {precision}",
        flush=True,
    )
    return {
        "served_by": {
            "runtime": runtime["runtime"],
            "provider": active[0],
            "precision": precision,
            **({"note": note} if note else {}),
        },
        "io_binding": binding,
        "session": session,
        "tokenizer": tokenizer,
        "manifest": manifest,
        "onnx_file": manifest["onnx_file"],
        # F03: feed only what the graph takes, whatever the tokenizer emits.
        "input_names": [i.name for i in session.get_inputs()],
    }


def input_fn(input_data, content_type, context=None):
    if content_type and not content_type.startswith("application/json"):
        raise ValueError(f"content type {content_type!r} is not supported; send application/json")
    if isinstance(input_data, (bytes, bytearray)):
        input_data = input_data.decode("utf-8")
    return json.loads(input_data)


def _tokenize(tokenizer, pairs, max_length):
    """Token ids of every input, unpadded (padding happens per micro-batch)."""
    firsts = [p[0] for p in pairs]
    if all(p[1] is None for p in pairs):
        return tokenizer(firsts, truncation=True, max_length=max_length)
    if any(p[1] is None for p in pairs):
        raise ValueError("mix of single texts and text pairs in one request; send one kind")
    return tokenizer(firsts, [p[1] for p in pairs], truncation=True, max_length=max_length)


def _pad(model, encoded, rows, length):
    """One micro-batch: the graph's inputs for ``rows``, padded to ``length``."""
    tokenizer = model["tokenizer"]
    pad_values = {"input_ids": tokenizer.pad_token_id or 0, "token_type_ids": tokenizer.pad_token_type_id}
    left = tokenizer.padding_side == "left"
    feed = {}
    for name in model["input_names"]:
        batch = np.full((len(rows), length), pad_values.get(name, 0), dtype=np.int64)
        values = encoded.get(name)
        for out_row, row in enumerate(rows):
            # A graph input the tokenizer does not emit (token_type_ids of a single segment) is zeros.
            ids = values[row] if values is not None else [0] * len(encoded["input_ids"][row])
            if left:
                batch[out_row, length - len(ids) :] = ids
            else:
                batch[out_row, : len(ids)] = ids
        feed[name] = batch
    return feed


def length_buckets(order, lengths, batch_size):
    """Split rows sorted by length into micro-batches of at most ``batch_size`` that pad least.

    Each micro-batch pads to its own longest text, so a request of 32 natural texts ran 1.8-1.9x
    faster in length buckets than as one batch padded to its longest. The split minimises padded
    tokens plus ``CALL_COST_TOKENS`` per call (dynamic programming over the sorted lengths).
    """
    count = len(order)
    best = [0.0] + [float("inf")] * count
    start = [0] * (count + 1)
    for end in range(1, count + 1):
        for first in range(max(0, end - batch_size), end):
            cost = best[first] + (end - first) * lengths[order[end - 1]] + CALL_COST_TOKENS
            if cost < best[end]:
                best[end], start[end] = cost, first
    buckets, end = [], count
    while end > 0:
        buckets.append(order[start[end] : end])
        end = start[end]
    return buckets[::-1]


def predict_fn(data, model, context=None):
    parameters = data.get("parameters") or {}
    manifest = model["manifest"]
    plan = TASKS.plan(data, manifest)
    pairs = plan.pairs
    limit = manifest["max_sequence_length"]
    max_length = min(int(parameters.get("max_length", limit)), limit)
    # F31: the batch size is the caller's; without it every text would run alone.
    batch_size = max(1, int(parameters.get("batch_size", DEFAULT_BATCH_SIZE)))
    # F32: a benchmark at a target length pads every text to it.
    pad_to_max = parameters.get("padding") == "max_length"

    encoded = _tokenize(model["tokenizer"], pairs, max_length)
    lengths = [len(ids) for ids in encoded["input_ids"]]
    if pad_to_max or parameters.get("bucketing") is False:
        order = list(range(len(pairs)))
        buckets = [order[i : i + batch_size] for i in range(0, len(order), batch_size)]
    else:
        order = sorted(range(len(pairs)), key=lengths.__getitem__)
        buckets = length_buckets(order, lengths, batch_size)
    outputs = [None] * len(pairs)
    session = model["session"]
    for rows in buckets:
        length = max_length if pad_to_max else max(lengths[r] for r in rows)
        result = run_graph(session, _pad(model, encoded, rows, length), model.get("io_binding"))
        for position, row in enumerate(rows):
            outputs[row] = result[position]
    response = plan.finish(np.stack(outputs))
    response["served_by"] = model.get("served_by")
    return response


def output_fn(prediction, accept, context=None):
    return json.dumps(prediction)
