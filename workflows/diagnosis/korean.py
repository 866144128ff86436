"""Korean triggers for ``polarity``: in Korean the marker follows its object ("쿼터 문제는 아님", "로그 그룹이
없음", "~인가요?", "803이면"), so negation, questions, uncertainty and fear are read after the mention."""

from __future__ import annotations

import re

# Short negation ("안 났고", "못 찾음", "메일로 안 왔음") of the verbs that say a message occurred, was seen
# or arrived: 나다, 뜨다, 보이다, 찍히다, 생기다, 찾다, 오다 (an alert mail, an error), 받다. Not of other
# verbs: "통과 못 함" (did not pass) affirms a failure, and so does "안 올라감" (does not go up).
NOT_SEEN = (
    r"(?<!기억 )(?<!기억)(?<!기억이 )(?:안|못)\s*(?:났|남|나|납니|나요|떴|뜨|뜸|떠|보이|보임|보여|봤|봄|찍히|찍힘|찍혀|생기|생김|생겼|찾|찾음"
    r"|왔|옴|와|받)\w*"
)
NEGATION_POST = (
    r"아님\w*|아니(?!면)\w*|아닌\w*|아닙니다|없음|없[다고어었는습네지]\w*|안\s*됨|안\s*돼\w*"
    r"|안\s*됩니다|문제\s*없\w*|(?<!상관)(?<!상관 )(?<!관계)(?<!관계 )없이|(?<![\d.,])0\s*건"
    # "상관없이" and "관계없이" (regardless of) deny nothing.
    # Not used: "TensorRT 안 씀", "안 써요", "사용 안 함", "미사용".
    r"|안\s*(?:씀|써\w*|쓰\w*|씁니다)|사용\s*안\s*\w*|미사용|"
    # Not put in or sent: "batch_size 는 안 넣었음", "parameters 안 보냄", "pipeline 에 batch_size 를 안 넘김", "미설정".
    r"(?:안|못)\s*(?:넣|보냈|보내|보냄|줬|주었|설정|지정|넘기|넘김|넘겼|넘겨|전달)\w*|미설정|미지정|"
    # A separate matter ("/score 404 는 별개 문제에요").
    r"별개(?:\s*(?:문제|이슈|건))?\w*|"
    # Did not occur ("ReadTimeoutError 발생 안 함"), and the long negation -지 않다 ("발생하지 않음", "나지 않았다").
    r"발생\s*(?:안|않)\s*\w*|(?<=[가-힣])지\s*않(?!으면|는다면)\w*|"
    # Not installed on purpose ("일부러 안 깔았음"); "못 깐다" (cannot install) is the failure, not its denial.
    r"안\s*(?:깔았|깔음|깖|설치했|설치함|설치\s*함)\w*|" + NOT_SEEN
)
HYPOTHETICAL_PRE = r"혹시|만약|만일|아마"
# -ㄹ까 is written into its stem's last syllable ("나올까", "될까", "날까"): every syllable whose final is ㄹ.
_RIEUL_FINAL = "".join(chr(0xAC00 + 28 * block + 8) for block in range(399))
# "-인지" takes a particle where the whether-clause is an argument: "ping 실패인지 worker died 인지에 따라 다름".
# ... and the plain past question: "LMI 로 했던 거였나 TRT EP 버전이었나" (was it ... or ...?).
QUESTION_POST = rf"(?:인가요|나요|까요|ㄹ까|[{_RIEUL_FINAL}]까|(?:인|는|건)지(?:에|를|가|는|도)?|건가|는가|(?:였|었|았|했|됐)나)\??"
# What may happen follows it as -ㄹ 수 있다 ("... 에러가 날 수 있습니다", "뜰 수도 있음").
POSSIBLE_POST = rf"[{_RIEUL_FINAL}]\s*수\s*(?:도\s*)?있\w*"
# Fear of what may happen follows it too: "ResourceLimitExceeded 가 날까봐" (for fear it occurs), "... 걱정".
FEAR_POST = r"까\s*봐\w*|걱정\w*"
# A belief since corrected follows its object: "처음엔 Worker died 인 줄 알았는데" (I took it for Worker died).
BELIEF_POST = r"줄\s*알았\w*"
# Uncertainty follows its object too: "803 여부" (whether 803), "확인 불가" (cannot be confirmed), "모르겠음", "기억 안 남"
# (not remembered: what it follows is unknown, not denied).
UNCERTAIN_POST = r"기억\s*(?:이\s*)?(?:안|못)\s*(?:남|나\w*)|여부\w*|확인\s*(?:불가|못\s*함|못\s*했\w*|안\s*됨)|미확인|불명|모르겠\w*|모름|알\s*수\s*없\w*"
# A condition on what may occur follows it: "did not pass the ping health check 가 나오면" (if it appears), "803 뜨면",
# "쿼터에 걸리면". What a -면 clause did ("b=8 로 돌리면 171ms") and what comes after a step ("로드되고 나면") are no such
# condition.
OCCURS_IF_POST = r"(?:나오|뜨|(?<!고 )(?<!고)나|보이|찍히|생기|발생하|발생되|터지|실패하|걸리)면"
# A purpose follows what is to be brought about: "batch_size 항상 넣도록 수정" (changed so that it is always sent).
# ... and what is to be prevented follows it as a noun: "ReadTimeoutError 예방 차원에서", "OOM 방지용으로".
# ... and what must be done follows it as -어야 ("batch_size 파라미터를 넣어야 배치가 적용됨": it is to be sent, not sent).
PURPOSE_POST = r"도록|예방\w*|방지\w*|(?<=[가-힣])(?:어야|아야|해야|여야)(?![가-힣])"
# A constraint known in advance and worked around follows its object: "설치 안 되는 건 알고 있어서 (별도 venv)",
# "충돌 나는 거 알아서 일부러 안 깔았음": what it names is known of, not what happened.
KNOWN_POST = r"(?:건|것|거)\s*(?:을|를|는|은)?\s*(?:알고\s*있어서|알고\s*있었\w*|알아서|알기\s*때문에)"
# Hearsay follows what was heard: "-다길래" (as they say), "-다던데", "-다더라", "-라고 들었음".
HEARSAY_POST = (
    r"(?:다|라)(?:길래|기에|던데\w*|더라\w*)(?![\w])|(?:다|라)고\s*(?:해서|하던데\w*|하더라\w*|들었\w*|들음|물어\w*|묻\w*)"
    # ... or told as talk one heard: "에러 난다는 얘기 들었는데".
    r"|(?:다|라)는\s*(?:얘기|이야기|말|소문)\S*\s*(?:들었\w*|들음|있\w*)"
    # ... or talk there was of it: "/score 가 404 나는 얘기가 있었음".
    r"|(?<=[가-힣])는\s*(?:얘기|이야기|소문)(?:가|이|도)?\s*(?:있었\w*|있음|있어\w*|들었\w*|들음)"
    # ... or a post one read: "누가 ... 겪었다는 글", "났다는 이슈".
    r"|(?:다|라)는\s*(?:글|게시글|포스트|이슈|사례)(?![가-힣])"
)
# "-면" after 보- ("로그 보면", looking at the log) introduces what was seen, no condition.
CONDITION = re.compile(r"^(?!\w*보면$)\w*(?:이면|라면|으면|다면|면)$")
HISTORICAL = (
    r"저번|지난번|지난달|지난주|지난\s*(?:주|분기|스프린트|배포|릴리스|sprint|release)|예전에|이전에|전에는|작년|어제|어젯밤"
    r"|간밤|지난밤|그저께|엊그제|[1-4]\s*분기|과거|당시|이전\s*(?:설정|버전|배포|config|version)"
    # ... or an earlier release or incident named: "이전 v6 롤백 건", "이전 장애".
    r"|이전\s*(?:v\d+(?:\.\d+)*|롤백|장애|이슈|건)"
    # ... or an earlier run named by its id: "이전 run-0409 의 ResourceLimitExceeded".
    r"|이전\s*(?:run|실행|execution)[\w-]*"
)
# ... and a cause's clause ("짧은 쿼리만이라 긴 입력 비용을 못 봄"): a denial after it is of what follows.
CLAUSE_END = re.compile(r"\w(?:는데|은데|인데|지만|데도|고서|이라|라서|여서|해서|아서|어서|므로)$")
# A search's clause is what its result reports on: "Worker died / OOM 전부 검색했는데 0건" denies what was searched.
SEARCHED = re.compile(r"^(?:검색|조회|찾아\s*봤|찾아봤|찾았|grep)\w*(?:는데|은데)$")
CONJUNCTION = re.compile(r"그런데|근데|하지만|그러나|그래서|그리고")
# The copula's negation ("A가 B가 아닌 C", "B는 아님") denies its complement: the nearest phrase marked
# by a case particle before it, with that phrase's modifiers. A phrase marked before that one is another
# argument (the sentence's subject), outside the denial.
COPULA_NEGATION = re.compile(r"아니|아닌|아님|아닙")
# The existential's denial ("X 없음", there is no X) is of the phrase after a time or place set before it: in
# "InService 시점엔 \"Loading model\" 없음" the log line is denied, not the moment.
EXISTENTIAL_NEGATION = re.compile(r"없")
SETTING = re.compile(r"[가-힣](?:엔|에는|에선|에서는|땐|때는)$")
MARKED = re.compile(r"(?:[가-힣](?:이|가|은|는|을|를|도)|^(?:이|가|은|는|을|를|도))$")
