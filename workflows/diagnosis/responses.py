"""What an HTTP request that the paste ran at a shell answered: the request's route beside the first line it printed;
and what a person noted after a command, as a shell comment.

A shell command's arguments are kept out of the evidence: a log filter's pattern is what was searched for, not what
was found. An HTTP client's command (curl, wget, HTTPie) is different: its URL is the request made, and the line the
command printed is that request's answer, a status (``-w "%{http_code}"``) or a body (``{"detail":"Not Found"}``).
Read apart, "404" says nothing of which route; read together, "POST localhost:8080/score answered: 404" does.
"""

from __future__ import annotations

import re

from workflows.diagnosis.documents import Reading

_CLIENT = re.compile(r"(?:^|[\s;|&(])(?:curl|wget|https?|xh)\s", re.IGNORECASE)
_METHOD = re.compile(r"(?:-X|--request)\s*['\"]?(?P<method>[A-Z]+)\b")
_DATA = re.compile(r"\s(?:-d|--data(?:-raw|-binary|-urlencode)?|--json)\s")  # curl posts a body it is given
# The URL: a scheme, or a host (localhost, a name with a dot, an address) with its port, then the path.
_URL = re.compile(
    r"(?<![\w@-])['\"]?(?P<url>(?:https?://)?(?:localhost|\d{1,3}(?:\.\d{1,3}){3}|[\w-]+(?:\.[\w-]+)+)"
    r"(?::\d{2,5})?/[^\s'\"]*)"
)


def answered(original: list[str], commands: dict[int, str]) -> list[tuple[int, str]]:
    """Each HTTP request a command made with the line after it (0-based), as "METHOD URL answered: LINE".

    Args:
        original: the paste's lines as written.
        commands: each line of a shell command the paste ran, with the whole command (``paste._commands``).

    Returns:
        (the printed line's index, the request and its answer), in the paste's order.
    """
    found: list[tuple[int, str]] = []
    for index, command in sorted(commands.items()):
        if index + 1 in commands or not _CLIENT.search(command) or not (url := _URL.search(command)):
            continue  # a command's continued line, or no HTTP request
        after = index + 1
        while after < len(original) and not original[after].strip():
            after += 1
        if after >= len(original) or after in commands:
            continue  # nothing printed before the next command
        method = "POST" if _DATA.search(command) else "GET"
        method = found_method.group("method") if (found_method := _METHOD.search(command)) else method
        found.append((after, f"{method} {url.group('url')} answered: {original[after].strip()[:300]}"))
    return found


# What a command printed, written on its own line after an arrow: "$ ls /opt/ml/model/e5/1/  ->  e5-small-v2.onnx".
_INLINE_OUTPUT = re.compile(r"\s(?:->|=>|→)\s+(?P<output>\S.*)$")
# A shell comment after a command: the person's note on it ("$ top -p 48211    # 13:21 기준 (19분 경과)").
_COMMENT = re.compile(r"\s#\s+(?P<note>\S.*)$")


def add_answers(reading: Reading, commands: dict[int, str]) -> None:
    """Add each HTTP request's answer to the evidence, as what the client saw (source ``invocation``), and each
    shell comment written after a command, as a person's line."""
    for index, answer in answered(reading.original, commands):
        reading.add("invocation", answer, index + 1)
    for index in sorted(commands):
        if index >= len(reading.original):
            continue
        line = reading.original[index]
        if output := _INLINE_OUTPUT.search(line.split(" # ")[0]):
            reading.add("text", output["output"], index + 1, prose=False)
        if comment := _COMMENT.search(line):
            reading.add("text", comment["note"], index + 1, prose=True)
