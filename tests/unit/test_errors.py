from __future__ import annotations

from state_machines import error_names
from workflows import errors


def test_names_are_unique_and_partitioned() -> None:
    classes = errors.all_errors()
    names = [cls.__name__ for cls in classes]
    assert len(names) == len(set(names))
    assert set(error_names.retryable_names()) | set(error_names.terminal_names()) == set(names)
    assert not set(error_names.retryable_names()) & set(error_names.terminal_names())


def test_retryable_and_terminal_bases() -> None:
    assert "AwsThrottled" in error_names.retryable_names()
    assert "CapacityStall" in error_names.terminal_names()
    assert "RetryableError" not in error_names.error_names()


def test_message_carries_the_fix() -> None:
    error = errors.SpecInvalid("bad field.", fix="do this")
    assert str(error) == "bad field. Fix: do this"
    assert error.fix == "do this"


def test_what_the_user_gave_exits_2_and_work_that_failed_exits_1() -> None:
    # Given every error class, its exit code declared on its class line
    usage = {cls.__name__ for cls in errors.all_errors() if cls.exit_code == errors.USAGE}

    # Then the input errors (spec, files, flags, the AWS set-up) exit 2 and every other error exits 1
    assert usage == {
        "SpecInvalid",
        "ModelSourceInvalid",
        "UnsupportedArchitecture",
        "NotServableLocally",
        "ResultInvalid",
        "CatalogueInvalid",
        "OutputNotWritable",
        "ArtifactIncomplete",
        "RequirementsInvalid",
        "UsageError",
        "NoCredentials",
        "ExpiredToken",
        "InvalidCredentials",
        "ProfileNotFound",
        "NoRegion",
        "StackNotFound",
    }
    assert all(cls.exit_code in (errors.FAILED, errors.USAGE) for cls in errors.all_errors())
