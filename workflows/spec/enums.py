"""What SageMaker accepts, read from botocore's installed service model (the ground truth of request shapes).

A spec value that SageMaker would reject (a misspelt instance type, an AMI version that does not exist,
a copy count below the API's minimum) is refused when the spec is read, with the closest accepted
values, instead of minutes into a run at CreateEndpointConfig.
"""

from __future__ import annotations

import difflib
from functools import lru_cache
from typing import Annotated, Any

from pydantic import AfterValidator, StringConstraints

ENDPOINT_INSTANCE = "ProductionVariantInstanceType"
"""Instance types of an endpoint's production variant (real-time, components, Triton, LMI, vLLM)."""
PROCESSING_INSTANCE = "ProcessingInstanceType"
"""Instance types of a processing job (the benchmark load generator)."""
INFERENCE_AMI = "ProductionVariantInferenceAmiVersion"

USES = {
    ENDPOINT_INSTANCE: "endpoints",
    PROCESSING_INSTANCE: "processing jobs",
    INFERENCE_AMI: "a production variant's InferenceAmiVersion",
}


@lru_cache(maxsize=1)
def _shapes() -> dict[str, Any]:
    from botocore.loaders import Loader

    model = Loader().load_service_model("sagemaker", "service-2")
    return dict(model["shapes"])


@lru_cache(maxsize=8)
def accepted(shape: str) -> tuple[str, ...]:
    """The enum of a botocore SageMaker shape, e.g. every ``ProductionVariantInstanceType``."""
    return tuple(_shapes()[shape]["enum"])


def bounds(shape: str) -> tuple[float | None, float | None]:
    """The ``min`` and ``max`` botocore declares for a numeric shape (None where it declares none)."""
    row = _shapes()[shape]
    return row.get("min"), row.get("max")


def botocore_version() -> str:
    import botocore

    return str(botocore.__version__)


def closest(value: str, shape: str, count: int = 3) -> list[str]:
    """The accepted values nearest to ``value`` (difflib), best first."""
    return difflib.get_close_matches(value, accepted(shape), n=count, cutoff=0.75)


def refusal(value: str, shape: str) -> str | None:
    """None when SageMaker accepts ``value`` for ``shape``; else why not, with what would be accepted."""
    if value in accepted(shape):
        return None
    near = closest(value, shape)
    if near:
        others = f" (also close: {', '.join(repr(n) for n in near[1:])})" if near[1:] else ""
        hint = f"did you mean {near[0]!r}?{others}"
    else:
        hint = _examples(value, shape)
    return (
        f"'{value}' is not accepted by SageMaker for {USES[shape]} (botocore {botocore_version()}'s "
        f"{shape}, {len(accepted(shape))} values); {hint}"
    )


def _examples(value: str, shape: str) -> str:
    family = value.split(".")[1] if value.count(".") >= 2 else ""
    same_family = [v for v in accepted(shape) if v.split(".")[1:2] == [family]] if family else []
    listed = same_family or list(accepted(shape)[:6])
    return f"accepted{' in its family' if same_family else ''}: {', '.join(listed)}"


def member_of(shape: str) -> AfterValidator:
    """A pydantic validator refusing what SageMaker does not accept for ``shape`` (with did-you-mean)."""

    def check(value: str) -> str:
        problem = refusal(value, shape)
        if problem:
            raise ValueError(problem)
        return value

    return AfterValidator(check)


EndpointInstanceType = Annotated[str, member_of(ENDPOINT_INSTANCE)]
ProcessingInstanceType = Annotated[str, member_of(PROCESSING_INSTANCE)]
InferenceAmiVersion = Annotated[str, member_of(INFERENCE_AMI)]
# Container.Image and most URIs: at most 255 characters, no whitespace (botocore's ContainerImage).
Word = Annotated[str, StringConstraints(min_length=1, max_length=255, pattern=r"^\S+$")]
