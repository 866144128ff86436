"""The CDK app that deploys deploybench on AWS (``cdk deploy``; ``python -m infra.app`` synthesizes)."""
