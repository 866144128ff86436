"""Read-only readiness checks of an AWS account before a run: what ``deploybench doctor --aws`` and
the VPC check of a spec report.

``findings`` is the one shape both speak (ok, fail with the fix, or unverified with why); ``network``
checks a spec's VPC: the subnets and security groups exist, spread over zones, and reach S3 and the
SageMaker runtime. Every call is a Describe.

A domain package: it imports the primitives and the hosting network settings; the CLI imports it.
"""
