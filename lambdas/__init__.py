"""Thin Lambda handlers: parse the event into one typed request, call one function of workflows/.

Each handler imports its step (``workflows.steps``, or the step entry point of a domain package:
diagnosis, remediation, reports, sweeps, janitor, redeploy), the contracts, settings and AWS clients;
never the machinery below a step (an import-linter contract). The CDK stack bundles them and the local
engine calls them.
"""
