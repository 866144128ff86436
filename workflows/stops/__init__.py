"""Stopped executions: an aborted or timed-out run torn down at once, and `deploybench stop`.

``teardown`` reads a "Step Functions Execution Status Change" event (ABORTED, TIMED_OUT), finds the
run it belongs to and runs the pipeline's own teardown step on it, recording what it removed.

Between the handlers and the steps: it imports the TeardownEndpoint step, the contracts, naming and
``workflows.aws``; the TeardownStoppedExecution handler, the local engine's event routing and
``deploybench stop`` import it.
"""
