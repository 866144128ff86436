"""Each hosting mode owns its spec type, its checks and its deploy hooks; the base holds the template."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.support.hosting import request, spec_with
from workflows.errors import SpecInvalid
from workflows.gpu.device import ARTIFACT_MODES
from workflows.hosting import create_calls, modes
from workflows.hosting.base import HostingMode
from workflows.hosting.modes import strategies, strategy_for
from workflows.preflight.context import PreflightContext
from workflows.preflight.gpu import GPU_RUNTIME, TENSORRT_AFTER_SCALE_OUT
from workflows.spec.pipeline import load_spec

EXAMPLES = sorted((ROOT / "examples").glob("minilm-*.yaml"))


def test_every_mode_deploys_the_spec_member_of_its_own_name() -> None:
    # Given the mode table
    for name, strategy in strategies().items():
        # Then the mode's spec type is the hosting member whose mode is the mode's name
        assert strategy.mode == name
        assert strategy.spec_type.model_fields["mode"].default == name


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_a_mode_reads_its_example_as_its_own_spec_type(path: Path) -> None:
    # Given an example spec
    spec = load_spec(path)
    strategy = strategy_for(spec.hosting.mode)
    # When its mode reads the hosting section
    hosting = strategy.spec_of(spec)
    # Then it is the spec's own object, of exactly the mode's spec type
    assert hosting is spec.hosting
    assert type(hosting) is strategy.spec_type


def test_a_mode_refuses_another_modes_spec_by_name() -> None:
    # Given a scale-to-zero spec, whose settings extend the inference-component ones
    spec = spec_with("bundled", {"mode": "scale-to-zero"})
    # Then the inference-component mode does not take it for its own, and says whose it is
    with pytest.raises(SpecInvalid, match="'scale-to-zero', which the inference-component mode"):
        strategy_for("inference-component").spec_of(spec)
    with pytest.raises(SpecInvalid, match="'scale-to-zero', which the realtime mode"):
        strategy_for("realtime").deploy(request({"mode": "scale-to-zero"}), clients=None, settings=None)


def test_no_mode_overrides_the_deploy_template() -> None:
    # Given every mode's class
    for strategy in strategies().values():
        # Then deploy is the base's template, and the mode supplies only the hooks
        assert type(strategy).deploy is HostingMode.deploy
        assert not inspect.isabstract(type(strategy))


def test_the_deploy_template_builds_requests_only_through_the_shared_helpers() -> None:
    # Given the template's source
    template = inspect.getsource(HostingMode.deploy)
    # Then CreateModel and CreateEndpointConfig/CreateEndpoint go through create_calls.create_model and
    # create_calls.create_endpoint, the one place those requests are built
    assert "create_model(" in template and "create_endpoint(" in template
    for strategy in strategies().values():
        source = inspect.getsource(inspect.getmodule(type(strategy)))
        assert ".create_model(" not in source and ".create_endpoint_config(" not in source
    assert inspect.getsource(create_calls.create_model).count("sagemaker.create_model(") == 1


def test_the_gpu_runtime_check_is_declared_by_exactly_the_modes_that_serve_the_artifact() -> None:
    # Given the modes that serve the converted artifact on instances
    declaring = {name for name, strategy in strategies().items() if GPU_RUNTIME in strategy.checks}
    # Then exactly those declare F36, and only scale to zero declares F21
    assert declaring == set(ARTIFACT_MODES)
    assert {n for n, s in strategies().items() if TENSORRT_AFTER_SCALE_OUT in s.checks} == {"scale-to-zero"}


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_the_preflight_runs_the_checks_the_mode_declares(path: Path) -> None:
    # Given an example spec and no artifact, no model size
    spec = load_spec(path)
    declared = strategy_for(spec.hosting.mode).checks
    # When all its checks run
    result = modes.run_checks(PreflightContext(spec))
    # Then those on the spec alone ran and those that need an artifact or a model size were skipped,
    # each in declared order
    assert declared, "every mode declares its checks"
    assert result.checked == [c.label for c in declared if not c.needs]
    assert [line.split(": needs ")[0] for line in result.skipped] == [c.label for c in declared if c.needs]
