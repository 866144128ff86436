"""CSV log exports: the header's message column, quoted fields, where an export ends."""

from __future__ import annotations

from workflows.diagnosis.exports import csv_exports
from workflows.diagnosis.paste import evidence_from_paste


def test_each_rows_message_column_is_one_event_with_its_quoting_read() -> None:
    # Given a Logs Insights export whose messages hold commas and doubled quotes
    lines: list[str | None] = [
        "@timestamp,@message",
        '2026-11-20 04:12:09.301,"ping ""GET /ping"" 200, 1 ms"',
        "2026-11-20 04:12:09.302,Model loaded",
        "that was all of it, by the way",
    ]
    # When the exports are found
    (export,) = csv_exports(lines)
    # Then each row's message is whole, and the prose line after the rows is no row
    assert [row.message for row in export.rows] == ['ping "GET /ping" 200, 1 ms', "Model loaded"]
    assert [row.number for row in export.rows] == [2, 3]
    assert list(export.lines) == [0, 1, 2]


def test_a_sentence_with_commas_is_no_header() -> None:
    # Given prose whose commas split it into fields, one of them the word "message"
    lines: list[str | None] = ["we saw it, then the message, then nothing", "a, b, c, d"]
    # Then no export is found: a header's cells are column names
    assert csv_exports(lines) == []


def test_a_note_a_person_added_to_an_export_is_read_as_prose() -> None:
    # Given a Datadog export with a row a person wrote
    text = (
        "date,service,message\n"
        '2026-11-22T01:00:02Z,sm-nli,"[INFO ] W-9000-model-stdout - Model loaded"\n'
        '2026-11-22T09:00:00Z,sm-nli,"note: grep Worker died over 8h -> 0 hits"\n'
    )
    # When it is read
    evidence = evidence_from_paste(text, origin="paste")
    # Then the form is named, the log row is a log line and the note is prose
    assert evidence.forms == ["log-export-csv"]
    by_text = {item.text: item for item in evidence.items if not item.whole}
    assert by_text["[INFO ] W-9000-model-stdout - Model loaded"].source == "logs"
    assert by_text["note: grep Worker died over 8h -> 0 hits"].prose
