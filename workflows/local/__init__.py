"""The embedded local engine: the same state machines, run on one machine with no AWS account."""
