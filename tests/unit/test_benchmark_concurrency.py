"""The default benchmark measures 1 and 4 concurrent clients, so throughput has a curve, capped at
what the hosting takes; a spec that sets its levels gets exactly those."""

from __future__ import annotations

from typing import Any

import pytest

from workflows.benchmark.run_config import engine_config, measured_concurrency
from workflows.spec.pipeline import parse_spec


def spec(hosting: dict[str, Any], benchmark: dict[str, Any] | None = None) -> Any:
    return parse_spec(
        {
            "name": "conc",
            "model": {"source": "bundled", "task": "embedding"},
            "hosting": hosting,
            "benchmark": benchmark or {},
        }
    )


@pytest.mark.parametrize(
    ("hosting", "levels"),
    [
        ({"instance_type_fallbacks": ["ml.c6i.xlarge"]}, [1, 4]),  # 4 vCPUs
        ({"instance_type_fallbacks": ["ml.c6i.2xlarge", "ml.c6i.xlarge"]}, [1, 4]),
        ({"instance_type_fallbacks": ["ml.c6i.large"]}, [1, 2]),  # 2 vCPUs
        ({"mode": "serverless", "memory_size_mb": 2048, "max_concurrency": 2}, [1, 2]),
        ({"mode": "serverless", "memory_size_mb": 2048, "max_concurrency": 1}, [1]),
        ({"mode": "serverless", "memory_size_mb": 2048, "max_concurrency": 8}, [1, 4]),
    ],
)
def test_the_default_is_1_and_4_clients_where_the_hosting_takes_them(
    hosting: dict[str, Any], levels: list[int]
) -> None:
    assert measured_concurrency(spec(hosting)) == levels


def test_levels_the_spec_sets_are_measured_as_they_are() -> None:
    chosen = spec({"instance_type_fallbacks": ["ml.c6i.large"]}, {"concurrency": [1, 8]})
    assert measured_concurrency(chosen) == [1, 8]


def test_the_engine_measures_and_warms_at_the_default_levels() -> None:
    config = engine_config(spec({"instance_type_fallbacks": ["ml.c6i.xlarge"], "workers": 1}), "db-x-a1")
    assert config.concurrency == [1, 4]
    assert config.warmup_concurrency == 4  # at least the highest concurrency measured
