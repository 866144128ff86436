"""The field's exact texts (docs/failures.md and the field notes), and variants written to test that
rules match the stable part: other names and numbers, other whitespace, log noise around them."""

from __future__ import annotations

from pathlib import Path

LOGS = Path(__file__).resolve().parents[1] / "data" / "logs"
HEALTHY_LOGS = sorted(LOGS.glob("healthy_*.log"))


def healthy(name: str) -> str:
    return (LOGS / f"healthy_{name}.log").read_text(encoding="utf-8")


def in_noise(text: str, log: str = "hf_dlc_realtime") -> str:
    """``text`` in the middle of a healthy log, as it appears in a CloudWatch export."""
    lines = healthy(log).splitlines()
    middle = len(lines) // 2
    return "\n".join([*lines[:middle], text, *lines[middle:]])


# --- exact field texts ---------------------------------------------------------------------------

F01_FIELD = """ModelError: Received client error (400) from mdeberta with message
"{"code": 400, "type": "InternalServerException",
  "message": "No module named 'onnxruntime'"}\""""
F02_FIELD = "mdeberta: `model_fn` implementation found → Worker died"
F03_FIELD = "InvalidArgument: Invalid input name: token_type_ids"
F04_FIELD = "Instance type ml.g5.xlarge is not supported for a Model using Direct InferenceExecutionMode"
F05_FIELD = "does not contain required accept-bind-to-port=true Docker label"
F07_FIELD = "did not pass the ping health check"
F08_FIELD = "Number of accelerator devices required must be specified for ml.g5.xlarge"
F09_FIELD = "SageMaker was able to deploy 0 out of 1 requested copies"
F10_FIELD = "There is not enough memory available for this Inference Component"
F12_FIELD = "ValidationError: Inference Component has no capacity to process this request"
F14_FIELD_LOG = """[WARN ] W-9000-model com.amazonaws.ml.mms.wlm.BatchAggregator - Load model failed: model, error: Worker died.
[INFO ] W-9000-model com.amazonaws.ml.mms.wlm.WorkerThread - Retry worker: ... in 3 seconds."""
F14_FIELD_CLIENT = """botocore.exceptions.ReadTimeoutError: Read timeout on endpoint URL:
"https://runtime.sagemaker.us-east-1.amazonaws.com/endpoints/.../invocations\""""
F17_FIELD = "ModuleNotFoundError: No module named 'transformers'"
F17_FIELD_PEFT = "ModuleNotFoundError: No module named 'peft'"
F19_FIELD = """Error parsing text-format inference.ModelConfig: 11:3: Expected ",", found "{".
error: creating server: Internal - failed to load all models"""
F20_FIELD = "System has unsupported display driver / cuda driver combination (error 803)"
F22_FIELD = "error: creating server: Internal - failed to load all models"
F23_FIELD = "Invalid argument: unable to find backend library"
F25_FIELD = "Model architectures ['DebertaV2ForSequenceClassification'] are not supported"
F28_FIELD = "resolver conflict: optimum-onnx needs transformers>=4.36,<4.58"
F30_FIELD = """Could not find any ONNX files with standard file name model.onnx,
files found: [PosixPath('model_quantized.onnx')]"""

# --- variants: other names, numbers, whitespace and noise ---------------------------------------

F01_VARIANTS = [
    # botocore's rendering, JSON pretty-printed and \u0027-escaped by the toolkit
    "An error occurred (ModelError) when calling the InvokeEndpoint operation: Received client error (400) from "
    'primary with message "{\\n  \\"code\\": 400,\\n  \\"type\\": \\"InternalServerException\\",\\n  \\"message\\": '
    '\\"No module named \\u0027onnxruntime\\u0027\\"\\n}\\n". See https://us-west-2.console.aws.amazon.com/cloudwatch/'
    "home?region=us-west-2#logEventViewer:group=/aws/sagemaker/Endpoints/nli-prod in account 210987654321 for more information.",
    # the worker's traceback in CloudWatch
    in_noise(
        "2026-11-29T10:05:01,111 [INFO ] W-9001-model-stdout com.amazonaws.ml.mms.wlm.WorkerLifeCycle - "
        "ModuleNotFoundError: No module named 'onnxruntime'"
    ),
]
F02_VARIANTS = [
    in_noise(
        """2026-11-29T11:41:07,004 [INFO ] W-9004-mdeberta-nli-stdout com.amazonaws.ml.mms.wlm.WorkerLifeCycle - model_fn implementation found. It will be used in place of the default one.
2026-11-29T11:41:09,512 [INFO ] epollEventLoopGroup-5-3 com.amazonaws.ml.mms.wlm.WorkerThread - 9004 Worker disconnected. WORKER_STARTED
2026-11-29T11:41:09,513 [WARN ] W-9004-mdeberta-nli com.amazonaws.ml.mms.wlm.BatchAggregator - Load model failed: mdeberta-nli, error: Worker  died."""
    ),
    "2026-11-29T11:41:09,513 [WARN ] W-9007-xlmr com.amazonaws.ml.mms.wlm.WorkerThread - Backend worker process died.",
]
F03_VARIANTS = [
    "onnxruntime.capi.onnxruntime_pybind11_state.InvalidArgument: [ONNXRuntimeError] : 2 : INVALID_ARGUMENT : "
    "Invalid input name: position_ids",
]
F04_VARIANTS = [
    "create endpoint config db-cohost-20261129-a1: ValidationException: Instance type ml.g4dn.xlarge is not "
    "supported for a Model using Direct InferenceExecutionMode.",
]
F05_VARIANTS = [
    "create endpoint db-vllm-a1: ValidationException: Image 763104351884.dkr.ecr.eu-west-1.amazonaws.com/"
    "vllm:0.26.0-gpu-py312-cu129-ubuntu22.04-sagemaker does not contain  required accept-bind-to-port=true "
    "Docker label.",
]
F07_VARIANTS = [
    "The primary container for production variant AllTraffic did not pass the ping health check. Please check "
    "CloudWatch logs for this endpoint.",
]
F08_VARIANTS = [
    "create inference component ic-a: ValidationException: Number of accelerator devices required must be "
    "specified for ml.g6.12xlarge.",
]
F09_VARIANTS = ["Failed to deploy: SageMaker was able to deploy 1 out of 3 requested copies. "]
F10_VARIANTS = [
    "FailureReason: There is not enough memory available for this Inference Component. Reduce "
    "MinMemoryRequiredInMb or use a larger instance.",
]
F12_VARIANTS = [
    "An error occurred (ValidationError) when calling the InvokeEndpoint operation: Inference Component has no "
    "capacity to process this request. Please retry later.",
]
F14_VARIANTS = [
    in_noise(
        """2026-11-29T09:12:44,901 [WARN ] W-9000-nli com.amazonaws.ml.mms.wlm.BatchAggregator - Load model failed: nli, error: Worker died.
2026-11-29T09:12:44,902 [INFO ] W-9000-nli com.amazonaws.ml.mms.wlm.WorkerThread - Retry worker: 9000 in 13 seconds."""
    ),
]
F19_VARIANTS = [
    "E1129 10:02:11.4 93 model_repository_manager.cc:1215] Poll failed for model directory 'mdeberta': "
    'Error parsing text-format inference.ModelConfig: 27:5: Expected ",", found "{".',
]
F20_VARIANTS = [
    "ERROR: The NVIDIA Driver is present, but CUDA failed to initialize.  GPU functionality will not be "
    "available.\n   [[ System has unsupported display driver / cuda driver combination (error 803) ]]",
    "what():  CUDA error: cudaErrorSystemDriverMismatch",
]
F22_VARIANTS = [
    "E1129 10:02:12 93 model_lifecycle.cc:654] failed to load 'nli' version 1: Internal: failed to stat file "
    "/opt/ml/model/nli/1/model.onnx\nerror: creating server: Internal - failed to load all models",
]
F23_VARIANTS = [
    "E1129 10:02:12 1 model_lifecycle.cc:654] failed to load 'xlmr': Invalid argument: unable to find backend "
    "library for backend 'onnxruntime', try specifying runtime on the model configuration.\n"
    "error: creating server: Internal - failed to load all models",
]
F25_VARIANTS = [
    "ValueError: Model architectures ['DebertaForSequenceClassification'] are not supported for now. "
    "Supported architectures: dict_keys(['BertModel', 'XLMRobertaForSequenceClassification'])",
]
F28_VARIANTS = [
    """ERROR: Cannot install optimum-onnx==0.0.3 and transformers==5.14.1 because these package versions have conflicting dependencies.
The conflict is caused by:
    The user requested transformers==5.14.1
    optimum-onnx 0.0.3 depends on transformers<4.58 and >=4.36
ERROR: ResolutionImpossible: for help visit https://pip.pypa.io/en/latest/topics/dependency-resolution/""",
]
F30_VARIANTS = [
    "Could not find any ONNX files with standard file name model.onnx, files found: "
    "[PosixPath('onnx/model_int8.onnx'), PosixPath('onnx/model_fp16.onnx')]. Please specify file_name",
]
