"""Diagnosis: turn a failure's evidence into a failure catalogue entry and a remediation action.

- ``evidence``: what is looked at (texts by source, Describe* output, facts around them);
- ``facts``: named structured signals (serverless, stalled while Creating, copies short...);
- ``rules``: the rule model; the rules themselves are data (``workflows/data/diagnosis_rules.yaml``);
- ``matcher``: match and rank; an unexplained failure is ``unknown``, never forced into an ID;
- ``collect``: evidence from the pipeline state, DescribeEndpoint and CloudWatch Logs;
- ``paste`` (and ``documents``): evidence from pasted text of any form, or a mix of forms;
- ``accuracy``: a corpus of pasted cases, scored (tests and ``bench/diagnosis_accuracy.py``);
- ``actions``: the remediation vocabulary the state machine branches on.

A domain package that reads evidence only: it imports the primitives, ``workflows.aws`` (to collect
logs and Describe* output), the spec and hosting's resource kinds, and never the conversion, container
or report code (an import-linter contract). DiagnoseFailure, remediation and the CLI import it.
"""

from __future__ import annotations

from workflows.diagnosis.actions import Action
from workflows.diagnosis.collect import (
    diagnose_failure,
    evidence_from_endpoint,
    evidence_from_state,
    evidence_from_text,
)
from workflows.diagnosis.evidence import Evidence, EvidenceItem
from workflows.diagnosis.paste import evidence_from_paste
from workflows.diagnosis.rules import RuleSet, load_rules
from workflows.diagnosis.verdict import diagnose

__all__ = [
    "Action",
    "Evidence",
    "EvidenceItem",
    "RuleSet",
    "diagnose",
    "diagnose_failure",
    "evidence_from_endpoint",
    "evidence_from_paste",
    "evidence_from_state",
    "evidence_from_text",
    "load_rules",
]
