"""Reading a paste as an engineer does: context named in a question is no context, a client error's message
ends where botocore closes it, a Korean copula denies its complement only, an error that did not arrive is
ruled out, a notebook's shell escape is a command, someone else's failure and a heading in the past are no
evidence of ours."""

from __future__ import annotations

from workflows.diagnosis import diagnose
from workflows.diagnosis.evidence import normalize
from workflows.diagnosis.facts import compute
from workflows.diagnosis.outline import headings
from workflows.diagnosis.paste import evidence_from_paste
from workflows.diagnosis.polarity import polarity

LMI_TIMEOUT = (
    "botocore.errorfactory.ModelError: An error occurred (ModelError) when calling the InvokeEndpoint operation: "
    'Received server error (0) from primary with message "Your invocation timed out while waiting for a response '
    "from container primary. Review the latency metrics for each container in Amazon CloudWatch, resolve the "
    'issue, and try again."'
)


def read(text: str, mention: str) -> str:
    text = normalize(text)
    start = text.index(mention)
    return polarity(text, start, start + len(mention)).polarity


def test_an_engine_named_only_in_a_question_is_not_the_endpoints_engine() -> None:
    # Given a thread where a reply asks about TensorRT-LLM and the reporter answers no, on an LMI image
    text = "\n".join(
        [
            "Serving bge-reranker on djl-inference:0.33.0-lmi15.0.0-cu128, ml.g5.2xlarge.",
            LMI_TIMEOUT,
            "Is this the TensorRT-LLM backend? It builds an engine per shape.",
            "No, option.rolling_batch=disable and the Python engine.",
        ]
    )
    evidence = evidence_from_paste(text, origin="issue")
    # When the facts are computed and the paste diagnosed
    facts = compute(evidence)
    # Then TensorRT is not the context (asked, never asserted), LMI is, and the first-call timeout is LMI's
    assert facts["tensorrt"] is not True
    assert facts["lmi"] is True
    assert diagnose(evidence).id == "F18"


def test_an_engine_a_person_affirms_is_still_context() -> None:
    # Given the same timeout where the reporter says the engine is TensorRT
    text = f"We serve the reranker as a TensorRT engine on ml.g5.2xlarge.\n{LMI_TIMEOUT}"
    # When it is read
    facts = compute(evidence_from_paste(text, origin="ticket"))
    # Then the affirmed mention makes TensorRT the context
    assert facts["tensorrt"] is True


def test_a_client_errors_message_ends_where_its_quote_closes() -> None:
    # Given a one-line ModelError followed by a person's reply on the next line
    text = f"{LMI_TIMEOUT}\nreviewer: is this the TensorRT-LLM backend?"
    # When it is read
    evidence = evidence_from_paste(text, origin="thread")
    # Then the reply is a person's prose, not part of the client's error
    reply = [i for i in evidence.items if "reviewer" in i.text and not i.whole]
    assert [(i.source, i.prose) for i in reply] == [("text", True)]


def test_a_client_errors_body_wrapped_over_lines_stays_one_message() -> None:
    # Given a ModelError whose JSON body botocore printed over several lines
    text = (
        "botocore.errorfactory.ModelError: An error occurred (ModelError) when calling the InvokeEndpoint "
        'operation: Received client error (400) from primary with message "{\n  "code": 400,\n'
        '  "message": "No module named \\u0027onnxruntime\\u0027"\n}\n". See the log group.\n'
        "Any idea what is wrong?"
    )
    # When it is read
    evidence = evidence_from_paste(text, origin="nb")
    # Then the body is the invocation's error and the question after it is prose
    assert any(i.source == "invocation" and "No module named" in i.text for i in evidence.items)
    assert [i.source for i in evidence.items if i.text == "Any idea what is wrong?"] == ["text"]


def test_a_korean_copula_denies_its_complement_not_the_sentences_subject() -> None:
    # Given "the vllm endpoint served a model other than the one we set" and plain copula denials
    served = "vllm-bge-kr 엔드포인트가 우리가 넣은 모델이 아닌 다른 모델을 띄웠습니다."
    # When the mentions' polarity is read
    # Then the subject stands, and what the copula denies is negated
    assert read(served, "vllm-bge-kr") == "affirmed"
    assert read(served, "넣은 모델") == "negated"
    assert read("쿼터 문제는 아님", "쿼터") == "negated"
    assert read("GPU 드라이버 문제는 아닌 것 같아요", "GPU 드라이버") == "negated"


def test_a_notebooks_shell_escape_is_a_command_and_its_filter_pattern_no_finding() -> None:
    # Given a notebook that searched the log group for a failure and found no event
    text = (
        "In [3]: !aws logs filter-log-events --log-group-name /aws/sagemaker/Endpoints/emb "
        "--filter-pattern '\"Failed to create CUDAExecutionProvider\"' --query 'length(events)'\n"
        "0\n"
    )
    # When it is diagnosed
    diagnosis = diagnose(evidence_from_paste(text, origin="nb"))
    # Then the pattern searched for is no evidence: nothing is named
    assert diagnosis.id == "unknown"


def test_a_korean_error_that_did_not_arrive_is_ruled_out_and_a_metric_that_does_not_rise_is_not() -> None:
    # Given Korean short negation of arriving and receiving (오다, 받다), and of rising (오르다)
    # When the mentions' polarity is read
    # Then the error that never arrived is negated, and the metric that does not rise stands
    assert read("ResourceLimitExceeded 같은 건 메일로 안 왔는데", "ResourceLimitExceeded") == "negated"
    assert read("Worker died 알람은 못 받았음", "Worker died") == "negated"
    assert read("GPU 사용률이 안 올라감", "GPU 사용률") == "affirmed"


def test_someone_elses_failure_is_no_evidence_of_ours() -> None:
    # Given ConText's experiencer: a failure read about, or another team's
    # When the mentions' polarity is read
    # Then each is someone else's, not an assertion about this endpoint
    assert (
        read('I read about "Invalid input name: token_type_ids" in another project.', "token_type_ids")
        == "other"
    )
    assert (
        read("another team reported ResourceLimitExceeded this morning", "ResourceLimitExceeded") == "other"
    )
    assert read("다른 팀 엔드포인트에서 Worker died 가 났다고 들었음", "Worker died") == "other"
    # And our own failure beside it stands
    assert read("Our endpoint logs Worker died on every start.", "Worker died") == "affirmed"


def test_an_outlines_items_sit_under_their_heading_and_a_blank_line_ends_a_paragraphs_outline() -> None:
    # Given a report's numbered sections, a label with its bullets after a blank line, and a paragraph
    lines = [
        "2. Last month's issues",
        "   - Worker died on nli-rt, fixed",
        "3. New this month: none",
        "Other teams:",
        "",
        "- ResourceLimitExceeded on g5",
        "A paragraph.",
        "",
        "- a bullet after it",
    ]
    # When the outline is read
    parents = headings(lines)
    # Then each item has its heading, and nothing else is nested
    assert parents == ["", "2. Last month's issues", "", "", "", "Other teams:", "", "", ""]


def test_an_item_under_a_heading_in_the_past_recalls_a_failure_and_reports_none() -> None:
    # Given a monthly report whose last month's section lists a fixed worker death on a real-time endpoint
    text = "\n".join(
        [
            "Monthly report, ml.m5.xlarge endpoints",
            "2. Last month's incidents",
            "   - Worker died on every start: fixed with SAGEMAKER_MODEL_SERVER_WORKERS=1",
            "3. This month: 0 5xx",
        ]
    )
    # When it is diagnosed
    diagnosis = diagnose(evidence_from_paste(text, origin="mail"))
    # Then nothing is named, and the entry is a candidate recalled from the past
    assert diagnosis.id == "unknown"
    assert any("historical" in line for line in diagnosis.evidence)


MISSING_MODULE = (
    "botocore.errorfactory.ModelError: An error occurred (ModelError) when calling the InvokeEndpoint operation: "
    'Received client error (400) from primary with message "{"code": 400, "message": "No module named '
    "'onnxruntime'\"}\"."
)


def test_a_consequence_whose_causes_context_is_shown_but_not_its_signature_is_unknown_between_them() -> None:
    # Given a missing module on a model whose record says network isolation is on, and no pip output
    isolated = '{"ModelName": "m", "PrimaryContainer": {"Image": "x"}, "EnableNetworkIsolation": true}\n'
    # When it is diagnosed
    diagnosis = diagnose(evidence_from_paste(isolated + MISSING_MODULE, origin="nb"))
    # Then neither is named: the missing module (F01) and the install that reached no index (F37) are candidates
    assert diagnosis.id == "unknown"
    assert diagnosis.title.startswith("F01 or its cause F37")
    assert [line.split()[1] for line in diagnosis.evidence if line.startswith("[candidate]")] == [
        "F01",
        "F37",
    ]


def test_a_consequence_is_named_where_its_causes_context_is_absent_or_false() -> None:
    # Given the same missing module on a model with network access, and with no model record at all
    open_model = '{"ModelName": "m", "PrimaryContainer": {"Image": "x"}, "EnableNetworkIsolation": false}\n'
    # When each is diagnosed
    # Then the missing module is named
    assert diagnose(evidence_from_paste(open_model + MISSING_MODULE, origin="nb")).id == "F01"
    assert diagnose(evidence_from_paste(MISSING_MODULE, origin="nb")).id == "F01"


def test_a_korean_time_word_with_its_particle_puts_the_failure_in_the_past() -> None:
    # Given Korean prose whose time word carries a glued particle ("작년에", "지난달엔")
    recalled = "# 작년에 error 803 한 번 겪고 나서 AMI 버전을 기본값으로 넣어둔 것. 이번 배포는 문제 없음."
    later = "지난달엔 ResourceLimitExceeded 가 났었고 지금은 한도 증설됨"
    # When the mentions are read
    # Then each is in the past, as the bare time word ("작년 803") is
    assert read(recalled, "error 803") == "historical"
    assert read(later, "ResourceLimitExceeded") == "historical"
    assert read("작년 error 803 겪음", "error 803") == "historical"
    assert read("어젯밤 알람 원인은 Worker died (워커 8개).", "Worker died") == "historical"
    # And a time word is no time word inside another word
    assert read("작년도별 error 803 목록을 만들고 있음", "error 803") == "affirmed"


def test_without_in_korean_rules_out_what_it_follows() -> None:
    # Given a describe-endpoint record InService and a Korean note that it was created without the quota error
    text = "\n".join(
        [
            '{"EndpointName": "xnli-g6-12x", "EndpointStatus": "InService"}',
            "# 이번엔 ResourceLimitExceeded 없이 바로 생성됨. 멈추는 현상 없음.",
        ]
    )
    # When it is read and diagnosed
    # Then "없이" (without) denies the error, and no entry is named
    assert read(text, "ResourceLimitExceeded") == "negated"
    assert diagnose(evidence_from_paste(text, origin="ticket")).id == "unknown"


def test_the_python_sdks_serverless_config_makes_the_endpoint_serverless() -> None:
    # Given a notebook that deploys with the SDK's ServerlessInferenceConfig and times out on its first call
    text = "\n".join(
        [
            "predictor = model.deploy(",
            "    serverless_inference_config=ServerlessInferenceConfig(memory_size_in_mb=3072, max_concurrency=2))",
            "predictor.predict({'inputs': 'hello'})",
            'ReadTimeoutError: Read timeout on endpoint URL: "https://runtime.sagemaker.us-east-1.amazonaws.com/'
            'endpoints/sls/invocations"',
        ]
    )
    evidence = evidence_from_paste(text, origin="notebook")
    # When the facts are computed and the paste diagnosed
    # Then the endpoint is serverless, and with no log read a worker dying for memory (F14) is not ruled out
    assert compute(evidence)["serverless"] is True
    result = diagnose(evidence)
    assert result.id == "unknown"
    assert {a.id for a in result.alternatives} >= {"F14", "F15"}


def test_a_count_of_zero_before_a_message_rules_it_out() -> None:
    # Given an audit note that counts none of the dying worker's lines, and one that counts some
    none_seen = "# since then 0 Worker died, 0 ReadTimeout, cold start 12-14 s"
    some_seen = "# since then 10 Worker died lines in the log group"
    # When the mentions are read
    # Then zero rules the message out, and ten affirms it
    assert read(none_seen, "Worker died") == "negated"
    assert read("zero ResourceLimitExceeded since the increase", "ResourceLimitExceeded") == "negated"
    assert read(some_seen, "Worker died") == "affirmed"


def test_a_korean_copulas_polite_denial_rules_out_and_its_condition_only_supposes() -> None:
    # Given a chat reply that denies the quota error in a polite ending, and one that supposes it
    denied = "quota 2, 사용 0 이라 ResourceLimitExceeded 는 아니고요. describe 는 못 돌려봤어요"
    supposed = "ResourceLimitExceeded 아니면 capacity 문제일 듯"
    # When the mentions are read
    # Then the first is ruled out, and the second is a supposition, not a denial
    assert read(denied, "ResourceLimitExceeded") == "negated"
    assert read(supposed, "ResourceLimitExceeded") != "negated"


def test_a_mention_in_a_quoted_question_is_asked() -> None:
    # Given a note that quotes a colleague's question about the quota, then answers it
    text = '# Q from product: "before we add the replica, are we close to ResourceLimitExceeded on g5?"'
    # When the mention is read
    # Then the quoted question asks; a quoted error message is still read as quoted
    assert read(text, "ResourceLimitExceeded") == "hypothetical"
    assert read('we got "ResourceLimitExceeded" on CreateEndpoint', "ResourceLimitExceeded") == "affirmed"


def test_a_logs_insights_query_is_what_was_searched_for() -> None:
    # Given an exported Logs Insights count whose query (commented) names the dying worker's line
    text = "\n".join(
        [
            "# query:",
            "#   fields @message",
            "#   | parse @message /(?<evt>Model loaded|Worker died|Killed)/",
            "#   | stats count(*) as n by evt",
            "evt,n",
            "Model loaded,4",
        ]
    )
    # When it is diagnosed
    # Then the query's words are no finding: nothing is named, and the dying worker is not even a candidate
    result = diagnose(evidence_from_paste(text, origin="insights"))
    assert result.id == "unknown"
    assert "F02" not in {a.id for a in result.alternatives}


def test_a_korean_denial_at_the_end_of_a_list_denies_its_first_item_too() -> None:
    # Given a list that a Korean denial ends, and a clause with its own predicate before another denial
    listed = "Worker died, 5xx 없음. 서버리스 아님(실시간 endpoint)."
    own_clause = "Worker died 발생, 5xx 없음."
    # When the first items are read
    # Then the list's first item is denied with the rest, and the clause of its own stands
    assert read(listed, "Worker died") == "negated"
    assert read("OOM, Killed, Worker died 모두 없음", "OOM") == "negated"
    assert read(own_clause, "Worker died") == "affirmed"


def test_a_fenced_block_under_a_label_about_someone_else_is_not_our_failure() -> None:
    # Given a question that pastes another team's error in a fenced block, and one that pastes its own
    error = "ValueError: Model architectures ['LlamaForCausalLM'] are not supported for now."
    theirs = f"We saw this in another team's repo (not our stack):\n```\n{error}\n```\nOur endpoint answers."
    ours = f"Our endpoint fails at start with:\n```\n{error}\n```"
    # When each is diagnosed
    # Then the block under the other team's label is only a candidate, and our own block names the entry
    assert headings(theirs.splitlines())[2] == "We saw this in another team's repo (not our stack):"
    assert diagnose(evidence_from_paste(theirs, origin="issue")).id == "unknown"
    assert diagnose(evidence_from_paste(ours, origin="issue")).id == "F25"


def test_fear_of_an_error_that_has_not_happened_is_no_evidence_of_it() -> None:
    # Given a Korean ticket asking ahead of time, and an English one
    # When the mentions are read
    # Then fearing an error supposes it, and an error that happened is affirmed
    assert read("ResourceLimitExceeded 가 날까봐 미리 여쭙니다.", "ResourceLimitExceeded") == "hypothetical"
    assert read("we are worried about ResourceLimitExceeded on g5", "ResourceLimitExceeded") == "hypothetical"
    assert read("ResourceLimitExceeded 가 났습니다.", "ResourceLimitExceeded") == "affirmed"


def test_co_hosting_said_in_words_tells_the_endpoint_is_not_serverless() -> None:
    # Given a ticket that says the endpoint co-hosts two containers, with the dying worker's lines
    text = "\n".join(
        [
            "환경: multi-container Direct, container 2개 (mdeberta, minilm)",
            "[WARN ] W-9005-model com.amazonaws.ml.mms.wlm.BatchAggregator - Load model failed: model, error: Worker died.",
            "minilm 은 정상 응답",
        ]
    )
    evidence = evidence_from_paste(text, origin="ticket")
    # When the facts are computed and the paste diagnosed
    facts = compute(evidence)
    # Then the endpoint is co-hosted, not serverless, and the workers' memory (F02) is named
    assert facts["co_hosted"] is True
    assert facts["serverless"] is False
    assert diagnose(evidence).id == "F02"


def test_a_quoted_error_that_ends_its_sentence_is_outside_the_question_after_it() -> None:
    # Given a chat line: the error in a code span ending with its period, then a question
    text = (
        "xnli 호출하면 400 나요. 에러: `ValueError: Tokenizer class TokenizersBackend does not exist or is not "
        "currently imported.` 혹시 requirements.txt 에 뭐 빠진 건가요?"
    )
    # When the error's mention is read
    # Then the question after it does not reach it
    assert read(text, "Tokenizer class TokenizersBackend does not exist") == "affirmed"


def test_a_korean_collapse_puts_the_label_after_its_quantifier() -> None:
    # Given a Korean ticket: after INT8 quantization every prediction is one label
    text = "동적 INT8 양자화 후 검증셋 예측이 전부 neutral 입니다. fp32 는 정상."
    # Then F29 is named; the same words without quantization are some other bug
    assert diagnose(evidence_from_paste(text, origin="ticket")).id == "F29"
    plain = "배포 후 검증셋 예측이 전부 neutral 입니다. 이전 버전은 정상."
    assert diagnose(evidence_from_paste(plain, origin="ticket")).id == "unknown"


def test_a_persons_aside_in_parentheses_after_a_log_is_prose() -> None:
    # Given log lines and a person's parenthesised aside after them that denies a worker death
    text = "\n".join(
        [
            "2026-12-02T03:00:01.120Z [INFO ] W-9000-model com.amazonaws.ml.mms.wlm.WorkerThread - Model loaded",
            '2026-12-02T03:00:07.001Z [INFO ] pool-2-thread-3 ACCESS_LOG - /169.254.178.2:39210 "GET /ping HTTP/1.1" 200 1',
            "(이번 배포는 Worker died 없음, instance ml.c6i.2xlarge)",
        ]
    )
    # Then the aside is read as a person's words, and its denial names nothing
    assert diagnose(evidence_from_paste(text, origin="logs")).id == "unknown"
