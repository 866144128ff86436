"""Former names of spec fields: still read, with a warning that names the new one."""

from __future__ import annotations

import warnings
from typing import Any

DEPRECATED_INSTANCE_TYPES = "instance_types"
"""Former name of ``hosting.instance_type_fallbacks`` (it read as "measure each of these")."""


def accept_former_instance_types(data: Any) -> Any:
    """``hosting`` input with ``instance_types`` renamed to ``instance_type_fallbacks``.

    Warns (``FutureWarning``: the command line prints it as one line on stderr) and refuses the two
    names together, since which one was meant cannot be told.
    """
    if not isinstance(data, dict) or DEPRECATED_INSTANCE_TYPES not in data:
        return data
    if "instance_type_fallbacks" in data:
        raise ValueError(
            "hosting.instance_types and hosting.instance_type_fallbacks are both set; "
            "keep only instance_type_fallbacks (instance_types is its former name)"
        )
    warnings.warn(
        f"hosting.{DEPRECATED_INSTANCE_TYPES} is deprecated: rename it to hosting.instance_type_fallbacks "
        "(the first type is deployed, the others are fallbacks).",
        FutureWarning,
        stacklevel=2,
    )
    renamed = dict(data)
    renamed["instance_type_fallbacks"] = renamed.pop(DEPRECATED_INSTANCE_TYPES)
    return renamed
