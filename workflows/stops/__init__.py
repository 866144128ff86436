"""Stopped executions: an aborted or timed-out run torn down at once, and `deploybench stop`."""
