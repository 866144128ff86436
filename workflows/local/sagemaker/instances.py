"""Facts about SageMaker instance types the local SageMaker enforces: memory and accelerators.

Memory is enforced as a real cap (a cgroup shared by the containers of one instance) so that a
model server whose workers outgrow the instance dies as in the field (F02); GPU counts are used by
the fault plan's placement rule (F09). Figures: AWS instance type pages (GiB x 1024).
"""

from __future__ import annotations

_GIB = 1024
MEMORY_MB = {
    "ml.t2.medium": 4 * _GIB, "ml.t2.large": 8 * _GIB, "ml.t2.xlarge": 16 * _GIB,
    "ml.c5.large": 4 * _GIB, "ml.c5.xlarge": 8 * _GIB, "ml.c5.2xlarge": 16 * _GIB, "ml.c5.4xlarge": 32 * _GIB,
    "ml.c6i.large": 4 * _GIB, "ml.c6i.xlarge": 8 * _GIB, "ml.c6i.2xlarge": 16 * _GIB, "ml.c6i.4xlarge": 32 * _GIB,
    "ml.c7i.large": 4 * _GIB, "ml.c7i.xlarge": 8 * _GIB, "ml.c7i.2xlarge": 16 * _GIB, "ml.c7i.4xlarge": 32 * _GIB,
    "ml.m5.large": 8 * _GIB, "ml.m5.xlarge": 16 * _GIB, "ml.m5.2xlarge": 32 * _GIB, "ml.m5.4xlarge": 64 * _GIB,
    "ml.m6i.large": 8 * _GIB, "ml.m6i.xlarge": 16 * _GIB, "ml.m6i.2xlarge": 32 * _GIB, "ml.m6i.4xlarge": 64 * _GIB,
    "ml.r6i.large": 16 * _GIB, "ml.r6i.xlarge": 32 * _GIB,
    "ml.g4dn.xlarge": 16 * _GIB, "ml.g4dn.2xlarge": 32 * _GIB, "ml.g4dn.12xlarge": 192 * _GIB,
    "ml.g5.xlarge": 16 * _GIB, "ml.g5.2xlarge": 32 * _GIB, "ml.g5.4xlarge": 64 * _GIB, "ml.g5.12xlarge": 192 * _GIB,
    "ml.g6.xlarge": 16 * _GIB, "ml.g6.2xlarge": 32 * _GIB, "ml.g6.12xlarge": 192 * _GIB,
    "ml.g6e.xlarge": 32 * _GIB, "ml.g6e.12xlarge": 384 * _GIB,
}  # fmt: skip
GPUS = {
    "ml.g4dn.xlarge": 1, "ml.g4dn.2xlarge": 1, "ml.g4dn.12xlarge": 4,
    "ml.g5.xlarge": 1, "ml.g5.2xlarge": 1, "ml.g5.4xlarge": 1, "ml.g5.12xlarge": 4, "ml.g5.48xlarge": 8,
    "ml.g6.xlarge": 1, "ml.g6.2xlarge": 1, "ml.g6.12xlarge": 4, "ml.g6.48xlarge": 8,
    "ml.g6e.xlarge": 1, "ml.g6e.12xlarge": 4, "ml.p4d.24xlarge": 8, "ml.p5.48xlarge": 8,
}  # fmt: skip


def memory_mb(instance_type: str) -> int | None:
    """The instance's memory, or None for a type not in the table (then no cap is applied)."""
    return MEMORY_MB.get(instance_type)


def gpus(instance_type: str) -> int:
    """Accelerators per instance (1 for a GPU type not in the table)."""
    return GPUS.get(instance_type, 1)
