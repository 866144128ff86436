"""The embedded local engine: the same state machines, run on one machine with no AWS account.

The engine layer: it runs the Lambda handlers (``lambdas``) inside moto's Step Functions interpreter and
serves endpoints with the local SageMaker; it imports the handlers, steps and domain packages, and only
the CLI and ``workflows.execution`` import it.
"""
