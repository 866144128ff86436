"""The engines the CLI drives: a pipeline execution started and followed on either engine, and the
benchmark engine against an endpoint that already exists.

``pipeline`` starts a deploy pipeline execution (AWS Step Functions or the embedded local engine),
follows it state by state from its history, and collects its results; ``endpoint_benchmark`` is
``deploybench bench``: the benchmark engine and its report against an existing endpoint.

The layer under the CLI: it imports the local engine, the steps' contracts and the domain packages;
only ``workflows.cli`` imports it.
"""
