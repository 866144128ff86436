"""Whether a person in the paste calls what it shows no failure (a false alarm, no real outage, nothing to fix, a
ticket closed as solved),
or says it cannot tell which of two failures it shows, or could not read the endpoint's logs.

An alert forwarded with its resolution ("Resolved: the old endpoint was being deleted, 실제 장애 아님") shows a
failure's words that the people who looked at it dismissed. Such a paste names no entry: its matches are
candidates of an unknown answer, with the dismissal quoted, so the reader decides. The dismissal counts where
it is affirmed: "is this a false alarm?" asks, and "not a false alarm" denies the dismissal.

Where the paste shows the signatures of two entries and its writer says the evidence cannot tell them apart
("container 3개라 메모리 부족으로 ping 못 넘긴 건지, worker 가 죽은 건지는 구분이 안 되네요"), naming one would
overrule the person who read it: the answer is unknown with both as candidates.
"""

from __future__ import annotations

import re

from workflows.diagnosis.evidence import Evidence
from workflows.diagnosis.mentions import asserted, reading_of

# Nothing broken, no outage: no failure that breaks something, which a benchmark's method or a slow scale-in never is.
_NOTHING_BROKEN = re.compile(
    r"\bnot an? (?:real|actual|genuine) (?:outage|incident|failure|issue|problem|alert)\b"
    r"|\bno (?:real|actual) (?:outage|incident|failure|issue|problem|impact)\b|\bnothing (?:is )?broken\b"
    # A refusal that did what it was meant to: "정책대로 막힌 거라 정상", "working as intended". Of a slow scale-in, a
    # benchmark's method, it is what the failure is ("정책은 의도대로 동작은 함. 근데 ... 27분 billed").
    r"|(?:정책|의도|설계)\s*대로\s*(?:막힌|막혔|차단|거부|동작)\w*|\bworking as intended\b",
    re.IGNORECASE,
)
_DISMISSAL = re.compile(
    r"\bfalse (?:alarm|positive|alert)s?\b"
    r"|\bnothing (?:left |more |else )?(?:(?:for|on) (?:us|me|our side) )?to (?:fix|do)\b|\bno (?:further )?action (?:needed|required|for us|on our side)\b|\bno further action\b"
    r"|오탐|(?:실제\s*)?장애(?:는|가)?\s*(?:아님|아닙니다|아니었|아니에요|아니고)|(?:현재|지금)\s*(?:장애|영향|문제|이슈|이상)\s*(?:없음|없습니다|없어요)|(?<!이슈 )(?<!이슈)(?<!문제 )(?<!문제)재발(?:은|이)?\s*(?:아님|아닙니다|아니)"
    r"|(?:추가\s*)?(?:조치|작업|action)\s*(?:없음|불필요|필요\s*없)|재발\s*(?:없|안\s*(?:됨|함|했))"
    # "현재 조치 필요 사항 없음" (nothing to be done now); "this doesn't apply" (to us, said of another's matter).
    r"|조치\s*필요\s*(?:사항|한\s*(?:것|건))\s*(?:은|는)?\s*없|\b(?:this|it) (?:doesn't|does not|won't|will not) apply\b"
    r"|(?:우리가|저희가)?\s*할\s*(?:건|게|것은?|일은?)\s*없"
    # Another's failure, forwarded: "우리 계정은 해당 없음", "우리 쪽 영향 없음", "we are not affected".
    r"|(?:우리|저희)\s*(?:쪽|계정|팀|서비스|엔드포인트)?\s*(?:은|는|엔|에는)?\s*(?:해당|영향|문제)\s*(?:없|아님)"
    r"|(?:우리|저희)\s*(?:쪽|계정|팀)(?:[^.\n]|(?<=\d)\.(?=\d)){0,60}?(?:영향|해당)\s*(?:없습니다|없음|없어요|아님)"
    # ... or for a reason given: "우리는 HF DLC 라 해당 없음".
    r"|(?:우리|저희)\s*(?:는|은)\s*[^.\n]{0,30}?(?:이?라서?|이니까|니까)\s*(?:해당|영향)\s*(?:없습니다|없음|없어요|아님)"
    r"|\b(?:we are|we're|we were|our (?:account|endpoint|side|team) (?:is|was)) (?:not|un)\s?affected\b"
    r"|\bno (?:issue|problem|impact)s? for us\b|\bno (?:current|ongoing) impact\b|\bno impact (?:now|currently)\b|\bno impact (?:on|for) (?:us|our)\b|\bdo(?:es)?(?:n't| not) (?:affect|apply to) us\b"
    r"|(?:우리|저희)\s*(?:쪽|계정|팀|거|것|이슈|문제)\s*(?:은|는|이|가)?\s*(?:아님|아닙니다|아니에요|아니고)"
    r"|(?:우리|저희)\s*(?:쪽|팀|서비스)?\s*(?:랑|와|하고|과)\s*(?:는\s*)?무관|(?:우리|저희)\s*[^.\n]{0,40}?(?:쪽|엔드포인트|endpoint|서비스)\s*(?:\([^)\n]{0,40}\)\s*)?(?:랑|와|하고|과)\s*(?:는\s*)?무관|\b(?:unrelated|not related) to (?:us|ours)\b"
    r"|\b(?:their|another team's|another|a different) (?:account|team|endpoint|service)\b[^.;]{0,20}\bnot ours\b"
    # No impact on the endpoint ("엔드포인트 영향 없음").
    r"|(?:엔드포인트|서비스|SageMaker|세이지메이커)\s*(?:쪽)?\s*(?:은|는|엔|에는|에)?\s*영향\s*(?:없음|없습니다|없어요)"
    # Another team's mail that only copied us: "우리 쪽은 CC 만 된 것", "we were only cc'd".
    r"|(?:우리|저희)\s*(?:쪽|팀)?\s*(?:은|는)?\s*(?:CC|cc|참조)\s*(?:로|만|에)\s*(?:만\s*)?(?:된|됐|들어|걸려)\w*"
    r"|\b(?:we|i) (?:were|was|are|am) only (?:cc'?d|cced|copied)\b"
    # A ticket closed as solved: what it shows is a matter settled, not one to diagnose now.
    r"|\bStatus:\s*(?:Closed|Resolved|Done)\b|\bResolution:\s*(?:Fixed|Done|Resolved)\b"
    # ... or titled so by its key: "INC-2310 resolved ✅", "OPS-88: closed".
    r"|^\s*[A-Z][A-Z0-9]{1,9}-\d+\b[^\n.]{0,40}?\b(?:resolved|closed)\b"
    # GitHub's and trackers' closing words: "closed as completed", "closed as answered"; a reply's "Not affected."
    # ("closed as not planned" leaves the limitation standing: the failure is the user's still.)
    r"|\bclos(?:ed|ing) as (?:an? )?(?:completed|answered|resolved|fixed|done|duplicate|question)\b|(?:^|[.;:!]\s+)not affected\b"
    r"|\bclos(?:ing|ed?) (?:the|this|our) (?:[\w-]+ )?(?:incident|ticket|issue)\b|\b(?:posting|noting|posted|linking|sharing) (?:\w+ ){0,3}for the record\b"
    r"|\((?:#?\d[\w./-]*,\s*)?(?:closed|resolved|done|종료|종결|완료|해결(?:됨|\s*완료)?|조치\s*완료)\)|\[(?:closed|resolved|done|종료|종결|해결(?:됨|\s*완료)?)(?:\s*/\s*(?:done|fixed|resolved|closed))?\]"
    r"|상태\s*:\s*(?:종료|종결|해결|완료)|티켓\s*(?:을|은|는)?\s*(?:종결|종료|닫)"
    # A check's conclusion that nothing is wrong: "결론: 엔드포인트 쪽 이상 없음", "Conclusion: no issue on the endpoint".
    r"|결론\s*:?\s*[^.\n]{0,30}?(?:이상|문제|장애|이슈)\s*(?:없음|없습니다|없어요|아님)"
    r"|\bconclusion\s*:?\s*(?:[^.\n]{0,30}?\b)?(?:no (?:issue|problem|fault|failure)s?|nothing (?:wrong|broken))\b"
    # ... or marked so in a ticket's idiom: "resolved 처리합니다", "종결 처리함".
    r"|(?:resolved|closed|done|해결|종결|종료|완료)\s*처리\s*(?:합니다|함|했\w*|완료|됨)"
    # A title closed with its outcome: "[포스트모템] 5/28 ... 장애 — 종료".
    r"|\s[—–-]\s*(?:종료|종결|해결됨|closed|resolved)\s*$"
    r"|(?:건|문제|이슈|장애)(?:은|는)?\s*(?:조치|해결|처리)\s*(?:완료|됐|되었|됨)|종료\s*보고"
    # No issue open now: "현재 진행 중인 이슈 없음", "no open incidents".
    r"|(?:현재\s*)?진행\s*중인\s*(?:이슈|문제|장애)\s*(?:는\s*|은\s*)?(?:없음|없습니다|없어요)"
    r"|\bno (?:open|ongoing|active) (?:issues?|incidents?)\b"
    # ... or no issue found, then closed: "이슈 없음 → close".
    r"|(?:이슈|문제)\s*(?:없음|없습니다|없어요)\s*(?:→|->|=>|,|\.)?\s*(?:close[ds]?|종료|클로즈|닫음)\b"
    # A conclusion on a line or in a sentence of its own: "영향 없습니다." after the checks above it, "... 정상). 해당 사항
    # 없음, 참고만."
    r"|^\s*(?:영향|해당)\s*(?:없습니다|없음|없어요)\.?\s*$"
    r"|(?<=[.!)]\s)(?:영향|해당)\s*(?:사항\s*)?(?:없습니다|없음|없어요)(?=[.,\s]|$)",
    re.IGNORECASE,
)

# An alert mail's subject in its resolved state (Grafana's "[RESOLVED]", CloudWatch's "OK:" after "ALARM:").
_RESOLVED_MAIL = re.compile(
    r"^\s*(?:Subject|제목)\s*:\s*(?:(?:Re|Fwd?|FW)\s*:\s*)*\[RESOLVED\]", re.IGNORECASE
)

_UNDECIDED = re.compile(
    r"\b(?:can't|cannot|can not|couldn't|hard to|unable to) tell (?:which|whether|if)\b"
    r"|둘\s*다\s*(?:가능\w*|말이\s*됨|말이\s*돼\w*|그럴\s*듯\w*)|\b(?:either|both) (?:is|are|seems?|look) (?:possible|plausible|likely)\b"
    r"|\bnot sure (?:yet )?(?:which|whether)\b|\bunclear (?:yet )?(?:which|whether)\b|\bcould be either\b"
    r"|\b(?:don't|do not|dunno|don’t) know (?:yet )?(?:which|whether|if)\b|\bno idea (?:yet )?(?:which|whether|if)\b"
    r"|구분(?:이|은)?\s*(?:안\s*(?:되|됨|돼|됩)|불가|못\s*하)|어느\s*쪽인지\s*(?:모르|알\s*수\s*없)"
    # The cause not to be pinned down yet: "재현 전까지는 원인 단정 불가".
    r"|원인\s*(?:은|을)?\s*(?:단정|특정|확정)\s*(?:불가|못\s*함|어려\w*)"
    # "둘 중 어느 컨테이너가 실제로 떴는지 모름" (which of the two ran, unknown).
    r"|둘\s*중\s*어느[^.\n]{0,40}?(?:인지|는지|은지)\s*(?:모름|모르\w*|몰라\w*|알\s*수\s*없\w*)"
    # Opinions divided, or a check still to run before anyone knows: "의견 갈림", "tar tvf 해봐야 알 듯".
    # Two readings set side by side and neither known: "GPU가 모자란 건지 메모리가 모자란 건지 모르겠음".
    # ... or the record that would tell is silent: "serverless 였는지 real-time 였는지 sheet 에 없음".
    r"|(?:건지|인지|는지|은지|할지)\s*[^.\n]{1,40}?(?:건지|인지|는지|은지|할지)\S*\s*[^.\n]{0,15}?(?:모름|모르겠\w*|몰라\w*|알\s*수\s*없\w*|(?:에|엔)\s*없(?:음|습니다|어요))"
    r"|의견(?:이)?\s*(?:갈림|갈려|갈렸|나뉨|나뉘)|해\s*봐야\s*(?:알|앎)|\bopinions? (?:are |is )?(?:split|divided)\b",
    re.IGNORECASE,
)


# CloudFormation's stack events: a resource's failure and, later by its timestamp, the stack's update or creation
# complete (not a rollback). The failure is the past of a stack that now deployed.
_STACK_EVENT = re.compile(
    r"(?P<at>20\d\d-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:\.\d+)?)(?:Z|\s?UTC[+-]?\d{0,4})?\s*[|\s]\s*\S+\s*[|\s]\s*"
    r"(?P<status>(?:CREATE|UPDATE)_(?:COMPLETE|FAILED)|(?:UPDATE_)?ROLLBACK_COMPLETE)\b"
)


def _superseded(evidence: Evidence) -> str:
    """The stack event that completed a deploy after the paste's stack events show a failure, or empty."""
    events = sorted(
        (m["at"], m["status"], item.text)
        for item in evidence.items
        if not item.whole
        for m in _STACK_EVENT.finditer(item.text)
    )
    failed = [at for at, status, _ in events if status.endswith("FAILED")]
    last = events[-1] if events else None
    if failed and last and last[1] in ("CREATE_COMPLETE", "UPDATE_COMPLETE") and last[0] > max(failed):
        return f"CloudFormation: {last[2][:160]}"
    return ""


def dismissal(evidence: Evidence, *, silent: bool = False, recurs: bool = False) -> str:
    """A person's line that calls what the paste shows no failure, or the incident tool's word that its alert
    resolved or closed (an alert mail's subject says it as "[RESOLVED]") where no person asks about or denies
    a dismissal, or empty. For a ``silent`` failure, one no error reveals (a benchmark's method, a slow scale-in),
    "nothing is broken" and "no real outage" are what the paste says of it, no dismissal."""
    phrases = (_DISMISSAL,) if silent else (_DISMISSAL, _NOTHING_BROKEN)
    said = next((found for phrase in phrases if (found := _said(evidence, phrase))), "")
    if said and not (recurs and _RESOLVED_MAIL.match(said)):
        return said
    if any(_said(evidence, phrase, ("negated", "hypothetical")) for phrase in phrases):
        return ""  # "Is this a false alarm?", "Not a false alarm": a person keeps the failure open
    # An alert that resolved went back under its threshold; a failure that ends by itself (``recurs``: a slow scale-in
    # reaches zero) recurs all the same.
    return evidence.settled or ("" if recurs else _resolved_mail(evidence)) or _superseded(evidence)


def _resolved_mail(evidence: Evidence) -> str:
    return next(
        (item.text for item in evidence.items if not item.whole and _RESOLVED_MAIL.match(item.text)), ""
    )


def undecided(evidence: Evidence) -> str:
    """A person's line that says the paste cannot tell which failure it shows, or empty."""
    return _said(evidence, _UNDECIDED)


# The writer could not read the endpoint's logs: "I don't have CloudWatch access", "로그 권한이 없어서 못 봄".
_LOGS_UNSEEN = re.compile(
    r"\b(?:don't|do not|doesn't|does not|no|without)\s+(?:have\s+)?(?:any\s+)?(?:CloudWatch|log(?:s| group)?)\s+access\b"
    r"|\bno access to (?:the )?(?:CloudWatch|logs?|log groups?)\b"
    r"|\b(?:don't|do not|doesn't|does not|didn't|did not)\s+have\s+(?:any\s+)?access\s+to\s+(?:the\s+|its\s+|their\s+)?(?:CloudWatch|logs?|log groups?)\b"
    # ... or the log holds nothing to read: "the log group exists but the streams are empty".
    r"|\b(?:log\s+)?streams?\s+(?:are|is|were|was)\s+(?:all\s+)?empty\b|\bempty\s+log\s+streams?\b"
    r"|\b(?:can't|cannot|can not|couldn't) (?:see|read|open|access) (?:the |its )?(?:CloudWatch|logs?|log groups?)\b"
    # ... or the log is gone: "log group retention was 1 day and it already rotated".
    r"|\b(?:logs?|log groups?|(?:log )?streams?)\b[^.\n]{0,60}?\b(?:rotated|expired|purged|rolled off|aged out|gone|deleted)\b"
    # ... or cut before what decides: "the log is truncated", "로그가 잘려서 모르겠음".
    r"|\b(?:logs?|log streams?)\s+(?:is|are|was|were|got|gets)\s+(?:cut off|truncated|cut short)\b"
    r"|\btruncated\s+logs?\b"
    # ... the whole of it, so that its own "모르겠음" or "못 봄" denies nothing else.
    r"|로그\s*(?:가|는|도)?\s*(?:중간에\s*|뒤가\s*)?잘(?:려|렸|림)\w*"
    r"(?:[^.\n]{0,20}?(?:모르겠\w*|모름|몰라\w*|알\s*수\s*없\w*|(?:못|안)\s*(?:봤|봄|봐|읽|보)\w*))?"
    # ... or not read yet: "logs not pulled yet", "I have not opened CloudWatch yet".
    r"|\blogs?\s+(?:not|haven't been|have not been)\s+(?:yet\s+)?(?:pulled|read|checked|fetched|looked at|opened)\b"
    r"|\b(?:haven't|have not|not)\s+(?:yet\s+)?(?:opened|checked|read|looked at|pulled)\s+(?:the\s+)?(?:CloudWatch|logs?|log groups?)\b"
    # ... or no one has read it yet: "Nobody has looked at the container logs yet".
    r"|\b(?:nobody|no one|no-one)\s+(?:has\s+)?(?:looked at|read|checked|opened)\s+(?:the\s+)?(?:container\s+|endpoint\s+)?(?:logs?|log groups?)\b"
    r"|(?:로그|스트림)[^.\n]{0,30}?(?:사라짐|사라졌\w*|만료\w*|삭제됨|삭제됐\w*|비어\s*있\w*)"
    # ... or not read yet, in Korean: "로그는 아직 못 봄", "로그 안 봤음".
    r"|(?:로그|CloudWatch|클라우드워치)\s*(?:는|를|도|은)?\s*(?:아직\s*)?(?:못|안)\s*(?:봤|봄|봐|읽|확인)\w*"
    r"|(?:로그|CloudWatch|클라우드워치)[^.\n]{0,20}?(?:권한|접근)[^.\n]{0,15}?(?:없|못)\w*"
    # ... the whole of it, so that its own "못 봤어요" denies nothing else.
    r"(?:\s*(?:(?:내용|로그)\S*\s*)?(?:아직\s*)?(?:못|안)\s*(?:봤|봄|봐|읽|보)\w*)?",
    re.IGNORECASE,
)


def logs_unseen(evidence: Evidence) -> bool:
    """The writer says the endpoint's logs could not be read, where what decides a start-up failure is."""
    return asserted(_LOGS_UNSEEN, evidence)


def _said(evidence: Evidence, phrase: re.Pattern[str], polarities: tuple[str, ...] = ("affirmed",)) -> str:
    """The first person's line that holds ``phrase`` in one of ``polarities`` (affirmed: said, not asked)."""
    for item in evidence.items:
        if not item.prose or item.whole:
            continue
        for found in phrase.finditer(item.text):
            if reading_of(item, found).polarity in polarities:
                return item.text
    return ""
