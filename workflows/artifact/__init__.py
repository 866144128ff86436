"""The packed artifact's own files: its manifest, its ``code/requirements.txt`` and its vendored wheels.

``manifest`` is what the artifact says about itself (``code/manifest.json``: precision, device,
library pins, how it was converted); ``requirements`` reads and writes ``code/requirements.txt`` as pip
reads it (PEP 508); ``vendoring`` puts the wheels a network-isolated container needs into ``code/wheels/``.

A domain package: it imports the primitives, ``workflows.images.table``, ``workflows.hosting`` and the
preflight pins; conversion, packing, preflight, remediation and the step contracts import it.
"""
