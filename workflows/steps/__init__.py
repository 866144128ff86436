"""One module per pipeline step; each exposes one function a Lambda handler calls.

The layer under the handlers: each step imports the domain packages it drives and returns a typed
result from ``workflows.contracts``; the Lambda handlers and the local engine import it, and nothing
below imports it (an import-linter contract).
"""
