"""Checks on the spec alone, before anything is converted, packed or created.

``enums`` holds what SageMaker's own service model accepts (instance types per use, AMI versions,
numeric ranges), read from botocore's installed model; ``model_source`` checks the model a spec
names without converting it (folder, weights, tokenizer, architecture, ``max_sequence_length``
against the model's own limit), locally or in S3. The ``CheckSpec`` state and the CLI run both
through ``workflows.steps.check_spec``.
"""
