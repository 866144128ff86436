"""The spec: what a user writes (YAML), parsed into frozen pydantic models, and the checks on it alone.

``pipeline`` holds the run spec (``RunSpec``: model, hosting, benchmark, budgets) and ``load_spec``;
``model`` the model section and its source; ``errors`` turns pydantic's errors into the user's words;
``enums`` holds what SageMaker's own service model accepts (instance types per use, AMI versions,
numeric ranges), read from botocore's installed model; ``model_source`` checks the model a spec names
without converting it (folder, weights, tokenizer, architecture, ``max_sequence_length`` against the
model's own limit), locally or in S3.

A domain package: it imports the primitives, ``workflows.aws.clients`` and the domain packages that own a spec
section's vocabulary (``hosting``, ``conversion``, ``gpu``, ``images``, ``remediation``); the steps, the
CLI and the engines import it. The ``CheckSpec`` state and the CLI run both through
``workflows.steps.check_spec``.
"""
