"""Redeploy on upload: an S3 upload of a spec starts a pipeline run of it, one at a time per spec.

``triggers`` turns the S3 event (through EventBridge) into a ``RedeployTrigger`` and starts the
redeploy state machine; ``prepare`` snapshots the uploaded folder, checks the queue so that two
uploads of one spec never deploy at once, and hands the pipeline its input.

A domain package: it imports the primitives, ``workflows.aws.clients``, ``workflows.naming``, the spec and
the step contracts; the redeploy handlers (ReadUploadedSpec, CheckRedeployQueue, StartRedeploy) and
the CDK trigger construct import it.
"""
