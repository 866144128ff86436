"""AWS access: the boto3 clients and their retry configurations, S3 storage of run files, the SSE-KMS
hook on every write, and what an AccessDenied means.

The lowest layer above the primitives (``workflows.errors``, ``workflows.clock``, ``workflows.models``,
``workflows.settings``): it imports nothing else of deploybench. Every layer above it reaches AWS through
here; the Lambda handlers build their clients with ``clients`` and ``encryption``.
"""
