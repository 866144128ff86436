"""Fault plan: ask the local SageMaker to reproduce a field failure on demand.

Only failures that AWS produces and the local stack cannot produce by itself are planned here
(capacity, drivers, placement rules). Failures the real serving stack produces on its own —
F01 missing module, F02/F14 worker died from memory, F03 input names, F22 truncated artifact —
are never faked: they come from the artifact and the memory cap.

A plan is YAML or JSON (``deploybench run SPEC --local --fault-plan FILE``), e.g.::

    faults:
      - id: F06                       # capacity stall
        instance_types: [ml.c6i.xlarge]
      - id: F20                       # CUDA error 803 until InferenceAmiVersion is set
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from workflows.errors import SpecInvalid

FaultId = Literal["F04", "F05", "F06", "F08", "F09", "F10", "F12", "F20", "F38", "F39"]

BEHAVIOUR: dict[str, str] = {
    "F04": "CreateEndpoint with a GPU instance type and InferenceExecutionConfig Direct is rejected with the field's text.",
    "F05": "CreateModel/CreateEndpoint with a multi-container model whose image lacks accept-bind-to-port is rejected.",
    "F06": "The endpoint stays Creating with no ProductionVariants and LastModifiedTime frozen 1 s after creation; "
    "after stall_minutes (simulated) it turns Failed with an empty FailureReason. With InstancePools, a pool "
    "on such a type gets no instance and the next pool by priority serves; when every pool's type is "
    "planned, the endpoint stalls until stall_minutes or the variant's provision timeout, whichever is first.",
    "F08": "CreateInferenceComponent on a GPU instance without NumberOfAcceleratorDevicesRequired is rejected.",
    "F09": "Inference component copies beyond the instance's GPUs are not placed (current < desired copies).",
    "F10": "CreateInferenceComponent with MinMemoryRequiredInMb above memory_limit_mb fails with the field's text.",
    "F12": "InvokeEndpoint at zero copies fails with 'Inference Component has no capacity to process this request'.",
    "F20": "A GPU endpoint without InferenceAmiVersion fails at container start with CUDA error 803.",
    "F39": "CreateEndpoint on the instance type is refused with ResourceLimitExceeded and AWS's text for an "
    "account quota of 0 ('<type> for endpoint usage' is 0 Instances), as on a new account.",
    "F38": "The SageMaker operation named by `action` is refused with AccessDeniedException and AWS's text "
    "for an explicit deny in a service control policy, unless its request carries the member named by "
    "`unless` (an SCP that requires KmsKeyId on CreateEndpointConfig, VpcConfig on CreateModel).",
}


class Fault(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: FaultId = Field(description="Failure catalogue ID to reproduce.")
    instance_types: list[str] = Field(
        default_factory=list, description="Only on these instance types; empty means every instance type."
    )
    times: int | None = Field(
        None, ge=1, description="Trigger at most this many times (then behave normally); empty means always."
    )
    stall_minutes: float = Field(50.0, gt=0, description="F06: simulated minutes in Creating before Failed.")
    memory_limit_mb: int = Field(1024, ge=1, description="F10: the largest MinMemoryRequiredInMb that fits.")
    action: str = Field(
        "CreateEndpointConfig",
        pattern=r"^[A-Z][A-Za-z]+$",
        description="F38: the SageMaker operation denied.",
    )
    unless: str | None = Field(
        None, description="F38: a request member whose presence meets the policy's condition (KmsKeyId)."
    )
    regions: list[str] = Field(
        default_factory=list,
        description="Only in these Regions of the local SageMaker; empty means every Region (a two-Region "
        "run's F06 names its primary, whose pools then stall while the other Region serves).",
    )

    def applies_to(self, instance_type: str | None) -> bool:
        return not self.instance_types or instance_type in self.instance_types


class FaultPlan(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    faults: list[Fault] = Field(default_factory=list)

    def find(self, fault_id: str, instance_type: str | None = None) -> Fault | None:
        """The first planned fault with this ID that applies to ``instance_type``."""
        return next((f for f in self.faults if f.id == fault_id and f.applies_to(instance_type)), None)

    def for_region(self, region: str) -> FaultPlan:
        """The faults that apply in ``region`` (one local Region's backend holds only these)."""
        return FaultPlan(faults=[f for f in self.faults if not f.regions or region in f.regions])


def load_fault_plan(path: str | Path) -> FaultPlan:
    """Read a fault plan file.

    Raises:
        SpecInvalid: the file is missing or does not validate.
    """
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        return FaultPlan.model_validate(data)
    except FileNotFoundError:
        raise SpecInvalid(
            f"fault plan {path} does not exist.", fix="pass the path of a YAML fault plan"
        ) from None
    except (yaml.YAMLError, ValidationError) as error:
        raise SpecInvalid(
            f"fault plan {path} is invalid: {error}",
            fix=f"use faults: [{{id: ...}}] with ids {sorted(BEHAVIOUR)}",
        ) from None
