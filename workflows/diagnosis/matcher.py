"""Match the rules against the evidence and rank what matched.

Scoring (documented here because part of the contract is how sure a diagnosis says it is):
- a rule's score starts at the confidence of its strongest signature that holds;
- each further signature that holds adds CORROBORATION (at most three times);
- each ``requires`` fact the evidence cannot tell (``None``) subtracts UNKNOWN_FACT_PENALTY, and
  the score is then held under MIN_CONFIDENCE (at UNPROVEN_CONTEXT_CAP): a ``requires`` fact is the
  context an entry is specific to (an engine, a mode, an instance kind, a phase), and an entry is
  never named without evidence of it. A log file alone does not say the endpoint was serverless,
  so F14 stays an alternative to F02 instead of vanishing or winning blindly; a generic container
  timeout on an endpoint of unknown engine is not named F21 (TensorRT);
- each ``prefers`` condition that holds adds CONTEXT_WEIGHT (the evidence's context, such as
  co-hosted containers or an LMI image, ranks one of two entries that share a signature);
- a ``requires`` that is known false, or an ``unless`` that holds, drops the rule;
- a ``doubts`` condition that holds (the paste argues against the entry's explanation, as requirements that
  list the module an import error names do against F01) holds the score at UNPROVEN_CONTEXT_CAP, and the
  causes the rule table declares for the entry become candidates.
The best score under MIN_CONFIDENCE is reported as ``unknown``, the candidates kept as
alternatives: a weak match is never forced into an ID.

In prose (a ticket, a chat; see ``polarity``) only an affirmed mention is evidence. A signature the
paste negates ("no ResourceLimitExceeded", "Worker died 로그도 없음") rules its entry out: the entry
is never the answer, and the evidence says so. A signature asked about, supposed, in the past or
someone else's ("quota?", "803이면", "last month", "another team saw") is no evidence either way; its entry is listed as a candidate
of an unknown answer, with what would decide it (the catalogue's signature).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from workflows.diagnosis.catalogue import load_catalogue
from workflows.diagnosis.evidence import Evidence, EvidenceItem, quote
from workflows.diagnosis.facts import FactValue, compute, fact_details
from workflows.diagnosis.mentions import reading_of
from workflows.diagnosis.rules import Condition, Rule, RuleSet

CORROBORATION = 0.03
UNKNOWN_FACT_PENALTY = 0.15
CONTEXT_WEIGHT = 0.05
MIN_CONFIDENCE = 0.3
# Where a match whose required context is unproven is held: below MIN_CONFIDENCE, so it is an
# alternative, never the answer.
UNPROVEN_CONTEXT_CAP = 0.25
QUOTES_PER_SIGNATURE = 2
MAX_ALTERNATIVES = 4


@dataclass
class Outcome:
    """Whether one condition holds: True, False, or None (a fact the evidence cannot tell)."""

    holds: bool | None
    quotes: list[str] = field(default_factory=list)
    details: dict[str, str] = field(default_factory=dict)
    against: list[str] = field(default_factory=list)
    hedged: list[str] = field(default_factory=list)


@dataclass
class Match:
    rule: Rule
    index: int
    id: str
    title: str
    score: float
    held: int
    quotes: list[str]
    details: dict[str, str]
    assumed: bool = False
    """A required fact the evidence cannot tell was assumed (the score is held at UNPROVEN_CONTEXT_CAP)."""


def _named(rule: Rule, details: dict[str, str]) -> tuple[str, str] | None:
    """The rule's ID and title with captures filled in; None when a capture is missing."""
    try:
        return rule.id.format(**details), rule.title.format(**details)
    except KeyError:
        return None


class Matcher:
    """Evaluates one evidence bundle against a rule set."""

    def __init__(self, evidence: Evidence, rules: RuleSet) -> None:
        self.evidence = evidence
        self.rules = rules
        self.facts: dict[str, FactValue] = compute(evidence)
        self.fact_details = fact_details(evidence, self.facts)
        # Entries the paste rules out, and entries it only asks about, with the mention that says so.
        self.ruled_out: dict[str, tuple[Rule, str]] = {}
        self.hedged: dict[str, tuple[Rule, str]] = {}
        # Causes whose context the paste shows and whose signature it does not (see unexamined_causes).
        self.context_only: dict[str, str] = {}
        # Entries a mention in the paste denies, even where another of their signatures holds.
        self.denied: set[str] = set()
        # Causes of a doubted entry (see _doubt), each with the doubt that leaves it open.
        self.open_causes: dict[str, str] = {}

    def _pattern(self, condition: Condition, sources: tuple[str, ...]) -> Outcome:
        regex = condition.regex
        assert regex is not None
        wanted = condition.sources or sources
        outcome = Outcome(holds=False)
        more = 0
        items = [i for i in self.evidence.items if i.source in wanted or i.source == "text"]
        # Lines first; the whole of a multi-line text only when no single line shows the signature.
        for whole in (False, True):
            for item in (i for i in items if i.whole is whole):
                match = self._affirmed(regex, item, outcome)
                if match is None:
                    continue
                outcome.holds = True
                if len(outcome.quotes) < QUOTES_PER_SIGNATURE:
                    outcome.quotes.append(label(item) + quote(item.text, match.start(), match.end()))
                else:
                    more += 1
                for name, value in match.groupdict().items():
                    if value is not None:
                        outcome.details.setdefault(name, value.strip())
            if outcome.holds or outcome.against or outcome.hedged:
                break
        if more:
            outcome.quotes.append(f"[… {more} more lines show the same signature]")
        return outcome

    @staticmethod
    def _affirmed(regex: re.Pattern[str], item: EvidenceItem, outcome: Outcome) -> re.Match[str] | None:
        """The item's first mention of the signature that asserts it; the others go to ``outcome``."""
        for match in regex.finditer(item.text):
            reading = reading_of(item, match)
            if reading.polarity == "affirmed":
                return match
            shown = f"{label(item)}{quote(item.text, match.start(), match.end())} ({reading.polarity}: «{reading.trigger}»)"
            (outcome.against if reading.polarity == "negated" else outcome.hedged).append(shown)
        return None

    def evaluate(self, condition: Condition, sources: tuple[str, ...]) -> Outcome:
        """A condition holds when every part of it does (error, fact, pattern)."""
        outcome = Outcome(holds=True)
        if condition.error is not None:
            if condition.error not in self.evidence.error_names:
                return Outcome(holds=False)
            outcome.quotes.append(f"[error] {condition.error}")
        if condition.fact is not None:
            value = self.facts[condition.fact]
            if value is None:
                outcome.holds = None
            elif value != condition.is_:
                return Outcome(holds=False)
            else:
                figures = self.fact_details.get(condition.fact, {})
                shown = ", ".join(f"{k}={v}" for k, v in figures.items())
                # A required absence reads "not serverless", a phase "phase=convert".
                name = (
                    f"{condition.fact}={condition.is_}" if isinstance(condition.is_, str) else condition.fact
                )
                name = name if condition.is_ is not False else f"not {condition.fact}"
                outcome.quotes.append(f"[fact] {name}" + (f": {shown}" if shown else ""))
                outcome.details.update(figures)
        if condition.pattern is not None:
            found = self._pattern(condition, sources)
            if not found.holds:
                return Outcome(holds=False, against=found.against, hedged=found.hedged)
            outcome.quotes.extend(found.quotes)
            outcome.details = {**found.details, **outcome.details}
        return outcome

    def match(self, rule: Rule, index: int) -> Match | None:
        """The rule's match, or None when it does not apply."""
        if any(self.evaluate(c, rule.sources).holds for c in rule.unless):
            return None
        unknown = 0
        details: dict[str, str] = {}
        required: list[Outcome] = []
        for condition in rule.requires:
            outcome = self.evaluate(condition, rule.sources)
            if outcome.holds is False:
                return None
            unknown += outcome.holds is None
            details.update(outcome.details)
            if outcome.holds and condition.fact:
                required.append(outcome)
        held = []
        for signature in rule.signatures:
            outcome = self.evaluate(signature, rule.sources)
            if outcome.holds:
                held.append((signature.confidence or 0.0, outcome))
            if outcome.against and "{" not in rule.id:
                self.ruled_out.setdefault(rule.id, (rule, outcome.against[0]))
            elif outcome.hedged and "{" not in rule.id:
                self.hedged.setdefault(rule.id, (rule, outcome.hedged[0]))
        if not held:
            return None
        held.sort(key=lambda pair: pair[0], reverse=True)
        score = held[0][0] + CORROBORATION * min(3, len(held) - 1) - UNKNOWN_FACT_PENALTY * unknown
        quotes: list[str] = []
        context = [o for c in rule.prefers if (o := self.evaluate(c, rule.sources)).holds]
        score += CONTEXT_WEIGHT * len(context)
        for outcome in [pair[1] for pair in held] + required + context:
            details = {**outcome.details, **details}
            quotes.extend(q for q in outcome.quotes if q not in quotes)
        if unknown:
            names = [c.fact for c in rule.requires if c.fact and self.facts[c.fact] is None]
            quotes.append(f"[assumed] {', '.join(n for n in names if n)}: the evidence does not tell")
        named = _named(rule, details)
        if named is None:
            return None
        if unknown:
            score = min(score, UNPROVEN_CONTEXT_CAP)
        if doubt := self._doubt(rule):
            quotes.append(doubt)
            score = min(score, UNPROVEN_CONTEXT_CAP)
        score = round(min(0.99, max(0.0, score)), 2)
        return Match(
            rule, index, named[0], named[1], score, len(held), quotes, details, assumed=bool(unknown)
        )

    def _doubt(self, rule: Rule) -> str:
        """What argues against the rule's explanation (its ``doubts``), or empty. Each cause the rule declares
        is left open as a candidate: "requirements.txt lists onnxruntime" leaves the install that reached no
        index (F37) as open as the missing line (F01)."""
        for condition in rule.doubts:
            outcome = self.evaluate(condition, rule.sources)
            if outcome.holds:
                shown = ", ".join(outcome.quotes) or str(condition.fact or condition.pattern)
                for cause in (r for r in self.rules.rules if rule.id in r.causes and "{" not in r.id):
                    if any(self.evaluate(c, cause.sources).holds is False for c in cause.requires):
                        continue  # its context is known not to hold: F14 needs a serverless endpoint
                    self.open_causes.setdefault(
                        cause.id, f"{rule.id}'s own explanation is in doubt ({shown})"
                    )
                return f"[doubt] {shown}: the paste argues against this entry's explanation"
        return ""

    def matches(self) -> list[Match]:
        """Every rule that applies, best first (score, then signatures held, then table order).

        An entry the paste rules out is left out. An entry that also holds (a log line shows it, or
        one of its signatures is affirmed where another is negated, as in "The image does not contain
        required accept-bind-to-port=true Docker label") is not ruled out: what software wrote stands.
        """
        found = [m for i, rule in enumerate(self.rules.rules) if (m := self.match(rule, i))]
        self.denied = set(self.ruled_out)
        for entry in {m.id for m in found}:
            self.ruled_out.pop(entry, None)
        return _causes_first(sorted(found, key=lambda m: (-m.score, -m.held, m.index)))

    def against(self) -> list[str]:
        """Evidence lines for the entries the paste rules out."""
        return [
            f"[ruled out] {entry} {rule.name}: ruled out by the paste: {shown}"
            for entry, (rule, shown) in self.ruled_out.items()
        ]

    def unexamined_causes(self, best: Match, matches: list[Match]) -> dict[str, str]:
        """Causes of ``best`` whose context the evidence shows but whose signature it does not, each with
        the context that shows it.

        A consequence is what its cause looks like from outside ("No module named" is what a pip install
        that reached no index leaves behind); where the cause's context holds (a network-isolated model
        for F37), or only its weak signature does (Triton's "failed to load all models" under a failed ping),
        and nothing rules the cause out, the consequence cannot be told from it.
        """
        found = {m.id for m in matches}
        # A cause matched below MIN_CONFIDENCE by a weak signature of its own, its context proven, is shown too:
        # a catch-all line says something failed upstream.
        # A cause whose context is unknown counts where a line of its own, not one the best shares, held.
        weak = {
            m.id: m.quotes[0]
            for m in matches
            if m.score < MIN_CONFIDENCE
            and m.quotes
            and (not m.assumed or (m.held and m.quotes[0] not in best.quotes))
        }
        causes: dict[str, str] = {}
        for rule in self.rules.rules:
            if best.id not in rule.causes or rule.id in self.ruled_out or "{" in rule.id:
                continue
            if rule.id in weak:
                if (
                    rule.id not in self.denied
                ):  # "no 'Worker died' in the log" denies what the weak line hints
                    causes.setdefault(rule.id, weak[rule.id])
                continue
            if rule.id in found:
                continue
            context = [
                q for c in rule.prefers if (o := self.evaluate(c, rule.sources)).holds for q in o.quotes
            ]
            if context:
                causes.setdefault(rule.id, context[0])
        self.context_only.update(causes)
        return causes

    def candidates(self, matches: list[Match]) -> list[str]:
        """An unknown answer's candidates, each with what would decide it (the catalogue's signature)."""
        lines = []
        listed: dict[str, Match] = {}
        for match in matches:
            listed.setdefault(match.id, match)
        hedged = {entry: shown for entry, (_, shown) in self.hedged.items() if entry not in self.ruled_out}
        opened = [*listed, *self.context_only, *self.open_causes, *hedged]
        for entry in list(dict.fromkeys(opened))[:MAX_ALTERNATIVES]:
            catalogued = load_catalogue().entry(entry)
            decides = catalogued.signature if catalogued else "its rule's signature in the evidence"
            why = f"only mentioned, not shown: {hedged[entry]}" if entry in hedged else "weak match"
            if entry in self.open_causes:
                why = f"a cause left open: {self.open_causes[entry]}"
            if entry in self.context_only:
                why = f"a cause whose context is shown, not its signature: {self.context_only[entry]}"
            if entry in listed:
                why = f"confidence {listed[entry].score:.2f}" + (
                    f", {listed[entry].quotes[-1]}"
                    if listed[entry].quotes[-1].startswith("[assumed]")
                    else ""
                )
            lines.append(f"[candidate] {entry} ({why}); decided by: {decides}")
        return lines


def _causes_first(ranked: list[Match]) -> list[Match]:
    """The cause ahead of what it causes: where an entry and a consequence it declares both match, the
    consequence's score does not put it first (a ping failure is what CUDA 803 looks like from outside)."""
    for _ in range(len(ranked)):
        best = ranked[0] if ranked else None
        cause = next(
            (m for m in ranked[1:] if best and best.id in m.rule.causes and m.score >= MIN_CONFIDENCE), None
        )
        if best is None or cause is None:
            return ranked
        ranked = [cause, *(m for m in ranked if m is not cause)]
    return ranked


def label(item: EvidenceItem) -> str:
    return f"[{item.source}{' ' + item.origin if item.origin else ''}] "
