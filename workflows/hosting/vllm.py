"""vLLM's SageMaker image, pooling runner: one model per endpoint, told what to serve by environment.

The image has neither the accept-bind-to-port nor the multi-models label, so it runs standalone
(F05). Its entrypoint ignores command-line arguments and maps ``SM_VLLM_FOO=bar`` to ``--foo bar``:
without SM_VLLM_MODEL it serves a default model (Qwen3-0.6B) and still passes its health check
(F26), so once the endpoint is InService one classify/embed request checks that the model the
server names is the one requested. DeBERTa-v2 is not in vLLM's registry and the Transformers
fallback lacks its attention backend: refused before deploy (F25). Pairs go to /classify as one
text joined with the family's separator (F27).
"""

from __future__ import annotations

import json
from functools import lru_cache, partial
from importlib.resources import files
from typing import Any

import yaml

from workflows.aws.clients import aws_errors
from workflows.contracts import DeployRequest, DescribeRequest, Finding
from workflows.errors import InvocationFailed, ServedModelMismatch, SpecInvalid
from workflows.hosting.base import AwsClients, InstanceMode, Planned, Progress
from workflows.hosting.checks import INSTANCE_TYPES, cuda_check, spec_problem
from workflows.hosting.image_choice import image_for
from workflows.hosting.pools import POOLS
from workflows.hosting.sources import isolated_hub_ids, locate
from workflows.hosting.specs import VllmHosting
from workflows.hosting.staging import read_manifest, uncompressed_model_data
from workflows.images.table import VLLM
from workflows.preflight.context import PreflightContext
from workflows.preflight.findings import refuse_blocking
from workflows.preflight.isolation import ISOLATION
from workflows.preflight.registry import Check
from workflows.preflight.vllm import check_architecture, check_environment
from workflows.settings import Settings
from workflows.spec.pipeline import RunSpec

MOUNTED = "/opt/ml/model"
PROBE_TEXT = "deploybench checks which model this endpoint serves"


@lru_cache(maxsize=1)
def _table() -> dict[str, Any]:
    return yaml.safe_load((files("workflows") / "data" / "vllm.yaml").read_text(encoding="utf-8"))


def pair_separator(architecture: str, override: str | None = None) -> str:
    """The separator joining a text pair for the architecture's family (F27).

    Raises:
        SpecInvalid: the family is not in workflows/data/vllm.yaml and no separator was given.
    """
    if override:
        return override
    separators: dict[str, str] = _table()["pair_separators"]
    for family in sorted(separators, key=len, reverse=True):
        if architecture.startswith(family):
            return separators[family]
    raise SpecInvalid(
        f"no pair separator is known for {architecture}.", fix="set hosting.pair_separator (e.g. '[SEP]')"
    )


def request_body(inputs: list[Any], separator: str, model: str | None = None) -> bytes:
    """A /classify or /embed request through /invocations: texts, or pairs joined by ``separator``.

    Without ``model`` the server answers with the model it serves (a request naming another model
    would be refused before the answer could say which one it is).
    """
    texts = [item if isinstance(item, str) else f"{item[0]}{separator}{item[1]}" for item in inputs]
    body: dict[str, Any] = {"input": texts}
    if model is not None:
        body["model"] = model
    return json.dumps(body).encode("utf-8")


def environment(model: str, *, task: str, max_model_len: int) -> dict[str, str]:
    """What the vLLM DLC's entrypoint turns into command-line arguments (F26)."""
    return {
        "SM_VLLM_MODEL": model,
        "SM_VLLM_RUNNER": "pooling",
        "SM_VLLM_CONVERT": str(_table()["convert_by_task"][task]),
        "SM_VLLM_MAX_MODEL_LEN": str(max_model_len),
    }


def requested_model(spec: RunSpec, hosting: VllmHosting) -> tuple[str, str | None]:
    """(SM_VLLM_MODEL, the s3 prefix to mount at /opt/ml/model or None for a Hub id)."""
    where = locate(hosting.model_id or spec.model.source, mode="vllm")
    return (MOUNTED, where.value) if where.kind == "s3" else (where.value, None)


def served_model(answer: bytes) -> str | None:
    """The model a pooling response names (vLLM's responses carry the served model's name)."""
    try:
        data = json.loads(answer)
    except ValueError:
        return None
    return str(data["model"]) if isinstance(data, dict) and data.get("model") else None


_image = partial(image_for, VLLM)


def _architecture(context: PreflightContext, hosting: VllmHosting) -> list[Finding]:
    assert context.artifact is not None
    return check_architecture(context.artifact.manifest.architecture)


def _environment(context: PreflightContext, hosting: VllmHosting) -> list[Finding]:
    found = spec_problem("model-source", lambda: requested_model(context.spec, hosting))
    found = found or isolated_hub_ids(hosting, [hosting.model_id or context.spec.model.source], mode="vllm")
    if found:
        return found
    model_id, _ = requested_model(context.spec, hosting)
    task = context.spec.model.task
    env = environment(model_id, task=task, max_model_len=hosting.max_model_len)
    return check_environment(environment=env, model_id=model_id, task=task)


def _pairs(context: PreflightContext, hosting: VllmHosting) -> list[Finding]:
    assert context.artifact is not None
    architecture = context.artifact.manifest.architecture
    found = spec_problem("F27", lambda: pair_separator(architecture, hosting.pair_separator))
    # Only text pairs need the separator: a warning, not a block.
    return [f.model_copy(update={"severity": "warning"}) for f in found]


class VllmMode(InstanceMode[VllmHosting]):
    mode = "vllm"
    spec_type = VllmHosting
    image_family = VLLM
    image_devices = ("gpu",)
    local_blocker = (
        "vLLM needs its own server image and a GPU; the local SageMaker serves only the HF inference DLC "
        "contract, and this machine runs no Docker"
    )
    checks = (
        INSTANCE_TYPES,
        POOLS,
        Check("architecture in vLLM's registry", ("F25",), _architecture, ("artifact",)),
        Check("SM_VLLM_* name the requested model, pooling runner", ("F26",), _environment),
        Check("pair separator known for the model family", ("F27",), _pairs, ("artifact",)),
        Check("image CUDA vs the instance's GPU driver", ("F20",), cuda_check(_image)),
        ISOLATION,
    )

    def plan(
        self,
        request: DeployRequest,
        hosting: VllmHosting,
        instance_type: str,
        *,
        clients: AwsClients,
        settings: Settings,
    ) -> Planned[VllmHosting]:
        """Tell the image what to serve by environment (F26); refuse an architecture vLLM lacks (F25)."""
        image = _image(hosting, instance_type, settings.region)
        model_id, mounted = requested_model(request.spec, hosting)
        env = environment(model_id, task=request.spec.model.task, max_model_len=hosting.max_model_len)
        findings = check_environment(environment=env, model_id=model_id, task=request.spec.model.task)
        if hosting.model_id is None:
            manifest = read_manifest(clients.need("s3"), settings.bucket, request.run_id)
            findings += check_architecture(manifest.architecture)
        refuse_blocking(findings, mode=self.mode)
        container: dict[str, Any] = {"Image": image, "Environment": env}
        if mounted is not None:
            container["ModelDataSource"] = uncompressed_model_data(mounted)
        return Planned(hosting, models=[{"PrimaryContainer": container}])

    def advance(self, request: DescribeRequest, *, clients: AwsClients) -> Progress:
        """One request once InService: the served model must be the requested one (F26).

        Raises:
            ServedModelMismatch: the server names another model (a default one).
            InvocationFailed: the probe itself failed (its error quoted).
        """
        model_id, _ = requested_model(request.spec, self.spec_of(request.spec))
        name = request.deploy.endpoint_name
        runtime = clients.need("runtime")
        with aws_errors(f"probe {name} for the model it serves"):
            try:
                answer = runtime.invoke_endpoint(
                    EndpointName=name,
                    ContentType="application/json",
                    Body=request_body([PROBE_TEXT], ""),
                )["Body"].read()
            except runtime.exceptions.ModelError as error:
                raise InvocationFailed(
                    f"{name} answered the served-model probe with an error: {error}"
                ) from error
        served = served_model(answer)
        if served != model_id:
            raise ServedModelMismatch(
                f"{name} serves {served or 'an unnamed model'!r}, not the requested {model_id!r}: the vLLM image "
                "ignores command-line arguments and falls back to its default model (F26).",
                fix="set SM_VLLM_MODEL, SM_VLLM_RUNNER=pooling, SM_VLLM_CONVERT and SM_VLLM_MAX_MODEL_LEN",
            )
        return Progress(ready=True)


STRATEGY = VllmMode()
