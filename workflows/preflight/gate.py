"""The gate's region check: a run deploys only to a region where botocore's endpoint data offers SageMaker.

It needs no hosting mode, so it sits with the preflight checks; the gate itself (every check on a spec that
needs no artifact, the hosting mode's included) is ``workflows.hosting.gate``, above the modes it runs.
"""

from __future__ import annotations

from functools import lru_cache

from workflows.errors import SpecInvalid

LOCAL_REGION = "us-east-1"
"""The region of a local run (the local engine's)."""
SERVICE = "sagemaker"


@lru_cache(maxsize=1)
def sagemaker_regions() -> tuple[str, ...]:
    """Every region of every partition where botocore's endpoint data offers SageMaker."""
    import botocore.session

    session = botocore.session.get_session()
    return tuple(
        sorted(
            {
                region
                for partition in session.get_available_partitions()
                for region in session.get_available_regions(SERVICE, partition)
            }
        )
    )


def check_region(region: str) -> None:
    """Refuse a region SageMaker is not offered in (botocore's partitions and endpoints).

    Raises:
        SpecInvalid: naming the region, where it came from and the regions on offer.
    """
    known = sagemaker_regions()
    if region in known:
        return
    import difflib

    close = difflib.get_close_matches(region, known, n=1)
    raise SpecInvalid(
        f"region {region!r} is not a region where SageMaker is offered (botocore's endpoint data lists "
        f"{len(known)}).",
        fix=(f"did you mean {close[0]!r}? " if close else "")
        + "pass --region, or set AWS_REGION / AWS_DEFAULT_REGION, to one of "
        + ", ".join(known),
    )
