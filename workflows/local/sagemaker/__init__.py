"""A local SageMaker: the control-plane subset the handlers use, and endpoints that really serve."""
