"""The remediation vocabulary: what a diagnosis asks the state machine to do next.

Every ``Diagnosis.action`` is one of these names. The deploy pipeline branches on it with a
Choice state; each action other than ``fail`` is bounded by ``spec.remediation.<action>``
(attempts) and ``spec.remediation.max_total_attempts``, and every attempt is recorded in
``DeployAttempt.history``. An action whose bound is spent turns into ``fail`` with the same
diagnosis. ``Diagnosis.details`` carries what the action needs from the evidence (a module
name, the copies that were placed...); the rest comes from the spec and the attempt.

This module is the one place the vocabulary is defined; the rule table, the spec's
``remediation`` section and the state machine all refer to these names.
"""

from __future__ import annotations

from enum import StrEnum


class Action(StrEnum):
    NEXT_INSTANCE_TYPE = "next_instance_type"
    LARGER_INSTANCE = "larger_instance"
    NEXT_MEMORY_SIZE = "next_memory_size"
    NEWER_AMI = "newer_ami"
    SINGLE_WORKER = "single_worker"
    LOWER_IC_MEMORY = "lower_ic_memory"
    ADD_REQUIREMENT = "add_requirement"
    WARM_SHAPES = "warm_shapes"
    RETRY_WITH_BACKOFF = "retry_with_backoff"
    FAIL = "fail"


# What the state machine does for each action (part of the orchestration contract: the Choice
# branches and the remediation step implement exactly this).
MEANING: dict[Action, str] = {
    Action.NEXT_INSTANCE_TYPE: (
        "F06 capacity stall (and F39, a type whose account quota is 0). Delete the endpoint once it leaves Creating (the field waited 50 min for "
        "Failed; teardown retries ResourceBusy), then redeploy with attempt.instance_type_index + 1. "
        "Stop when `hosting.instance_type_fallbacks` is exhausted (ml.g5.12xlarge stalled; ml.g6.12xlarge came up "
        "in ~3 min)."
    ),
    Action.LARGER_INSTANCE: (
        "F07 ping health check from memory pressure. Redeploy on the next type of `hosting.instance_type_fallbacks` "
        "with more memory than the failed one (workflows/data/instances.yaml), with "
        "`hosting.model_server_timeout_s` and `hosting.startup_health_check_timeout_s` doubled to cover "
        "the model download. Stop when no listed type is larger."
    ),
    Action.NEXT_MEMORY_SIZE: (
        "F14 serverless out of memory. Redeploy with `hosting.memory_size_mb` (MemorySizeInMB) one step up "
        "the only accepted values "
        "1024, 2048, 3072, 4096, 5120, 6144; fail past 6144 (1137 MB of ONNX failed at 2048, worked at 6144)."
    ),
    Action.NEWER_AMI: (
        "F20 CUDA error 803. Redeploy with `hosting.inference_ami_version` set to the minimum AMI for "
        "the image's CUDA (workflows.preflight.containers.minimum_ami; details.image_cuda when known). "
        "Success logs 'CUDA Forward Compatibility mode ENABLED'."
    ),
    Action.SINGLE_WORKER: (
        "F02 worker died from memory. Redeploy with `hosting.workers: 1` and `hosting.ort_intra_op_threads: 0` "
        "(SAGEMAKER_MODEL_SERVER_WORKERS=1, ORT_INTRA_OP_THREADS=0: all cores in one session): one model "
        "copy instead of one per vCPU."
    ),
    Action.LOWER_IC_MEMORY: (
        "F10 inference component memory. Recreate the component with `hosting.min_memory_mb` stepped down "
        "(halve it; ml.g5.xlarge: 6144 and 2048 failed, 1024 worked); fail below 1024."
    ),
    Action.ADD_REQUIREMENT: (
        "F01/F17 a Python module is missing in the container. Add details.module's requirement to "
        "code/requirements.txt (onnxruntime pinned to the conversion's version; LMI CPU: transformers torch "
        "sentencepiece protobuf peft accelerate; never optimum, F28), repack, redeploy."
    ),
    Action.WARM_SHAPES: (
        "F21/F18 first call per shape timed out while an engine compiled or a model loaded lazily. Re-run "
        "the warmup of every shape (within `benchmark.warmup_max_s`), tolerating the first timeouts (the compile finishes server-side: "
        "TensorRT b=8 took over 60 s once, then 40-45 ms)."
    ),
    Action.RETRY_WITH_BACKOFF: (
        "F12 no capacity at zero copies, F15 cold start past the read timeout. Repeat the failed invocation "
        "step with exponential backoff and read_timeout=300 (scale from zero took 471 s and 95 retries)."
    ),
    Action.FAIL: "No automatic fix: tear down and fail with the diagnosis, its evidence and its fix.",
}


def is_action(name: str) -> bool:
    """True when ``name`` is in the vocabulary."""
    return name in Action._value2member_map_


def remediable() -> list[Action]:
    """Every action the state machine can take by itself (all but ``fail``)."""
    return [a for a in Action if a is not Action.FAIL]
