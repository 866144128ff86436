"""The OpenVINO runtime for a CPU artifact whose serving plan names ``openvino``, shipped beside
code/inference.py: a compiled model behind the calls inference.py makes of an onnxruntime session,
and the precision label of what it really computed.

This file imports nothing from deploybench: it runs inside the container.
"""

import importlib


class OpenVinoSession:
    """An OpenVINO compiled model behind the calls this file makes of an onnxruntime session
    (``run``, ``get_inputs``, ``get_providers``), with one infer request reused across calls."""

    def __init__(self, path, threads, precision_hint="", pinning=False):
        # Imported by name: only an artifact whose serving plan names OpenVINO installs it (its
        # code/requirements.txt pins it), and the preflight's import scan must not ask it of the rest.
        openvino = importlib.import_module("openvino")
        core = openvino.Core()
        # LATENCY: one stream, every thread on the one request (the endpoint runs one worker, F02).
        config = {"PERFORMANCE_HINT": "LATENCY"}
        if threads:
            config["INFERENCE_NUM_THREADS"] = threads
        if precision_hint:
            config["INFERENCE_PRECISION_HINT"] = precision_hint
        # Unpinned: the CPU plugin pins its threads to cores by default on Linux, but the worker shares
        # the cores with the model server's front end and the handler's own Python, and a pinned thread
        # waits for its core while another sits idle. MiniLM b1 on a busy 2-core host (load 9), called
        # between other sessions: 1 thread 32.6 ms pinned, 22.5 unpinned; 2 threads 35.4 and 25.2 ms
        # (called back to back at 2 threads: 14.3 and 16.5 ms, intervals overlapping); peers_threads.json.
        config["ENABLE_CPU_PINNING"] = pinning
        self.compiled = core.compile_model(core.read_model(path), "CPU", config)
        self.request = self.compiled.create_infer_request()
        self.names = [port.any_name for port in self.compiled.inputs]
        # "2026.4.1-22982-e213a14...-releases/2026/4": the release is the part before the build number.
        self.version = openvino.get_version().split("-", 1)[0]

    def get_inputs(self):
        return [_Named(name) for name in self.names]

    def get_providers(self):
        return ["OpenVINO CPU"]

    def inference_precision(self):
        """What the CPU plugin computes in: ``bf16``, ``f16`` or ``f32``."""
        return self.compiled.get_property("INFERENCE_PRECISION_HINT").get_type_name()

    def run(self, output_names, feed):
        self.request.infer(feed)
        # The request's output buffer is reused by the next call: copy it out.
        return [self.request.get_output_tensor(0).data.copy()]


class _Named:
    def __init__(self, name):
        self.name = name


def served_precision(graph_precision, compute_precision):
    """The precision to report: the graph's (fp32, int8, fp16) as the runtime really computed it.
    An fp32 graph computed in bf16 is bf16; an INT8 graph keeps its other operations in the runtime's
    precision, which the label says when it is not fp32."""
    compute = {"f32": "fp32", "bf16": "bf16", "f16": "fp16"}.get(compute_precision, compute_precision)
    if graph_precision == "fp32" or compute == graph_precision:
        return compute
    return graph_precision if compute == "fp32" else f"{graph_precision}+{compute}"
