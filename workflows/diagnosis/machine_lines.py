"""Whether a line was written by software or by a person: only a person's line can negate, ask or recall
(``polarity``); a line software wrote *is* the failure, "no" and "not" included."""

from __future__ import annotations

import re

# Lines software writes: a timestamp or epoch, a log level, a glog prefix, a JSON or YAML field, a
# traceback frame, an exception's name, a client's error, a shell prompt and what follows a program name. A
# ticket's title tag in Korean ("[질문] ...", "[장애 공유] ..."), a checklist's box ("[v] ...", "[x] ...", "[OK] ..."), a tag of
# several words ("[fwd note from hyejin] ..."), a ticket's key ("[ML-OPS-1874] ...") and a chat's minute ("[08:52] ...")
# are a person's, not a JSON array's opening; a log's own tag is one word ("[INFO ]", "[preflight]"), its time has
# seconds.
_MACHINE = re.compile(
    r"^\s*(?:"
    r"\[?\d{4}-\d\d-\d\d[T ]\d\d:\d\d|\d{10,13}\b|\[?\d\d:\d\d:\d\d[,.\]]"
    r"|\[?(?:INFO|WARN|WARNING|ERROR|DEBUG|FATAL|CRITICAL|TRACE|NOTICE)\b\s*\]?[:\s-]"
    r"|[EIWF]\d{4} \d\d:\d\d:\d\d"
    r"|\[(?![가-힣][가-힣 ]*\]\s)(?![ xXvVoO✓✔✗-]\]\s)(?:(?!(?:OK|PASS|PASSED|DONE|FAIL|FAILED|TODO|N/A)\]\s))(?![A-Za-z가-힣][\w가-힣-]*(?: [\w가-힣-]+)+\]\s)"
    r"(?![A-Z][A-Z0-9]*(?:-[A-Z0-9]+)*-\d+\]\s)(?!\d{1,2}:\d\d(?:\s?[AP]M)?\]\s)|[{\]}]|\"[\w.-]+\"\s*:"
    # A field's value with a person's words after it in parentheses is a person's note: "MemorySizeInMB=4096 (model is
    # 90 MB, memory is not the issue)".
    # So is a field's name with Korean after it ("CloudWatch: Model loaded 찍힌 시각이 ..."): AWS writes none.
    r"|[A-Z][a-z]+(?:[A-Z][a-z0-9]*)+\s*(?::(?![^\n]*[가-힣])|=(?!\S+\s+\((?:[^()\s]+\s+){3}))"
    r"|Traceback \(most recent call last\)|File \"[^\"]+\", line \d+"
    r"|(?:[a-z_][\w]*\.)+[A-Z]\w*(?:Error|Exception|Exceeded|Fault|Warning)\b"
    r"|[A-Z]\w*(?:Error|Exception|Exceeded|Fault|Denied|NotFound|Failure)\b\s*[:(]"
    r"|An error occurred \("
    r"|(?:error|fatal|warning|panic|E|W):\s"
    r"|(?:OSError|IOError|RuntimeError)\b"
    r")"
)


def is_machine_line(line: str) -> bool:
    """True when ``line`` was written by software (a log, a record, an error), not by a person."""
    return bool(_MACHINE.match(line))
