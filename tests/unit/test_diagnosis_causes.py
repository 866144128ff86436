"""Cause ranking: an entry that declares what it causes is named ahead of its consequences."""

from __future__ import annotations

from workflows.diagnosis import diagnose
from workflows.diagnosis.paste import evidence_from_paste


def test_a_cause_is_named_ahead_of_the_consequence_it_declares() -> None:
    # Given a GPU endpoint whose container could not start, and the ping failure that follows from it
    text = (
        '{"EndpointName": "tri-g5", "EndpointStatus": "Failed", "FailureReason": "CannotStartContainerError. '
        "Please ensure the model container for variant AllTraffic starts correctly when invoked with 'docker "
        'run <image> serve\'", "ProductionVariants": [{"VariantName": "AllTraffic", "InstanceType": '
        '"ml.g5.xlarge"}]}\n'
        "The primary container for production variant AllTraffic did not pass the ping health check.\n"
    )
    # When it is diagnosed
    diagnosis = diagnose(evidence_from_paste(text, origin="paste"))
    # Then the cause (F20) is named though the ping signature alone scores higher, and F07 is its consequence
    assert diagnosis.id == "F20"
    assert any(line.startswith("[consequence] F07") for line in diagnosis.evidence)
    assert "F07" in [a.id for a in diagnosis.alternatives]
