"""English triggers for ``polarity``: NegEx's (negex_triggers.txt) and ConText's (pyConText's lexical kit), less
those that only mean something at a bedside ("denies", "r/o"), with the experiencers and terminators of ops prose.
Korean's are in ``korean``."""

from __future__ import annotations

import re


def _words(*phrases: str) -> str:
    return "|".join(re.escape(p).replace(r"\ ", r"\s+") for p in sorted(phrases, key=len, reverse=True))


PSEUDO = _words(
    "no increase", "no change", "no significant change", "no interval change", "no further", "not only",
    "not necessarily", "not certain whether", "not certain if", "not ruled out", "not been ruled out",
    "not rule out", "did not rule out", "not cause", "not extend", "without difficulty", "no doubt",
    "no longer", "not sure why", "not sure what", "gram negative", "nothing changed",
    # HTTP's reason phrases: a status line or body that says "Not Found" reports, it does not deny.
    "404 not found", "404: not found",
)  # fmt: skip
NEGATION_PRE = _words(
    "no", "not", "non", "without", "never", "none of", "no evidence of", "no evidence", "no sign of",
    "no signs of", "no indication of", "absence of", "absent", "free of", "negative for", "rules out",
    "ruled out", "to exclude", "excluded", "cannot see", "can't see", "did not see",
    "didn't see", "not seen", "not see", "not find", "didn't find", "did not find", "not show",
    "doesn't show", "does not show", "didn't show", "not appear", "not reveal", "not have",
    "doesn't have", "no new", "with no", "without any", "without sign of", "without indication of",
    "rather than", "unremarkable for", "isn't", "wasn't", "aren't", "weren't", "nor", "nobody's", "nobody",
    "no one's", "don't", "doesn't", "didn't", "won't",
    # A search's count of none before what it searched for: "0 lines matching /Error|Worker died/".
    "0 lines matching", "zero lines matching", "no lines matching", "0 events matching", "0 records matching",
    "0 hits for", "0 matches for", "0 results for", "0 occurrences of",
)  # fmt: skip
NEGATION_POST = _words(
    "ruled out", "is ruled out", "was ruled out", "are ruled out", "has been ruled out",
    "have been ruled out", "being ruled out", "excluded", "unlikely", "is fine", "are fine",
    "was fine", "were fine", "looks fine", "look fine", "is ok", "are ok", "looks ok", "is not the issue",
    "is not the problem", "not the issue", "not the problem", "not the cause", "not it", "not seen",
    "not present", "not found", "absent", "none", "nowhere", "0 hits", "no hits", "zero hits", "0 matches",
    "no matches", "0 results", "no results", "0 occurrences",
    # What a branch or an alarm would have done, said not to have happened: "... were never taken".
    "never taken", "never fired", "never triggered", "never happened", "never occurred", "never raised",
)  # fmt: skip
HYPOTHETICAL_PRE = _words(
    "if", "whether", "in case", "should there", "unless", "possible", "possibly", "probable", "may be",
    "may have", "might", "could", "could be", "maybe", "perhaps", "suspect", "suspected", "suspicion of",
    "concern for", "question of", "consider", "considering", "thought it was", "thought it might",
    "wondering if", "in case of", "rule out", "to check for", "checked for", "check for", "test for",
    "looking for", "look for", "uncertain", "unclear", "unclear if", "unclear whether", "not sure if",
    "not sure whether", "can't tell", "cannot tell", "can't tell if", "unable to confirm", "could not confirm",
    "couldn't confirm", "cannot confirm", "can't confirm", "no way to tell", "grep", "grepped",
    "grepped for", "searched for", "search for", "searching for", "worried about", "worried that",
    "afraid of", "afraid that", "risk of", "at risk of", "to avoid", "to prevent", "avoid", "avoids", "avoided",
    "avoiding", "prevent", "prevents", "prevented", "preventing", "expect", "expecting", "watch for",
    "watch out for", "look out for", "otherwise", "or else", "may fail", "may see", "may get", "may hit",
    "may return", "may throw", "may raise", "may occur", "may happen", "may cause", "may result in",
    "may encounter", "may experience", "can fail", "can cause", "can result in",
    "would", "would have", "would just", "should", "will fail", "will return", "will get", "will see", "will hit",
    "expected:", "expected result:", "expected results:", "예상:", "예상 결과:",
    # A fault injected on purpose names the error it would raise: "simulate ResourceLimitExceeded on CreateEndpoint".
    "simulate", "simulates", "simulating", "simulated", "to simulate", "inject", "injects", "injecting",
    # A state machine's handlers name the errors they would catch: "(Catch: CapacityStall / ResourceLimitExceeded)".
    "catch:", "catches", "retry on", "retries on", "catch branch for", "catch branches for", "catch for",
    # A suggestion names what is to be tried, not what was done: "Try `{... "batch_size": 32}`".
    "try", "try passing", "try adding", "try setting", "try using", "i suggest", "we suggest", "suggest",
    # ... and a condition put to the reader names what it would take: "only batches when you pass `batch_size`".
    "when you pass", "when you set", "when you add", "when you give", "if you pass", "if you set",
)  # fmt: skip
HYPOTHETICAL_POST = _words(
    "is possible", "possible", "suspected", "to be ruled out", "be ruled out", "unconfirmed", "not confirmed",
    "is unclear", "is uncertain", "questionable",
    # A guess put after what it guesses: "LMI loads on first request, that's it probably", "..., could be that".
    "probably", "could be that", "could be it", "might be that", "might be it", "maybe", "perhaps",
)  # fmt: skip
HISTORICAL = _words(
    "history of", "previous", "previously", "prior", "in the past", "last week", "last month",
    "last year", "last time", "last quarter", "last sprint", "a while ago", "weeks ago", "months ago",
    "days ago", "used to", "earlier this year", "back in", "yesterday", "yesterday's", "last night",
    "last night's", "the day before", "last month's", "last week's", "last monday", "last tuesday",
    "last wednesday", "last thursday", "last friday", "last saturday", "last sunday", "last weekend",
    # An attempt dated to a day before this one: "this replaces Tuesday's attempt on ml.m5.large which failed ...".
    "monday's", "tuesday's", "wednesday's", "thursday's", "friday's", "saturday's", "sunday's", "earlier attempt",
)  # fmt: skip
# What is no longer there follows it: "the ResourceLimitExceeded we hit in Q3 is gone" (ConText's historical, read
# backwards as its negation's post-triggers are).
HISTORICAL_POST = _words(
    "is gone", "are gone", "is now gone", "are now gone", "went away", "has gone away", "have gone away",
    "has disappeared", "have disappeared",
)  # fmt: skip
# ConText's experiencer: the condition is someone else's (ConText's "family history", "mother"); in ops
# prose another team's, another project's, or one read or heard about. Either side of the mention.
OTHER = _words(
    "read about", "reading about", "heard about", "heard of", "read that", "someone else", "somebody else", "someone said",
    "somebody said", "someone mentioned", "people say", "another team",
    "other team", "other teams", "another team's", "other team's", "other teams'", "another project",
    "another project's", "other project", "other project's", "other projects", "other projects'", "other repo",
    "another repo", "other repository", "another repository",
    "another account", "another account's", "other account", "different account", "not this one",
    "not this endpoint", "그쪽", "저쪽", "그 팀", "그팀", "옆 팀", "옆팀", "타 팀", "타팀",
    "another customer", "other customers", "other people", "a blog post", "in a blog", "다른 팀", "다른 프로젝트",
    "linked from", "linking to", "for reference", "for context only",
    "다른 사람", "다른 사람들", "다른 사람들은", "다른 사람들이", "다른 분들", "다른 유저", "다른 사용자",
    "남의", "people get", "people hit", "people report", "people reported", "people see", "others hit",
    "others get", "others reported", "users report", "users reported", "users hit", "users see", "users get",
) + (  # another person by their handle: "@someone-else reported their client getting ..."
    r"|(?<![\w@])@[\w-]+\s+(?:reported|reports|said|says|mentioned|mentions|saw|sees|is seeing|was seeing|hit|hits|got|gets)\b"
) + (  # what one read in someone else's thread: "I read #31877 where ...", "we've read an issue that ..."
    r"|\b(?:i|we)(?:'ve|\s+have)?\s+read\s+(?:#\d+|issue\s+#?\d+|(?:an?|the|this|that)\s+(?:issue|thread|post|article))"
    # ... or another project's tracker: "huggingface/transformers 쪽 issue 에서", "upstream issue"
    r"|\S+\s*쪽\s*(?:issue|이슈)|\bupstream\s*(?:issue|bug|이슈|버그)s?(?:에서는|에서|에는|에|의)?(?![\w'-])"
    # ... or an issue of another repository, by its reference: "Re: vllm-project/vllm#1234 ...", "vllm-project/vllm 이슈에서",
    # "github.com/vllm-project/vllm issue where ...".
    r"|(?<![\w/.-])(?:(?:https?://)?(?:www\.)?github\.com/)?[\w.-]+/[\w.-]+"
    r"(?:#(?:\d+|\.\.\.)|\s+(?:issue|thread|discussion)\b|\s*(?:이슈|스레드)(?:에서|에|의)?)"
    # ... or a reply in another repository's thread, named by it: 'Re: vllm-project/vllm "Model architectures ..."'.
    r"|\bRe:\s*[\w.-]+/[\w-]+(?=\s*[\"“#:]|\s*$)"
    # ... or a team named by its name, not ours: "The platform team's issue", "the data-science team's job"
    r"|(?<!\bour )(?<!\bmy )\b(?!our\b|my\b)[\w-]+ team's (?:issue|ticket|incident|endpoint|job|account|error|thread)s?\b"
    # ... or a team named by its name that is seeing it: "search team is seeing `POST /score ... 404`"
    r"|(?<!\bour )(?<!\bmy )\b(?!our\b|my\b)[\w-]+ team (?:(?:is|are|was|were) (?:seeing|getting|hitting|reporting)|hit|got|saw|"
    r"reported|ran into|sees|hits|gets)\b"
    # ... or what a team named by its name met: "검색팀에서 vLLM 쓰다가 ... 났다고".
    r"|(?<!우리)(?<!저희)(?<!우리 )(?<!저희 )(?<![\w-])[^\s\d(]{1,12}팀\s*에서(?=\s)"
    # ... or another team's channel: "search팀 채널에서 봤는데"
    r"|\S+팀\s*(?:공유\s*)?(?:채널|쪽)(?:에서|에)?"
    # ... or a team named by its name, not ours: "결제팀 엔드포인트가 ..."
    r"|(?<!우리)(?<!저희)(?<!우리 )(?<!저희 )(?<![\w-])[^\s\d(]{1,12}팀\s*(?:의\s*)?(?:엔드포인트|endpoint)"
)  # fmt: skip
# A document that tells what to do names failures to prevent or to look for, not ones that happened: its heading
# (ConText's "indication" and medspaCy's section rules read a note's section the same way).
GUIDANCE = _words(
    "checklist", "check list", "runbook", "run book", "playbook", "how-to", "howto", "guide", "guidelines",
    "best practices", "pre-deploy", "pre-flight", "preflight", "test plan", "expected behaviour", "expected behavior",
    "not yet run", "will verify", "to be verified", "체크리스트", "런북", "가이드", "점검표", "점검 항목", "사전 점검",
    "배포 전 점검", "테스트 계획", "검증 예정", "공지", "announcement", "platform notice", "team notice", "heads-up",
    "heads up", "reminder", "chaos test", "계획",
    # A plan's title tag and the list it keeps of what to look out for ("[Plan] ...", "Things to watch:").
    "[plan]", "things to watch", "what to watch", "watch list", "watchlist", "game day", "gameday",
    "planned exercise", "plan:", "not started yet",
)  # fmt: skip
# ConText's terminators: a conjunction or a change of time ends a trigger's reach.
TERMINATOR = _words(
    "but", "however", "although", "though", "yet", "still", "except", "apart from", "aside from",
    "nevertheless", "instead", "which", "whereas", "while", "now", "today", "currently", "this time",
    "cause of", "cause for", "reason for", "source of", "since then", "and then", "so",
)  # fmt: skip
