"""What kind of endpoint the paste shows: serverless, or several containers co-hosted on its instances.

Read from the records (a variant's ServerlessConfig, the hosting mode given) first, then from what the text says
in passing: an instance type or id rules serverless out, a person's word says it, and the two kinds offered side
by side ("the serverless template or the c6i one") leave it open.
"""

from __future__ import annotations

import re
from typing import Any

from workflows.diagnosis.evidence import Evidence
from workflows.diagnosis.mentions import asserted, spoken_of
from workflows.diagnosis.shapes import objects

# Co-hosting as people write it: "multi-container Direct", "cohost endpoint", "container 2개", "two containers".
_COHOST_MARK = re.compile(
    r"\bmulti-?container\b|\bco-?host(?:ed|ing|s)?\b|\bDirect mode\b"
    r"|(?:컨테이너|container)\s*[2-9]\s*개|\b(?:two|three|four|[2-9])\s+containers\b",
    re.IGNORECASE,
)
# A real-time endpoint named as such: "real-time endpoint", "실시간 엔드포인트".
_REAL_TIME_WORD = re.compile(
    r"\breal-?time (?:endpoint|inference|hosting)\b|실시간\s*(?:엔드포인트|추론)", re.I
)
# Serverless named in any way: as the endpoint's kind or as one of the kinds it may be.
_SERVERLESS_ANY = re.compile(r"\bserverless\b|서버리스", re.IGNORECASE)
# A person's word that the endpoint is serverless ("서버리스 엔드포인트", "a serverless endpoint"); not the word
# paired with real-time or an instance as alternatives ("serverless 랑 real-time 둘 다", "서버리스 테스트용이랑 실시간 c6i",
# "instance or serverless").
_SERVERLESS_WORD = re.compile(
    r"(?<!real-time )(?<!real-time or )(?<!real-time and )(?<!real-time/)(?<!실시간/)"
    r"(?<!instance or )(?<!instances or )(?<!instance/)(?<!인스턴스/)"
    r"(?:\bserverless\b|서버리스)(?!\s*(?:하나|one|endpoint|엔드포인트|[^\s,/]{1,6}?)?\s*(?:랑|이랑|와|과|and|or|/|,)\s*(?:an?\s+|the\s+)?(?:[^\s,/]{1,6}\s+)?"
    r"(?:real-?time|실시간|instance|인스턴스|코호스트|co-?host|(?:ml\.)?[a-z]\d+[a-z]*\b))",
    re.IGNORECASE,
)


# What only a serverless endpoint has, named in passing: its config's fields and the SDK's class for it.
_SERVERLESS_FIELD = re.compile(
    r"\bServerless(?:Inference)?Config\b|\bMemorySizeInMB\b|\bmemory_size_in_mb\b", re.IGNORECASE
)
# An endpoint's name where the paste gives it: the runtime's URL, an EndpointName argument or field, a CLI flag, the
# SDK's Predictor.
_ENDPOINT_NAME = re.compile(
    r"/endpoints/(?P<url>[\w.-]+)/invocations"
    r"|\bEndpointName\b[\"']?\s*[=:]\s*[\"']?(?P<field>[\w.-]+)"
    r"|--(?:endpoint(?:-name)?|ep)[ =][\"']?(?P<flag>[\w.-]+)"
    r"|\bPredictor\(\s*(?:endpoint_name\s*=\s*)?[\"'](?P<sdk>[\w.-]+)"
    # ... or an alert's label: "Labels: alertname=..., endpoint=nli-rt-c6i".
    r"|\bendpoint(?:_name)?=[\"']?(?P<label>[\w.-]+)"
)
# A name that tells the kind, as teams abbreviate it: "minilm-sls-6g", "e5-serverless".
_SERVERLESS_NAME = re.compile(r"(?:^|[-_.])(?:sls|serverless)(?=$|[-_.\d])", re.IGNORECASE)
# ... or a real-time one: "nli-rt-c6i", "e5-realtime".
_REAL_TIME_NAME = re.compile(r"(?:^|[-_.])(?:rt|realtime|real-time)(?=$|[-_.\d])", re.IGNORECASE)


def _endpoint_names(evidence: Evidence) -> set[str]:
    names = {str((evidence.endpoint or {}).get("EndpointName") or "")}
    return names | {
        next(name for name in match.groups() if name)
        for item in evidence.items
        if not item.whole
        for match in _ENDPOINT_NAME.finditer(item.text)
    }


def serverless_named(evidence: Evidence) -> bool:
    """An endpoint of the paste is named as serverless ("bge-small-sls"), or a serverless config's field is
    written ("MemorySizeInMB 6144")."""
    names = _endpoint_names(evidence)
    return any(_SERVERLESS_NAME.search(name) for name in names) or asserted(_SERVERLESS_FIELD, evidence)


def endpoint_variants(evidence: Evidence) -> list[dict[str, Any]]:
    return objects((evidence.endpoint or {}).get("ProductionVariants"))


def serverless(evidence: Evidence) -> bool | None:
    """The endpoint is serverless: the mode says so, or its variants carry a ServerlessConfig."""
    if evidence.hosting_mode and "serverless" in evidence.hosting_mode:
        return True
    if any(
        v.get("CurrentServerlessConfig") or v.get("DesiredServerlessConfig")
        for v in endpoint_variants(evidence)
    ):
        return True
    config_variants = objects((evidence.endpoint_config or {}).get("ProductionVariants"))
    if any(v.get("ServerlessConfig") for v in config_variants):
        return True
    # Serverless runs one container on no instance of the account's: an instance type, an instance
    # id (a log stream is <variant>/<instance-id>) or co-hosted containers tell it is not serverless.
    cohosted = (evidence.container_count or 0) > 1 or co_hosted(evidence) is True
    known = evidence.hosting_mode or endpoint_variants(evidence) or config_variants
    if known or evidence.instance_id or cohosted:
        return False
    # An instance type named in the text; where the text speaks of serverless too, undenied, both kinds are offered.
    if evidence.instance_type:
        return None if spoken_of(_SERVERLESS_ANY, evidence, persons_only=True) else False
    # Where nothing shows the endpoint's instances, a person's word that it is serverless ("서버리스 엔드포인트")
    # tells it, and one that it is a real-time endpoint, with serverless unnamed, tells it is not; a question or a
    # denial of either does not.
    if asserted(_SERVERLESS_WORD, evidence):
        return True
    if asserted(_REAL_TIME_WORD, evidence) and not spoken_of(_SERVERLESS_ANY, evidence, persons_only=True):
        return False
    # Last, what the endpoint's name or a serverless config's field tells.
    if serverless_named(evidence):
        return True
    return False if any(_REAL_TIME_NAME.search(name) for name in _endpoint_names(evidence)) else None


def co_hosted(evidence: Evidence) -> bool | None:
    """Several containers share the endpoint's instances (multi-container, F02 and F07 weigh more)."""
    if evidence.container_count is not None:
        return evidence.container_count > 1
    if evidence.hosting_mode:
        return "multi-container" in evidence.hosting_mode
    return True if asserted(_COHOST_MARK, evidence) else None


# The servers that do their own work at the first call (LMI's model load, TensorRT's engine build), as people name
# them in passing: "lmi", "djl", "trt", "TensorRT".
_FIRST_CALL_ENGINE = re.compile(
    r"\b(?:lmi|djl(?:-inference|-serving)?|trt|tensorrt(?:-llm)?)\b", re.IGNORECASE
)


def first_call_engine_spoken_of(evidence: Evidence) -> bool | None:
    """LMI or TensorRT named in any way but a denial ("not sure which of sls / lmi / trt"): a first call that
    outlasted the client may be that server's work at the call, not a cold start. None where neither is named."""
    # The image named as the paste's own ("이미지 djl-inference 0.29 cpu-full") tells, whatever the hosting mode:
    # serverless runs an LMI image as well.
    if asserted(_FIRST_CALL_ENGINE, evidence):
        return True
    if evidence.hosting_mode and not any(w in evidence.hosting_mode for w in ("lmi", "trt", "tensorrt")):
        return False
    return True if spoken_of(_FIRST_CALL_ENGINE, evidence) else None
