"""AWS clients and settings for handlers (``workflows.aws.handler_clients``), built once per execution environment.

Handlers call ``clients.sagemaker()`` and the rest through this module, so a test can replace one accessor here.
"""

from __future__ import annotations

from workflows.aws.handler_clients import *  # noqa: F403 - the handlers' accessors, re-exported whole
