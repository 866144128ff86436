"""The CDK app that deploys deploybench on AWS (``cdk deploy``; ``python -m infra.app`` synthesizes).

A top layer beside the CLI: it imports the state machines, naming, settings and the domain tables
that decide grants (images, janitor, redeploy triggers); nothing in ``workflows`` imports it.
"""
