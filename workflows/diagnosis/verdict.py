"""The answer a diagnosis gives: the best-ranked match named with its quotes, consequences and
alternatives, or ``unknown`` with the candidates and what would decide between them (``matcher`` ranks)."""

from __future__ import annotations

import re

from workflows.contracts import Alternative, Diagnosis
from workflows.diagnosis.actions import Action
from workflows.diagnosis.catalogue import load_catalogue
from workflows.diagnosis.dismissals import dismissal, undecided
from workflows.diagnosis.evidence import MAX_QUOTE, Evidence
from workflows.diagnosis.matcher import MAX_ALTERNATIVES, MIN_CONFIDENCE, Match, Matcher, label
from workflows.diagnosis.rules import RuleSet, default_rules

MAX_EVIDENCE_LINES = 8
# An answer this weak rests on figures alone (a p99's tail, a first call's seconds): a writer who says the paste
# cannot tell what they show leaves it open, with no runner-up named.
WEAK_ALONE = 0.65
UNKNOWN_FIX = (
    "Read the evidence and the endpoint's logs. To name a failure the catalogue lacks, write its entry and "
    "rule in a YAML file of your own (entries: and rules:, the packaged catalogue's schema) under "
    "$XDG_CONFIG_HOME/deploybench/catalogue.d/ (default ~/.config/deploybench/catalogue.d/), or pass it "
    "with `deploybench diagnose --catalogue FILE`; nothing in the installed package needs editing."
)
_SALIENT = re.compile(r"error|exception|fail|traceback|killed|died|timed? ?out|refused|denied", re.IGNORECASE)


def _consequences(best: Match, matches: list[Match]) -> list[str]:
    return [
        f"[consequence] {m.id} {m.title} (confidence {m.score:.2f}): caused by {best.id}"
        for m in matches
        if m.id in best.rule.causes
    ]


def _alternatives(matches: list[Match], chosen: str | None) -> list[Alternative]:
    seen = {chosen} if chosen else set()
    alternatives = []
    for candidate in matches:
        if candidate.id in seen:
            continue
        seen.add(candidate.id)
        alternatives.append(
            Alternative(
                id=candidate.id,
                title=candidate.title,
                action=candidate.rule.action.value,
                confidence=candidate.score,
            )
        )
    return alternatives[:MAX_ALTERNATIVES]


def _context(evidence: Evidence) -> list[str]:
    """What an unknown failure is reported with: the error, the endpoint, salient log lines."""
    lines = [
        label(i) + i.text[:400] for i in evidence.items if i.source in ("error", "preflight", "describe")
    ]
    if evidence.endpoint:
        status = evidence.endpoint.get("EndpointStatus")
        variants = "present" if evidence.endpoint.get("ProductionVariants") else "absent"
        lines.append(f"[describe] EndpointStatus={status}, ProductionVariants {variants}")
    salient = [
        i for i in evidence.items if i.source in ("logs", "invocation", "text") and _SALIENT.search(i.text)
    ]
    lines += [label(i) + i.text[:400] for i in salient[-6:]]
    return lines[:MAX_EVIDENCE_LINES]


def _tied(best: Match, runner_up: Match) -> bool:
    """Two entries the evidence holds as well (the same confidence on as many signatures), neither the other's
    cause: the table's order would pick one, so the answer is neither."""
    related = best.id in runner_up.rule.causes or runner_up.id in best.rule.causes
    return not related and runner_up.score >= best.score and runner_up.held >= best.held


def diagnose(evidence: Evidence, rules: RuleSet | None = None) -> Diagnosis:
    """The best-supported catalogue entry for the evidence, with the alternatives it beat.

    Args:
        evidence: texts and facts of one failure.
        rules: the rule table (default: the packaged one).

    Returns:
        A Diagnosis; ``id="unknown"`` and ``action="fail"`` when nothing matches well enough, when a cause's
        context is shown without its signature, and when a person in the paste calls what it shows no
        failure or says it cannot tell two shown entries apart (``dismissals``): the matches are then its
        candidates.
    """
    matcher = Matcher(evidence, rules or default_rules())
    matches = matcher.matches()
    notes = [f"[note] {n}" for n in evidence.notes]
    best = matches[0] if matches and matches[0].score >= MIN_CONFIDENCE else None
    causes = matcher.unexamined_causes(best, matches) if best else {}
    entry = load_catalogue().entry(best.id) if best else None
    dismissed = dismissal(
        evidence,
        silent=entry is not None and entry.handled_by is not None,
        recurs=best is not None and best.rule.recurs,
    )
    runner_up = next((m for m in matches[1:] if best and m.id != best.id and m.score >= MIN_CONFIDENCE), None)
    # The entries the catalogue knows to cause the best one (F10 holds copies back as F09 does): a writer who cannot
    # tell them apart leaves both open, as with a runner-up.
    explained_by = sorted(
        r.id for r in matcher.rules.rules if best and best.id in r.causes and r.id != best.id
    )
    # ... and so does one who cannot tell what an answer read from figures alone (a p99's tail) shows.
    weak = best is not None and best.score < WEAK_ALONE
    torn = undecided(evidence) if runner_up or explained_by or weak else ""
    tied = best is not None and runner_up is not None and _tied(best, runner_up)
    if best is None or causes or dismissed or torn or tied:
        names = ", ".join(evidence.error_names) or "no error"
        title = f"no catalogue entry matches ({names})"
        doubted = [m for m in matches if any(q.startswith("[doubt]") for q in m.quotes)]
        if best is None and doubted and matcher.open_causes:
            opened = ", ".join(matcher.open_causes)
            title = f"{doubted[0].id} or its cause {opened}: the paste argues against {doubted[0].id}'s explanation"
        if best is not None and causes:
            title = f"{best.id} or its cause {', '.join(causes)}: the evidence does not tell which"
        if best is not None and dismissed:
            title = f"{best.id}'s signature is shown, but the paste calls it no failure or a settled one"
            notes.append(f"[note] dismissed in the paste: {dismissed[:MAX_QUOTE]}")
        if best is not None and runner_up is not None and tied:
            title = f"{best.id} or {runner_up.id}: the evidence holds both as well, and nothing tells which"
        if best is not None and torn:
            other = (
                runner_up.id
                if runner_up is not None
                else f"its cause {', '.join(dict.fromkeys(explained_by))}"
                if explained_by
                else "another cause"
            )
            title = f"{best.id} or {other}: the paste does not tell which, as its writer says"
            notes.append(f"[note] undecided in the paste: {torn[:MAX_QUOTE]}")
        return Diagnosis(
            id="unknown",
            title=title,
            evidence=_context(evidence) + matcher.against() + matcher.candidates(matches) + notes,
            action=Action.FAIL.value,
            confidence=0.0,
            fix=UNKNOWN_FIX,
            alternatives=_alternatives(matches, None),
        )
    alternatives = _alternatives(matches, best.id)
    also = [f"[alternative] {a.id} {a.title} (confidence {a.confidence:.2f})" for a in alternatives]
    return Diagnosis(
        id=best.id,
        title=best.title,
        evidence=best.quotes[:MAX_EVIDENCE_LINES]
        + _consequences(best, matches)
        + also
        + matcher.against()
        + notes,
        action=best.rule.action.value,
        confidence=best.score,
        fix=best.rule.fix,
        details=best.details,
        alternatives=alternatives,
    )
