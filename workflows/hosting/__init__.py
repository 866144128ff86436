"""Hosting modes: each knows its resources, how to create, describe and delete them.

One module per hosting mode (real-time, serverless, inference components, scale to zero, multi-container,
Triton, LMI, vLLM) over a shared base. A domain package: it imports the primitives, ``workflows.aws``,
the spec, images and preflight checks; the deploy, wait, teardown and benchmark steps, the janitor and
the local SageMaker import it.
"""
