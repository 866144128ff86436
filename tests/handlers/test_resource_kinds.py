"""The table of resource kinds: true to botocore's service models, in dependency order, and the one
list that teardown, the janitor, failed-attempt removal, the tag query and the IAM scope read."""

from __future__ import annotations

from typing import Any

import botocore.session
import pytest

from infra.permissions import SAGEMAKER_KINDS
from workflows.hosting import resources, tagged
from workflows.hosting.resources import KINDS, ResourceKind
from workflows.janitor import cleanup as janitor


def _client(service: str) -> Any:
    return botocore.session.get_session().create_client(
        service, region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x"
    )


def _operation(row: ResourceKind, method: str) -> Any:
    client = _client(row.service)
    assert method in client.meta.method_to_api_mapping, f"{row.name}: {row.service} has no {method}"
    return client.meta.service_model.operation_model(client.meta.method_to_api_mapping[method])


@pytest.mark.parametrize("row", KINDS, ids=lambda row: row.name)
def test_each_kind_s_calls_and_keys_are_botocore_s(row: ResourceKind) -> None:
    # Given the row's list call as botocore's service model describes it
    listing = _operation(row, row.list_operation)
    items = listing.output_shape.members[row.list_key]
    item = items.member.members
    # Then its items carry the name, the ARN and the status the row reads
    assert row.name_key in item
    assert row.arn_key is None or row.arn_key in item
    assert row.status_key is None or row.status_key in item
    # And the list call takes the fixed filters the row passes
    assert {key for key, _ in row.list_filters} <= set(listing.input_shape.members)
    assert row.prefix_parameter is None or row.prefix_parameter in listing.input_shape.members
    # And its delete (or stop) call exists
    delete = _operation(row, row.delete_operation)
    if row.service == "sagemaker":
        # And a SageMaker kind is listed by name prefix, described and deleted by its name key
        assert "NameContains" in listing.input_shape.members
        assert row.describe_operation is not None
        describe = _operation(row, row.describe_operation)
        assert row.name_key in describe.input_shape.required_members
        assert row.name_key in delete.input_shape.required_members
        assert row.arn_key in describe.output_shape.members
        assert row.status_key is None or row.status_key in describe.output_shape.members


@pytest.mark.parametrize("row", [k for k in KINDS if k.status_key], ids=lambda row: row.name)
def test_a_kind_s_going_statuses_are_values_its_status_can_take(row: ResourceKind) -> None:
    # Given the status enum of the row's list items
    listing = _operation(row, row.list_operation)
    status = listing.output_shape.members[row.list_key].member.members[row.status_key]
    # Then every status the row takes as "on its way out" is one of them
    assert row.going
    assert row.going <= set(status.enum)


def test_the_table_is_in_dependency_order() -> None:
    # Given the table's order
    order = [row.name for row in KINDS]
    # Then what depends on another kind comes before it: policies before the target goes, targets
    # and alarms before their component, components before their endpoint, endpoints before their
    # config, configs before their models, the staging folder last
    assert order.index("scaling-policy") == order.index("scalable-target") + 1
    assert order.index("alarm") < order.index("inference-component") < order.index("endpoint")
    assert order.index("endpoint") < order.index("endpoint-config") < order.index("model")
    assert order[-1] == "staging"
    assert len(set(order)) == len(order)


def test_teardown_the_janitor_and_the_tag_query_sweep_the_table_s_rows() -> None:
    # Given the rows each sweep reads
    teardown_kinds = [row.name for row in resources.sagemaker_kinds(teardown=True)]
    # Then teardown deletes the SageMaker kinds in the table's order and never a processing job
    assert teardown_kinds == ["inference-component", "endpoint", "endpoint-config", "model"]
    # And the janitor removes those and stops running processing jobs, in the same order
    # (and a run across Regions' router first, which is not a row: only a routed run has one)
    assert [row.name for row in janitor.KINDS] == ["inference-router", *teardown_kinds, "processing-job"]
    assert resources.PROCESSING_JOB.stops and dict(resources.PROCESSING_JOB.list_filters) == {
        "StatusEquals": "InProgress"
    }
    # And the tag query checks what teardown deletes, alarms included
    assert {*teardown_kinds, "alarm"} == tagged.KINDS


def test_the_iam_scope_covers_every_sagemaker_kind_of_the_table() -> None:
    # Given the SageMaker resource kinds the stack's policies name ARNs for
    # Then they are the table's SageMaker kinds, no more, no fewer
    assert set(SAGEMAKER_KINDS) == {row.name for row in resources.sagemaker_kinds()}


def test_labels_and_lookups_name_the_kind() -> None:
    # Given the endpoint-config row
    row = resources.kind("endpoint-config")
    # Then its label and title are the ones reports print
    assert row.label("db-r-1-a1") == "endpoint-config/db-r-1-a1"
    assert row.title == "endpoint config"
    assert row.is_going({"EndpointStatus": "Deleting"}) is False  # a config has no status
    assert resources.ENDPOINT.is_going({"EndpointStatus": "Deleting"}) is True
    # And an unknown kind is refused naming the known ones
    with pytest.raises(KeyError, match="no resource kind 'bucket'; known: scalable-target"):
        resources.kind("bucket")
