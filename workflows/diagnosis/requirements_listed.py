"""Whether the paste shows the serving code's requirements listing the module that fails to import.

"No module named 'onnxruntime'" says the package is not installed in the container. The usual reason is
that code/requirements.txt does not list it (F01: add it). Where the paste shows the file listing it
(a requirement line of its own where the paste names the file, as under ``$ cat code/requirements.txt``,
or a person saying so), that reason does not hold and the fix would change
nothing: the install at start did not run or reached no index (a network-isolated model, F37), or the
artifact was packed from another tree. Which one, the model's EnableNetworkIsolation and the start-up
log decide.
"""

from __future__ import annotations

import re

from workflows.diagnosis.evidence import Evidence
from workflows.diagnosis.mentions import reading_of

_MISSING = re.compile(r"No module named '?(?P<module>[A-Za-z_][\w]*)")
_REQUIREMENTS = re.compile(r"requirements(?:\.txt|\.in)?\b|요구\s*사항\s*파일", re.IGNORECASE)
# Words that say the file lacked the package: "missing from", "not in", "빠진", "없음", an empty file.
_ABSENT = re.compile(
    r"\bmissing\b|\bwithout\b|\bnot (?:in|listed|there)\b|\bisn't\b|\baren't\b|\blacks?\b|\bdropped\b"
    r"|\bempty\b|빠[졌진짐지져]|없|빈\s*파일",
    re.IGNORECASE,
)
# Adding it is the fix, so it says the file lacked it ("add onnxruntime and repack", "추가 후 재배포 -> 200 OK"),
# unless the writer insists it was there before the failure ("분명히 넣었습니다", "already added it, but ...").
_ADDED = re.compile(r"\badd(?:s|ed|ing)?\b|\bput\b|추가|넣", re.IGNORECASE)
# Said in the past, with no success after it, adding it says the file held it before the failure: "팀장님 말로는
# requirements.txt 에 onnxruntime 넣었다고 함"; "added onnxruntime ... redeployed; 200 now" is the fix that worked.
_ADDED_BEFORE = re.compile(r"넣었|추가했|추가\s*함|추가됨|\badded\b|\bhave put\b", re.IGNORECASE)
_SUCCESS = re.compile(r"\b200\b|\bOK\b|\bworks?\b|\bfixed\b|\bresolved\b|해결|성공|정상", re.IGNORECASE)
_INSISTED = re.compile(
    r"\balready\b|\bdefinitely\b|\bstill\b|\beven after\b|\bbut\b|분명|이미|확실|는데도|[었았했]는데|지만",
    re.IGNORECASE,
)
_SENTENCE_END = re.compile(r"[.!?](?=\s|$)")


def _package(module: str) -> re.Pattern[str]:
    """The module's distribution as a requirements line names it: onnxruntime, onnxruntime-gpu,
    onnxruntime_openvino, with an optional specifier (``>=1.28.0``, ``==1.31.1``) and comment."""
    name = re.escape(module).replace("_", "[-_]")
    return re.compile(
        rf"^\s*{name}(?:[-_][a-z0-9]+)?\s*(?:\[[\w,\s]+\])?\s*(?:[=<>~!]=?\s*[\w.*+]+\s*,?\s*)*(?:#.*)?$",
        re.IGNORECASE,
    )


def requirements_list_module(evidence: Evidence) -> bool | None:
    """The requirements the paste shows list the module an import error names; None when no import
    error is shown or nothing tells what the requirements hold."""
    return True if listing(evidence) else None


def listing(evidence: Evidence) -> str:
    """The line that shows the requirements listing the module an import error names, or empty."""
    items = [item for item in evidence.items if not item.whole]
    modules = {m.group("module") for item in items for m in _MISSING.finditer(item.text)}
    if not modules:
        return ""
    named_file = [i for i, item in enumerate(items) if _REQUIREMENTS.search(item.text)]
    shown_file = bool(named_file) or any(_REQUIREMENTS.search(command) for command in evidence.commands)
    for module in modules:
        package = _package(module)
        for index, item in enumerate(items):
            if shown_file and package.match(item.text):
                return item.text  # a requirement line of its own: the file's content, as pasted
            if not item.prose or index not in named_file:
                continue
            for mention in re.finditer(rf"\b{re.escape(module)}\b", item.text):
                if _MISSING.search(item.text[max(0, mention.start() - 20) : mention.end()]):
                    continue  # the import error quoted again, not the file's content
                if re.search(r"\b(?:import|from)\s+$", item.text[: mention.start()]):
                    continue  # the serving code's import ("inference.py 에서 import onnxruntime"), not the file's
                sentence = _sentence_around(item.text, mention.start())
                if not _REQUIREMENTS.search(sentence):
                    continue  # another sentence of the line: "inference.py does `import onnxruntime`."
                before = _INSISTED.search(sentence) or (
                    _ADDED_BEFORE.search(sentence) and not _SUCCESS.search(sentence)
                )
                if _ABSENT.search(sentence) or (_ADDED.search(sentence) and not before):
                    continue
                if reading_of(item, mention).polarity == "affirmed":
                    return sentence.strip()
    return ""


def _sentence_around(text: str, at: int) -> str:
    """The sentence of ``text`` that holds position ``at``: cut at . ! ? before a space or the end (a
    version's dots, as in "onnxruntime>=1.28.0", cut nothing)."""
    bounds = [0, *(m.end() for m in _SENTENCE_END.finditer(text)), len(text)]
    start = max(b for b in bounds if b <= at)
    return text[start : min(b for b in bounds if b > at)]
