"""A local SageMaker: the control-plane subset the handlers use, and endpoints that really serve.

Part of the engine layer: it imports hosting, the container environment, the GPU plan and the
primitives; the local engine and the path tests import it.
"""
